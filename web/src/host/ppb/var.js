// PPB_Var;1.0-1.2, PPB_VarArray;1.0, PPB_VarDictionary;1.0, PPB_VarArrayBuffer;1.0, all
// thread-safe (vars.js keeps them in shared memory).

import { T } from "../vars.js";
import { OFFERED } from "../contract.js";

export function register(reg, cx) {
  const vars = cx.vars;
  const V = OFFERED.PPB_Var;
  reg.defAll(V, "AddRef", (p) => vars.addRef(vars.read(p)));
  reg.defAll(V, "Release", (p) => vars.release(vars.read(p)));
  reg.def(V[0], "VarFromUtf8", (ret, _module, data, len) =>
    vars.write(ret, vars.stringFromMemory(data, len >>> 0)),
  );
  for (const i of V.slice(1)) {
    reg.def(i, "VarFromUtf8", (ret, data, len) =>
      vars.write(ret, vars.stringFromMemory(data, len >>> 0)),
    );
  }
  reg.defAll(V, "VarToUtf8", (p, lenPtr) => {
    const u = vars.utf8(vars.read(p));
    if (lenPtr !== 0) cx.mem.setI32(lenPtr, u ? u.len : 0);
    return u ? u.addr : 0;
  });
  // A resource var holds its own reference on the resource; VarToResource gives the
  // caller a new one (ppb_var.h 1.2).
  reg.def(V[2], "VarToResource", (p) => {
    const res = vars.resourceOf(vars.read(p));
    if (res !== 0) cx.res.addRef(res);
    return res;
  });
  reg.def(V[2], "VarFromResource", (ret, res) => {
    if (res !== 0) cx.res.addRef(res);
    vars.write(ret, vars.locked(() => vars.fromResourceLocked(res)));
  });

  const A = "PPB_VarArray;1.0";
  reg.def(A, "Create", (ret) => vars.write(ret, vars.locked(() => vars.arrayLocked())));
  reg.def(A, "Get", (ret, a, i) => vars.write(ret, vars.arrayGet(vars.read(a), i >>> 0)));
  reg.def(A, "Set", (a, i, v) => (vars.arraySet(vars.read(a), i >>> 0, vars.read(v)) ? 1 : 0));
  reg.def(A, "GetLength", (a) => vars.arrayLength(vars.read(a)));
  reg.def(A, "SetLength", (a, n) => (vars.arraySetLength(vars.read(a), n >>> 0) ? 1 : 0));

  const D = "PPB_VarDictionary;1.0";
  reg.def(D, "Create", (ret) => vars.write(ret, vars.locked(() => vars.dictionaryLocked())));
  reg.def(D, "Get", (ret, d, k) => vars.write(ret, vars.dictGet(vars.read(d), vars.read(k))));
  reg.def(D, "Set", (d, k, v) => (vars.dictSet(vars.read(d), vars.read(k), vars.read(v)) ? 1 : 0));
  reg.def(D, "Delete", (d, k) => vars.dictDelete(vars.read(d), vars.read(k)));
  reg.def(D, "HasKey", (d, k) => (vars.dictHasKey(vars.read(d), vars.read(k)) ? 1 : 0));
  reg.def(D, "GetKeys", (ret, d) => vars.write(ret, vars.dictKeys(vars.read(d))));

  const B = "PPB_VarArrayBuffer;1.0";
  reg.def(B, "Create", (ret, size) => {
    // Chrome refused buffers it could not allocate with a null var.
    if (size >>> 0 > 1 << 30) return vars.write(ret, { t: T.NULL, v: 0 });
    vars.write(ret, vars.arrayBuffer(size >>> 0));
  });
  reg.def(B, "ByteLength", (p, out) => {
    const b = vars.bufferOf(vars.read(p));
    if (!b) return 0;
    cx.mem.setI32(out, b.len);
    return 1;
  });
  reg.def(B, "Map", (p) => vars.bufferOf(vars.read(p))?.addr ?? 0);
  // The bytes stay where Map put them for the var's life; nothing to undo.
  reg.def(B, "Unmap", (p) => void vars.read(p));
}
