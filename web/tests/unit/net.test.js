import assert from "node:assert/strict";
import { test } from "node:test";

import { ipv6Text, register } from "../../src/host/ppb/net.js";
import { fakeInstance, registered } from "./helpers.js";

/** The net family over a fake instance: its functions by "Interface.Function", and the console. */
function net() {
  const inst = fakeInstance();
  const lines = [];
  const cx = { ...inst, instance: 2, console: (level, text) => lines.push(`${level}: ${text}`) };
  const f = registered(cx, register);
  return { ...inst, cx, lines, f };
}

test("IPv6 text is RFC 5952's", () => {
  const b = (words) => new Uint8Array(words.flatMap((w) => [w >> 8, w & 255]));
  assert.equal(ipv6Text(b([0, 0, 0, 0, 0, 0, 0, 1])), "::1");
  assert.equal(ipv6Text(b([0x2001, 0xdb8, 0, 0, 1, 0, 0, 1])), "2001:db8::1:0:0:1");
  assert.equal(ipv6Text(b([0x2001, 0xdb8, 0, 1, 1, 1, 1, 1])), "2001:db8:0:1:1:1:1:1");
  assert.equal(ipv6Text(b([0, 0, 0, 0, 0, 0, 0, 0])), "::");
});

test("NetAddress keeps an IPv4 address and port and describes it", () => {
  const { f, mem, vars, exports } = net();
  const p = exports.__ppapi_alloc(256);
  mem.write(p, [0x1f, 0x90, 127, 0, 0, 1]); // port 8080 in network order, 127.0.0.1
  const a = f("PPB_NetAddress;1.0", "CreateFromIPv4Address")(2, p);
  assert.ok(a > 0);
  assert.equal(f("PPB_NetAddress;1.0", "CreateFromIPv4Address")(3, p), 0, "another instance");
  assert.equal(f("PPB_NetAddress;1.0", "IsNetAddress")(a), 1);
  assert.equal(f("PPB_NetAddress;1.0", "GetFamily")(a), 1);
  f("PPB_NetAddress;1.0", "DescribeAsString")(p + 64, a, 1);
  assert.equal(vars.toJS(vars.read(p + 64)), "127.0.0.1:8080");
  f("PPB_NetAddress;1.0", "DescribeAsString")(p + 64, a, 0);
  assert.equal(vars.toJS(vars.read(p + 64)), "127.0.0.1");
  assert.equal(f("PPB_NetAddress;1.0", "DescribeAsIPv4Address")(a, p + 128), 1);
  assert.deepEqual(Array.from(mem.bytes(p + 128, 6)), [0x1f, 0x90, 127, 0, 0, 1]);
  assert.equal(f("PPB_NetAddress;1.0", "DescribeAsIPv6Address")(a, p + 128), 0, "not an IPv6 address");
});

test("NetAddress keeps an IPv6 address", () => {
  const { f, mem, vars, exports } = net();
  const p = exports.__ppapi_alloc(256);
  mem.write(p, [0, 80, ...new Array(15).fill(0), 1]);
  const a = f("PPB_NetAddress;1.0", "CreateFromIPv6Address")(2, p);
  assert.equal(f("PPB_NetAddress;1.0", "GetFamily")(a), 2);
  f("PPB_NetAddress;1.0", "DescribeAsString")(p + 64, a, 1);
  assert.equal(vars.toJS(vars.read(p + 64)), "[::1]:80");
});

test("sockets and the resolver are refused with NOACCESS, said once", () => {
  const { f, lines } = net();
  const s = f("PPB_TCPSocket;1.2", "Create")(2);
  assert.equal(f("PPB_TCPSocket;1.2", "IsTCPSocket")(s), 1);
  assert.equal(f("PPB_TCPSocket;1.2", "Connect")(s, 0, 0), -7);
  assert.equal(f("PPB_TCPSocket;1.0", "Connect")(12345, 0, 0), -5, "no such socket");
  const u = f("PPB_UDPSocket;1.0", "Create")(2);
  assert.equal(f("PPB_UDPSocket;1.0", "Bind")(u, 0, 0), -7);
  const r = f("PPB_HostResolver;1.0", "Create")(2);
  assert.equal(f("PPB_HostResolver;1.0", "Resolve")(r, 0, 80, 0, 0), -7);
  assert.equal(f("PPB_HostResolver;1.0", "GetNetAddressCount")(r), 0);
  assert.equal(lines.length, 1);
  assert.match(lines[0], /warning: .*TCPSocket.Connect.*PP_ERROR_NOACCESS/);
});

test("the URL map replaces the longest matching prefix", async () => {
  const { mapUrl, urlMapOf } = await import("../../src/host/io/urlmap.js");
  const map = urlMapOf({ "ws://a/": "ws://127.0.0.1:1/", "ws://a/deep/": "ws://127.0.0.1:2/x/", "": "ignored" });
  assert.equal(map.length, 2, "an empty FROM is dropped");
  assert.equal(mapUrl("ws://a/deep/path?q", map), "ws://127.0.0.1:2/x/path?q");
  assert.equal(mapUrl("ws://a/other", map), "ws://127.0.0.1:1/other");
  assert.equal(mapUrl("ws://b/", map), "ws://b/");
  assert.deepEqual(urlMapOf(null), []);
});
