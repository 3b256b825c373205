// The files harness (harness.html?worker=files-harness-worker.js): a main-thread context and a module-thread
// context over one instance of a converted module, the real IO worker behind them.

import { Context } from "./pexe2wasm/host/context.js";
import { FROM_IO, TO_IO, TO_IO_PORT } from "./pexe2wasm/host/protocol.js";
import { boot, checker } from "./harness-boot.js";

self.onmessage = async (e) => {
  if (!e.data?.wasm) return; // the page's answers to spawn-io are read where they are awaited
  const { checks, check } = checker();
  try {
    const quiet = () => {};
    const { module, memory, hostSab, main, instance } = await boot(e.data.wasm, quiet);
    const thread = new Context({ isMain: false, tid: 1, memory, hostSab, toPage: quiet, toMain: quiet });
    thread.setExports(instance.exports);
    // The page creates the IO worker, as the host's page does (Firefox sometimes hangs for
    // good in a worker's `new Worker`), and hands back a port to it.
    const io = await new Promise((resolve) => {
      const got = (m) => {
        if (m.data?.t !== "io-port") return;
        self.removeEventListener("message", got);
        resolve(m.data.port);
      };
      self.addEventListener("message", got);
      self.postMessage({ t: "spawn-io", init: { t: TO_IO.INIT, module, memory, hostSab } });
    });
    await new Promise((resolve) => {
      io.onmessage = (m) => m.data.t === FROM_IO.READY && resolve();
    });
    const port = (cx) => {
      const ch = new MessageChannel();
      io.postMessage({ t: TO_IO.PORT, port: ch.port2 }, [ch.port2]);
      cx.ioPort = ch.port1;
    };
    port(main);
    port(thread);
    const cell = new SharedArrayBuffer(16);
    thread.cell = new Int32Array(cell);
    thread.ioPort.postMessage({ t: TO_IO_PORT.HELLO, cell });

    const base = /** @type {(size: number) => number} */ (instance.exports.__ppapi_alloc)(65536);
    const m = thread.mem;
    const CB = base; // {func 0, user_data 0, flags 0}: PP_BlockUntilComplete()
    const ASYNC = base + 16; // a callback with a function: the rules are checked before it runs
    m.setI32(ASYNC, 1);
    const STR = base + 64;
    const BUF = base + 4096;
    const INFO = base + 1024;
    const cstr = (s) => {
      m.write(STR, new TextEncoder().encode(s + "\0"));
      return STR;
    };
    const f = (cx, iface, name) => cx.registry.get(iface, name).impl;
    const T = (iface, name) => f(thread, iface, name);
    const FS = "PPB_FileSystem;1.0";
    const REF = "PPB_FileRef;1.2";
    const IO = "PPB_FileIO;1.1";

    // ?persist=write|read: a file written on one visit is read on the next (IndexedDB).
    if (e.data.persist) {
      const pfs = T(FS, "Create")(2, 2);
      check("persistent Open", T(FS, "Open")(pfs, 0n, CB), 0);
      const ref = T(REF, "Create")(pfs, cstr("/visits/keep.txt"));
      const text = "kept across visits";
      const f = T(IO, "Create")(2);
      if (e.data.persist === "write") {
        check("MakeDirectory", T(REF, "MakeDirectory")(T(REF, "Create")(pfs, cstr("/visits")), 1, CB), 0);
        check("Open write|create|truncate", T(IO, "Open")(f, ref, 2 | 4 | 8, CB), 0);
        m.write(BUF, new TextEncoder().encode(text));
        check("Write", T(IO, "Write")(f, 0n, BUF, text.length, CB), text.length);
        check("Flush (into IndexedDB)", T(IO, "Flush")(f, CB), 0);
      } else {
        check("the file of the last visit opens", T(IO, "Open")(f, ref, 1, CB), 0);
        m.fill(BUF, 0, 64);
        check("and holds what was written", [T(IO, "Read")(f, 0n, BUF, 64, CB), new TextDecoder().decode(m.bytes(BUF, text.length))], [text.length, text]);
        check("the temporary file system was not kept", T(FS, "Open")(T(FS, "Create")(2, 3), 0n, CB), 0);
      }
      self.postMessage({ checks, failed: checks.filter((c) => !c.ok).length });
      return;
    }
    const fs = T(FS, "Create")(2, 2);
    check("FileSystem.Create", fs > 0, true);
    check("Open blocking on the main thread", f(main, FS, "Open")(fs, 0n, CB), -13);
    check("Open with a callback on a thread without a loop", T(FS, "Open")(fs, 0n, ASYNC), -51);
    check("Open", T(FS, "Open")(fs, 0n, CB), 0);
    check("Open again", T(FS, "Open")(fs, 0n, CB), -2);
    const dir = T(REF, "Create")(fs, cstr("/saves/"));
    const file = T(REF, "Create")(fs, cstr("/saves/slot1.dat"));
    check("FileRef.Create of a relative path", T(REF, "Create")(fs, cstr("saves")), 0);
    check("MakeDirectory", T(REF, "MakeDirectory")(dir, 1, CB), 0);
    check("MakeDirectory exclusive", T(REF, "MakeDirectory")(dir, 2, CB), -21);
    const fio = T(IO, "Create")(2);
    check("FileIO.Open of a missing file", T(IO, "Open")(fio, file, 1, CB), -20);
    const w = T(IO, "Create")(2);
    check("FileIO.Open write|create", T(IO, "Open")(w, file, 2 | 4, CB), 0);
    m.write(BUF, new TextEncoder().encode("hello, saves"));
    check("Write", T(IO, "Write")(w, 0n, BUF, 12, CB), 12);
    check("Write at 20 (a hole)", T(IO, "Write")(w, 20n, BUF, 5, CB), 5);
    check("Query", T(IO, "Query")(w, INFO, CB), 0);
    check("size in PP_FileInfo", Number(m.dv.getBigInt64(INFO, true)), 25);
    check("Read on a write-only file", T(IO, "Read")(w, 0n, BUF, 10, CB), -7);
    T(IO, "Close")(w);
    const r = T(IO, "Create")(2);
    check("FileIO.Open read", T(IO, "Open")(r, file, 1, CB), 0);
    m.fill(BUF, 0, 64);
    check("Read", T(IO, "Read")(r, 7n, BUF, 100, CB), 18);
    check("bytes read", new TextDecoder().decode(m.bytes(BUF, 5)), "saves");
    check("the hole reads as zeros", [...m.bytes(BUF + 5, 8)], [0, 0, 0, 0, 0, 0, 0, 0]);
    check("Delete of a non-empty directory", T(REF, "Delete")(dir, CB), -2);
    const moved = T(REF, "Create")(fs, cstr("/moved.dat"));
    check("Rename", T(REF, "Rename")(file, moved, CB), 0);
    check("Query of the old name", T(REF, "Query")(file, INFO, CB), -20);
    check("Query of the new name", T(REF, "Query")(moved, INFO, CB), 0);
    check("it is a regular file", m.i32(INFO + 8), 0);
    check("Delete of the emptied directory", T(REF, "Delete")(dir, CB), 0);
    // GetPath/GetName/GetParent.
    const VAR = base + 2048;
    T(REF, "GetName")(VAR, moved);
    check("GetName", thread.vars.toJS(thread.vars.read(VAR)), "moved.dat");
    const parent = T(REF, "GetParent")(moved);
    T(REF, "GetPath")(VAR, parent);
    check("GetParent's path", thread.vars.toJS(thread.vars.read(VAR)), "/");
    // A temporary file system is another tree.
    const tmp = T(FS, "Create")(2, 3);
    check("temporary Open", T(FS, "Open")(tmp, 0n, CB), 0);
    check("the persistent file is not in the temporary one", T(REF, "Query")(T(REF, "Create")(tmp, cstr("/moved.dat")), INFO, CB), -20);
    self.postMessage({ checks, failed: checks.filter((c) => !c.ok).length });
  } catch (err) {
    self.postMessage({ error: String(err?.stack ?? err), checks });
  }
};
