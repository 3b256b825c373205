// PPB_NetAddress;1.0, and PPB_HostResolver;1.0, PPB_TCPSocket;1.0-1.2 and
// PPB_UDPSocket;1.0-1.2 refused. A page has no raw sockets and no DNS: Chrome gave these
// to packaged apps with the socket permission only, and a web page's module got
// PP_ERROR_NOACCESS from them. This host does the same, and says so on the console once
// (an app that needs them runs under `pexe2wasm run --net loopback`). NetAddress is plain
// data and works: apps build and print addresses before they connect.

import { FIELDS, KIND } from "../resources.js";
import { T } from "../vars.js";
import { OFFERED, PP_ERROR as E } from "../contract.js";

const FAMILY = { UNSPECIFIED: 0, IPV4: 1, IPV6: 2 };
// A NetAddress's state words: family, port (host order), then the address bytes packed in
// four words (IPv4 in the first).
const NA = { FAMILY: 0, PORT: 1, ADDR: 2 };

export function register(reg, cx) {
  let told = false;
  const refuse = (what) => {
    if (!told) {
      told = true;
      cx.console(
        "warning",
        `pexe2wasm: the app tried ${what}: browsers have no raw sockets or DNS, so TCPSocket, UDPSocket and HostResolver fail with PP_ERROR_NOACCESS here (as in Chrome outside packaged apps); \`pexe2wasm run --net loopback\` gives them loopback`,
      );
    }
    return E.NOACCESS;
  };
  const create = (kind) => (instance) =>
    instance === cx.instance ? cx.vars.locked(() => cx.res.createLocked(kind)) : 0;
  const is = (kind) => (res) => (cx.res.of(res, kind) >= 0 ? 1 : 0);

  // --- NetAddress ---------------------------------------------------------------------------
  const N = "PPB_NetAddress;1.0";
  const at = (res) => {
    const b = cx.res.of(res, KIND.NET_ADDRESS);
    return b < 0 ? -1 : b + FIELDS;
  };
  /** A new address resource of `family` with `port` (host order) and `bytes`. */
  const address = (family, port, bytes) =>
    cx.vars.locked(() => {
      const id = cx.res.createLocked(KIND.NET_ADDRESS);
      const b = cx.res.base(id) + FIELDS;
      cx.h[b + NA.FAMILY] = family;
      cx.h[b + NA.PORT] = port;
      const words = new Uint8Array(16);
      words.set(bytes);
      const dv = new DataView(words.buffer);
      for (let k = 0; k < 4; k++) cx.h[b + NA.ADDR + k] = dv.getInt32(4 * k, true);
      return id;
    });
  const bytesOf = (b) => {
    const words = new Uint8Array(16);
    const dv = new DataView(words.buffer);
    for (let k = 0; k < 4; k++) dv.setInt32(4 * k, cx.h[b + NA.ADDR + k], true);
    return words;
  };
  /** PP_NetAddress_IPv4/IPv6: {uint16_t port (network order); uint8_t addr[4 or 16]}. */
  const readPort = (p) => {
    const b = cx.mem.bytes(p, 2);
    return (b[0] << 8) | b[1];
  };
  const writePort = (p, port) => cx.mem.write(p, [port >> 8, port & 255]);
  reg.def(N, "CreateFromIPv4Address", (instance, p) =>
    instance === cx.instance && p !== 0 ? address(FAMILY.IPV4, readPort(p), cx.mem.bytes(p + 2, 4)) : 0,
  );
  reg.def(N, "CreateFromIPv6Address", (instance, p) =>
    instance === cx.instance && p !== 0 ? address(FAMILY.IPV6, readPort(p), cx.mem.bytes(p + 2, 16)) : 0,
  );
  reg.def(N, "IsNetAddress", (res) => (at(res) >= 0 ? 1 : 0));
  reg.def(N, "GetFamily", (res) => {
    const b = at(res);
    return b < 0 ? FAMILY.UNSPECIFIED : cx.h[b + NA.FAMILY];
  });
  reg.def(N, "DescribeAsString", (ret, res, withPort) => {
    const b = at(res);
    if (b < 0) return cx.vars.write(ret, { t: T.UNDEFINED, v: 0 });
    const a = bytesOf(b);
    const port = cx.h[b + NA.PORT];
    let text;
    if (cx.h[b + NA.FAMILY] === FAMILY.IPV4) {
      text = Array.from(a.subarray(0, 4)).join(".");
      if (withPort) text += `:${port}`;
    } else {
      text = ipv6Text(a);
      if (withPort) text = `[${text}]:${port}`;
    }
    cx.vars.write(ret, cx.vars.fromJS(text));
  });
  const describe = (family, len) => (res, out) => {
    const b = at(res);
    if (b < 0 || out === 0 || cx.h[b + NA.FAMILY] !== family) return 0;
    writePort(out, cx.h[b + NA.PORT]);
    cx.mem.write(out + 2, bytesOf(b).subarray(0, len));
    return 1;
  };
  reg.def(N, "DescribeAsIPv4Address", describe(FAMILY.IPV4, 4));
  reg.def(N, "DescribeAsIPv6Address", describe(FAMILY.IPV6, 16));

  // --- HostResolver -------------------------------------------------------------------------
  const H = "PPB_HostResolver;1.0";
  reg.def(H, "Create", create(KIND.HOST_RESOLVER));
  reg.def(H, "IsHostResolver", is(KIND.HOST_RESOLVER));
  reg.def(H, "Resolve", (res, _host, _port, _hint, _cb) =>
    cx.res.of(res, KIND.HOST_RESOLVER) < 0 ? E.BADRESOURCE : refuse("HostResolver.Resolve"),
  );
  reg.def(H, "GetCanonicalName", (ret, _res) => cx.vars.write(ret, { t: T.UNDEFINED, v: 0 }));
  reg.def(H, "GetNetAddressCount", (_res) => 0);
  reg.def(H, "GetNetAddress", (_res, _index) => 0);

  // --- TCPSocket ----------------------------------------------------------------------------
  const tcp = (res, what) => (cx.res.of(res, KIND.TCP_SOCKET) < 0 ? E.BADRESOURCE : refuse(`TCPSocket.${what}`));
  const TCP = OFFERED.PPB_TCPSocket;
  reg.defAll(TCP, "Create", create(KIND.TCP_SOCKET));
  reg.defAll(TCP, "IsTCPSocket", is(KIND.TCP_SOCKET));
  reg.defAll(TCP, "Connect", (res, _addr, _cb) => tcp(res, "Connect"));
  reg.defAll(TCP, "GetLocalAddress", (_res) => 0);
  reg.defAll(TCP, "GetRemoteAddress", (_res) => 0);
  reg.defAll(TCP, "Read", (res, _buf, _n, _cb) => tcp(res, "Read"));
  reg.defAll(TCP, "Write", (res, _buf, _n, _cb) => tcp(res, "Write"));
  reg.defAll(TCP, "Close", (_res) => {});
  reg.defAll(TCP, "SetOption", (res, _name, _value, _cb) => tcp(res, "SetOption"));
  for (const i of TCP.slice(1)) {
    reg.def(i, "Bind", (res, _addr, _cb) => tcp(res, "Bind"));
    reg.def(i, "Listen", (res, _backlog, _cb) => tcp(res, "Listen"));
    reg.def(i, "Accept", (res, _accepted, _cb) => tcp(res, "Accept"));
  }

  // --- UDPSocket ----------------------------------------------------------------------------
  const udp = (res, what) => (cx.res.of(res, KIND.UDP_SOCKET) < 0 ? E.BADRESOURCE : refuse(`UDPSocket.${what}`));
  const UDP = OFFERED.PPB_UDPSocket;
  reg.defAll(UDP, "Create", create(KIND.UDP_SOCKET));
  reg.defAll(UDP, "IsUDPSocket", is(KIND.UDP_SOCKET));
  reg.defAll(UDP, "Bind", (res, _addr, _cb) => udp(res, "Bind"));
  reg.defAll(UDP, "GetBoundAddress", (_res) => 0);
  reg.defAll(UDP, "RecvFrom", (res, _buf, _n, _addr, _cb) => udp(res, "RecvFrom"));
  reg.defAll(UDP, "SendTo", (res, _buf, _n, _addr, _cb) => udp(res, "SendTo"));
  reg.defAll(UDP, "Close", (_res) => {});
  reg.defAll(UDP, "SetOption", (res, _name, _value, _cb) => udp(res, "SetOption"));
  reg.def(UDP[2], "JoinGroup", (res, _group, _cb) => udp(res, "JoinGroup"));
  reg.def(UDP[2], "LeaveGroup", (res, _group, _cb) => udp(res, "LeaveGroup"));
}

/** An IPv6 address as RFC 5952 text (the longest run of two or more zero groups as ::). */
export function ipv6Text(bytes) {
  const g = [];
  for (let k = 0; k < 8; k++) g.push((bytes[2 * k] << 8) | bytes[2 * k + 1]);
  let best = -1;
  let bestLen = 1;
  for (let k = 0; k < 8; ) {
    if (g[k] !== 0) {
      k++;
      continue;
    }
    let e = k;
    while (e < 8 && g[e] === 0) e++;
    if (e - k > bestLen) {
      best = k;
      bestLen = e - k;
    }
    k = e;
  }
  const hex = (list) => list.map((x) => x.toString(16)).join(":");
  if (best < 0) return hex(g);
  return `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`;
}
