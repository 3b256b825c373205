//! The network interfaces of the command-line host (`PPB_NetAddress`, `PPB_HostResolver`,
//! `PPB_TCPSocket`, `PPB_UDPSocket`, `PPB_WebSocket`) called one by one
//! (`pepper_support::Harness`): addresses, resource kinds, the network rule with and
//! without `--net loopback`, Chrome's callback rules, and real traffic on loopback made
//! with blocking callbacks from a thread other than the main one (the call then waits for
//! the operation, so no message loop is needed). Nothing here reaches beyond loopback:
//! the non-loopback addresses (192.0.2.0/24, TEST-NET-1) are refused before any packet.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use pexe2wasm_runner::pepper::var::PpVar;
use pexe2wasm_runner::pepper::{pp_error, INSTANCE};
use pexe2wasm_runner::wasmtime::Val;

use crate::pepper_support::Harness;

const NA: &str = "PPB_NetAddress;1.0";
const HR: &str = "PPB_HostResolver;1.0";
const TCP10: &str = "PPB_TCPSocket;1.0";
const TCP11: &str = "PPB_TCPSocket;1.1";
const TCP12: &str = "PPB_TCPSocket;1.2";
const UDP10: &str = "PPB_UDPSocket;1.0";
const UDP11: &str = "PPB_UDPSocket;1.1";
const UDP12: &str = "PPB_UDPSocket;1.2";
const WS: &str = "PPB_WebSocket;1.0";

/// Where the tests keep callbacks, addresses, vars and buffers (below the harness heap).
const CB_BLOCKING: u32 = 0x800;
const CB_OPTIONAL: u32 = 0x810;
const CB_REQUIRED: u32 = 0x820;
const SCRATCH: u32 = 0x900;
const RET: u32 = 0xA00;
const VARS: u32 = 0xB00;
const BUF: u32 = 0x4000;
const OUT: u32 = 0x3000;

fn loopback() -> Harness {
    let mut h = Harness::with_config(|c| c.net_loopback = true);
    callbacks(&mut h);
    h
}

fn plain() -> Harness {
    let mut h = Harness::new();
    callbacks(&mut h);
    h
}

/// `PP_BlockUntilComplete()`, an optional callback and a required one (never run here:
/// only results that come at once are asked of them).
fn callbacks(h: &mut Harness) {
    h.write(CB_BLOCKING, &[0; 12]);
    let optional: Vec<u8> = [7i32, 0, 1].iter().flat_map(|x| x.to_le_bytes()).collect();
    h.write(CB_OPTIONAL, &optional);
    let required: Vec<u8> = [7i32, 0, 0].iter().flat_map(|x| x.to_le_bytes()).collect();
    h.write(CB_REQUIRED, &required);
}

fn v4(h: &mut Harness, ip: [u8; 4], port: u16) -> i32 {
    let mut b = port.to_be_bytes().to_vec();
    b.extend_from_slice(&ip);
    h.write(SCRATCH, &b);
    h.call(NA, "CreateFromIPv4Address", &[INSTANCE, SCRATCH as i32])
}

fn v6(h: &mut Harness, ip: std::net::Ipv6Addr, port: u16) -> i32 {
    let mut b = port.to_be_bytes().to_vec();
    b.extend_from_slice(&ip.octets());
    h.write(SCRATCH, &b);
    h.call(NA, "CreateFromIPv6Address", &[INSTANCE, SCRATCH as i32])
}

/// The string a var holds (`None` for another kind of var).
fn text(h: &Harness, v: PpVar) -> Option<String> {
    h.state().vars().string(v).map(str::to_string)
}

fn describe(h: &mut Harness, addr: i32, port: bool) -> Option<String> {
    h.call(NA, "DescribeAsString", &[RET as i32, addr, port as i32]);
    let v = h.read_var(RET);
    text(h, v)
}

fn c_string(h: &mut Harness, s: &str) -> i32 {
    let mut b = s.as_bytes().to_vec();
    b.push(0);
    h.write(SCRATCH + 0x40, &b);
    (SCRATCH + 0x40) as i32
}

fn resolve(
    h: &mut Harness,
    res: i32,
    host: &str,
    port: u16,
    family: i32,
    flags: i32,
    cb: u32,
) -> i32 {
    let host = c_string(h, host);
    let hint: Vec<u8> = [family, flags]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    h.write(SCRATCH + 0x20, &hint);
    h.call(
        HR,
        "Resolve",
        &[res, host, port as i32, (SCRATCH + 0x20) as i32, cb as i32],
    )
}

/// A string var stored at `at`.
fn string_at(h: &mut Harness, s: &str, at: u32) -> PpVar {
    h.make_string(s, at)
}

fn ws_connect(h: &mut Harness, ws: i32, url: &str, protocols: &[&str], cb: u32) -> i32 {
    string_at(h, url, VARS);
    for (i, p) in protocols.iter().enumerate() {
        let at = VARS + 0x200 + 0x20 * i as u32;
        let v = string_at(h, p, at);
        h.write_var(VARS + 0x100 + 16 * i as u32, v);
    }
    h.call(
        WS,
        "Connect",
        &[
            ws,
            VARS as i32,
            (VARS + 0x100) as i32,
            protocols.len() as i32,
            cb as i32,
        ],
    )
}

fn notes(h: &Harness) -> Vec<String> {
    h.sink.notes.lock().unwrap().clone()
}

#[test]
fn net_addresses_round_trip_and_describe_themselves_as_chrome_did() {
    let mut h = plain();
    let a = v4(&mut h, [127, 0, 0, 1], 8080);
    assert_ne!(a, 0);
    assert_eq!(h.call(NA, "IsNetAddress", &[a]), 1);
    assert_eq!(h.call(NA, "GetFamily", &[a]), 1);
    assert_eq!(describe(&mut h, a, true).as_deref(), Some("127.0.0.1:8080"));
    assert_eq!(describe(&mut h, a, false).as_deref(), Some("127.0.0.1"));
    assert_eq!(h.call(NA, "DescribeAsIPv4Address", &[a, OUT as i32]), 1);
    assert_eq!(h.read(OUT, 6), [0x1f, 0x90, 127, 0, 0, 1]);
    assert_eq!(h.call(NA, "DescribeAsIPv6Address", &[a, OUT as i32]), 0);

    let ip: std::net::Ipv6Addr = "2001:db8::1:0:0:1".parse().unwrap();
    let b = v6(&mut h, ip, 443);
    assert_eq!(h.call(NA, "GetFamily", &[b]), 2);
    assert_eq!(
        describe(&mut h, b, true).as_deref(),
        Some("[2001:db8::1:0:0:1]:443")
    );
    assert_eq!(h.call(NA, "DescribeAsIPv6Address", &[b, OUT as i32]), 1);
    let mut want = 443u16.to_be_bytes().to_vec();
    want.extend_from_slice(&ip.octets());
    assert_eq!(h.read(OUT, 18), want);
    assert_eq!(h.call(NA, "DescribeAsIPv4Address", &[b, OUT as i32]), 0);
    // Chrome wrote addresses whose first 96 bits are 0 or ::ffff:0:0/96 with the last 32
    // bits dotted, ::1 included.
    let c = v6(&mut h, "::ffff:10.1.2.3".parse().unwrap(), 1);
    assert_eq!(
        describe(&mut h, c, false).as_deref(),
        Some("::ffff:10.1.2.3")
    );
    let d = v6(&mut h, std::net::Ipv6Addr::LOCALHOST, 1);
    assert_eq!(describe(&mut h, d, true).as_deref(), Some("[::0.0.0.1]:1"));

    // Wrong instance, NULL pointer, wrong resources.
    h.write(SCRATCH, &[0; 6]);
    assert_eq!(
        h.call(NA, "CreateFromIPv4Address", &[INSTANCE + 1, SCRATCH as i32]),
        0
    );
    assert_eq!(h.call(NA, "CreateFromIPv4Address", &[INSTANCE, 0]), 0);
    assert_eq!(h.call(NA, "IsNetAddress", &[0]), 0);
    assert_eq!(h.call(NA, "GetFamily", &[12345]), 0);
    h.call(NA, "DescribeAsString", &[RET as i32, 12345, 1]);
    assert_eq!(h.read_var(RET), PpVar::Undefined);
    assert_eq!(h.call(NA, "DescribeAsIPv4Address", &[a, 0]), 0);
    // Releasing the last reference frees the address.
    h.call("PPB_Core;1.0", "ReleaseResource", &[a]);
    assert_eq!(h.call(NA, "IsNetAddress", &[a]), 0);
}

#[test]
fn each_resource_answers_only_to_its_own_interface() {
    let mut h = plain();
    let addr = v4(&mut h, [127, 0, 0, 1], 1);
    let resolver = h.call(HR, "Create", &[INSTANCE]);
    let tcp: Vec<i32> = [TCP10, TCP11, TCP12]
        .iter()
        .map(|i| h.call(i, "Create", &[INSTANCE]))
        .collect();
    let udp: Vec<i32> = [UDP10, UDP11, UDP12]
        .iter()
        .map(|i| h.call(i, "Create", &[INSTANCE]))
        .collect();
    let ws = h.call(WS, "Create", &[INSTANCE]);
    let all = [vec![addr, resolver, ws], tcp.clone(), udp.clone()].concat();
    assert!(all.iter().all(|&r| r != 0), "{all:?}");
    for &r in &all {
        assert_eq!(h.call(NA, "IsNetAddress", &[r]), (r == addr) as i32);
        assert_eq!(h.call(HR, "IsHostResolver", &[r]), (r == resolver) as i32);
        assert_eq!(h.call(WS, "IsWebSocket", &[r]), (r == ws) as i32);
        for iface in [TCP10, TCP11, TCP12] {
            assert_eq!(h.call(iface, "IsTCPSocket", &[r]), tcp.contains(&r) as i32);
        }
        for iface in [UDP10, UDP11, UDP12] {
            assert_eq!(h.call(iface, "IsUDPSocket", &[r]), udp.contains(&r) as i32);
        }
    }
    for iface in [HR, TCP10, TCP12, UDP11, WS] {
        assert_eq!(h.call(iface, "Create", &[INSTANCE + 1]), 0, "{iface}");
    }
    // A socket of the wrong kind gets PP_ERROR_BADRESOURCE (an optional callback: at once).
    assert_eq!(
        h.call(TCP12, "Connect", &[udp[0], addr, CB_OPTIONAL as i32]),
        pp_error::BADRESOURCE
    );
    assert_eq!(
        h.call(UDP12, "Bind", &[tcp[0], addr, CB_OPTIONAL as i32]),
        pp_error::BADRESOURCE
    );
    assert_eq!(
        h.call(
            WS,
            "ReceiveMessage",
            &[addr, OUT as i32, CB_OPTIONAL as i32]
        ),
        pp_error::BADRESOURCE
    );
    assert_eq!(
        h.call(WS, "SendMessage", &[resolver, VARS as i32]),
        pp_error::BADRESOURCE
    );
    assert_eq!(h.call(WS, "GetReadyState", &[addr]), -1);
    h.call(WS, "GetURL", &[RET as i32, addr]);
    assert_eq!(h.read_var(RET), PpVar::Undefined);
    assert_eq!(h.call(HR, "GetNetAddressCount", &[ws]), 0);
    // An address that is not a NetAddress: PP_ERROR_BADARGUMENT.
    assert_eq!(
        h.call(TCP12, "Connect", &[tcp[2], resolver, CB_OPTIONAL as i32]),
        pp_error::BADARGUMENT
    );
}

#[test]
fn without_net_loopback_every_network_operation_is_refused_and_noted_once() {
    let mut h = plain();
    let addr = v4(&mut h, [127, 0, 0, 1], 9);
    let opt = CB_OPTIONAL as i32;
    for iface in [TCP10, TCP11, TCP12] {
        let t = h.call(iface, "Create", &[INSTANCE]);
        assert_eq!(
            h.call(iface, "Connect", &[t, addr, opt]),
            pp_error::NOACCESS,
            "{iface}"
        );
    }
    let t = h.call(TCP12, "Create", &[INSTANCE]);
    assert_eq!(h.call(TCP12, "Bind", &[t, addr, opt]), pp_error::NOACCESS);
    let u = h.call(UDP10, "Create", &[INSTANCE]);
    assert_eq!(h.call(UDP10, "Bind", &[u, addr, opt]), pp_error::NOACCESS);
    let r = h.call(HR, "Create", &[INSTANCE]);
    assert_eq!(
        resolve(&mut h, r, "localhost", 80, 0, 0, CB_OPTIONAL),
        pp_error::NOACCESS
    );
    assert_eq!(h.call(HR, "GetNetAddressCount", &[r]), 0);
    let ws = h.call(WS, "Create", &[INSTANCE]);
    assert_eq!(
        ws_connect(&mut h, ws, "ws://127.0.0.1:8081/", &[], CB_OPTIONAL),
        pp_error::NOACCESS
    );
    assert_eq!(h.call(WS, "GetReadyState", &[ws]), 3);

    let n = notes(&h);
    for family in [
        "PPB_TCPSocket",
        "PPB_UDPSocket",
        "PPB_HostResolver",
        "PPB_WebSocket",
    ] {
        let mine: Vec<_> = n
            .iter()
            .filter(|l| l.starts_with(&format!("{family}:")))
            .collect();
        assert_eq!(mine.len(), 1, "{family}: {n:#?}");
        assert!(
            mine[0].contains("PP_ERROR_NOACCESS") && mine[0].contains("--net loopback"),
            "{mine:?}"
        );
    }
    assert_eq!(n.len(), 4, "{n:#?}");
}

#[test]
fn with_net_loopback_other_addresses_and_names_are_refused() {
    let mut h = loopback();
    let opt = CB_OPTIONAL as i32;
    let far = v4(&mut h, [192, 0, 2, 1], 80);
    // 1.1 and later: a refused connect closes the socket; 1.0 may try again.
    let t11 = h.call(TCP11, "Create", &[INSTANCE]);
    assert_eq!(
        h.call(TCP11, "Connect", &[t11, far, opt]),
        pp_error::NOACCESS
    );
    assert_eq!(h.call(TCP11, "Connect", &[t11, far, opt]), pp_error::FAILED);
    let t10 = h.call(TCP10, "Create", &[INSTANCE]);
    assert_eq!(
        h.call(TCP10, "Connect", &[t10, far, opt]),
        pp_error::NOACCESS
    );
    assert_eq!(
        h.call(TCP10, "Connect", &[t10, far, opt]),
        pp_error::NOACCESS
    );
    let t = h.call(TCP12, "Create", &[INSTANCE]);
    assert_eq!(h.call(TCP12, "Bind", &[t, far, opt]), pp_error::NOACCESS);

    // A bind to 0.0.0.0 binds loopback; sends go to loopback only.
    let any = v4(&mut h, [0, 0, 0, 0], 0);
    let u = h.call(UDP11, "Create", &[INSTANCE]);
    assert_eq!(h.call(UDP11, "Bind", &[u, any, opt]), pp_error::OK);
    let bound = h.call(UDP11, "GetBoundAddress", &[u]);
    let d = describe(&mut h, bound, true).unwrap();
    assert!(d.starts_with("127.0.0.1:") && !d.ends_with(":0"), "{d}");
    h.write(BUF, b"x");
    assert_eq!(
        h.call(UDP11, "SendTo", &[u, BUF as i32, 1, far, opt]),
        pp_error::NOACCESS
    );
    let broadcast = v4(&mut h, [255, 255, 255, 255], 9);
    assert_eq!(
        h.call(UDP11, "SendTo", &[u, BUF as i32, 1, broadcast, opt]),
        pp_error::NOACCESS
    );
    let group = v4(&mut h, [239, 1, 2, 3], 9);
    assert_eq!(
        h.call(UDP12, "JoinGroup", &[u, group, opt]),
        pp_error::NOACCESS
    );

    // Names: localhost only, never a DNS query.
    let r = h.call(HR, "Create", &[INSTANCE]);
    assert_eq!(
        resolve(&mut h, r, "example.com", 80, 0, 0, CB_OPTIONAL),
        pp_error::NAME_NOT_RESOLVED
    );
    assert_eq!(
        resolve(&mut h, r, "192.0.2.1", 80, 0, 0, CB_OPTIONAL),
        pp_error::NOACCESS
    );
    assert_eq!(h.call(HR, "GetNetAddressCount", &[r]), 0);
    h.call(HR, "GetCanonicalName", &[RET as i32, r]);
    assert_eq!(h.read_var(RET), PpVar::Undefined);
    assert_eq!(
        resolve(&mut h, r, "LocalHost.", 8080, 0, 1, CB_OPTIONAL),
        pp_error::OK
    );
    assert_eq!(h.call(HR, "GetNetAddressCount", &[r]), 2);
    h.call(HR, "GetCanonicalName", &[RET as i32, r]);
    let v = h.read_var(RET);
    assert_eq!(text(&h, v).as_deref(), Some("localhost"));
    let a0 = h.call(HR, "GetNetAddress", &[r, 0]);
    let a1 = h.call(HR, "GetNetAddress", &[r, 1]);
    assert_eq!(
        describe(&mut h, a0, true).as_deref(),
        Some("127.0.0.1:8080")
    );
    assert_eq!(
        describe(&mut h, a1, true).as_deref(),
        Some("[::0.0.0.1]:8080")
    );
    assert_eq!(h.call(HR, "GetNetAddress", &[r, 2]), 0);
    assert_eq!(
        resolve(&mut h, r, "localhost", 1, 1, 0, CB_OPTIONAL),
        pp_error::OK
    );
    assert_eq!(h.call(HR, "GetNetAddressCount", &[r]), 1);
    h.call(HR, "GetCanonicalName", &[RET as i32, r]);
    let v = h.read_var(RET);
    assert_eq!(text(&h, v).as_deref(), Some(""));
    assert_eq!(
        resolve(&mut h, r, "127.0.0.2", 1, 0, 0, CB_OPTIONAL),
        pp_error::OK
    );
    assert_eq!(
        resolve(&mut h, r, "::1", 1, 1, 0, CB_OPTIONAL),
        pp_error::NAME_NOT_RESOLVED
    );
    assert_eq!(
        resolve(&mut h, r, "localhost", 1, 7, 0, CB_OPTIONAL),
        pp_error::BADARGUMENT
    );

    // WebSocket URLs: ws:// to loopback only.
    for (url, want) in [
        ("ws://example.com/x", pp_error::NOACCESS),
        ("ws://192.0.2.1:8081/", pp_error::NOACCESS),
        ("wss://localhost/", pp_error::FAILED),
        ("http://localhost/", pp_error::BADARGUMENT),
        ("ws://localhost/#part", pp_error::BADARGUMENT),
        ("not a url", pp_error::BADARGUMENT),
    ] {
        let ws = h.call(WS, "Create", &[INSTANCE]);
        assert_eq!(ws_connect(&mut h, ws, url, &[], CB_OPTIONAL), want, "{url}");
        assert_eq!(
            ws_connect(&mut h, ws, url, &[], CB_OPTIONAL),
            pp_error::INPROGRESS,
            "{url}"
        );
    }
    let ws = h.call(WS, "Create", &[INSTANCE]);
    h.write_var(VARS, PpVar::Int32(1));
    assert_eq!(
        h.call(WS, "Connect", &[ws, VARS as i32, 0, 0, opt]),
        pp_error::BADARGUMENT
    );
    for protocols in [&["a", "a"][..], &[""], &["a b"]] {
        let ws = h.call(WS, "Create", &[INSTANCE]);
        assert_eq!(
            ws_connect(&mut h, ws, "ws://localhost:8081/", protocols, CB_OPTIONAL),
            pp_error::BADARGUMENT,
            "{protocols:?}"
        );
    }
    let n = notes(&h);
    assert!(
        n.iter()
            .any(|l| l.starts_with("PPB_TCPSocket: connection to 192.0.2.1:80 refused")),
        "{n:#?}"
    );
    assert!(
        n.iter().any(|l| l.contains("loopback addresses only")),
        "{n:#?}"
    );
}

#[test]
fn callbacks_follow_chromes_thread_rules() {
    let mut h = loopback();
    let addr = v4(&mut h, [127, 0, 0, 1], 9);
    let t = h.call(TCP12, "Create", &[INSTANCE]);
    let ws = h.call(WS, "Create", &[INSTANCE]);
    // Blocking on the main thread: refused; with a bad resource as well, the bad
    // resource is what the call returns (Chrome's enter.cc, SetStateForResourceError).
    assert_eq!(
        h.call(TCP12, "Connect", &[t, addr, CB_BLOCKING as i32]),
        pp_error::BLOCKS_MAIN_THREAD
    );
    assert_eq!(
        h.call(TCP12, "Read", &[999, BUF as i32, 4, CB_BLOCKING as i32]),
        pp_error::BADRESOURCE
    );
    assert_eq!(
        h.call(WS, "ReceiveMessage", &[ws, OUT as i32, CB_BLOCKING as i32]),
        pp_error::BLOCKS_MAIN_THREAD
    );
    // Another thread without a message loop may not have a callback called later.
    h.on_thread(1);
    assert_eq!(
        h.call(TCP12, "Connect", &[t, addr, CB_REQUIRED as i32]),
        pp_error::NO_MESSAGE_LOOP
    );
    // Resource 1 is no resolver: the bad resource wins over the missing loop (Chrome's
    // enter.cc, SetStateForResourceError).
    assert_eq!(
        h.call(HR, "Resolve", &[1, 0, 0, 0, CB_OPTIONAL as i32]),
        pp_error::BADRESOURCE
    );
    // Blocking there is fine: a result at hand is the call's result.
    assert_eq!(
        h.call(TCP12, "Read", &[t, BUF as i32, 4, CB_BLOCKING as i32]),
        pp_error::FAILED
    );
    assert_eq!(
        h.call(TCP12, "Read", &[999, BUF as i32, 4, CB_BLOCKING as i32]),
        pp_error::BADRESOURCE
    );
    assert_eq!(
        h.call(TCP12, "Read", &[t, 0, 4, CB_BLOCKING as i32]),
        pp_error::BADARGUMENT
    );
}

#[test]
fn tcp_sockets_listen_connect_accept_and_carry_bytes_on_loopback() {
    let mut h = loopback();
    h.on_thread(1);
    let blk = CB_BLOCKING as i32;
    let server = h.call(TCP12, "Create", &[INSTANCE]);
    let any = v4(&mut h, [127, 0, 0, 1], 0);
    assert_eq!(h.call(TCP12, "Listen", &[server, 4, blk]), pp_error::FAILED);
    assert_eq!(h.call(TCP12, "Bind", &[server, any, blk]), pp_error::OK);
    assert_eq!(h.call(TCP12, "Bind", &[server, any, blk]), pp_error::FAILED);
    assert_eq!(
        h.call(TCP12, "Listen", &[server, 0, blk]),
        pp_error::BADARGUMENT
    );
    assert_eq!(h.call(TCP12, "Listen", &[server, 4, blk]), pp_error::OK);
    let local = h.call(TCP12, "GetLocalAddress", &[server]);
    let at = describe(&mut h, local, true).unwrap();
    assert!(at.starts_with("127.0.0.1:"), "{at}");
    assert_eq!(h.call(TCP12, "GetRemoteAddress", &[server]), 0);

    let client = h.call(TCP12, "Create", &[INSTANCE]);
    // 1.2 takes options before the connect; 1.1 does not.
    h.write_var(VARS, PpVar::Bool(true));
    assert_eq!(
        h.call(TCP12, "SetOption", &[client, 0, VARS as i32, blk]),
        pp_error::OK
    );
    let c11 = h.call(TCP11, "Create", &[INSTANCE]);
    assert_eq!(
        h.call(TCP11, "SetOption", &[c11, 0, VARS as i32, blk]),
        pp_error::FAILED
    );
    h.write_var(VARS, PpVar::Int32(0));
    assert_eq!(
        h.call(TCP12, "SetOption", &[client, 1, VARS as i32, blk]),
        pp_error::BADARGUMENT
    );
    assert_eq!(
        h.call(TCP12, "Read", &[client, BUF as i32, 4, blk]),
        pp_error::FAILED
    );

    assert_eq!(
        h.call(TCP12, "Connect", &[client, local, blk]),
        pp_error::OK
    );
    assert_eq!(
        h.call(TCP12, "Connect", &[client, local, blk]),
        pp_error::FAILED
    );
    let remote = h.call(TCP12, "GetRemoteAddress", &[client]);
    assert_eq!(describe(&mut h, remote, true).as_deref(), Some(at.as_str()));
    h.write_var(VARS, PpVar::Int32(65536));
    assert_eq!(
        h.call(TCP11, "SetOption", &[client, 2, VARS as i32, blk]),
        pp_error::OK
    );

    h.write(OUT, &[0; 4]);
    assert_eq!(
        h.call(TCP12, "Accept", &[server, OUT as i32, blk]),
        pp_error::OK
    );
    let accepted = h.read_u32(OUT) as i32;
    assert_eq!(h.call(TCP12, "IsTCPSocket", &[accepted]), 1);
    let peer = h.call(TCP12, "GetRemoteAddress", &[accepted]);
    let mine = h.call(TCP12, "GetLocalAddress", &[client]);
    assert_eq!(describe(&mut h, peer, true), describe(&mut h, mine, true));

    h.write(BUF, b"ping");
    assert_eq!(h.call(TCP12, "Write", &[client, BUF as i32, 4, blk]), 4);
    h.write(BUF + 0x100, &[0; 16]);
    assert_eq!(
        h.call(TCP12, "Read", &[accepted, (BUF + 0x100) as i32, 16, blk]),
        4
    );
    assert_eq!(h.read(BUF + 0x100, 4), b"ping");
    h.write(BUF, b"pong!");
    assert_eq!(h.call(TCP11, "Write", &[accepted, BUF as i32, 5, blk]), 5);
    assert_eq!(
        h.call(TCP10, "Read", &[client, (BUF + 0x200) as i32, 3, blk]),
        3
    );
    assert_eq!(
        h.call(TCP10, "Read", &[client, (BUF + 0x203) as i32, 3, blk]),
        2
    );
    assert_eq!(h.read(BUF + 0x200, 5), b"pong!");

    // Close: the peer reads the end; the closed socket refuses everything.
    h.call(TCP12, "Close", &[client]);
    assert_eq!(h.call(TCP12, "Read", &[accepted, BUF as i32, 4, blk]), 0);
    assert_eq!(
        h.call(TCP12, "Read", &[client, BUF as i32, 4, blk]),
        pp_error::FAILED
    );
    assert_eq!(
        h.call(TCP12, "Write", &[client, BUF as i32, 4, blk]),
        pp_error::FAILED
    );
    assert_eq!(h.call(TCP12, "GetLocalAddress", &[client]), 0);
    // Nothing is listening on a closed listener.
    h.call(TCP12, "Close", &[server]);
    let c2 = h.call(TCP12, "Create", &[INSTANCE]);
    let r = h.call(TCP12, "Connect", &[c2, local, blk]);
    assert_eq!(r, pp_error::CONNECTION_REFUSED);
}

#[test]
fn udp_sockets_send_and_receive_datagrams_on_loopback() {
    let mut h = loopback();
    h.on_thread(1);
    let blk = CB_BLOCKING as i32;
    let lo = v4(&mut h, [127, 0, 0, 1], 0);
    let a = h.call(UDP12, "Create", &[INSTANCE]);
    let b = h.call(UDP10, "Create", &[INSTANCE]);
    h.write_var(VARS, PpVar::Bool(true));
    assert_eq!(
        h.call(UDP12, "SetOption", &[a, 0, VARS as i32, blk]),
        pp_error::OK
    );
    h.write_var(VARS, PpVar::Int32(4096));
    // 1.0 takes buffer sizes after Bind only; 1.1 and later keep them for it.
    assert_eq!(
        h.call(UDP10, "SetOption", &[b, 3, VARS as i32, blk]),
        pp_error::FAILED
    );
    assert_eq!(
        h.call(UDP12, "SetOption", &[a, 3, VARS as i32, blk]),
        pp_error::OK
    );
    assert_eq!(
        h.call(UDP10, "SetOption", &[b, 5, VARS as i32, blk]),
        pp_error::BADARGUMENT
    );
    assert_eq!(
        h.call(UDP12, "RecvFrom", &[a, BUF as i32, 8, 0, blk]),
        pp_error::FAILED
    );
    assert_eq!(h.call(UDP12, "Bind", &[a, lo, blk]), pp_error::OK);
    assert_eq!(h.call(UDP10, "Bind", &[b, lo, blk]), pp_error::OK);
    assert_eq!(h.call(UDP12, "Bind", &[a, lo, blk]), pp_error::FAILED);
    h.write_var(VARS, PpVar::Bool(false));
    assert_eq!(
        h.call(UDP11, "SetOption", &[a, 0, VARS as i32, blk]),
        pp_error::FAILED
    );
    let b_addr = h.call(UDP10, "GetBoundAddress", &[b]);
    let a_addr = h.call(UDP10, "GetBoundAddress", &[a]);

    h.write(BUF, b"datagram");
    assert_eq!(h.call(UDP12, "SendTo", &[a, BUF as i32, 8, b_addr, blk]), 8);
    h.write(OUT, &[0; 4]);
    assert_eq!(
        h.call(
            UDP10,
            "RecvFrom",
            &[b, (BUF + 0x100) as i32, 64, OUT as i32, blk]
        ),
        8
    );
    assert_eq!(h.read(BUF + 0x100, 8), b"datagram");
    let from = h.read_u32(OUT) as i32;
    assert_eq!(describe(&mut h, from, true), describe(&mut h, a_addr, true));
    assert_eq!(
        h.call(UDP10, "SendTo", &[b, BUF as i32, 0, a_addr, blk]),
        pp_error::BADARGUMENT
    );

    h.call(UDP12, "Close", &[a]);
    assert_eq!(h.call(UDP12, "GetBoundAddress", &[a]), 0);
    assert_eq!(
        h.call(UDP12, "SendTo", &[a, BUF as i32, 8, b_addr, blk]),
        pp_error::FAILED
    );
    assert_eq!(
        h.call(UDP12, "SetOption", &[a, 1, VARS as i32, blk]),
        pp_error::FAILED
    );
}

/// A loopback WebSocket server for one connection: it answers with the first protocol
/// offered, echoes every message, and on "close-me" sends "last words" and closes with
/// 4000 "done". Returns its port; the thread ends with the connection (or after 30 s).
// The handshake callback's error type is tungstenite's.
#[allow(clippy::result_large_err)]
fn echo_server() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let Ok((s, _)) = l.accept() else { return };
        let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
        let Ok(mut ws) = tungstenite::accept_hdr(
            s,
            |req: &tungstenite::handshake::server::Request,
             mut resp: tungstenite::handshake::server::Response| {
                if let Some(p) = req.headers().get("Sec-WebSocket-Protocol") {
                    let first = p
                        .to_str()
                        .unwrap()
                        .split(',')
                        .next()
                        .unwrap()
                        .trim()
                        .to_string();
                    resp.headers_mut()
                        .insert("Sec-WebSocket-Protocol", first.parse().unwrap());
                }
                Ok(resp)
            },
        ) else {
            return;
        };
        for _ in 0..100 {
            match ws.read() {
                Ok(tungstenite::Message::Text(t)) if t.as_str() == "close-me" => {
                    let _ = ws.send(tungstenite::Message::text("last words"));
                    let _ = ws.close(Some(tungstenite::protocol::CloseFrame {
                        code: 4000.into(),
                        reason: "done".into(),
                    }));
                }
                Ok(m @ (tungstenite::Message::Text(_) | tungstenite::Message::Binary(_))) => {
                    if ws.send(m).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(_) => return,
            }
        }
    });
    port
}

fn buffered(h: &mut Harness, ws: i32) -> i64 {
    match h
        .try_call(WS, "GetBufferedAmount", &[Val::I32(ws)])
        .unwrap()[0]
    {
        Val::I64(n) => n,
        ref other => panic!("{other:?}"),
    }
}

fn string_result(h: &mut Harness, f: &str, ws: i32) -> Option<String> {
    h.call(WS, f, &[RET as i32, ws]);
    let v = h.read_var(RET);
    text(h, v)
}

#[test]
fn websockets_exchange_text_and_binary_and_close_cleanly_through_a_url_map() {
    let port = echo_server();
    let mut h = Harness::with_config(|c| {
        c.net_loopback = true;
        c.url_map = vec![(
            "ws://app.example:8081/".into(),
            format!("ws://127.0.0.1:{port}/"),
        )];
    });
    callbacks(&mut h);
    h.on_thread(1);
    let blk = CB_BLOCKING as i32;
    let ws = h.call(WS, "Create", &[INSTANCE]);
    assert_eq!(h.call(WS, "GetReadyState", &[ws]), -1);
    assert_eq!(string_result(&mut h, "GetURL", ws).as_deref(), Some(""));
    // Not yet connected: nothing to send or receive.
    assert_eq!(
        h.call(WS, "SendMessage", &[ws, VARS as i32]),
        pp_error::BADARGUMENT
    );
    assert_eq!(
        h.call(WS, "Close", &[ws, 1000, VARS as i32, blk]),
        pp_error::FAILED
    );

    let r = ws_connect(
        &mut h,
        ws,
        "ws://app.example:8081/echo?x=1",
        &["chat", "superchat"],
        CB_BLOCKING,
    );
    assert_eq!(r, pp_error::OK);
    assert_eq!(h.call(WS, "GetReadyState", &[ws]), 1);
    // The app sees its own URL; the map is the host's business.
    assert_eq!(
        string_result(&mut h, "GetURL", ws).as_deref(),
        Some("ws://app.example:8081/echo?x=1")
    );
    assert_eq!(
        string_result(&mut h, "GetProtocol", ws).as_deref(),
        Some("chat")
    );
    assert_eq!(
        string_result(&mut h, "GetExtensions", ws).as_deref(),
        Some("")
    );

    string_at(&mut h, "hello", VARS);
    assert_eq!(h.call(WS, "SendMessage", &[ws, VARS as i32]), pp_error::OK);
    assert_eq!(
        h.call(WS, "ReceiveMessage", &[ws, OUT as i32, blk]),
        pp_error::OK
    );
    let got = h.read_var(OUT);
    assert_eq!(text(&h, got).as_deref(), Some("hello"));

    let buf = h.state().vars().array_buffer_from(vec![1, 2, 3, 250]);
    h.write_var(VARS, buf);
    assert_eq!(h.call(WS, "SendMessage", &[ws, VARS as i32]), pp_error::OK);
    assert_eq!(
        h.call(WS, "ReceiveMessage", &[ws, OUT as i32, blk]),
        pp_error::OK
    );
    let got = h.read_var(OUT);
    assert!(matches!(got, PpVar::ArrayBuffer(_)), "{got:?}");
    assert_eq!(
        h.state().vars().array_buffer_bytes(got),
        Some(&[1u8, 2, 3, 250][..])
    );
    // Other vars are not messages.
    h.write_var(VARS, PpVar::Int32(3));
    assert_eq!(
        h.call(WS, "SendMessage", &[ws, VARS as i32]),
        pp_error::NOTSUPPORTED
    );

    // Everything was sent (the echoes came back), so nothing is buffered.
    let deadline = Instant::now() + Duration::from_secs(5);
    while buffered(&mut h, ws) != 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(buffered(&mut h, ws), 0);

    // Close codes: 1000, 1005 (none) and 3000..=4999 only; reasons up to 123 bytes.
    string_at(&mut h, "bye", VARS);
    assert_eq!(
        h.call(WS, "Close", &[ws, 1001, VARS as i32, blk]),
        pp_error::NOACCESS
    );
    string_at(&mut h, &"x".repeat(124), VARS + 0x40);
    assert_eq!(
        h.call(WS, "Close", &[ws, 1000, (VARS + 0x40) as i32, blk]),
        pp_error::BADARGUMENT
    );
    assert_eq!(
        h.call(WS, "Close", &[ws, 1000, VARS as i32, blk]),
        pp_error::OK
    );
    assert_eq!(h.call(WS, "GetReadyState", &[ws]), 3);
    assert_eq!(h.call(WS, "GetCloseCode", &[ws]), 1000);
    assert_eq!(h.call(WS, "GetCloseWasClean", &[ws]), 1);
    assert_eq!(
        string_result(&mut h, "GetCloseReason", ws).as_deref(),
        Some("bye")
    );
    assert_eq!(
        h.call(WS, "Close", &[ws, 1000, VARS as i32, blk]),
        pp_error::OK
    );
    assert_eq!(
        h.call(WS, "ReceiveMessage", &[ws, OUT as i32, blk]),
        pp_error::BADARGUMENT
    );
    // Sends after the close fail and count as buffered, as in Chrome.
    assert_eq!(
        h.call(WS, "SendMessage", &[ws, VARS as i32]),
        pp_error::FAILED
    );
    assert_eq!(buffered(&mut h, ws), 3 + 6);
}

#[test]
fn a_websocket_closed_by_the_server_keeps_its_last_messages() {
    let port = echo_server();
    let mut h = loopback();
    h.on_thread(1);
    let blk = CB_BLOCKING as i32;
    let ws = h.call(WS, "Create", &[INSTANCE]);
    let url = format!("ws://localhost:{port}/");
    assert_eq!(ws_connect(&mut h, ws, &url, &[], CB_BLOCKING), pp_error::OK);
    assert_eq!(
        string_result(&mut h, "GetProtocol", ws).as_deref(),
        Some("")
    );
    string_at(&mut h, "close-me", VARS);
    assert_eq!(h.call(WS, "SendMessage", &[ws, VARS as i32]), pp_error::OK);
    let deadline = Instant::now() + Duration::from_secs(10);
    while h.call(WS, "GetReadyState", &[ws]) != 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(h.call(WS, "GetReadyState", &[ws]), 3);
    assert_eq!(h.call(WS, "GetCloseCode", &[ws]), 4000);
    assert_eq!(h.call(WS, "GetCloseWasClean", &[ws]), 1);
    assert_eq!(
        string_result(&mut h, "GetCloseReason", ws).as_deref(),
        Some("done")
    );
    // The message sent before the close is still there; then nothing more.
    assert_eq!(
        h.call(WS, "ReceiveMessage", &[ws, OUT as i32, blk]),
        pp_error::OK
    );
    let got = h.read_var(OUT);
    assert_eq!(text(&h, got).as_deref(), Some("last words"));
    assert_eq!(
        h.call(WS, "ReceiveMessage", &[ws, OUT as i32, blk]),
        pp_error::BADARGUMENT
    );
}

#[test]
fn a_websocket_to_a_closed_port_fails_to_connect() {
    // A port that was just free: nothing listens there.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut h = loopback();
    h.on_thread(1);
    let ws = h.call(WS, "Create", &[INSTANCE]);
    let url = format!("ws://127.0.0.1:{port}/");
    assert_eq!(
        ws_connect(&mut h, ws, &url, &[], CB_BLOCKING),
        pp_error::FAILED
    );
    assert_eq!(h.call(WS, "GetReadyState", &[ws]), 3);
    assert_eq!(h.call(WS, "GetCloseCode", &[ws]), 1006);
    assert_eq!(h.call(WS, "GetCloseWasClean", &[ws]), 0);
}

#[test]
fn a_websocket_to_a_port_browsers_block_is_a_bad_argument_as_in_chrome() {
    let mut h = loopback();
    for url in [
        "ws://127.0.0.1:9/",
        "ws://localhost:6667/chat",
        "ws://127.0.0.1:25/",
    ] {
        let ws = h.call(WS, "Create", &[INSTANCE]);
        assert_eq!(
            ws_connect(&mut h, ws, url, &[], CB_OPTIONAL),
            pp_error::BADARGUMENT,
            "{url}"
        );
        assert_eq!(h.call(WS, "GetReadyState", &[ws]), 3, "{url}");
    }
    let n = notes(&h);
    assert!(
        n.iter().any(|l| l.starts_with(
            "PPB_WebSocket: refused ws://127.0.0.1:9/ (PP_ERROR_BADARGUMENT): port 9"
        )),
        "{n:#?}"
    );
    // An ordinary port gets past the check (and fails only for want of a server).
    let ws = h.call(WS, "Create", &[INSTANCE]);
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    h.on_thread(1);
    assert_eq!(
        ws_connect(
            &mut h,
            ws,
            &format!("ws://127.0.0.1:{port}/"),
            &[],
            CB_BLOCKING
        ),
        pp_error::FAILED
    );
}
