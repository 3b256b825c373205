//! `PPB_TCPSocket;1.0/1.1/1.2`: TCP sockets under the network rule (`pepper::net`), with
//! the state machine of Chrome's `TCPSocketResourceBase`. Connect, Read, Write and Accept
//! block on a thread of their own (`start_async`); Bind, Listen and SetOption end at once.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use socket2::{Domain, Protocol, SockRef, Socket, Type};
use wasmtime::{Caller, Linker};

use super::super::mem;
use super::super::net::{self as pnet, TcpInner, TcpPhase, TcpSocket, Verdict};
use super::super::resources::Resource;
use super::super::var::PpVar;
use super::super::{answer_now, lock, pp_error, start_async, Completion, PepperState};
use super::net::{address_of, allow, new_address, set_buffer_size};
use super::{link_create, link_is, link_query};
use super::{link_entered, Entered, Kind};
use crate::host::Ctx;

const FAMILY: &str = "PPB_TCPSocket";
/// Chrome's `TCPSocketResourceConstants`.
const MAX_READ: i32 = 1024 * 1024;
const MAX_WRITE: i32 = 1024 * 1024;
const MAX_BUFFER_SIZE: i32 = 1024 * MAX_WRITE;
/// How long a connect may take (loopback answers at once).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

type Tcp = Arc<Mutex<TcpInner>>;

const TCP: Kind<Tcp> = Kind {
    name: "TCPSocket",
    find: tcp_of,
};

fn tcp_of(s: &PepperState, id: i32) -> Option<Tcp> {
    match lock(&s.resources).get(id) {
        Some(Resource::TcpSocket(t)) => Some(t.0.clone()),
        _ => None,
    }
}

fn new_socket(addr: SocketAddr) -> std::io::Result<Socket> {
    Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
}

/// Applies the options set before the socket was connected (1.2).
fn apply_options(t: &TcpInner, sock: &Socket) {
    if let Some(v) = t.no_delay {
        let _ = sock.set_tcp_nodelay(v);
    }
    if let Some(v) = t.send_buffer {
        let _ = sock.set_send_buffer_size(v as usize);
    }
    if let Some(v) = t.recv_buffer {
        let _ = sock.set_recv_buffer_size(v as usize);
    }
}

fn bind(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Tcp>,
    (_, addr, _): (i32, i32, i32),
) -> wasmtime::Result<i32> {
    let Entered { s, cb, on: tcp } = e;
    let Some(addr) = address_of(&s, addr) else {
        return answer_now(caller, cb, pp_error::BADARGUMENT);
    };
    let result = {
        let mut t = lock(&tcp);
        if t.pending == Some(TcpPhase::Bound) {
            pp_error::INPROGRESS
        } else if t.phase != TcpPhase::Initial || t.pending.is_some() {
            pp_error::FAILED
        } else {
            let addr = pnet::bind_address(addr);
            match allow(
                &s,
                FAMILY,
                &format!("bind to {addr}"),
                pnet::is_loopback(addr.ip()),
            ) {
                Verdict::Refused(e) => e,
                Verdict::Allowed => {
                    let bound = new_socket(addr).and_then(|sock| {
                        sock.set_reuse_address(true)?;
                        sock.bind(&addr.into())?;
                        let local = sock.local_addr()?.as_socket();
                        Ok((sock, local))
                    });
                    match bound {
                        Ok((sock, local)) => {
                            t.phase = TcpPhase::Bound;
                            t.local = local;
                            t.socket = Some(Arc::new(sock));
                            pp_error::OK
                        }
                        Err(e) => pnet::io_error(&e),
                    }
                }
            }
        }
    };
    answer_now(caller, cb, result)
}

fn connect(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Tcp>,
    (_, addr, _): (i32, i32, i32),
) -> wasmtime::Result<i32> {
    let Entered { s, cb, on: tcp } = e;
    let Some(addr) = address_of(&s, addr) else {
        return answer_now(caller, cb, pp_error::BADARGUMENT);
    };
    let bound = {
        let mut t = lock(&tcp);
        if t.pending == Some(TcpPhase::Connected) {
            drop(t);
            return answer_now(caller, cb, pp_error::INPROGRESS);
        }
        if !matches!(t.phase, TcpPhase::Initial | TcpPhase::Bound) || t.pending.is_some() {
            drop(t);
            return answer_now(caller, cb, pp_error::FAILED);
        }
        if let Verdict::Refused(e) = allow(
            &s,
            FAMILY,
            &format!("connection to {addr}"),
            pnet::is_loopback(addr.ip()),
        ) {
            // As a refused connect reply: 1.1 and later close the socket.
            if !t.v1_0 {
                t.close();
            }
            drop(t);
            return answer_now(caller, cb, e);
        }
        t.pending = Some(TcpPhase::Connected);
        t.socket.clone()
    };
    start_async(caller, cb, move || {
        let connected = bound
            .map_or_else(|| new_socket(addr).map(Arc::new), Ok)
            .and_then(|sock| {
                apply_options(&lock(&tcp), &sock);
                sock.connect_timeout(&addr.into(), CONNECT_TIMEOUT)?;
                let local = sock.local_addr()?.as_socket();
                Ok((sock, local))
            });
        let mut t = lock(&tcp);
        if t.phase == TcpPhase::Closed {
            return Completion::result(pp_error::ABORTED);
        }
        t.pending = None;
        match connected {
            Ok((sock, local)) => {
                t.phase = TcpPhase::Connected;
                t.local = local;
                t.remote = Some(addr);
                t.socket = Some(sock);
                Completion::result(pp_error::OK)
            }
            Err(e) => {
                if t.v1_0 {
                    // 1.0 may connect again.
                    t.phase = TcpPhase::Initial;
                    t.socket = None;
                } else {
                    t.close();
                }
                Completion::result(pnet::io_error(&e))
            }
        }
    })
}

/// The connected socket of `tcp` for a Read or a Write, marked under way with the flag
/// `pending` picks: `PP_ERROR_INPROGRESS` when one is under way already,
/// `PP_ERROR_FAILED` when not connected.
fn begin_transfer(
    tcp: &Mutex<TcpInner>,
    pending: impl FnOnce(&mut TcpInner) -> &mut bool,
) -> Result<Arc<Socket>, i32> {
    let mut t = lock(tcp);
    let sock = match (&t.socket, t.phase) {
        (Some(sock), TcpPhase::Connected) => sock.clone(),
        _ => return Err(pp_error::FAILED),
    };
    let pending = pending(&mut t);
    if *pending {
        return Err(pp_error::INPROGRESS);
    }
    *pending = true;
    Ok(sock)
}

fn read(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Tcp>,
    (_, buf, n, _): (i32, i32, i32, i32),
) -> wasmtime::Result<i32> {
    let Entered { cb, on: tcp, .. } = e;
    if buf == 0 || n <= 0 {
        return answer_now(caller, cb, pp_error::BADARGUMENT);
    }
    let sock = match begin_transfer(&tcp, |t| &mut t.read_pending) {
        Ok(sock) => sock,
        Err(e) => return answer_now(caller, cb, e),
    };
    let n = n.min(MAX_READ) as usize;
    start_async(caller, cb, move || {
        let mut b = vec![0u8; n];
        let got = (&*sock).read(&mut b);
        let mut t = lock(&tcp);
        t.read_pending = false;
        if t.phase != TcpPhase::Connected {
            return Completion::result(pp_error::ABORTED);
        }
        match got {
            Ok(k) => {
                b.truncate(k);
                Completion {
                    result: k as i32,
                    writes: vec![(buf as u32, b)],
                }
            }
            Err(e) => Completion::result(pnet::io_error(&e)),
        }
    })
}

fn write(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Tcp>,
    (_, buf, n, _): (i32, i32, i32, i32),
) -> wasmtime::Result<i32> {
    let Entered { cb, on: tcp, .. } = e;
    if buf == 0 || n <= 0 {
        return answer_now(caller, cb, pp_error::BADARGUMENT);
    }
    // The bytes are taken now, as Chrome copied them into its message.
    let data = crate::read_memory(&mut *caller, buf as u32, n.min(MAX_WRITE) as u32)?;
    let sock = match begin_transfer(&tcp, |t| &mut t.write_pending) {
        Ok(sock) => sock,
        Err(e) => return answer_now(caller, cb, e),
    };
    start_async(caller, cb, move || {
        let wrote = (&*sock).write(&data);
        let mut t = lock(&tcp);
        t.write_pending = false;
        if t.phase != TcpPhase::Connected {
            return Completion::result(pp_error::ABORTED);
        }
        Completion::result(match wrote {
            Ok(k) => k as i32,
            Err(e) => pnet::io_error(&e),
        })
    })
}

fn listen(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Tcp>,
    (_, backlog, _): (i32, i32, i32),
) -> wasmtime::Result<i32> {
    let Entered { cb, on: tcp, .. } = e;
    let result = if backlog <= 0 {
        pp_error::BADARGUMENT
    } else {
        let mut t = lock(&tcp);
        match (&t.socket, t.phase, t.pending) {
            (_, _, Some(TcpPhase::Listening)) => pp_error::INPROGRESS,
            (Some(sock), TcpPhase::Bound, None) => match sock.listen(backlog) {
                Ok(()) => {
                    t.phase = TcpPhase::Listening;
                    pp_error::OK
                }
                Err(e) => pnet::io_error(&e),
            },
            _ => pp_error::FAILED,
        }
    };
    answer_now(caller, cb, result)
}

fn accept(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Tcp>,
    (_, out, _): (i32, i32, i32),
) -> wasmtime::Result<i32> {
    let Entered { s, cb, on: tcp } = e;
    if out == 0 {
        return answer_now(caller, cb, pp_error::BADARGUMENT);
    }
    let sock = {
        let mut t = lock(&tcp);
        if t.accept_pending {
            drop(t);
            return answer_now(caller, cb, pp_error::INPROGRESS);
        }
        match (&t.socket, t.phase) {
            (Some(sock), TcpPhase::Listening) => {
                let sock = sock.clone();
                t.accept_pending = true;
                sock
            }
            _ => {
                drop(t);
                return answer_now(caller, cb, pp_error::FAILED);
            }
        }
    };
    let s2 = s.clone();
    start_async(caller, cb, move || {
        let got = sock.accept();
        {
            let mut t = lock(&tcp);
            t.accept_pending = false;
            if t.phase != TcpPhase::Listening {
                return Completion::result(pp_error::ABORTED);
            }
        }
        match got {
            Ok((conn, peer)) => {
                let accepted = TcpSocket::new(false);
                {
                    let mut a = lock(&accepted.0);
                    a.phase = TcpPhase::Connected;
                    a.local = conn.local_addr().ok().and_then(|a| a.as_socket());
                    a.remote = peer.as_socket();
                    a.socket = Some(Arc::new(conn));
                }
                let id = lock(&s2.resources).add(Resource::TcpSocket(accepted));
                Completion {
                    result: pp_error::OK,
                    writes: vec![(out as u32, id.to_le_bytes().to_vec())],
                }
            }
            Err(e) => Completion::result(pnet::io_error(&e)),
        }
    })
}

/// `SetOption`; `check_connected`: 1.0 and 1.1 take options only once connected, 1.2 keeps
/// them until the connect.
fn set_option(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Tcp>,
    (_, name, value, _): (i32, i32, i32, i32),
    check_connected: bool,
) -> wasmtime::Result<i32> {
    let Entered { cb, on: tcp, .. } = e;
    let value = mem::read_var(&mut *caller, value as u32)?;
    let result = {
        let mut t = lock(&tcp);
        let connected = t.phase == TcpPhase::Connected;
        match (name, value) {
            (0..=2, _) if check_connected && !connected => pp_error::FAILED,
            (0, PpVar::Bool(b)) => {
                t.no_delay = Some(b);
                match (&t.socket, connected) {
                    (Some(sock), true) => sock
                        .set_tcp_nodelay(b)
                        .map_or_else(|e| pnet::io_error(&e), |_| 0),
                    _ => pp_error::OK,
                }
            }
            (1 | 2, PpVar::Int32(v)) if v > 0 && v <= MAX_BUFFER_SIZE => {
                if name == 1 {
                    t.send_buffer = Some(v);
                } else {
                    t.recv_buffer = Some(v);
                }
                match (&t.socket, connected) {
                    (Some(sock), true) => set_buffer_size(SockRef::from(&**sock), name == 1, v),
                    _ => pp_error::OK,
                }
            }
            _ => pp_error::BADARGUMENT,
        }
    };
    answer_now(caller, cb, result)
}

fn link_common(linker: &mut Linker<Ctx>, iface: &'static str, v1_0: bool) -> wasmtime::Result<()> {
    link_create(linker, iface, move || {
        Resource::TcpSocket(TcpSocket::new(v1_0))
    })?;
    link_is(linker, iface, "IsTCPSocket", |r| {
        matches!(r, Resource::TcpSocket(_))
    })?;
    link_entered(linker, iface, "Connect", &TCP, connect)?;
    link_query(linker, iface, "GetLocalAddress", |s, res| {
        let addr = tcp_of(s, res).and_then(|t| {
            let t = lock(&t);
            matches!(
                t.phase,
                TcpPhase::Bound | TcpPhase::Connected | TcpPhase::Listening
            )
            .then_some(t.local)
            .flatten()
        });
        addr.map_or(0, |a| new_address(s, a))
    })?;
    link_query(linker, iface, "GetRemoteAddress", |s, res| {
        let addr = tcp_of(s, res).and_then(|t| {
            let t = lock(&t);
            (t.phase == TcpPhase::Connected)
                .then_some(t.remote)
                .flatten()
        });
        addr.map_or(0, |a| new_address(s, a))
    })?;
    link_entered(linker, iface, "Read", &TCP, read)?;
    link_entered(linker, iface, "Write", &TCP, write)?;
    link_query(linker, iface, "Close", |s, res| {
        if let Some(t) = tcp_of(s, res) {
            lock(&t).close();
        }
    })?;
    let check_connected = iface != "PPB_TCPSocket;1.2";
    link_entered(
        linker,
        iface,
        "SetOption",
        &TCP,
        move |caller: &mut Caller<'_, Ctx>, e: Entered<Tcp>, args: (i32, i32, i32, i32)| {
            set_option(caller, e, args, check_connected)
        },
    )?;
    Ok(())
}

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    link_common(linker, "PPB_TCPSocket;1.0", true)?;
    for iface in ["PPB_TCPSocket;1.1", "PPB_TCPSocket;1.2"] {
        link_common(linker, iface, false)?;
        link_entered(linker, iface, "Bind", &TCP, bind)?;
        link_entered(linker, iface, "Listen", &TCP, listen)?;
        link_entered(linker, iface, "Accept", &TCP, accept)?;
    }
    Ok(())
}
