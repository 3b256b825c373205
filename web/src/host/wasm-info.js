// What the JavaScript API does not tell about a module: the limits of its imported
// memory (WebAssembly.Module.imports gives kinds, not types). Read from the import
// section; nothing else of the binary is parsed.

export class WasmFormatError extends Error {}

export function importedMemory(bytes) {
  const b = new Uint8Array(bytes);
  let p = 8;
  const leb = () => {
    let r = 0;
    let shift = 0;
    for (;;) {
      if (p >= b.length) throw new WasmFormatError("truncated module");
      const x = b[p++];
      r += (x & 0x7f) * 2 ** shift;
      shift += 7;
      if (!(x & 0x80)) return r;
      if (shift > 35) throw new WasmFormatError("bad LEB128");
    }
  };
  const name = () => {
    const n = leb();
    p += n;
  };
  if (b.length < 8 || b[0] !== 0 || b[1] !== 0x61 || b[2] !== 0x73 || b[3] !== 0x6d) {
    throw new WasmFormatError("not a WebAssembly module");
  }
  while (p < b.length) {
    const id = b[p++];
    const size = leb();
    const end = p + size;
    if (id !== 2) {
      p = end;
      continue;
    }
    const count = leb();
    for (let i = 0; i < count; i++) {
      name();
      name();
      const kind = b[p++];
      if (kind === 0) leb();
      else if (kind === 1) {
        p++;
        const flags = leb();
        leb();
        if (flags & 1) leb();
      } else if (kind === 2) {
        const flags = leb();
        const min = leb();
        const max = flags & 1 ? leb() : null;
        return { min, max, shared: (flags & 2) !== 0 };
      } else if (kind === 3) {
        p += 2;
      } else if (kind === 4) {
        p++;
        leb();
      } else throw new WasmFormatError(`unknown import kind ${kind}`);
    }
    return null;
  }
  return null;
}
