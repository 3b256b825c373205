//! `PPB_UDPSocket;1.0/1.1/1.2`: UDP sockets under the network rule (`pepper::net`), with
//! the rules of Chrome's `UDPSocketResourceBase`. RecvFrom waits on a thread of its own
//! (`start_async`); Bind, SendTo and SetOption end at once. Multicast groups are never
//! loopback, so JoinGroup and LeaveGroup get `PP_ERROR_NOACCESS`.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use socket2::{Domain, Protocol, SockRef, Socket, Type};
use wasmtime::{Caller, Linker};

use super::super::mem;
use super::super::net::{self as pnet, UdpInner, UdpSocket, Verdict, UDP_POLL};
use super::super::resources::Resource;
use super::super::var::PpVar;
use super::super::{answer_now, lock, pp_error, start_async, Completion, PepperState};
use super::net::{address_of, allow, new_address, set_buffer_size};
use super::{link_create, link_is, link_query};
use super::{link_entered, Entered, Kind};
use crate::host::Ctx;

const FAMILY: &str = "PPB_UDPSocket";
/// Chrome's `UDPSocketResourceConstants`.
const MAX_READ: i32 = 128 * 1024;
const MAX_WRITE: i32 = 128 * 1024;
const MAX_BUFFER_SIZE: i32 = 1024 * MAX_WRITE;

/// `PP_UDPSocket_Option`.
const REUSE: i32 = 0;
const BROADCAST: i32 = 1;
const SEND_BUFFER: i32 = 2;
const RECV_BUFFER: i32 = 3;
const MULTICAST_LOOP: i32 = 4;
const MULTICAST_TTL: i32 = 5;

type Udp = Arc<Mutex<UdpInner>>;

const UDP: Kind<Udp> = Kind {
    name: "UDPSocket",
    find: udp_of,
};

fn udp_of(s: &PepperState, id: i32) -> Option<Udp> {
    match lock(&s.resources).get(id) {
        Some(Resource::UdpSocket(u)) => Some(u.0.clone()),
        _ => None,
    }
}

fn bind_socket(u: &UdpInner, addr: SocketAddr) -> std::io::Result<std::net::UdpSocket> {
    let sock = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    if let Some(v) = u.reuse {
        sock.set_reuse_address(v)?;
    }
    if let Some(v) = u.broadcast {
        sock.set_broadcast(v)?;
    }
    if let Some(v) = u.send_buffer {
        sock.set_send_buffer_size(v as usize)?;
    }
    if let Some(v) = u.recv_buffer {
        sock.set_recv_buffer_size(v as usize)?;
    }
    sock.bind(&addr.into())?;
    sock.set_read_timeout(Some(UDP_POLL))?;
    Ok(sock.into())
}

fn bind(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Udp>,
    (_, addr, _): (i32, i32, i32),
) -> wasmtime::Result<i32> {
    let Entered { s, cb, on: udp } = e;
    let Some(addr) = address_of(&s, addr) else {
        return answer_now(caller, cb, pp_error::BADARGUMENT);
    };
    let result = {
        let mut u = lock(&udp);
        if u.bound || u.closed {
            pp_error::FAILED
        } else {
            u.bind_called = true;
            let addr = pnet::bind_address(addr);
            match allow(
                &s,
                FAMILY,
                &format!("bind to {addr}"),
                pnet::is_loopback(addr.ip()),
            ) {
                Verdict::Refused(e) => e,
                Verdict::Allowed => match bind_socket(&u, addr) {
                    Ok(sock) => {
                        u.bound_addr = sock.local_addr().ok();
                        u.socket = Some(Arc::new(sock));
                        u.bound = true;
                        pp_error::OK
                    }
                    Err(e) => pnet::io_error(&e),
                },
            }
        }
    };
    answer_now(caller, cb, result)
}

fn recv_from(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Udp>,
    (_, buf, n, addr_out, _): (i32, i32, i32, i32, i32),
) -> wasmtime::Result<i32> {
    let Entered { s, cb, on: udp } = e;
    let sock = {
        let mut u = lock(&udp);
        match &u.socket {
            Some(_) if !u.bound => None,
            Some(sock) if buf != 0 && n > 0 && !u.recv_pending => {
                let sock = sock.clone();
                u.recv_pending = true;
                Some(Ok(sock))
            }
            Some(_) if u.recv_pending => Some(Err(pp_error::INPROGRESS)),
            Some(_) => Some(Err(pp_error::BADARGUMENT)),
            None => None,
        }
    };
    let sock = match sock {
        None => return answer_now(caller, cb, pp_error::FAILED),
        Some(Err(e)) => return answer_now(caller, cb, e),
        Some(Ok(sock)) => sock,
    };
    let n = n.min(MAX_READ) as usize;
    let s2 = s.clone();
    start_async(caller, cb, move || {
        let mut b = vec![0u8; n];
        let got = loop {
            match sock.recv_from(&mut b) {
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) && !lock(&udp).closed =>
                {
                    continue
                }
                r => break r,
            }
        };
        {
            let mut u = lock(&udp);
            u.recv_pending = false;
            if u.closed {
                return Completion::result(pp_error::ABORTED);
            }
        }
        match got {
            Ok((k, from)) => {
                b.truncate(k);
                let mut writes = vec![(buf as u32, b)];
                if addr_out != 0 {
                    let id = new_address(&s2, from);
                    writes.push((addr_out as u32, id.to_le_bytes().to_vec()));
                }
                Completion {
                    result: k as i32,
                    writes,
                }
            }
            Err(e) => Completion::result(pnet::io_error(&e)),
        }
    })
}

fn send_to(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Udp>,
    (_, buf, n, addr, _): (i32, i32, i32, i32, i32),
) -> wasmtime::Result<i32> {
    let Entered { s, cb, on: udp } = e;
    let target = address_of(&s, addr);
    let (Some(target), true) = (target, buf != 0 && n > 0) else {
        return answer_now(caller, cb, pp_error::BADARGUMENT);
    };
    let Some(sock) = lock(&udp).socket.clone() else {
        return answer_now(caller, cb, pp_error::FAILED);
    };
    if let Verdict::Refused(e) = allow(
        &s,
        FAMILY,
        &format!("sending to {target}"),
        pnet::is_loopback(target.ip()),
    ) {
        return answer_now(caller, cb, e);
    }
    let data = crate::read_memory(&mut *caller, buf as u32, n.min(MAX_WRITE) as u32)?;
    let result = match sock.send_to(&data, target) {
        Ok(k) => k as i32,
        Err(e) => pnet::io_error(&e),
    };
    answer_now(caller, cb, result)
}

/// `SetOption`; `v1_0`: 1.0's rules (reuse and broadcast before Bind, buffer sizes after);
/// `multicast`: 1.2's options are known.
fn set_option(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Udp>,
    (_, name, value, _): (i32, i32, i32, i32),
    v1_0: bool,
    multicast: bool,
) -> wasmtime::Result<i32> {
    let Entered { cb, on: udp, .. } = e;
    let value = mem::read_var(&mut *caller, value as u32)?;
    let result = {
        let mut u = lock(&udp);
        let known = matches!(name, REUSE..=RECV_BUFFER)
            || (multicast && matches!(name, MULTICAST_LOOP | MULTICAST_TTL));
        if u.closed {
            pp_error::FAILED
        } else if !known {
            pp_error::BADARGUMENT
        } else if (matches!(name, REUSE | BROADCAST | MULTICAST_LOOP | MULTICAST_TTL)
            && (v1_0 || name == REUSE)
            && u.bind_called)
            || (matches!(name, SEND_BUFFER | RECV_BUFFER) && v1_0 && !u.bound)
        {
            // Options that shape the bind come before it; 1.0 takes buffer sizes after.
            pp_error::FAILED
        } else {
            match (name, value) {
                (REUSE, PpVar::Bool(b)) => {
                    u.reuse = Some(b);
                    pp_error::OK
                }
                (BROADCAST, PpVar::Bool(b)) => {
                    u.broadcast = Some(b);
                    match &u.socket {
                        Some(sock) => SockRef::from(&**sock)
                            .set_broadcast(b)
                            .map_or_else(|e| pnet::io_error(&e), |_| 0),
                        None => pp_error::OK,
                    }
                }
                (SEND_BUFFER | RECV_BUFFER, PpVar::Int32(v)) if v > 0 && v <= MAX_BUFFER_SIZE => {
                    if name == SEND_BUFFER {
                        u.send_buffer = Some(v);
                    } else {
                        u.recv_buffer = Some(v);
                    }
                    match &u.socket {
                        Some(sock) => {
                            set_buffer_size(SockRef::from(&**sock), name == SEND_BUFFER, v)
                        }
                        None => pp_error::OK,
                    }
                }
                // Nothing is ever sent to a multicast group, so these change nothing.
                (MULTICAST_LOOP, PpVar::Bool(_)) => pp_error::OK,
                (MULTICAST_TTL, PpVar::Int32(0..=255)) => pp_error::OK,
                _ => pp_error::BADARGUMENT,
            }
        }
    };
    answer_now(caller, cb, result)
}

fn link_version(linker: &mut Linker<Ctx>, iface: &'static str) -> wasmtime::Result<()> {
    link_create(linker, iface, || Resource::UdpSocket(UdpSocket::default()))?;
    link_is(linker, iface, "IsUDPSocket", |r| {
        matches!(r, Resource::UdpSocket(_))
    })?;
    link_entered(linker, iface, "Bind", &UDP, bind)?;
    link_query(linker, iface, "GetBoundAddress", |s, res| {
        let addr = udp_of(s, res).and_then(|u| {
            let u = lock(&u);
            (u.bound && !u.closed).then_some(u.bound_addr).flatten()
        });
        addr.map_or(0, |a| new_address(s, a))
    })?;
    link_entered(linker, iface, "RecvFrom", &UDP, recv_from)?;
    link_entered(linker, iface, "SendTo", &UDP, send_to)?;
    link_query(linker, iface, "Close", |s, res| {
        if let Some(u) = udp_of(s, res) {
            lock(&u).close();
        }
    })?;
    let v1_0 = iface == "PPB_UDPSocket;1.0";
    let multicast = iface == "PPB_UDPSocket;1.2";
    link_entered(
        linker,
        iface,
        "SetOption",
        &UDP,
        move |caller: &mut Caller<'_, Ctx>, e: Entered<Udp>, args: (i32, i32, i32, i32)| {
            set_option(caller, e, args, v1_0, multicast)
        },
    )?;
    Ok(())
}

/// `JoinGroup`/`LeaveGroup`: a multicast group is not loopback.
fn group(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Udp>,
    (_, group, _): (i32, i32, i32),
) -> wasmtime::Result<i32> {
    let Entered { s, cb, on: _ } = e;
    let Some(group) = address_of(&s, group) else {
        return answer_now(caller, cb, pp_error::BADARGUMENT);
    };
    let result = match allow(
        &s,
        FAMILY,
        &format!("multicast group {}", group.ip()),
        pnet::is_loopback(group.ip()),
    ) {
        Verdict::Refused(e) => e,
        Verdict::Allowed => pp_error::ADDRESS_INVALID,
    };
    answer_now(caller, cb, result)
}

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    for iface in [
        "PPB_UDPSocket;1.0",
        "PPB_UDPSocket;1.1",
        "PPB_UDPSocket;1.2",
    ] {
        link_version(linker, iface)?;
    }
    link_entered(linker, "PPB_UDPSocket;1.2", "JoinGroup", &UDP, group)?;
    link_entered(linker, "PPB_UDPSocket;1.2", "LeaveGroup", &UDP, group)?;
    Ok(())
}
