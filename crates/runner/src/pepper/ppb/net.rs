//! `PPB_NetAddress;1.0` and `PPB_HostResolver;1.0`, and what the socket families
//! (`tcp.rs`, `udp.rs`, `websocket.rs`) share: Chrome's rules for an operation that ends
//! at once, the network rule (`pepper::net`), addresses as resources.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV6};

use socket2::SockRef;
use wasmtime::{Caller, Linker};

use super::super::mem;
use super::super::net::{self as pnet, HostResolver, Verdict};
use super::super::resources::Resource;
use super::super::var::PpVar;
use super::super::{answer_now, lock, pp_error, state, state_for, PepperState};
use super::{link_create, link_is, link_query};
use super::{link_entered, Entered, Kind};
use crate::host::Ctx;

const NA: &str = "PPB_NetAddress;1.0";
const HR: &str = "PPB_HostResolver;1.0";

/// The network rule for `interface` reaching `target` at `ip` (see `pepper::net`).
pub(super) fn allow(s: &PepperState, interface: &str, target: &str, loopback: bool) -> Verdict {
    s.net
        .allow(s.config.net_loopback, s.sink(), interface, target, loopback)
}

/// Sets the send (`send`) or receive buffer size of `sock` (a `SetOption`): `PP_OK` or
/// the error.
pub(super) fn set_buffer_size(sock: SockRef<'_>, send: bool, size: i32) -> i32 {
    let r = if send {
        sock.set_send_buffer_size(size as usize)
    } else {
        sock.set_recv_buffer_size(size as usize)
    };
    r.map_or_else(|e| pnet::io_error(&e), |_| pp_error::OK)
}

/// The address of NetAddress resource `id`.
pub(super) fn address_of(s: &PepperState, id: i32) -> Option<SocketAddr> {
    match lock(&s.resources).get(id) {
        Some(Resource::NetAddress(a)) => Some(*a),
        _ => None,
    }
}

/// A new NetAddress resource for `addr` (the caller's reference).
pub(super) fn new_address(s: &PepperState, addr: SocketAddr) -> i32 {
    lock(&s.resources).add(Resource::NetAddress(addr))
}

/// A new string var (the caller's reference).
pub(super) fn string_var(s: &PepperState, text: &str) -> PpVar {
    lock(&s.vars).string_from_str(text)
}

fn ipv4_bytes(a: SocketAddr) -> Option<[u8; 6]> {
    let SocketAddr::V4(v4) = a else { return None };
    let mut b = [0; 6];
    b[..2].copy_from_slice(&v4.port().to_be_bytes());
    b[2..].copy_from_slice(&v4.ip().octets());
    Some(b)
}

fn ipv6_bytes(a: SocketAddr) -> Option<[u8; 18]> {
    let SocketAddr::V6(v6) = a else { return None };
    let mut b = [0; 18];
    b[..2].copy_from_slice(&v6.port().to_be_bytes());
    b[2..].copy_from_slice(&v6.ip().octets());
    Some(b)
}

fn link_net_address(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    linker.func_wrap(
        NA,
        "CreateFromIPv4Address",
        |mut caller: Caller<'_, Ctx>, instance: i32, ptr: i32| -> wasmtime::Result<i32> {
            let Some(s) = state_for(&caller, instance)? else {
                return Ok(0);
            };
            if ptr == 0 {
                return Ok(0);
            }
            let b = crate::read_memory(&mut caller, ptr as u32, 6)?;
            let port = u16::from_be_bytes([b[0], b[1]]);
            let ip = Ipv4Addr::new(b[2], b[3], b[4], b[5]);
            Ok(new_address(&s, SocketAddr::new(ip.into(), port)))
        },
    )?;
    linker.func_wrap(
        NA,
        "CreateFromIPv6Address",
        |mut caller: Caller<'_, Ctx>, instance: i32, ptr: i32| -> wasmtime::Result<i32> {
            let Some(s) = state_for(&caller, instance)? else {
                return Ok(0);
            };
            if ptr == 0 {
                return Ok(0);
            }
            let b = crate::read_memory(&mut caller, ptr as u32, 18)?;
            let port = u16::from_be_bytes([b[0], b[1]]);
            let mut o = [0u8; 16];
            o.copy_from_slice(&b[2..18]);
            let addr = SocketAddrV6::new(Ipv6Addr::from(o), port, 0, 0);
            Ok(new_address(&s, addr.into()))
        },
    )?;
    link_is(linker, NA, "IsNetAddress", |r| {
        matches!(r, Resource::NetAddress(_))
    })?;
    link_query(linker, NA, "GetFamily", |s, res| match address_of(s, res) {
        Some(SocketAddr::V4(_)) => 1,
        Some(SocketAddr::V6(_)) => 2,
        None => 0,
    })?;
    linker.func_wrap(
        NA,
        "DescribeAsString",
        |mut caller: Caller<'_, Ctx>,
         ret: i32,
         res: i32,
         include_port: i32|
         -> wasmtime::Result<()> {
            let s = state(&caller)?;
            let v = match address_of(&s, res) {
                Some(a) => string_var(&s, &pnet::describe(a, include_port != 0)),
                None => PpVar::Undefined,
            };
            mem::write_var(&mut caller, ret as u32, v)
        },
    )?;
    linker.func_wrap(
        NA,
        "DescribeAsIPv4Address",
        |mut caller: Caller<'_, Ctx>, res: i32, ptr: i32| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            match address_of(&s, res).and_then(ipv4_bytes) {
                Some(b) if ptr != 0 => {
                    crate::write_memory(&mut caller, ptr as u32, &b)?;
                    Ok(1)
                }
                _ => Ok(0),
            }
        },
    )?;
    linker.func_wrap(
        NA,
        "DescribeAsIPv6Address",
        |mut caller: Caller<'_, Ctx>, res: i32, ptr: i32| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            match address_of(&s, res).and_then(ipv6_bytes) {
                Some(b) if ptr != 0 => {
                    crate::write_memory(&mut caller, ptr as u32, &b)?;
                    Ok(1)
                }
                _ => Ok(0),
            }
        },
    )?;
    Ok(())
}

/// `PP_HOSTRESOLVER_FLAG_CANONNAME`.
const CANONNAME: i32 = 1;

/// A host resolver; finding one for `Resolve` drops the results of an earlier Resolve.
const RESOLVER: Kind<()> = Kind {
    name: "HostResolver",
    find: |s, res| match lock(&s.resources).get_mut(res) {
        Some(Resource::HostResolver(h)) => {
            h.results = None;
            Some(())
        }
        _ => None,
    },
};

/// `Resolve`: under `--net loopback` it needs no lookup (see `pepper::net`), so it ends at
/// once; without it, `PP_ERROR_NOACCESS`.
fn resolve(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<()>,
    (res, host, port, hint, _): (i32, i32, i32, i32, i32),
) -> wasmtime::Result<i32> {
    let Entered { s, cb, on: () } = e;
    if host == 0 || hint == 0 {
        return answer_now(caller, cb, pp_error::BADARGUMENT);
    }
    let [family, flags] = mem::read_i32s::<2>(&mut *caller, hint as u32)?;
    if !(0..=2).contains(&family) {
        return answer_now(caller, cb, pp_error::BADARGUMENT);
    }
    let name = match mem::read_cstr(&mut *caller, host as u32, 4096) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(_) => return answer_now(caller, cb, pp_error::BADARGUMENT),
    };
    let literal = name
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
        .ok();
    // A name is judged by what it resolves to, below; an address literal here.
    let loopback = literal.is_none_or(pnet::is_loopback);
    if let Verdict::Refused(e) = allow(
        &s,
        "PPB_HostResolver",
        &format!("resolving {name:?}"),
        loopback,
    ) {
        return answer_now(caller, cb, e);
    }
    let result = match pnet::resolve_loopback(&name, family) {
        Ok(ips) if !ips.is_empty() => {
            let canonical = if flags & CANONNAME != 0 {
                if literal.is_some() {
                    name.clone()
                } else {
                    name.trim_end_matches('.').to_ascii_lowercase()
                }
            } else {
                String::new()
            };
            let port = port as u16;
            let addrs = ips
                .into_iter()
                .map(|ip| SocketAddr::new(ip, port))
                .collect();
            if let Some(Resource::HostResolver(h)) = lock(&s.resources).get_mut(res) {
                h.results = Some((canonical, addrs));
            }
            pp_error::OK
        }
        Ok(_) => pp_error::NAME_NOT_RESOLVED,
        Err(e) => {
            if e == pp_error::NAME_NOT_RESOLVED {
                s.net.note_once(
                    s.sink(),
                    "PPB_HostResolver names",
                    &format!(
                        "PPB_HostResolver: {name:?} not resolved (PP_ERROR_NAME_NOT_RESOLVED): under --net loopback only localhost and loopback addresses resolve"
                    ),
                );
            }
            e
        }
    };
    answer_now(caller, cb, result)
}

fn link_host_resolver(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    link_create(linker, HR, || {
        Resource::HostResolver(HostResolver::default())
    })?;
    link_is(linker, HR, "IsHostResolver", |r| {
        matches!(r, Resource::HostResolver(_))
    })?;
    link_entered(linker, HR, "Resolve", &RESOLVER, resolve)?;
    linker.func_wrap(
        HR,
        "GetCanonicalName",
        |mut caller: Caller<'_, Ctx>, ret: i32, res: i32| -> wasmtime::Result<()> {
            let s = state(&caller)?;
            let name = match lock(&s.resources).get(res) {
                Some(Resource::HostResolver(HostResolver {
                    results: Some((n, _)),
                })) => Some(n.clone()),
                _ => None,
            };
            let v = match name {
                Some(n) => string_var(&s, &n),
                None => PpVar::Undefined,
            };
            mem::write_var(&mut caller, ret as u32, v)
        },
    )?;
    link_query(linker, HR, "GetNetAddressCount", |s, res| {
        let n = match lock(&s.resources).get(res) {
            Some(Resource::HostResolver(HostResolver {
                results: Some((_, a)),
            })) => a.len(),
            _ => 0,
        };
        n as i32
    })?;
    linker.func_wrap(
        HR,
        "GetNetAddress",
        |caller: Caller<'_, Ctx>, res: i32, index: i32| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            let addr = match lock(&s.resources).get(res) {
                Some(Resource::HostResolver(HostResolver {
                    results: Some((_, a)),
                })) => a.get(index as u32 as usize).copied(),
                _ => None,
            };
            Ok(addr.map_or(0, |a| new_address(&s, a)))
        },
    )?;
    Ok(())
}

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    link_net_address(linker)?;
    link_host_resolver(linker)
}
