// The WASI preview 1 functions a converted pexe imports (docs/RUNTIME-ABI.md), as a browser
// can answer them: no files, no environment, standard output and error to the page's
// console, standard input at its end, clocks, random bytes, sleeping. Functions on files
// answer as a sandbox with nothing granted would (EBADF / ENOTCAPABLE), which the IRT
// turns into the errno a NaCl program saw with no file access.

import { now } from "./clock.js";

const E = { SUCCESS: 0, BADF: 8, INVAL: 28, NOSYS: 52, SPIPE: 70, NOTCAPABLE: 76 };

/** Thrown by proc_exit: ends the instance (every thread) with `code`. */
export class Exit extends Error {
  constructor(code) {
    super(`exit(${code})`);
    this.code = code;
  }
}

/**
 * WASI functions over `cx` (mem, args, output(fd, text)). `sleeper` is an Int32Array over a
 * SharedArrayBuffer of this worker's own, for sleeping with Atomics.wait.
 */
export function wasiImports(cx) {
  const mem = cx.mem;
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const args = cx.args.map((a) => new TextEncoder().encode(a + "\0"));
  const decoders = new Map();
  const lines = new Map();

  const write = (fd, iovs, n, out) => {
    if (fd !== 1 && fd !== 2) return E.BADF;
    let total = 0;
    let dec = decoders.get(fd);
    if (!dec) decoders.set(fd, (dec = new TextDecoder()));
    let text = "";
    for (let i = 0; i < n; i++) {
      const p = mem.u32(iovs + 8 * i);
      const len = mem.u32(iovs + 8 * i + 4);
      text += dec.decode(mem.bytes(p, len), { stream: true });
      total += len;
    }
    // Whole lines go out; a partial one waits for its end (or exit).
    const buf = (lines.get(fd) ?? "") + text;
    const cut = buf.lastIndexOf("\n");
    if (cut >= 0) {
      cx.output(fd, buf.slice(0, cut));
      lines.set(fd, buf.slice(cut + 1));
    } else {
      lines.set(fd, buf);
    }
    mem.setI32(out, total);
    return E.SUCCESS;
  };
  const flush = () => {
    for (const [fd, rest] of lines) if (rest) cx.output(fd, rest);
    lines.clear();
  };

  const clock = (id) => {
    // 0 realtime, 1 monotonic, 2/3 CPU time (approximated by the monotonic clock).
    if (id === 0) return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
    if (id >= 0 && id <= 3) return BigInt(Math.round(now() * 1e6));
    return null;
  };

  const w = {
    args_sizes_get(argc, bufSize) {
      mem.setI32(argc, args.length);
      mem.setI32(bufSize, args.reduce((s, a) => s + a.length, 0));
      return E.SUCCESS;
    },
    args_get(argv, buf) {
      let p = buf;
      args.forEach((a, i) => {
        mem.setI32(argv + 4 * i, p);
        mem.write(p, a);
        p += a.length;
      });
      return E.SUCCESS;
    },
    environ_sizes_get(count, size) {
      mem.setI32(count, 0);
      mem.setI32(size, 0);
      return E.SUCCESS;
    },
    environ_get: () => E.SUCCESS,
    clock_res_get(id, out) {
      if (clock(id) === null) return E.INVAL;
      mem.check(out, 8);
      mem.dv.setBigUint64(out, 1000n, true);
      return E.SUCCESS;
    },
    clock_time_get(id, _precision, out) {
      const t = clock(id);
      if (t === null) return E.INVAL;
      mem.check(out, 8);
      mem.dv.setBigUint64(out, t, true);
      return E.SUCCESS;
    },
    fd_write: write,
    fd_read(fd, _iovs, _n, out) {
      if (fd !== 0) return E.BADF;
      mem.setI32(out, 0); // standard input is at its end
      return E.SUCCESS;
    },
    fd_fdstat_get(fd, out) {
      if (fd > 2) return E.BADF;
      mem.fill(out, 0, 24);
      mem.u8[out] = 2; // character device
      return E.SUCCESS;
    },
    fd_filestat_get(fd, out) {
      if (fd > 2) return E.BADF;
      mem.fill(out, 0, 64);
      mem.u8[out + 16] = 2;
      return E.SUCCESS;
    },
    fd_seek: (fd) => (fd > 2 ? E.BADF : E.SPIPE),
    fd_close: (fd) => (fd > 2 ? E.BADF : E.SUCCESS),
    fd_sync: (fd) => (fd > 2 ? E.BADF : E.SUCCESS),
    fd_datasync: (fd) => (fd > 2 ? E.BADF : E.SUCCESS),
    fd_prestat_get: () => E.BADF, // no directories are granted
    fd_prestat_dir_name: () => E.BADF,
    fd_readdir: () => E.BADF,
    fd_renumber: () => E.BADF,
    fd_filestat_set_size: () => E.BADF,
    path_open: () => E.NOTCAPABLE,
    path_create_directory: () => E.NOTCAPABLE,
    path_filestat_get: () => E.NOTCAPABLE,
    path_filestat_set_times: () => E.NOTCAPABLE,
    path_link: () => E.NOTCAPABLE,
    path_readlink: () => E.NOTCAPABLE,
    path_remove_directory: () => E.NOTCAPABLE,
    path_rename: () => E.NOTCAPABLE,
    path_symlink: () => E.NOTCAPABLE,
    path_unlink_file: () => E.NOTCAPABLE,
    poll_oneoff(inp, out, n, nout) {
      // The IRT sleeps with one relative clock subscription (nanosleep); that is what is
      // answered: wait, then report the clock event.
      let ms = 0;
      for (let i = 0; i < n; i++) {
        const s = inp + 48 * i;
        if (mem.u8[s + 8] !== 0) return E.NOSYS; // only clock subscriptions
        mem.check(s, 48);
        const timeout = Number(mem.dv.getBigUint64(s + 24, true)) / 1e6;
        ms = i === 0 ? timeout : Math.min(ms, timeout);
      }
      if (ms > 0) Atomics.wait(sleeper, 0, 0, ms);
      for (let i = 0; i < n; i++) {
        const s = inp + 48 * i;
        const e = out + 32 * i;
        mem.fill(e, 0, 32);
        mem.check(e, 8);
        mem.dv.setBigUint64(e, mem.dv.getBigUint64(s, true), true);
        mem.u8[e + 10] = 0; // EVENTTYPE_CLOCK
      }
      mem.setI32(nout, n);
      return E.SUCCESS;
    },
    proc_exit(code) {
      flush();
      throw new Exit(code);
    },
    random_get(buf, len) {
      const bytes = new Uint8Array(len);
      for (let i = 0; i < len; i += 65536) crypto.getRandomValues(bytes.subarray(i, Math.min(len, i + 65536)));
      mem.write(buf, bytes);
      return E.SUCCESS;
    },
    sched_yield: () => E.SUCCESS,
  };
  return { imports: w, flush };
}
