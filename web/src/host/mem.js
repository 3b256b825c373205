// Views of the module's shared memory. The memory grows (the app's mmap, the host's page
// allocator) from any thread; a view made before a growth still sees the old length, so
// every access goes through views refreshed when the length changed.

const utf8 = new TextEncoder();
const utf8d = new TextDecoder("utf-8", { fatal: false });

export class Mem {
  constructor(memory) {
    this.memory = memory;
    this.refresh();
  }

  refresh() {
    const b = this.memory.buffer;
    this.buffer = b;
    this.u8 = new Uint8Array(b);
    this.dv = new DataView(b);
  }

  /** Makes sure [addr, addr + len) is inside the current views. */
  check(addr, len) {
    if (addr + len > this.u8.length) {
      this.refresh();
      if (addr + len > this.u8.length || addr < 0) {
        throw new RangeError(`module memory access out of bounds: ${addr}+${len}`);
      }
    }
  }

  i32(addr) {
    this.check(addr, 4);
    return this.dv.getInt32(addr, true);
  }
  u32(addr) {
    this.check(addr, 4);
    return this.dv.getUint32(addr, true);
  }
  f64(addr) {
    this.check(addr, 8);
    return this.dv.getFloat64(addr, true);
  }
  setI32(addr, v) {
    this.check(addr, 4);
    this.dv.setInt32(addr, v, true);
  }
  setF64(addr, v) {
    this.check(addr, 8);
    this.dv.setFloat64(addr, v, true);
  }
  setF32(addr, v) {
    this.check(addr, 4);
    this.dv.setFloat32(addr, v, true);
  }

  /** A copy of the bytes (decoders and posts refuse views of shared memory). */
  bytes(addr, len) {
    this.check(addr, len);
    return this.u8.slice(addr, addr + len);
  }
  write(addr, bytes) {
    this.check(addr, bytes.length);
    this.u8.set(bytes, addr);
  }
  fill(addr, value, len) {
    this.check(addr, len);
    this.u8.fill(value, addr, addr + len);
  }
  /** The NUL-terminated string at addr (at most max bytes). */
  cstring(addr, max = 4096) {
    this.check(addr, 0);
    let end = addr;
    const lim = Math.min(this.u8.length, addr + max);
    while (end < lim && this.u8[end] !== 0) end++;
    return utf8d.decode(this.u8.slice(addr, end));
  }
  string(addr, len) {
    return utf8d.decode(this.bytes(addr, len));
  }
}

export function encodeUtf8(s) {
  return utf8.encode(s);
}
export function decodeUtf8(bytes) {
  return utf8d.decode(bytes);
}
