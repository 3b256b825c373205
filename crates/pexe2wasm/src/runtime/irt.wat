;; The NaCl IRT (integrated runtime) over WASI preview 1.
;;
;; A pexe finds the IRT through auxv AT_SYSINFO = the table slot of __nacl_irt_query, asks it
;; for interface tables by name and calls their entries with call_indirect. This module
;; provides that query function and every entry, plus `_start` (the WASI command entry that
;; builds the NaCl startup block) and the float remainder helpers the lowering calls.
;; docs/RUNTIME-ABI.md is the prose version of this file.
;;
;; Everything it needs from the converted module comes from "env": the memory, the table,
;; the stack and thread pointers, __heap_base (where the heap starts) and __table_base (where
;; this module's element segment goes). It has no globals of its own: its state lives in one
;; 64 KiB page at RT = align_up(__heap_base, 64 KiB), laid out as follows (offsets from RT):
;;
;;   0x0000  u32 first page the allocator may hand out (RT/64K + 1)
;;   0x0004  u32 length of the current directory string
;;   0x0008  u32 number of preopened directories
;;   0x000c  u32 bytes used in the preopen name area
;;   0x0010  u32 allocator hint: every page in [first page, hint) is in use
;;   0x0018  i64 monotonic time at _start (ns), for the CPU-time clock fallback
;;   0x0020  threaded: the allocator's lock
;;   0x0024  u32 bytes held in the standard output buffer (at 0x0c00)
;;   0x0028  u32 how fd 1 is written: 0 not yet known, 1 buffered, 2 straight through
;;   0x002c  threaded: the standard output buffer's lock
;;   0x0030  threaded: u32 threads alive (the main thread counts from _start)
;;   0x0034  threaded: u32 threads inside a read of fd 0
;;   0x0040  scratch: iovec (8 bytes)
;;   0x0048  scratch: WASI result words r0 (8 bytes), r1 (8 bytes) at 0x0050
;;   0x0080  scratch: WASI filestat (64 bytes)
;;   0x00c0  scratch: WASI fdstat (24 bytes)
;;   0x00e0  scratch: WASI prestat (8 bytes)
;;   0x0100  scratch: poll_oneoff subscription (48 bytes); event (32 bytes) at 0x0140
;;   0x0170  "." (the relative path of a preopen's own directory)
;;   0x0200  constants copied from the passive data segment $consts: the WASI errno → NaCl
;;           errno table (80 bytes), then the interface records at 0x0250
;;   0x0c00  standard output buffer (1 KiB; see "Standard output" below)
;;   0x1000  current directory, absolute and normalized (4 KiB)
;;   0x2000  path buffer A (4 KiB); 0x3000 path buffer B (4 KiB)
;;   0x4000  fd_readdir buffer (4 KiB)
;;   0x5000  preopen table: 64 entries of {fd, name address, name length, 0}
;;   0x6000  preopen names, absolute and normalized (8 KiB)
;;   0x8000  directory cookies: i64 per fd for fds 0..1023 (8 KiB)
;;   0xa000  page bitmap: one bit per 64 KiB page of the 4 GiB address space (8 KiB)
;;
;; The scratch areas make this IRT single-threaded. The same file also holds the threaded
;; variant (src/runtime/mod.rs `irt_source`): lines marked `;;@unthreaded` and blocks between
;; `;;@unthreaded{` and `;;@unthreaded}` are left out of it, lines starting `;;@threads ` and
;; the block comment `(;@threads … @threads;)` are put in. As written, the file is the
;; unthreaded runtime. The threaded one imports a shared memory, keeps scratch areas in a
;; page per thread (the main thread's is RT itself) and implements thread/futex with
;; wasi-threads and wasm atomics (docs/decisions/0006-threads.md).
;; Errors are NaCl errno values, which are Linux's (ENOENT 2, EBADF 9, EINVAL 22, ENOSYS 38).
(module
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_get" (func $environ_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $environ_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_res_get" (func $clock_res_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock_time_get (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_datasync" (func $fd_datasync (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_fdstat_get" (func $fd_fdstat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_filestat_get" (func $fd_filestat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_filestat_set_size" (func $fd_filestat_set_size (param i32 i64) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $fd_prestat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_dir_name" (func $fd_prestat_dir_name (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_readdir" (func $fd_readdir (param i32 i32 i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_renumber" (func $fd_renumber (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_seek" (func $fd_seek (param i32 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_sync" (func $fd_sync (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_create_directory" (func $path_create_directory (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_filestat_get" (func $path_filestat_get (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_filestat_set_times" (func $path_filestat_set_times (param i32 i32 i32 i32 i64 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_link" (func $path_link (param i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_readlink" (func $path_readlink (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_remove_directory" (func $path_remove_directory (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_rename" (func $path_rename (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_symlink" (func $path_symlink (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_unlink_file" (func $path_unlink_file (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sched_yield" (func $sched_yield (result i32)))
  ;; Threaded variant: wasi-threads' spawn, and the host's end of one thread (see
  ;; $irt_thread_exit).
  ;;@threads (import "wasi" "thread-spawn" (func $thread_spawn (param i32) (result i32)))
  ;;@threads (import "pexe2wasm" "thread_exit" (func $host_thread_exit))
  ;;@threads (import "pexe2wasm" "cpu_count" (func $host_cpu_count (result i32)))
  ;; Pepper variant: the host's side of PPAPI (docs/PEPPER-ABI.md). start runs the
  ;; host's main loop and returns when the instance is gone; get_interface says whether
  ;; the host offers an interface (and lets it note one it lacks); fill and done hand the
  ;; host the stack space a PPP call reserved, before and after the call; wait tells it a
  ;; thread blocks in a futex wait (1 without a deadline, 0 with one) or woke (-1).
  ;;@pepper (import "pexe2wasm_ppapi" "start" (func $host_ppapi_start (param i32 i32 i32 i32) (result i32)))
  ;;@pepper (import "pexe2wasm_ppapi" "register_thread_creator" (func $host_thread_creator (param i32 i32)))
  ;;@pepper (import "pexe2wasm_ppapi" "get_interface" (func $host_get_interface (param i32 i32) (result i32)))
  ;;@pepper (import "pexe2wasm_ppapi" "fill" (func $host_fill (param i32 i32)))
  ;;@pepper (import "pexe2wasm_ppapi" "done" (func $host_done (param i32 i32)))
  ;;@pepper (import "pexe2wasm_ppapi" "wait" (func $host_wait (param i32)))
  ;;@pepper (import "pexe2wasm_ppapi" "host_thread" (func $host_thread (param i32)))

  (import "env" "memory" (memory 1))  ;;@unthreaded
  ;;@threads (import "env" "memory" (memory 1 65536 shared))
  ;; WASI hosts find the memory of the calling instance through its "memory" export, so
  ;; the runtime works as a module of its own too (the converted module exports it anyway).
  (export "memory" (memory 0))
  (import "env" "__indirect_function_table" (table $table 0 funcref))
  (import "env" "__stack_pointer" (global $__stack_pointer (mut i32)))
  (import "env" "__thread_pointer" (global $__thread_pointer (mut i32)))
  (import "env" "__heap_base" (global $__heap_base i32))
  (import "env" "__table_base" (global $__table_base i32))
  (import "env" "pexe_start" (func $pexe_start (param i32)))
  ;; Threaded variant: this thread's scratch page (RT in the main thread; a page of its own,
  ;; which also holds its start record, in every other). Globals are per instance, so per
  ;; thread.
  ;;@threads (global $scratch (mut i32) (i32.const 0))

  ;; The IRT entries, in slot order: a function pointer handed to the pexe is
  ;; __table_base + its position here. The interface records below name slot ranges.
  (elem (table $table) (offset (global.get $__table_base)) func
    $irt_query                                                          ;; 0
    $irt_exit $irt_gettod $irt_clock $irt_nanosleep $irt_sched_yield   ;; 1-5
    $irt_sysconf                                                        ;; 6
    $irt_close $irt_dup $irt_dup2 $irt_read $irt_write $irt_seek       ;; 7-12
    $irt_fstat $irt_getdents                                            ;; 13-14
    $irt_fchdir $irt_fchmod $irt_fsync $irt_fdatasync $irt_ftruncate   ;; 15-19
    $irt_isatty                                                         ;; 20
    $irt_open $irt_stat $irt_mkdir $irt_rmdir $irt_chdir $irt_getcwd   ;; 21-26
    $irt_unlink                                                         ;; 27
    $irt_truncate $irt_lstat $irt_link $irt_rename $irt_symlink        ;; 28-32
    $irt_chmod $irt_access $irt_readlink $irt_utimes                   ;; 33-36
    $irt_mmap $irt_munmap $irt_mprotect                                ;; 37-39 ;;@unthreaded
    ;;@threads $irt_mmap_locked $irt_munmap_locked $irt_mprotect       ;; 37-39
    $irt_tls_init $irt_tls_get                                          ;; 40-41
    $irt_clock_getres $irt_clock_gettime                                ;; 42-43
    $irt_get_random_bytes                                               ;; 44
    $irt_getpid                                                         ;; 45
    $irt_thread_create $irt_thread_exit $irt_thread_nice               ;; 46-48
    $irt_futex_wait_abs $irt_futex_wake                                ;; 49-50
    ;;@pepper $ppapi_start $ppapi_register_thread_creator              ;; 51-52
    ;;@pepper $ppb_get_interface                                       ;; 53
    ;;@pepper $ppapi_host_thread                                       ;; 54
  )

  ;; Copied to RT+0x200 by _start (431 bytes; 456 in the Pepper variant).
  (data $consts
    ;; WASI errno (0..76, then 3 bytes of padding) → NaCl errno. ENOTCAPABLE becomes EACCES.
    "\00\07\0d\62\63\61\0b\72\09\4a\10\7d\0a\67\6f\68\23\59\21\7a\11\0e\1b\71\2b\54\73\04\16\05"
    "\6a\15\28\18\1f\5a\48\24\64\66\65\17\69\13\02\08\25\43\0c\2a\5c\1c\26\6b\14\27\83\58\5f\19"
    "\06\4b\82\01\20\47\5d\5b\22\1e\1d\03\74\6e\1a\12\0d\05\05\05"
    ;; Interface records: name, NUL, first slot, slot count. An empty name ends the list.
    "nacl-irt-basic-0.1\00\01\06"
    "nacl-irt-fdio-0.1\00\07\08"
    "nacl-irt-dev-fdio-0.1\00\07\08"
    "nacl-irt-dev-fdio-0.2\00\07\0d"
    "nacl-irt-dev-fdio-0.3\00\07\0e"
    "nacl-irt-filename-0.1\00\15\02"
    "nacl-irt-dev-filename-0.2\00\15\07"
    "nacl-irt-dev-filename-0.3\00\15\10"
    "nacl-irt-memory-0.3\00\25\03"
    "nacl-irt-tls-0.1\00\28\02"
    "nacl-irt-clock_get-0.1\00\2a\02"
    "nacl-irt-random-0.1\00\2c\01"
    "nacl-irt-dev-getpid-0.1\00\2d\01"
    "nacl-irt-thread-0.1\00\2e\03"
    "nacl-irt-futex-0.1\00\31\02"
    ;;@pepper "nacl-irt-ppapihook-0.1\00\33\02"
    "\00")

  ;; ---------------------------------------------------------------------------------------
  ;; State and small helpers

  ;; RT: the runtime's state page, the first 64 KiB page at or above __heap_base.
  (func $rt (result i32)
    (i32.and (i32.add (global.get $__heap_base) (i32.const 0xffff)) (i32.const -65536)))
  (func $r0 (result i32) (i32.add (call $rt) (i32.const 0x48)))  ;;@unthreaded
  ;;@threads (func $r0 (result i32) (i32.add (global.get $scratch) (i32.const 0x48)))
  (func $r1 (result i32) (i32.add (call $rt) (i32.const 0x50)))  ;;@unthreaded
  ;;@threads (func $r1 (result i32) (i32.add (global.get $scratch) (i32.const 0x50)))
  (func $iov (result i32) (i32.add (call $rt) (i32.const 0x40)))  ;;@unthreaded
  ;;@threads (func $iov (result i32) (i32.add (global.get $scratch) (i32.const 0x40)))
  (func $fst (result i32) (i32.add (call $rt) (i32.const 0x80)))  ;;@unthreaded
  ;;@threads (func $fst (result i32) (i32.add (global.get $scratch) (i32.const 0x80)))
  (func $fdst (result i32) (i32.add (call $rt) (i32.const 0xc0)))  ;;@unthreaded
  ;;@threads (func $fdst (result i32) (i32.add (global.get $scratch) (i32.const 0xc0)))
  (func $path_a (result i32) (i32.add (call $rt) (i32.const 0x2000)))  ;;@unthreaded
  ;;@threads (func $path_a (result i32) (i32.add (global.get $scratch) (i32.const 0x2000)))
  (func $path_b (result i32) (i32.add (call $rt) (i32.const 0x3000)))  ;;@unthreaded
  ;;@threads (func $path_b (result i32) (i32.add (global.get $scratch) (i32.const 0x3000)))

  ;; A WASI errno as a NaCl errno; unknown values become EIO.
  (func $err (param $e i32) (result i32)
    (if (i32.gt_u (local.get $e) (i32.const 76)) (then (return (i32.const 5))))
    (i32.load8_u offset=0x200 (i32.add (call $rt) (local.get $e))))

  ;; Address of the directory cookie of $fd, or 0 when $fd is beyond the cookie table.
  (func $cookie (param $fd i32) (result i32)
    (if (i32.ge_u (local.get $fd) (i32.const 1024)) (then (return (i32.const 0))))
    (i32.add (call $rt) (i32.add (i32.const 0x8000) (i32.shl (local.get $fd) (i32.const 3)))))

  (func $reset_cookie (param $fd i32)
    (local $c i32)
    (local.set $c (call $cookie (local.get $fd)))
    (if (local.get $c) (then (i64.store (local.get $c) (i64.const 0)))))

  ;; Length of the NUL-terminated string at $p, or -1 when it is longer than $max.
  (func $strnlen (param $p i32) (param $max i32) (result i32)
    (local $n i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br_if $next (i32.le_u (local.get $n) (local.get $max)))))
    (if (result i32) (i32.gt_u (local.get $n) (local.get $max))
      (then (i32.const -1))
      (else (local.get $n))))

  (func $memeq (param $a i32) (param $b i32) (param $n i32) (result i32)
    (block $differ
      (loop $next
        (if (i32.eqz (local.get $n)) (then (return (i32.const 1))))
        (br_if $differ (i32.ne (i32.load8_u (local.get $a)) (i32.load8_u (local.get $b))))
        (local.set $a (i32.add (local.get $a) (i32.const 1)))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (i32.const 0))

  ;; Number of 64 KiB pages that hold $len bytes (no overflow for any u32).
  (func $pages (param $len i32) (result i32)
    (i32.add (i32.shr_u (local.get $len) (i32.const 16))
             (i32.ne (i32.and (local.get $len) (i32.const 0xffff)) (i32.const 0))))

  ;; ---------------------------------------------------------------------------------------
  ;; Paths. The pexe sees one tree: absolute paths, "/"-rooted, with a current directory the
  ;; runtime keeps. A path is made absolute, normalized lexically ("." and ".." removed) and
  ;; then split into the preopened directory with the longest matching name and the path
  ;; relative to it, which is what WASI's path_* functions take.

  ;; Normalizes the absolute path at $buf ($len bytes, starting with "/") in place; returns
  ;; the new length. The result has no trailing "/", except "/" itself.
  (func $normalize (param $buf i32) (param $len i32) (result i32)
    (local $r i32) (local $w i32) (local $s i32) (local $n i32)
    (block $end
      (loop $component
        (block $skipped
          (loop $slashes
            (br_if $skipped (i32.ge_u (local.get $r) (local.get $len)))
            (br_if $skipped (i32.ne (i32.load8_u (i32.add (local.get $buf) (local.get $r))) (i32.const 0x2f)))
            (local.set $r (i32.add (local.get $r) (i32.const 1)))
            (br $slashes)))
        (br_if $end (i32.ge_u (local.get $r) (local.get $len)))
        (local.set $s (local.get $r))
        (block $found
          (loop $chars
            (br_if $found (i32.ge_u (local.get $r) (local.get $len)))
            (br_if $found (i32.eq (i32.load8_u (i32.add (local.get $buf) (local.get $r))) (i32.const 0x2f)))
            (local.set $r (i32.add (local.get $r) (i32.const 1)))
            (br $chars)))
        (local.set $n (i32.sub (local.get $r) (local.get $s)))
        ;; "."
        (br_if $component
          (i32.and (i32.eq (local.get $n) (i32.const 1))
                   (i32.eq (i32.load8_u (i32.add (local.get $buf) (local.get $s))) (i32.const 0x2e))))
        ;; "..": drop the last output component
        (if (i32.and (i32.eq (local.get $n) (i32.const 2))
                     (i32.eq (i32.load16_u (i32.add (local.get $buf) (local.get $s))) (i32.const 0x2e2e)))
          (then
            (block $popped
              (loop $back
                (br_if $popped (i32.eqz (local.get $w)))
                (local.set $w (i32.sub (local.get $w) (i32.const 1)))
                (br_if $popped (i32.eq (i32.load8_u (i32.add (local.get $buf) (local.get $w))) (i32.const 0x2f)))
                (br $back)))
            (br $component)))
        ;; "/name": the output never overtakes the input, so copying in place is safe
        (i32.store8 (i32.add (local.get $buf) (local.get $w)) (i32.const 0x2f))
        (local.set $w (i32.add (local.get $w) (i32.const 1)))
        (memory.copy (i32.add (local.get $buf) (local.get $w)) (i32.add (local.get $buf) (local.get $s)) (local.get $n))
        (local.set $w (i32.add (local.get $w) (local.get $n)))
        (br $component)))
    (if (i32.eqz (local.get $w))
      (then
        (i32.store8 (local.get $buf) (i32.const 0x2f))
        (local.set $w (i32.const 1))))
    (local.get $w))

  ;; Writes the absolute, normalized form of the C string $path to $buf (4 KiB); returns its
  ;; length or a negated errno.
  (func $fullpath (param $path i32) (param $buf i32) (result i32)
    (local $n i32) (local $cwd i32) (local $c i32)
    (local.set $n (call $strnlen (local.get $path) (i32.const 4095)))
    (if (i32.lt_s (local.get $n) (i32.const 0)) (then (return (i32.const -36))))
    (if (i32.eqz (local.get $n)) (then (return (i32.const -2))))
    (if (i32.eq (i32.load8_u (local.get $path)) (i32.const 0x2f))
      (then
        (memory.copy (local.get $buf) (local.get $path) (local.get $n)))
      (else
        (local.set $cwd (i32.add (call $rt) (i32.const 0x1000)))
        (local.set $c (i32.load offset=4 (call $rt)))
        (if (i32.gt_u (i32.add (i32.add (local.get $c) (i32.const 1)) (local.get $n)) (i32.const 4095))
          (then (return (i32.const -36))))
        (memory.copy (local.get $buf) (local.get $cwd) (local.get $c))
        (i32.store8 (i32.add (local.get $buf) (local.get $c)) (i32.const 0x2f))
        (memory.copy (i32.add (local.get $buf) (i32.add (local.get $c) (i32.const 1))) (local.get $path) (local.get $n))
        (local.set $n (i32.add (local.get $n) (i32.add (local.get $c) (i32.const 1))))))
    (call $normalize (local.get $buf) (local.get $n)))

  ;; Splits the normalized absolute path at $buf into (preopen fd, relative path, its length),
  ;; or (-ENOENT, 0, 0) when no preopened directory contains it.
  (func $split (param $buf i32) (param $len i32) (result i32 i32 i32)
    (local $i i32) (local $e i32) (local $name i32) (local $nlen i32) (local $m i32)
    (local $best i32) (local $bestlen i32) (local $rlen i32)
    (local.set $best (i32.const -1))
    (local.set $bestlen (i32.const -1))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (i32.load offset=8 (call $rt))))
        (local.set $e (i32.add (call $rt) (i32.add (i32.const 0x5000) (i32.shl (local.get $i) (i32.const 4)))))
        (local.set $name (i32.load offset=4 (local.get $e)))
        (local.set $nlen (i32.load offset=8 (local.get $e)))
        (local.set $m (i32.const -1))
        (if (i32.eq (local.get $nlen) (i32.const 1))
          (then (local.set $m (i32.const 0)))   ;; "/" contains everything
          (else
            (if (i32.ge_u (local.get $len) (local.get $nlen))
              (then
                (if (call $memeq (local.get $buf) (local.get $name) (local.get $nlen))
                  (then
                    (if (i32.eq (local.get $len) (local.get $nlen))
                      (then (local.set $m (local.get $nlen))))
                    (if (i32.gt_u (local.get $len) (local.get $nlen))
                      (then
                        (if (i32.eq (i32.load8_u (i32.add (local.get $buf) (local.get $nlen))) (i32.const 0x2f))
                          (then (local.set $m (local.get $nlen))))))))))))
        (if (i32.gt_s (local.get $m) (local.get $bestlen))
          (then
            (local.set $best (i32.load (local.get $e)))
            (local.set $bestlen (local.get $m))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (if (i32.lt_s (local.get $best) (i32.const 0))
      (then (return (i32.const -2) (i32.const 0) (i32.const 0))))
    (local.set $rlen (i32.sub (i32.sub (local.get $len) (local.get $bestlen)) (i32.const 1)))
    (if (i32.le_s (local.get $rlen) (i32.const 0))
      (then (return (local.get $best) (i32.add (call $rt) (i32.const 0x170)) (i32.const 1))))
    (local.get $best)
    (i32.add (local.get $buf) (i32.add (local.get $bestlen) (i32.const 1)))
    (local.get $rlen))

  ;; The C string $path as (preopen fd or negated errno, relative path, length), using $buf.
  (func $resolve (param $path i32) (param $buf i32) (result i32 i32 i32)
    (local $len i32)
    (local.set $len (call $fullpath (local.get $path) (local.get $buf)))
    (if (i32.lt_s (local.get $len) (i32.const 0))
      (then (return (local.get $len) (i32.const 0) (i32.const 0))))
    (call $split (local.get $buf) (local.get $len)))

  ;; Records the preopened directories (fds 3, 4, … until fd_prestat_get fails).
  (func $find_preopens
    (local $fd i32) (local $rt i32) (local $n i32) (local $used i32) (local $dst i32)
    (local $len i32) (local $e i32)
    (local.set $rt (call $rt))
    (local.set $fd (i32.const 3))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (i32.load offset=8 (local.get $rt)) (i32.const 64)))
        (br_if $done (call $fd_prestat_get (local.get $fd) (i32.add (local.get $rt) (i32.const 0xe0))))
        (if (i32.eqz (i32.load8_u offset=0xe0 (local.get $rt)))
          (then
            (local.set $n (i32.load offset=0xe4 (local.get $rt)))
            (local.set $used (i32.load offset=0xc (local.get $rt)))
            (if (i32.le_u (i32.add (local.get $used) (i32.add (local.get $n) (i32.const 1))) (i32.const 0x2000))
              (then
                (local.set $dst (i32.add (local.get $rt) (i32.add (i32.const 0x6000) (local.get $used))))
                (i32.store8 (local.get $dst) (i32.const 0x2f))
                (if (i32.eqz (call $fd_prestat_dir_name (local.get $fd) (i32.add (local.get $dst) (i32.const 1)) (local.get $n)))
                  (then
                    ;; Some runtimes count a trailing NUL in the name.
                    (local.set $len (i32.add (local.get $n) (i32.const 1)))
                    (block $trimmed
                      (loop $trim
                        (br_if $trimmed (i32.le_u (local.get $len) (i32.const 1)))
                        (br_if $trimmed (i32.load8_u (i32.sub (i32.add (local.get $dst) (local.get $len)) (i32.const 1))))
                        (local.set $len (i32.sub (local.get $len) (i32.const 1)))
                        (br $trim)))
                    (local.set $len (call $normalize (local.get $dst) (local.get $len)))
                    (local.set $e (i32.add (local.get $rt)
                      (i32.add (i32.const 0x5000) (i32.shl (i32.load offset=8 (local.get $rt)) (i32.const 4)))))
                    (i32.store (local.get $e) (local.get $fd))
                    (i32.store offset=4 (local.get $e) (local.get $dst))
                    (i32.store offset=8 (local.get $e) (local.get $len))
                    (i32.store offset=8 (local.get $rt) (i32.add (i32.load offset=8 (local.get $rt)) (i32.const 1)))
                    (i32.store offset=0xc (local.get $rt)
                      (i32.add (local.get $used) (i32.add (local.get $n) (i32.const 1))))))))))
        (local.set $fd (i32.add (local.get $fd) (i32.const 1)))
        (br $next))))

  ;; ---------------------------------------------------------------------------------------
  ;; Memory: 64 KiB pages above the state page, tracked in a bitmap. Freed pages are reused
  ;; first-fit; otherwise memory grows. Pages are zeroed when handed out.

  (func $page_used (param $p i32) (result i32)
    (i32.and
      (i32.shr_u (i32.load8_u offset=0xa000 (i32.add (call $rt) (i32.shr_u (local.get $p) (i32.const 3))))
                 (i32.and (local.get $p) (i32.const 7)))
      (i32.const 1)))

  ;; Marks pages [$p, $p+$n) in use ($used = 1) or free ($used = 0).
  (func $mark (param $p i32) (param $n i32) (param $used i32)
    (local $a i32) (local $bit i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $a (i32.add (call $rt) (i32.shr_u (local.get $p) (i32.const 3))))
        (local.set $bit (i32.shl (i32.const 1) (i32.and (local.get $p) (i32.const 7))))
        (i32.store8 offset=0xa000 (local.get $a)
          (if (result i32) (local.get $used)
            (then (i32.or (i32.load8_u offset=0xa000 (local.get $a)) (local.get $bit)))
            (else (i32.and (i32.load8_u offset=0xa000 (local.get $a)) (i32.xor (local.get $bit) (i32.const -1))))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next))))

  ;; Hands out $n consecutive zeroed pages; returns the first page index or -1.
  (func $alloc_pages (param $n i32) (result i32)
    (local $p i32) (local $start i32) (local $run i32) (local $size i32) (local $grow i32)
    (if (i32.or (i32.eqz (local.get $n)) (i32.ge_u (local.get $n) (i32.const 65536)))
      (then (return (i32.const -1))))
    (local.set $size (memory.size))
    (local.set $p (i32.load offset=0x10 (call $rt)))
    (local.set $start (local.get $p))
    (block $found
      (loop $scan
        (br_if $found (i32.ge_u (local.get $run) (local.get $n)))
        (if (i32.ge_u (local.get $p) (local.get $size))
          (then
            ;; The free run (possibly empty) reaches the end of memory: grow the rest.
            (local.set $grow (i32.sub (local.get $n) (local.get $run)))
            (if (i32.gt_u (i32.add (local.get $size) (local.get $grow)) (i32.const 65536))
              (then (return (i32.const -1))))
            (if (i32.eq (memory.grow (local.get $grow)) (i32.const -1))
              (then (return (i32.const -1))))
            (br $found)))
        (if (call $page_used (local.get $p))
          (then
            (local.set $run (i32.const 0))
            (local.set $start (i32.add (local.get $p) (i32.const 1))))
          (else
            (local.set $run (i32.add (local.get $run) (i32.const 1)))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $scan)))
    (call $mark (local.get $start) (local.get $n) (i32.const 1))
    (if (i32.eq (local.get $start) (i32.load offset=0x10 (call $rt)))
      (then (i32.store offset=0x10 (call $rt) (i32.add (local.get $start) (local.get $n)))))
    (memory.fill (i32.shl (local.get $start) (i32.const 16)) (i32.const 0) (i32.shl (local.get $n) (i32.const 16)))
    (local.get $start))

  ;; ---------------------------------------------------------------------------------------
  ;; Program start

  ;; The WASI command entry: sets up the runtime state, builds the NaCl startup block
  ;;   [0]=0 (fini), [1]=envc, [2]=argc, argv…, NULL, envp…, NULL,
  ;;   {AT_SYSINFO=32, table slot of __nacl_irt_query}, {AT_NULL=0, 0}, then the strings
  ;; in pages of its own and calls the pexe's _start with it. auxv follows envp's NULL
  ;; directly, as libnacl and the PPAPI start code expect.
  (func $start (export "_start")
    (local $rt i32) (local $need i32) (local $argc i32) (local $argsz i32) (local $envc i32)
    (local $envsz i32) (local $words i32) (local $blk i32) (local $p i32) (local $envp i32)
    (local.set $rt (call $rt))
    ;;@threads (global.set $scratch (local.get $rt))
    (local.set $need (i32.add (i32.shr_u (local.get $rt) (i32.const 16)) (i32.const 1)))
    ;; Pepper variant: the interface directory's pages follow RT (see $ppb_get_interface).
    ;;@pepper (local.set $need (i32.add (local.get $need) (i32.load offset=0x10000 (local.get $rt))))
    (if (i32.gt_u (local.get $need) (memory.size))
      (then
        (if (i32.eq (memory.grow (i32.sub (local.get $need) (memory.size))) (i32.const -1))
          (then (unreachable)))))
    (memory.fill (local.get $rt) (i32.const 0) (i32.const 0x10000))
    ;;@threads (i32.store offset=0x30 (local.get $rt) (i32.const 1))
    (memory.init $consts (i32.add (local.get $rt) (i32.const 0x200)) (i32.const 0) (i32.const 431))  ;;@unpepper
    ;;@pepper (memory.init $consts (i32.add (local.get $rt) (i32.const 0x200)) (i32.const 0) (i32.const 456))
    (i32.store offset=0x0 (local.get $rt) (local.get $need))
    (i32.store offset=0x10 (local.get $rt) (local.get $need))
    (i32.store8 offset=0x170 (local.get $rt) (i32.const 0x2e))
    (i32.store8 offset=0x1000 (local.get $rt) (i32.const 0x2f))
    (i32.store offset=0x4 (local.get $rt) (i32.const 1))
    (drop (call $clock_time_get (i32.const 1) (i64.const 1) (i32.add (local.get $rt) (i32.const 0x18))))
    (call $find_preopens)

    (if (call $args_sizes_get (call $r0) (call $r1))
      (then (local.set $argc (i32.const 0)) (local.set $argsz (i32.const 0)))
      (else
        (local.set $argc (i32.load (call $r0)))
        (local.set $argsz (i32.load (call $r1)))))
    (if (call $environ_sizes_get (call $r0) (call $r1))
      (then (local.set $envc (i32.const 0)) (local.set $envsz (i32.const 0)))
      (else
        (local.set $envc (i32.load (call $r0)))
        (local.set $envsz (i32.load (call $r1)))))
    ;; fini, envc, argc, argv + NULL, envp + NULL, two auxv pairs
    (local.set $words (i32.add (i32.add (local.get $argc) (local.get $envc)) (i32.const 9)))
    (local.set $p (call $alloc_pages (call $pages
      (i32.add (i32.shl (local.get $words) (i32.const 2)) (i32.add (local.get $argsz) (local.get $envsz))))))
    (if (i32.lt_s (local.get $p) (i32.const 0)) (then (unreachable)))
    (local.set $blk (i32.shl (local.get $p) (i32.const 16)))
    (i32.store offset=0 (local.get $blk) (i32.const 0))
    (i32.store offset=4 (local.get $blk) (local.get $envc))
    (i32.store offset=8 (local.get $blk) (local.get $argc))
    (local.set $p (i32.add (local.get $blk) (i32.shl (local.get $words) (i32.const 2))))   ;; strings
    (if (local.get $argc)
      (then
        (if (call $args_get (i32.add (local.get $blk) (i32.const 12)) (local.get $p))
          (then (unreachable)))))
    (i32.store (i32.add (local.get $blk) (i32.shl (i32.add (local.get $argc) (i32.const 3)) (i32.const 2))) (i32.const 0))
    (local.set $envp (i32.add (local.get $blk) (i32.shl (i32.add (local.get $argc) (i32.const 4)) (i32.const 2))))
    (if (local.get $envc)
      (then
        (if (call $environ_get (local.get $envp) (i32.add (local.get $p) (local.get $argsz)))
          (then (unreachable)))))
    (local.set $p (i32.add (local.get $envp) (i32.shl (local.get $envc) (i32.const 2))))
    (i32.store offset=0 (local.get $p) (i32.const 0))                 ;; envp NULL
    (i32.store offset=4 (local.get $p) (i32.const 32))                ;; AT_SYSINFO
    (i32.store offset=8 (local.get $p) (global.get $__table_base))    ;; slot 0: __nacl_irt_query
    (i32.store offset=12 (local.get $p) (i32.const 0))                ;; AT_NULL
    (i32.store offset=16 (local.get $p) (i32.const 0))
    (call $pexe_start (local.get $blk))
    (drop (call $stdout_flush))
    (call $proc_exit (i32.const 0)))

  ;; ---------------------------------------------------------------------------------------
  ;; The query function

  ;; size_t __nacl_irt_query(const char *name, void *table, size_t tablesize): copies the
  ;; interface's function pointers and returns its size when the name is known and the
  ;; table is large enough; 0 otherwise (newlib insists on the exact size it passed).
  (func $irt_query (export "__nacl_irt_query") (param $name i32) (param $table i32) (param $size i32) (result i32)
    (local $nlen i32) (local $rec i32) (local $rlen i32) (local $first i32) (local $count i32)
    (local $i i32)
    (local.set $nlen (call $strnlen (local.get $name) (i32.const 64)))
    (if (i32.le_s (local.get $nlen) (i32.const 0)) (then (return (i32.const 0))))
    (local.set $rec (i32.add (call $rt) (i32.const 0x250)))
    (block $none
      (loop $next
        (local.set $rlen (call $strnlen (local.get $rec) (i32.const 64)))
        (br_if $none (i32.le_s (local.get $rlen) (i32.const 0)))
        (if (i32.eq (local.get $rlen) (local.get $nlen))
          (then
            (if (call $memeq (local.get $rec) (local.get $name) (local.get $nlen))
              (then
                (local.set $first (i32.load8_u offset=1 (i32.add (local.get $rec) (local.get $rlen))))
                (local.set $count (i32.load8_u offset=2 (i32.add (local.get $rec) (local.get $rlen))))
                (if (i32.lt_u (local.get $size) (i32.shl (local.get $count) (i32.const 2)))
                  (then (return (i32.const 0))))
                (block $copied
                  (loop $copy
                    (br_if $copied (i32.ge_u (local.get $i) (local.get $count)))
                    (i32.store (i32.add (local.get $table) (i32.shl (local.get $i) (i32.const 2)))
                      (i32.add (global.get $__table_base) (i32.add (local.get $first) (local.get $i))))
                    (local.set $i (i32.add (local.get $i) (i32.const 1)))
                    (br $copy)))
                (return (i32.shl (local.get $count) (i32.const 2)))))))
        (local.set $rec (i32.add (local.get $rec) (i32.add (local.get $rlen) (i32.const 3))))
        (br $next)))
    (i32.const 0))

  ;; ---------------------------------------------------------------------------------------
  ;; nacl-irt-basic-0.1

  (func $irt_exit (param $status i32)
    (drop (call $stdout_flush))
    (call $proc_exit (local.get $status))
    (unreachable))

  ;; Reads clock $id (NaCl and WASI number clocks alike) into the i64 at r0; returns a WASI
  ;; errno. The CPU-time clocks fall back to monotonic time since _start where the host
  ;; has none (a single-threaded program's CPU time, less any sleeping).
  (func $clock_ns (param $id i32) (result i32)
    (local $e i32)
    ;; Hosts may trap on an id outside WASI's enum, so it is checked here.
    (if (i32.gt_u (local.get $id) (i32.const 3)) (then (return (i32.const 28))))
    (local.set $e (call $clock_time_get (local.get $id) (i64.const 1) (call $r0)))
    (if (i32.and (i32.ne (local.get $e) (i32.const 0))
                 (i32.or (i32.eq (local.get $id) (i32.const 2)) (i32.eq (local.get $id) (i32.const 3))))
      (then
        (local.set $e (call $clock_time_get (i32.const 1) (i64.const 1) (call $r0)))
        (if (i32.eqz (local.get $e))
          (then
            (i64.store (call $r0) (i64.sub (i64.load (call $r0)) (i64.load offset=0x18 (call $rt))))))))
    (local.get $e))

  ;; struct timeval: i64 tv_sec @0, i32 tv_usec @8.
  (func $irt_gettod (param $tv i32) (result i32)
    (local $e i32) (local $ns i64)
    (local.set $e (call $clock_ns (i32.const 0)))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (local.set $ns (i64.load (call $r0)))
    (i64.store (local.get $tv) (i64.div_u (local.get $ns) (i64.const 1000000000)))
    (i32.store offset=8 (local.get $tv)
      (i32.wrap_i64 (i64.div_u (i64.rem_u (local.get $ns) (i64.const 1000000000)) (i64.const 1000))))
    (i32.const 0))

  ;; Process CPU time in microseconds (CLOCKS_PER_SEC is 1000000), wrapping like a clock_t.
  (func $irt_clock (param $ticks i32) (result i32)
    (local $e i32)
    (local.set $e (call $clock_ns (i32.const 2)))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (i32.store (local.get $ticks) (i32.wrap_i64 (i64.div_u (i64.load (call $r0)) (i64.const 1000))))
    (i32.const 0))

  ;; Sleeps $ns nanoseconds with a relative monotonic-clock subscription; returns a WASI errno.
  (func $sleep_ns (param $ns i64) (result i32)
    (local $s i32)
    (if (i64.le_s (local.get $ns) (i64.const 0)) (then (return (i32.const 0))))
    (local.set $s (i32.add (call $rt) (i32.const 0x100)))  ;;@unthreaded
    ;;@threads (local.set $s (i32.add (global.get $scratch) (i32.const 0x100)))
    (memory.fill (local.get $s) (i32.const 0) (i32.const 80))
    ;; subscription: userdata @0, tag @8 (0 = clock), clock id @16, timeout @24,
    ;; precision @32, flags @40 (0 = relative)
    (i32.store offset=16 (local.get $s) (i32.const 1))
    (i64.store offset=24 (local.get $s) (local.get $ns))
    (call $poll_oneoff (local.get $s) (i32.add (local.get $s) (i32.const 0x40)) (i32.const 1) (call $r0)))

  ;; struct timespec: i64 tv_sec @0, i32 tv_nsec @8.
  (func $irt_nanosleep (param $req i32) (param $rem i32) (result i32)
    (local $sec i64) (local $nsec i32) (local $e i32)
    ;; A program that sleeps is not writing: what it wrote goes out now, not after the nap.
    (drop (call $stdout_flush))
    (local.set $sec (i64.load (local.get $req)))
    (local.set $nsec (i32.load offset=8 (local.get $req)))
    (if (i32.or (i64.lt_s (local.get $sec) (i64.const 0)) (i32.gt_u (local.get $nsec) (i32.const 999999999)))
      (then (return (i32.const 22))))
    (local.set $e (call $sleep_ns
      (if (result i64) (i64.gt_u (local.get $sec) (i64.const 9223372035))
        (then (i64.const 0x7fffffffffffffff))
        (else (i64.add (i64.mul (local.get $sec) (i64.const 1000000000)) (i64.extend_i32_u (local.get $nsec)))))))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (if (local.get $rem)
      (then
        (i64.store (local.get $rem) (i64.const 0))
        (i32.store offset=8 (local.get $rem) (i32.const 0))))
    (i32.const 0))

  (func $irt_sched_yield (result i32)
    (drop (call $sched_yield))
    (i32.const 0))

  ;; _SC_NPROCESSORS_ONLN 1 (the host's count in the threaded runtime, 1 otherwise: a
  ;; program that cannot start threads gains nothing from more), _SC_PAGESIZE 2 (64 KiB, as
  ;; NaCl and wasm pages), _SC_NACL_FILE_ACCESS_ENABLED 1<<24,
  ;; _SC_NACL_LIST_MAPPINGS_ENABLED, _SC_NACL_PNACL_MODE.
  (func $irt_sysconf (param $name i32) (param $value i32) (result i32)
    (local $v i32)
    (block $known
      (block $unknown
        (if (i32.eq (local.get $name) (i32.const 1))
          (then
            (local.set $v (i32.const 1))  ;;@unthreaded
            ;;@threads (local.set $v (call $host_cpu_count))
            (br $known)))
        (local.set $v (i32.const 65536))
        (br_if $known (i32.eq (local.get $name) (i32.const 2)))
        (local.set $v (i32.const 1))
        (br_if $known (i32.eq (local.get $name) (i32.const 0x1000000)))
        (local.set $v (i32.const 0))
        (br_if $known (i32.eq (local.get $name) (i32.const 0x1000001)))
        (local.set $v (i32.const 1))
        (br_if $known (i32.eq (local.get $name) (i32.const 0x1000002)))
        (br $unknown))
      (return (i32.const 22)))
    (i32.store (local.get $value) (local.get $v))
    (i32.const 0))

  ;; ---------------------------------------------------------------------------------------
  ;; Standard output
  ;;
  ;; The newlib inside the pexes line-buffers stdout whatever fd 1 is, so every line reaches
  ;; $irt_write on its own: one fd_write per line. When fd 1 is not a terminal
  ;; (fd_fdstat_get's file type is not a character device), the runtime keeps what is
  ;; written to it in a buffer of 1 KiB at RT+0xc00 (as large as wasi-libc's stdout buffer,
  ;; BUFSIZ) and writes it out:
  ;;   - before a write that does not fit: the buffer goes out as it is (one fd_write),
  ;;     then that write starts it again (or goes straight out when it is larger than the
  ;;     buffer). The buffer is never split, so its write-outs end where the program's
  ;;     writes end, at the end of a line for newlib: the wasmtime CLI's stdout is line
  ;;     buffered (Rust's LineWriter) and turns a chunk ending inside a line into two
  ;;     write(2) calls;
  ;;   - before anything else is done to fd 1 (seek, fstat, fsync, fdatasync, ftruncate,
  ;;     close, a dup2 onto it);
  ;;   - before a write to fd 2 (standard error is not buffered, as in C: the two keep their
  ;;     order on a shared destination, and a message before a crash is never held back);
  ;;   - before a read of fd 0, so a prompt shows; in the threaded runtime fd 1 is written
  ;;     straight through while any thread is inside such a read, so the answer a thread
  ;;     prints to a program on the other end of a pipe is not held back;
  ;;   - before a sleep (nanosleep);
  ;;   - on every way out: exit, the return of the pexe's _start, the exit of the last
  ;;     thread (thread_exit of the main thread in the unthreaded runtime).
  ;; A terminal (or an fd 1 without an fdstat) gets every write at once, as under NaCl, and
  ;; so does every fd 1 in the Pepper runtime (a plugin does not exit: nothing would write
  ;; out its last lines). A trap loses what the buffer holds: at most 1 KiB of the lines
  ;; written since the last write-out, as a wasi-libc program loses its stdout buffer. A host
  ;; can write it out after the trap by calling the export __pexe2wasm_flush_stdout
  ;; (pexe2wasm run does).
  ;;
  ;; Threads: the buffer, its byte count and fd 1's mode are shared by every thread (the
  ;; standard streams are), so the threaded runtime holds the lock at RT+0x2c ($out_lock)
  ;; for every use of them, the fd_write that empties the buffer included: two threads'
  ;; writes never mix inside one write, and bytes leave in the order the writes were taken.
  ;; Only the iovec and the result word of that fd_write are per thread (scratch).

  ;; Writes [$p, $p + $len) to $fd with as many fd_write calls as it takes (a host may
  ;; write part of it, as wasmtime-wasi writes at most one iovec a call); a WASI errno. A
  ;; call that writes nothing is EIO (retrying would never end).
  (func $write_all (param $fd i32) (param $p i32) (param $len i32) (result i32)
    (local $e i32) (local $done i32)
    (block $all
      (loop $again
        (br_if $all (i32.eqz (local.get $len)))
        (i32.store (call $iov) (local.get $p))
        (i32.store offset=4 (call $iov) (local.get $len))
        (local.set $e (call $fd_write (local.get $fd) (call $iov) (i32.const 1) (call $r0)))
        (if (local.get $e) (then (return (local.get $e))))
        (local.set $done (i32.load (call $r0)))
        (if (i32.eqz (local.get $done)) (then (return (i32.const 29))))
        (if (i32.gt_u (local.get $done) (local.get $len)) (then (local.set $done (local.get $len))))
        (local.set $p (i32.add (local.get $p) (local.get $done)))
        (local.set $len (i32.sub (local.get $len) (local.get $done)))
        (br $again)))
    (i32.const 0))

  ;; How fd 1 is written: 1 through the buffer, 2 straight through (a terminal, no fdstat,
  ;; the Pepper runtime). Asked on the first write, kept until fd 1 is closed or replaced.
  (func $stdout_mode (result i32)
    (local $m i32)
    (local.set $m (i32.load offset=0x28 (call $rt)))
    (if (i32.eqz (local.get $m))
      (then
        (local.set $m (i32.const 2))
        (if (i32.eqz (call $fd_fdstat_get (i32.const 1) (call $fdst)))
          (then
            (if (i32.ne (i32.load8_u (call $fdst)) (i32.const 2))
              (then (local.set $m (i32.const 1))))))
        ;;@pepper (local.set $m (i32.const 2))
        (i32.store offset=0x28 (call $rt) (local.get $m))))
    (local.get $m))

  ;; Writes out what the buffer holds (the caller holds the lock); a WASI errno. The bytes
  ;; are dropped even when the write fails, as a C library drops its buffer.
  (func $stdout_drain (result i32)
    (local $n i32)
    (local.set $n (i32.load offset=0x24 (call $rt)))
    (if (i32.eqz (local.get $n)) (then (return (i32.const 0))))
    (i32.store offset=0x24 (call $rt) (i32.const 0))
    (call $write_all (i32.const 1) (i32.add (call $rt) (i32.const 0xc00)) (local.get $n)))

  ;; Writes out what the buffer holds; a WASI errno.
  (func $stdout_flush (result i32)
    (local $e i32)
    ;;@threads (call $out_lock)
    (local.set $e (call $stdout_drain))
    ;;@threads (call $out_unlock)
    (local.get $e))

  ;; Before fd 1 is closed or replaced: writes out the buffer and forgets fd 1's mode.
  (func $stdout_forget
    ;;@threads (call $out_lock)
    (drop (call $stdout_drain))
    (i32.store offset=0x28 (call $rt) (i32.const 0))
    ;;@threads (call $out_unlock)
  )

  ;; Before another operation on $fd: writes out the buffer if $fd is fd 1; a WASI errno.
  (func $flush_for (param $fd i32) (result i32)
    (if (result i32) (i32.eq (local.get $fd) (i32.const 1))
      (then (call $stdout_flush))
      (else (i32.const 0))))

  ;; A write to fd 1 (the caller holds the lock): into the buffer when it fits; else the
  ;; buffer goes out as it is and this write starts it again, or goes straight out when it
  ;; is larger than the buffer. Straight through when fd 1 is not buffered.
  (func $stdout_write (param $buf i32) (param $count i32) (param $nwrote i32) (result i32)
    (local $n i32) (local $e i32) (local $through i32)
    (local.set $through (i32.eq (call $stdout_mode) (i32.const 2)))
    ;;@threads (local.set $through (i32.or (local.get $through) (i32.ne (i32.atomic.load offset=0x34 (call $rt)) (i32.const 0))))
    (local.set $n (i32.load offset=0x24 (call $rt)))
    (if (i32.and (i32.eqz (local.get $through))
                 (i32.le_u (local.get $count) (i32.sub (i32.const 1024) (local.get $n))))
      (then
        (memory.copy (i32.add (call $rt) (i32.add (i32.const 0xc00) (local.get $n)))
                     (local.get $buf) (local.get $count))
        (i32.store offset=0x24 (call $rt) (i32.add (local.get $n) (local.get $count)))
        (i32.store (local.get $nwrote) (local.get $count))
        (return (i32.const 0))))
    (local.set $e (call $stdout_drain))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (if (i32.or (local.get $through) (i32.gt_u (local.get $count) (i32.const 1024)))
      (then (return (call $write_once (i32.const 1) (local.get $buf) (local.get $count) (local.get $nwrote)))))
    (memory.copy (i32.add (call $rt) (i32.const 0xc00)) (local.get $buf) (local.get $count))
    (i32.store offset=0x24 (call $rt) (local.get $count))
    (i32.store (local.get $nwrote) (local.get $count))
    (i32.const 0))

  ;; For a host, after a trap ended the program: writes out what the buffer holds. The
  ;; threaded runtime gives up when a thread holds the lock (it stopped inside a write;
  ;; waiting would never end).
  (func (export "__pexe2wasm_flush_stdout")
    ;;@threads (if (i32.atomic.rmw.cmpxchg offset=0x2c (call $rt) (i32.const 0) (i32.const 1)) (then (return)))
    (drop (call $stdout_drain))
    ;;@threads (call $out_unlock)
  )

  ;; ---------------------------------------------------------------------------------------
  ;; nacl-irt-fdio-0.1, nacl-irt-dev-fdio-0.1/0.2/0.3

  (func $irt_close (param $fd i32) (result i32)
    (local $e i32)
    (if (i32.eq (local.get $fd) (i32.const 1)) (then (call $stdout_forget)))
    (local.set $e (call $fd_close (local.get $fd)))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (call $reset_cookie (local.get $fd))
    (i32.const 0))

  ;; WASI cannot duplicate a descriptor.
  (func $irt_dup (param $fd i32) (param $newfd i32) (result i32)
    (i32.const 38))

  ;; WASI has only fd_renumber, which moves a descriptor (the old number is closed) and needs
  ;; the target to be open. That matches the common redirection `dup2(fd, 1); close(fd)`
  ;; closely enough, but moving stdin/stdout/stderr away would lose them, so those give
  ;; ENOSYS.
  (func $irt_dup2 (param $fd i32) (param $newfd i32) (result i32)
    (local $e i32)
    (if (i32.eq (local.get $fd) (local.get $newfd))
      (then
        (local.set $e (call $fd_fdstat_get (local.get $fd) (call $fdst)))
        (if (local.get $e) (then (return (call $err (local.get $e)))))
        (return (i32.const 0))))
    (if (i32.le_u (local.get $fd) (i32.const 2)) (then (return (i32.const 38))))
    (if (i32.eq (local.get $newfd) (i32.const 1)) (then (call $stdout_forget)))
    (local.set $e (call $fd_renumber (local.get $fd) (local.get $newfd)))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (call $reset_cookie (local.get $newfd))
    (i32.const 0))

  ;; A read of fd 0 writes out fd 1's buffer first (a prompt shows before the program
  ;; waits); the threaded runtime counts the threads inside one (see $stdout_write).
  (func $irt_read (param $fd i32) (param $buf i32) (param $count i32) (param $nread i32) (result i32)
    (local $e i32)
    (if (i32.eqz (local.get $fd))
      (then
        ;;@threads (drop (i32.atomic.rmw.add offset=0x34 (call $rt) (i32.const 1)))
        (drop (call $stdout_flush))))
    (i32.store (call $iov) (local.get $buf))
    (i32.store offset=4 (call $iov) (local.get $count))
    (local.set $e (call $fd_read (local.get $fd) (call $iov) (i32.const 1) (call $r0)))
    ;;@threads (if (i32.eqz (local.get $fd)) (then (drop (i32.atomic.rmw.sub offset=0x34 (call $rt) (i32.const 1)))))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (i32.store (local.get $nread) (i32.load (call $r0)))
    (i32.const 0))

  ;; fd 1 goes through its buffer (see "Standard output"); fd 2 writes that buffer out
  ;; first.
  (func $irt_write (param $fd i32) (param $buf i32) (param $count i32) (param $nwrote i32) (result i32)
    (local $r i32)
    (if (i32.eq (local.get $fd) (i32.const 1))
      (then
        ;;@threads (call $out_lock)
        (local.set $r (call $stdout_write (local.get $buf) (local.get $count) (local.get $nwrote)))
        ;;@threads (call $out_unlock)
        (return (local.get $r))))
    (if (i32.eq (local.get $fd) (i32.const 2)) (then (drop (call $stdout_flush))))
    (call $write_once (local.get $fd) (local.get $buf) (local.get $count) (local.get $nwrote)))

  ;; One fd_write of the whole range; a NaCl errno, and the count written at $nwrote.
  (func $write_once (param $fd i32) (param $buf i32) (param $count i32) (param $nwrote i32) (result i32)
    (local $e i32)
    (i32.store (call $iov) (local.get $buf))
    (i32.store offset=4 (call $iov) (local.get $count))
    (local.set $e (call $fd_write (local.get $fd) (call $iov) (i32.const 1) (call $r0)))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (i32.store (local.get $nwrote) (i32.load (call $r0)))
    (i32.const 0))

  ;; Whence values agree (SET 0, CUR 1, END 2). WASI cannot seek a directory; seeking one to
  ;; an absolute position sets its readdir cookie instead (rewinddir, seekdir).
  (func $irt_seek (param $fd i32) (param $offset i64) (param $whence i32) (param $new i32) (result i32)
    (local $e i32) (local $c i32)
    (drop (call $flush_for (local.get $fd)))
    ;; Hosts may trap on a whence outside WASI's enum.
    (if (i32.gt_u (local.get $whence) (i32.const 2)) (then (return (i32.const 22))))
    (local.set $e (call $fd_seek (local.get $fd) (local.get $offset) (local.get $whence) (call $r0)))
    (if (i32.eqz (local.get $e))
      (then
        (i64.store (local.get $new) (i64.load (call $r0)))
        (return (i32.const 0))))
    (local.set $c (call $cookie (local.get $fd)))
    (if (i32.and (i32.ne (local.get $c) (i32.const 0))
                 (i32.and (i32.eqz (local.get $whence)) (i64.ge_s (local.get $offset) (i64.const 0))))
      (then
        (if (i32.eqz (call $fd_fdstat_get (local.get $fd) (call $fdst)))
          (then
            (if (i32.eq (i32.load8_u (call $fdst)) (i32.const 3))
              (then
                (i64.store (local.get $c) (local.get $offset))
                (i64.store (local.get $new) (local.get $offset))
                (return (i32.const 0))))))))
    (call $err (local.get $e)))

  ;; st_mode for a WASI filetype. WASI has no permission bits; these are typical ones.
  (func $mode_of (param $type i32) (result i32)
    (block $unknown
      (block $symlink
        (block $socket
          (block $regular
            (block $directory
              (block $chardev
                (block $blockdev
                  (br_table $unknown $blockdev $chardev $directory $regular $socket $socket $symlink
                            $unknown (local.get $type)))
                (return (i32.const 0x61b0)))    ;; S_IFBLK | 0660
              (return (i32.const 0x21b6)))      ;; S_IFCHR | 0666
            (return (i32.const 0x41ed)))        ;; S_IFDIR | 0755
          (return (i32.const 0x81a4)))          ;; S_IFREG | 0644
        (return (i32.const 0xc1b6)))            ;; S_IFSOCK | 0666
      (return (i32.const 0xa1ff)))              ;; S_IFLNK | 0777
    (i32.const 0x180))                          ;; unknown type (a pipe, say) | 0600

  ;; Writes the 104-byte NaCl stat at $st from the WASI filestat at $fs
  ;; (dev @0, ino @8, filetype u8 @16, nlink @24, size @32, atim @40, mtim @48, ctim @56).
  (func $put_stat (param $st i32) (param $fs i32)
    (local $size i64)
    (memory.fill (local.get $st) (i32.const 0) (i32.const 104))
    (i64.store offset=0 (local.get $st) (i64.load offset=0 (local.get $fs)))      ;; st_dev
    (i64.store offset=8 (local.get $st) (i64.load offset=8 (local.get $fs)))      ;; st_ino
    (i32.store offset=16 (local.get $st) (call $mode_of (i32.load8_u offset=16 (local.get $fs))))
    (i32.store offset=20 (local.get $st) (i32.wrap_i64 (i64.load offset=24 (local.get $fs))))
    (local.set $size (i64.load offset=32 (local.get $fs)))
    (i64.store offset=40 (local.get $st) (local.get $size))                       ;; st_size
    (i32.store offset=48 (local.get $st) (i32.const 4096))                        ;; st_blksize
    (i32.store offset=52 (local.get $st)                                          ;; st_blocks
      (i32.wrap_i64 (i64.shr_u (i64.add (local.get $size) (i64.const 511)) (i64.const 9))))
    (call $put_time (i32.add (local.get $st) (i32.const 56)) (i64.load offset=40 (local.get $fs)))
    (call $put_time (i32.add (local.get $st) (i32.const 72)) (i64.load offset=48 (local.get $fs)))
    (call $put_time (i32.add (local.get $st) (i32.const 88)) (i64.load offset=56 (local.get $fs))))

  ;; A WASI timestamp (ns) as the stat pair {i64 seconds, i64 nanoseconds}.
  (func $put_time (param $p i32) (param $ns i64)
    (i64.store (local.get $p) (i64.div_u (local.get $ns) (i64.const 1000000000)))
    (i64.store offset=8 (local.get $p) (i64.rem_u (local.get $ns) (i64.const 1000000000))))

  ;; Standard streams may have no filestat on some hosts; their fdstat filetype still gives
  ;; the mode newlib looks at (a character device means a terminal).
  (func $irt_fstat (param $fd i32) (param $st i32) (result i32)
    (local $e i32)
    (drop (call $flush_for (local.get $fd)))
    (local.set $e (call $fd_filestat_get (local.get $fd) (call $fst)))
    (if (i32.eqz (local.get $e))
      (then
        (call $put_stat (local.get $st) (call $fst))
        (return (i32.const 0))))
    (if (call $fd_fdstat_get (local.get $fd) (call $fdst))
      (then (return (call $err (local.get $e)))))
    (memory.fill (call $fst) (i32.const 0) (i32.const 64))
    (i32.store8 offset=16 (call $fst) (i32.load8_u (call $fdst)))
    (call $put_stat (local.get $st) (call $fst))
    (i32.const 0))

  ;; Converts WASI dirents (d_next @0, d_ino @8, d_namlen u32 @16, d_type @20, name @24) to
  ;; NaCl ones (d_ino u64 @0, d_off i64 @8, d_reclen u16 @16, d_name @18, NUL, padded to 8).
  ;; The fd's position is the WASI cookie, kept per fd; d_off is the next entry's cookie.
  (func $irt_getdents (param $fd i32) (param $dirp i32) (param $count i32) (param $nread i32) (result i32)
    (local $c i32) (local $cookie i64) (local $buf i32) (local $e i32) (local $used i32)
    (local $off i32) (local $ent i32) (local $namlen i32) (local $reclen i32) (local $out i32)
    (local $rec i32)
    (local.set $c (call $cookie (local.get $fd)))
    (if (i32.eqz (local.get $c)) (then (return (i32.const 9))))
    (local.set $cookie (i64.load (local.get $c)))
    (local.set $buf (i32.add (call $rt) (i32.const 0x4000)))  ;;@unthreaded
    ;;@threads (local.set $buf (i32.add (global.get $scratch) (i32.const 0x4000)))
    (block $end
      (loop $fill
        (local.set $e (call $fd_readdir (local.get $fd) (local.get $buf) (i32.const 4096)
                                        (local.get $cookie) (call $r0)))
        (if (local.get $e)
          (then
            (br_if $end (local.get $out))
            (return (call $err (local.get $e)))))
        (local.set $used (i32.load (call $r0)))
        (local.set $off (i32.const 0))
        (block $drained
          (loop $walk
            (br_if $drained (i32.gt_u (i32.add (local.get $off) (i32.const 24)) (local.get $used)))
            (local.set $ent (i32.add (local.get $buf) (local.get $off)))
            (local.set $namlen (i32.load offset=16 (local.get $ent)))
            (br_if $drained (i32.gt_u (local.get $namlen) (i32.const 4072)))
            (br_if $drained (i32.gt_u (i32.add (i32.add (local.get $off) (i32.const 24)) (local.get $namlen))
                                      (local.get $used)))
            ;; Names longer than NaCl's d_name[256] cannot be returned; they are skipped.
            (if (i32.le_u (local.get $namlen) (i32.const 255))
              (then
                (local.set $reclen (i32.and (i32.add (local.get $namlen) (i32.const 26)) (i32.const -8)))
                (if (i32.gt_u (i32.add (local.get $out) (local.get $reclen)) (local.get $count))
                  (then
                    (br_if $end (local.get $out))
                    (return (i32.const 22))))
                (local.set $rec (i32.add (local.get $dirp) (local.get $out)))
                (i64.store offset=0 (local.get $rec) (i64.load offset=8 (local.get $ent)))
                (i64.store offset=8 (local.get $rec) (i64.load offset=0 (local.get $ent)))
                (i32.store16 offset=16 (local.get $rec) (local.get $reclen))
                (memory.copy (i32.add (local.get $rec) (i32.const 18))
                             (i32.add (local.get $ent) (i32.const 24)) (local.get $namlen))
                (memory.fill (i32.add (local.get $rec) (i32.add (i32.const 18) (local.get $namlen)))
                             (i32.const 0)
                             (i32.sub (local.get $reclen) (i32.add (i32.const 18) (local.get $namlen))))
                (local.set $out (i32.add (local.get $out) (local.get $reclen)))))
            (local.set $cookie (i64.load (local.get $ent)))
            (i64.store (local.get $c) (local.get $cookie))
            (local.set $off (i32.add (local.get $off) (i32.add (i32.const 24) (local.get $namlen))))
            (br $walk)))
        ;; A full buffer may have been cut short: read on from the last whole entry, unless
        ;; not even one entry fit (then there is nothing more this buffer can hold).
        (br_if $fill (i32.and (i32.eq (local.get $used) (i32.const 4096)) (i32.ne (local.get $off) (i32.const 0))))))
    (i32.store (local.get $nread) (local.get $out))
    (i32.const 0))

  ;; WASI has no directory handle to path mapping for fchdir, and no permission bits.
  (func $irt_fchdir (param $fd i32) (result i32) (i32.const 38))
  (func $irt_fchmod (param $fd i32) (param $mode i32) (result i32) (i32.const 38))

  ;; fsync and fdatasync of fd 1 write out its buffer first (and fail if that fails).
  (func $irt_fsync (param $fd i32) (result i32)
    (local $e i32)
    (local.set $e (call $flush_for (local.get $fd)))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (call $err (call $fd_sync (local.get $fd))))

  (func $irt_fdatasync (param $fd i32) (result i32)
    (local $e i32)
    (local.set $e (call $flush_for (local.get $fd)))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (call $err (call $fd_datasync (local.get $fd))))

  (func $irt_ftruncate (param $fd i32) (param $len i64) (result i32)
    (if (i64.lt_s (local.get $len) (i64.const 0)) (then (return (i32.const 22))))
    (drop (call $flush_for (local.get $fd)))
    (call $err (call $fd_filestat_set_size (local.get $fd) (local.get $len))))

  ;; A terminal is a character device; anything else is ENOTTY with *result = 0.
  (func $irt_isatty (param $fd i32) (param $result i32) (result i32)
    (local $e i32)
    (local.set $e (call $fd_fdstat_get (local.get $fd) (call $fdst)))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (if (i32.eq (i32.load8_u (call $fdst)) (i32.const 2))
      (then
        (i32.store (local.get $result) (i32.const 1))
        (return (i32.const 0))))
    (i32.store (local.get $result) (i32.const 0))
    (i32.const 25))

  ;; ---------------------------------------------------------------------------------------
  ;; nacl-irt-filename-0.1, nacl-irt-dev-filename-0.2/0.3

  ;; NaCl open flags (Linux values): O_ACCMODE 3, O_CREAT 0x40, O_EXCL 0x80, O_TRUNC 0x200,
  ;; O_APPEND 0x400, O_NONBLOCK 0x800, O_SYNC 0x1000, O_DIRECTORY 0x10000. The mode is
  ;; ignored (WASI has no permission bits).
  (func $irt_open (param $path i32) (param $oflag i32) (param $mode i32) (param $newfd i32) (result i32)
    (local $dir i32) (local $rel i32) (local $rlen i32) (local $acc i32) (local $of i32)
    (local $fdf i32) (local $base i64) (local $inherit i64) (local $e i32) (local $fd i32)
    (local.set $acc (i32.and (local.get $oflag) (i32.const 3)))
    (if (i32.eq (local.get $acc) (i32.const 3)) (then (return (i32.const 22))))
    (call $resolve (local.get $path) (call $path_a))
    local.set $rlen
    local.set $rel
    local.set $dir
    (if (i32.lt_s (local.get $dir) (i32.const 0)) (then (return (i32.sub (i32.const 0) (local.get $dir)))))
    ;; WASI oflags: CREAT 1, DIRECTORY 2, EXCL 4, TRUNC 8
    (local.set $of (i32.or
      (i32.or (i32.ne (i32.and (local.get $oflag) (i32.const 0x40)) (i32.const 0))
              (i32.shl (i32.ne (i32.and (local.get $oflag) (i32.const 0x10000)) (i32.const 0)) (i32.const 1)))
      (i32.or (i32.shl (i32.ne (i32.and (local.get $oflag) (i32.const 0x80)) (i32.const 0)) (i32.const 2))
              (i32.shl (i32.ne (i32.and (local.get $oflag) (i32.const 0x200)) (i32.const 0)) (i32.const 3)))))
    ;; WASI fdflags: APPEND 1, NONBLOCK 4, SYNC 16
    (local.set $fdf (i32.or
      (i32.or (i32.ne (i32.and (local.get $oflag) (i32.const 0x400)) (i32.const 0))
              (i32.shl (i32.ne (i32.and (local.get $oflag) (i32.const 0x800)) (i32.const 0)) (i32.const 2)))
      (i32.shl (i32.ne (i32.and (local.get $oflag) (i32.const 0x1000)) (i32.const 0)) (i32.const 4))))
    ;; Rights: everything the directory passes on, with FD_READ (2) and FD_WRITE (64) as
    ;; the access mode says (hosts derive the open mode from these two).
    (local.set $inherit (i64.const 0x3fffffff))
    (if (i32.eqz (call $fd_fdstat_get (local.get $dir) (call $fdst)))
      (then (local.set $inherit (i64.load offset=16 (call $fdst)))))
    (local.set $base (i64.and (local.get $inherit) (i64.const -67)))
    (if (i32.ne (local.get $acc) (i32.const 1))
      (then (local.set $base (i64.or (local.get $base) (i64.const 2)))))
    (if (i32.ne (local.get $acc) (i32.const 0))
      (then (local.set $base (i64.or (local.get $base) (i64.const 64)))))
    (local.set $e (call $path_open (local.get $dir) (i32.const 1) (local.get $rel) (local.get $rlen)
                                   (local.get $of) (local.get $base) (local.get $inherit)
                                   (local.get $fdf) (call $r0)))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (local.set $fd (i32.load (call $r0)))
    (call $reset_cookie (local.get $fd))
    (i32.store (local.get $newfd) (local.get $fd))
    (i32.const 0))

  ;; stat ($follow = 1) and lstat ($follow = 0).
  (func $stat_path (param $path i32) (param $st i32) (param $follow i32) (result i32)
    (local $dir i32) (local $rel i32) (local $rlen i32) (local $e i32)
    (call $resolve (local.get $path) (call $path_a))
    local.set $rlen
    local.set $rel
    local.set $dir
    (if (i32.lt_s (local.get $dir) (i32.const 0)) (then (return (i32.sub (i32.const 0) (local.get $dir)))))
    (local.set $e (call $path_filestat_get (local.get $dir) (local.get $follow) (local.get $rel)
                                           (local.get $rlen) (call $fst)))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (call $put_stat (local.get $st) (call $fst))
    (i32.const 0))

  (func $irt_stat (param $path i32) (param $st i32) (result i32)
    (call $stat_path (local.get $path) (local.get $st) (i32.const 1)))

  (func $irt_lstat (param $path i32) (param $st i32) (result i32)
    (call $stat_path (local.get $path) (local.get $st) (i32.const 0)))

  ;; mkdir ($op = 0), rmdir (1), unlink (2): WASI calls that take just (dir, path).
  (func $path_op (param $path i32) (param $op i32) (result i32)
    (local $dir i32) (local $rel i32) (local $rlen i32)
    (call $resolve (local.get $path) (call $path_a))
    local.set $rlen
    local.set $rel
    local.set $dir
    (if (i32.lt_s (local.get $dir) (i32.const 0)) (then (return (i32.sub (i32.const 0) (local.get $dir)))))
    (if (i32.eqz (local.get $op))
      (then (return (call $err (call $path_create_directory (local.get $dir) (local.get $rel) (local.get $rlen))))))
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (return (call $err (call $path_remove_directory (local.get $dir) (local.get $rel) (local.get $rlen))))))
    (call $err (call $path_unlink_file (local.get $dir) (local.get $rel) (local.get $rlen))))

  (func $irt_mkdir (param $path i32) (param $mode i32) (result i32)
    (call $path_op (local.get $path) (i32.const 0)))

  (func $irt_rmdir (param $path i32) (result i32)
    (call $path_op (local.get $path) (i32.const 1)))

  (func $irt_unlink (param $path i32) (result i32)
    (call $path_op (local.get $path) (i32.const 2)))

  ;; The current directory is a string the runtime keeps; it must name a directory.
  (func $irt_chdir (param $path i32) (result i32)
    (local $len i32) (local $dir i32) (local $rel i32) (local $rlen i32) (local $e i32)
    (local.set $len (call $fullpath (local.get $path) (call $path_a)))
    (if (i32.lt_s (local.get $len) (i32.const 0)) (then (return (i32.sub (i32.const 0) (local.get $len)))))
    (call $split (call $path_a) (local.get $len))
    local.set $rlen
    local.set $rel
    local.set $dir
    (if (i32.lt_s (local.get $dir) (i32.const 0))
      (then
        ;; "/" is always a directory, even when it is not preopened.
        (if (i32.ne (local.get $len) (i32.const 1))
          (then (return (i32.sub (i32.const 0) (local.get $dir))))))
      (else
        (local.set $e (call $path_filestat_get (local.get $dir) (i32.const 1) (local.get $rel)
                                               (local.get $rlen) (call $fst)))
        (if (local.get $e) (then (return (call $err (local.get $e)))))
        (if (i32.ne (i32.load8_u offset=16 (call $fst)) (i32.const 3))
          (then (return (i32.const 20))))))
    (memory.copy (i32.add (call $rt) (i32.const 0x1000)) (call $path_a) (local.get $len))
    (i32.store offset=4 (call $rt) (local.get $len))
    (i32.const 0))

  (func $irt_getcwd (param $buf i32) (param $size i32) (result i32)
    (local $n i32)
    (local.set $n (i32.load offset=4 (call $rt)))
    (if (i32.le_u (local.get $size) (local.get $n)) (then (return (i32.const 34))))
    (memory.copy (local.get $buf) (i32.add (call $rt) (i32.const 0x1000)) (local.get $n))
    (i32.store8 (i32.add (local.get $buf) (local.get $n)) (i32.const 0))
    (i32.const 0))

  ;; Opens the file for writing (FD_WRITE | FD_FILESTAT_SET_SIZE) and sets its size.
  (func $irt_truncate (param $path i32) (param $len i64) (result i32)
    (local $dir i32) (local $rel i32) (local $rlen i32) (local $e i32) (local $fd i32)
    (if (i64.lt_s (local.get $len) (i64.const 0)) (then (return (i32.const 22))))
    (call $resolve (local.get $path) (call $path_a))
    local.set $rlen
    local.set $rel
    local.set $dir
    (if (i32.lt_s (local.get $dir) (i32.const 0)) (then (return (i32.sub (i32.const 0) (local.get $dir)))))
    (local.set $e (call $path_open (local.get $dir) (i32.const 1) (local.get $rel) (local.get $rlen)
                                   (i32.const 0) (i64.const 0x400040) (i64.const 0) (i32.const 0) (call $r0)))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (local.set $fd (i32.load (call $r0)))
    (local.set $e (call $fd_filestat_set_size (local.get $fd) (local.get $len)))
    (drop (call $fd_close (local.get $fd)))
    (call $err (local.get $e)))

  ;; link ($op = 0; the old path's symlinks are not followed, as on Linux) and rename (1).
  (func $two_path_op (param $old i32) (param $new i32) (param $op i32) (result i32)
    (local $d1 i32) (local $r1 i32) (local $l1 i32) (local $d2 i32) (local $r2 i32) (local $l2 i32)
    (call $resolve (local.get $old) (call $path_a))
    local.set $l1
    local.set $r1
    local.set $d1
    (if (i32.lt_s (local.get $d1) (i32.const 0)) (then (return (i32.sub (i32.const 0) (local.get $d1)))))
    (call $resolve (local.get $new) (call $path_b))
    local.set $l2
    local.set $r2
    local.set $d2
    (if (i32.lt_s (local.get $d2) (i32.const 0)) (then (return (i32.sub (i32.const 0) (local.get $d2)))))
    (if (i32.eqz (local.get $op))
      (then
        (return (call $err (call $path_link (local.get $d1) (i32.const 0) (local.get $r1) (local.get $l1)
                                            (local.get $d2) (local.get $r2) (local.get $l2))))))
    (call $err (call $path_rename (local.get $d1) (local.get $r1) (local.get $l1)
                                  (local.get $d2) (local.get $r2) (local.get $l2))))

  (func $irt_link (param $old i32) (param $new i32) (result i32)
    (call $two_path_op (local.get $old) (local.get $new) (i32.const 0)))

  (func $irt_rename (param $old i32) (param $new i32) (result i32)
    (call $two_path_op (local.get $old) (local.get $new) (i32.const 1)))

  ;; The link's content ($old) is stored as given; only the link's own path is resolved.
  (func $irt_symlink (param $old i32) (param $new i32) (result i32)
    (local $olen i32) (local $dir i32) (local $rel i32) (local $rlen i32)
    (local.set $olen (call $strnlen (local.get $old) (i32.const 4095)))
    (if (i32.lt_s (local.get $olen) (i32.const 0)) (then (return (i32.const 36))))
    (call $resolve (local.get $new) (call $path_a))
    local.set $rlen
    local.set $rel
    local.set $dir
    (if (i32.lt_s (local.get $dir) (i32.const 0)) (then (return (i32.sub (i32.const 0) (local.get $dir)))))
    (call $err (call $path_symlink (local.get $old) (local.get $olen) (local.get $dir) (local.get $rel) (local.get $rlen))))

  ;; WASI has no permission bits.
  (func $irt_chmod (param $path i32) (param $mode i32) (result i32) (i32.const 38))

  ;; WASI cannot check permissions: the file's existence answers every mode
  ;; (F_OK 0, X_OK 1, W_OK 2, R_OK 4).
  (func $irt_access (param $path i32) (param $amode i32) (result i32)
    (local $dir i32) (local $rel i32) (local $rlen i32)
    (if (i32.and (local.get $amode) (i32.const -8)) (then (return (i32.const 22))))
    (call $resolve (local.get $path) (call $path_a))
    local.set $rlen
    local.set $rel
    local.set $dir
    (if (i32.lt_s (local.get $dir) (i32.const 0)) (then (return (i32.sub (i32.const 0) (local.get $dir)))))
    (call $err (call $path_filestat_get (local.get $dir) (i32.const 1) (local.get $rel) (local.get $rlen) (call $fst))))

  (func $irt_readlink (param $path i32) (param $buf i32) (param $count i32) (param $nread i32) (result i32)
    (local $dir i32) (local $rel i32) (local $rlen i32) (local $e i32)
    (call $resolve (local.get $path) (call $path_a))
    local.set $rlen
    local.set $rel
    local.set $dir
    (if (i32.lt_s (local.get $dir) (i32.const 0)) (then (return (i32.sub (i32.const 0) (local.get $dir)))))
    (local.set $e (call $path_readlink (local.get $dir) (local.get $rel) (local.get $rlen)
                                       (local.get $buf) (local.get $count) (call $r0)))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (i32.store (local.get $nread) (i32.load (call $r0)))
    (i32.const 0))

  ;; times: NULL (both now) or two struct timevals {i64 sec @0, i32 usec @8} 16 bytes apart.
  (func $irt_utimes (param $path i32) (param $times i32) (result i32)
    (local $dir i32) (local $rel i32) (local $rlen i32) (local $atim i64) (local $mtim i64)
    (local $flags i32)
    (call $resolve (local.get $path) (call $path_a))
    local.set $rlen
    local.set $rel
    local.set $dir
    (if (i32.lt_s (local.get $dir) (i32.const 0)) (then (return (i32.sub (i32.const 0) (local.get $dir)))))
    (if (local.get $times)
      (then
        (local.set $atim (call $timeval_ns (local.get $times)))
        (local.set $mtim (call $timeval_ns (i32.add (local.get $times) (i32.const 16))))
        (if (i32.or (i64.lt_s (local.get $atim) (i64.const 0)) (i64.lt_s (local.get $mtim) (i64.const 0)))
          (then (return (i32.const 22))))
        (local.set $flags (i32.const 5)))     ;; ATIM | MTIM
      (else
        (local.set $flags (i32.const 10))))   ;; ATIM_NOW | MTIM_NOW
    (call $err (call $path_filestat_set_times (local.get $dir) (i32.const 1) (local.get $rel) (local.get $rlen)
                                              (local.get $atim) (local.get $mtim) (local.get $flags))))

  ;; A struct timeval as nanoseconds, or -1 when it is out of range.
  (func $timeval_ns (param $tv i32) (result i64)
    (local $sec i64) (local $usec i32)
    (local.set $sec (i64.load (local.get $tv)))
    (local.set $usec (i32.load offset=8 (local.get $tv)))
    (if (i32.or (i64.lt_s (local.get $sec) (i64.const 0))
                (i32.or (i64.gt_s (local.get $sec) (i64.const 9223372035))
                        (i32.gt_u (local.get $usec) (i32.const 999999))))
      (then (return (i64.const -1))))
    (i64.add (i64.mul (local.get $sec) (i64.const 1000000000))
             (i64.mul (i64.extend_i32_u (local.get $usec)) (i64.const 1000))))

  ;; ---------------------------------------------------------------------------------------
  ;; nacl-irt-memory-0.3

  ;; Anonymous mappings only (MAP_ANONYMOUS 0x20); EINVAL for file mappings. The hint in
  ;; *addr is ignored unless MAP_FIXED (0x10), which may only name 64 KiB-aligned heap
  ;; pages. prot is accepted as is: wasm memory is always readable and writable.
  (func $irt_mmap (param $addrp i32) (param $len i32) (param $prot i32) (param $flags i32)
                  (param $fd i32) (param $off i64) (result i32)
    (local $n i32) (local $p i32) (local $end i32)
    (if (i32.eqz (local.get $len)) (then (return (i32.const 22))))
    (if (i32.eqz (i32.and (local.get $flags) (i32.const 0x20))) (then (return (i32.const 22))))
    (local.set $n (call $pages (local.get $len)))
    (if (i32.and (local.get $flags) (i32.const 0x10))
      (then
        (local.set $p (i32.load (local.get $addrp)))
        (if (i32.and (local.get $p) (i32.const 0xffff)) (then (return (i32.const 22))))
        (local.set $p (i32.shr_u (local.get $p) (i32.const 16)))
        (if (i32.lt_u (local.get $p) (i32.load (call $rt))) (then (return (i32.const 22))))
        (local.set $end (i32.add (local.get $p) (local.get $n)))
        (if (i32.gt_u (local.get $end) (i32.const 65536)) (then (return (i32.const 12))))
        (if (i32.gt_u (local.get $end) (memory.size))
          (then
            (if (i32.eq (memory.grow (i32.sub (local.get $end) (memory.size))) (i32.const -1))
              (then (return (i32.const 12))))))
        (call $mark (local.get $p) (local.get $n) (i32.const 1))
        (memory.fill (i32.shl (local.get $p) (i32.const 16)) (i32.const 0) (i32.shl (local.get $n) (i32.const 16)))
        (return (i32.const 0))))
    (local.set $p (call $alloc_pages (local.get $n)))
    (if (i32.lt_s (local.get $p) (i32.const 0)) (then (return (i32.const 12))))
    (i32.store (local.get $addrp) (i32.shl (local.get $p) (i32.const 16)))
    (i32.const 0))

  ;; Frees whole 64 KiB pages of the heap; unmapping pages that are not mapped is no error.
  (func $irt_munmap (param $addr i32) (param $len i32) (result i32)
    (local $p i32) (local $n i32) (local $size i32)
    (if (i32.or (i32.ne (i32.and (local.get $addr) (i32.const 0xffff)) (i32.const 0)) (i32.eqz (local.get $len)))
      (then (return (i32.const 22))))
    (local.set $p (i32.shr_u (local.get $addr) (i32.const 16)))
    (if (i32.lt_u (local.get $p) (i32.load (call $rt))) (then (return (i32.const 22))))
    (local.set $n (call $pages (local.get $len)))
    (local.set $size (memory.size))
    (if (i32.ge_u (local.get $p) (local.get $size)) (then (return (i32.const 0))))
    (if (i32.gt_u (local.get $n) (i32.sub (local.get $size) (local.get $p)))
      (then (local.set $n (i32.sub (local.get $size) (local.get $p)))))
    (call $mark (local.get $p) (local.get $n) (i32.const 0))
    (if (i32.lt_u (local.get $p) (i32.load offset=0x10 (call $rt)))
      (then (i32.store offset=0x10 (call $rt) (local.get $p))))
    (i32.const 0))

  ;; wasm memory has no protection; accepting keeps guard-page setups working.
  (func $irt_mprotect (param $addr i32) (param $len i32) (param $prot i32) (result i32)
    (i32.const 0))

  ;; ---------------------------------------------------------------------------------------
  ;; nacl-irt-tls-0.1, clock_get-0.1, random-0.1, dev-getpid-0.1

  (func $irt_tls_init (param $tp i32) (result i32)
    (global.set $__thread_pointer (local.get $tp))
    (i32.const 0))

  (func $irt_tls_get (result i32)
    (global.get $__thread_pointer))

  ;; res may be NULL.
  (func $irt_clock_getres (param $id i32) (param $res i32) (result i32)
    (local $e i32)
    (if (i32.gt_u (local.get $id) (i32.const 3)) (then (return (i32.const 22))))
    (local.set $e (call $clock_res_get (local.get $id) (call $r0)))
    (if (i32.and (i32.ne (local.get $e) (i32.const 0))
                 (i32.or (i32.eq (local.get $id) (i32.const 2)) (i32.eq (local.get $id) (i32.const 3))))
      (then (local.set $e (call $clock_res_get (i32.const 1) (call $r0)))))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (if (local.get $res)
      (then (call $put_timespec (local.get $res) (i64.load (call $r0)))))
    (i32.const 0))

  (func $irt_clock_gettime (param $id i32) (param $tp i32) (result i32)
    (local $e i32)
    (local.set $e (call $clock_ns (local.get $id)))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (call $put_timespec (local.get $tp) (i64.load (call $r0)))
    (i32.const 0))

  ;; struct timespec: i64 tv_sec @0, i32 tv_nsec @8.
  (func $put_timespec (param $p i32) (param $ns i64)
    (i64.store (local.get $p) (i64.div_u (local.get $ns) (i64.const 1000000000)))
    (i32.store offset=8 (local.get $p) (i32.wrap_i64 (i64.rem_u (local.get $ns) (i64.const 1000000000)))))

  (func $irt_get_random_bytes (param $buf i32) (param $count i32) (param $nread i32) (result i32)
    (local $e i32)
    (local.set $e (call $random_get (local.get $buf) (local.get $count)))
    (if (local.get $e) (then (return (call $err (local.get $e)))))
    (i32.store (local.get $nread) (local.get $count))
    (i32.const 0))

  ;; One process, always the same id.
  (func $irt_getpid (param $pid i32) (result i32)
    (i32.store (local.get $pid) (i32.const 1))
    (i32.const 0))

;;@unthreaded{
  ;; ---------------------------------------------------------------------------------------
  ;; nacl-irt-thread-0.1 and nacl-irt-futex-0.1, single-threaded: libpthread requires both
  ;; at start-up, so programs that link it but never start a thread run; creating a thread
  ;; fails with EAGAIN.

  (func $irt_thread_create (param $start i32) (param $stack i32) (param $tp i32) (result i32)
    (i32.const 11))

  ;; Only the main thread exists, so its exit ends the process (status 0, as when the last
  ;; thread of a process calls pthread_exit).
  (func $irt_thread_exit (param $stack_flag i32)
    (if (local.get $stack_flag) (then (i32.store (local.get $stack_flag) (i32.const 0))))
    (drop (call $stdout_flush))
    (call $proc_exit (i32.const 0))
    (unreachable))

  (func $irt_thread_nice (param $nice i32) (result i32)
    (i32.const 0))

  ;; *addr != value: EAGAIN. Otherwise no other thread can wake us: with a deadline, sleep
  ;; until that absolute (Unix-epoch) time and report ETIMEDOUT; without one, trap in
  ;; $futex_deadlock rather than hang forever.
  (func $irt_futex_wait_abs (param $addr i32) (param $value i32) (param $abstime i32) (result i32)
    (local $deadline i64) (local $now i64)
    (if (i32.ne (i32.load (local.get $addr)) (local.get $value)) (then (return (i32.const 11))))
    (if (i32.eqz (local.get $abstime)) (then (call $futex_deadlock)))
    (local.set $deadline (call $timespec_ns (local.get $abstime)))
    (if (i64.lt_s (local.get $deadline) (i64.const 0)) (then (return (i32.const 22))))
    (if (i32.eqz (call $clock_time_get (i32.const 0) (i64.const 1) (call $r0)))
      (then
        (local.set $now (i64.load (call $r0)))
        (if (i64.gt_u (local.get $deadline) (local.get $now))
          (then (drop (call $sleep_ns (i64.sub (local.get $deadline) (local.get $now))))))))
    (i32.const 110))

  (func $futex_deadlock
    (unreachable))

;;@unthreaded}
  ;; A struct timespec as nanoseconds, or -1 when it is out of range.
  (func $timespec_ns (param $ts i32) (result i64)
    (local $sec i64) (local $nsec i32)
    (local.set $sec (i64.load (local.get $ts)))
    (local.set $nsec (i32.load offset=8 (local.get $ts)))
    (if (i32.or (i64.lt_s (local.get $sec) (i64.const 0))
                (i32.or (i64.gt_s (local.get $sec) (i64.const 9223372035))
                        (i32.gt_u (local.get $nsec) (i32.const 999999999))))
      (then (return (i64.const -1))))
    (i64.add (i64.mul (local.get $sec) (i64.const 1000000000)) (i64.extend_i32_u (local.get $nsec))))

;;@unthreaded{
  (func $irt_futex_wake (param $addr i32) (param $nwake i32) (param $count i32) (result i32)
    (if (local.get $count) (then (i32.store (local.get $count) (i32.const 0))))
    (i32.const 0))

;;@unthreaded}
(;@threads
  ;; ---------------------------------------------------------------------------------------
  ;; nacl-irt-thread-0.1 and nacl-irt-futex-0.1 over wasi-threads (the threaded variant).
  ;; Every thread is an instance of the module over the one shared memory, so globals
  ;; ($__stack_pointer, $__thread_pointer, $scratch) are per thread. The allocator's page
  ;; bitmap is shared: $lock (a futex-style mutex at RT+0x20) guards it.

  (func $lock
    (local $a i32)
    (local.set $a (i32.add (call $rt) (i32.const 0x20)))
    (loop $retry
      (if (i32.atomic.rmw.cmpxchg (local.get $a) (i32.const 0) (i32.const 1))
        (then
          (drop (memory.atomic.wait32 (local.get $a) (i32.const 1) (i64.const -1)))
          (br $retry)))))

  (func $unlock
    (local $a i32)
    (local.set $a (i32.add (call $rt) (i32.const 0x20)))
    (i32.atomic.store (local.get $a) (i32.const 0))
    (drop (memory.atomic.notify (local.get $a) (i32.const 1))))

  ;; The standard output buffer's lock at RT+0x2c: 0 free, 1 held, 2 held and maybe
  ;; waited for. Every write to fd 1 takes it, so it wakes a waiter only when there may be
  ;; one (memory.atomic.notify is a call into the host).
  (func $out_lock
    (local $a i32)
    (local.set $a (i32.add (call $rt) (i32.const 0x2c)))
    (if (i32.eqz (i32.atomic.rmw.cmpxchg (local.get $a) (i32.const 0) (i32.const 1)))
      (then (return)))
    (loop $retry
      (if (i32.atomic.rmw.xchg (local.get $a) (i32.const 2))
        (then
          (drop (memory.atomic.wait32 (local.get $a) (i32.const 2) (i64.const -1)))
          (br $retry)))))

  (func $out_unlock
    (local $a i32)
    (local.set $a (i32.add (call $rt) (i32.const 0x2c)))
    (if (i32.eq (i32.atomic.rmw.xchg (local.get $a) (i32.const 0)) (i32.const 2))
      (then (drop (memory.atomic.notify (local.get $a) (i32.const 1))))))

  (func $irt_mmap_locked (param $addrp i32) (param $len i32) (param $prot i32) (param $flags i32)
                         (param $fd i32) (param $off i64) (result i32)
    (local $r i32)
    (call $lock)
    (local.set $r (call $irt_mmap (local.get $addrp) (local.get $len) (local.get $prot)
                                  (local.get $flags) (local.get $fd) (local.get $off)))
    (call $unlock)
    (local.get $r))

  (func $irt_munmap_locked (param $addr i32) (param $len i32) (result i32)
    (local $r i32)
    (call $lock)
    (local.set $r (call $irt_munmap (local.get $addr) (local.get $len)))
    (call $unlock)
    (local.get $r))

  ;; A new thread gets one zeroed 64 KiB page: its start record {start_func, stack,
  ;; thread_ptr} at offset 0 and its scratch areas at the offsets RT uses. The page's
  ;; address is the wasi-threads start argument. EAGAIN when there is no page or the host
  ;; cannot spawn.
  (func $irt_thread_create (param $start i32) (param $stack i32) (param $tp i32) (result i32)
    (local $page i32)
    (call $lock)
    (local.set $page (call $alloc_pages (i32.const 1)))
    (call $unlock)
    (if (i32.lt_s (local.get $page) (i32.const 0)) (then (return (i32.const 11))))
    (local.set $page (i32.shl (local.get $page) (i32.const 16)))
    (i32.store offset=0 (local.get $page) (local.get $start))
    (i32.store offset=4 (local.get $page) (local.get $stack))
    (i32.store offset=8 (local.get $page) (local.get $tp))
    ;; Counted before it runs, so the count never drops to 0 while a thread is starting.
    (drop (i32.atomic.rmw.add offset=0x30 (call $rt) (i32.const 1)))
    (if (i32.lt_s (call $thread_spawn (local.get $page)) (i32.const 0))
      (then
        (drop (i32.atomic.rmw.sub offset=0x30 (call $rt) (i32.const 1)))
        (drop (call $irt_munmap_locked (local.get $page) (i32.const 0x10000)))
        (return (i32.const 11))))
    (i32.const 0))

  ;; The wasi-threads entry of a new thread (a new instance): stack pointer (the given top,
  ;; 16-byte aligned down), thread pointer and scratch page from the start record, then
  ;; start_func(). Returning from it is undefined in NaCl; here it ends the thread.
  (func $wasi_thread_start (export "wasi_thread_start") (param $tid i32) (param $arg i32)
    (global.set $scratch (local.get $arg))
    (global.set $__stack_pointer (i32.and (i32.load offset=4 (local.get $arg)) (i32.const -16)))
    (global.set $__thread_pointer (i32.load offset=8 (local.get $arg)))
    (call_indirect $table (i32.load offset=0 (local.get $arg)))
    (call $irt_thread_exit (i32.const 0)))

  ;; Writes 0 to *stack_flag and wakes its waiters (the joiner may now reuse the stack; the
  ;; runtime never touches the wasm stack), frees the thread's page, then asks the host to
  ;; end this thread (wasm cannot end a thread from inside a call). In the main thread it
  ;; ends the main thread only; the process ends with the last thread, or at exit(). The
  ;; last thread writes out the standard output buffer first (with its scratch page, so
  ;; before that is freed).
  (func $irt_thread_exit (param $stack_flag i32)
    (if (i32.eq (i32.atomic.rmw.sub offset=0x30 (call $rt) (i32.const 1)) (i32.const 1))
      (then (drop (call $stdout_flush))))
    (if (local.get $stack_flag)
      (then
        (i32.atomic.store (local.get $stack_flag) (i32.const 0))
        (drop (memory.atomic.notify (local.get $stack_flag) (i32.const -1)))))
    (if (i32.ne (global.get $scratch) (call $rt))
      (then (drop (call $irt_munmap_locked (global.get $scratch) (i32.const 0x10000)))))
    (call $host_thread_exit)
    (unreachable))

  (func $irt_thread_nice (param $nice i32) (result i32)
    (i32.const 0))

  ;; *addr != value: EAGAIN. Otherwise memory.atomic.wait32 until futex_wake (0), or until
  ;; the absolute (Unix-epoch, realtime clock) deadline passes: ETIMEDOUT.
  (func $irt_futex_wait_abs (param $addr i32) (param $value i32) (param $abstime i32) (result i32)
    (local $timeout i64) (local $deadline i64) (local $r i32)
    (local.set $timeout (i64.const -1))
    (if (local.get $abstime)
      (then
        (local.set $deadline (call $timespec_ns (local.get $abstime)))
        (if (i64.lt_s (local.get $deadline) (i64.const 0)) (then (return (i32.const 22))))
        (if (call $clock_time_get (i32.const 0) (i64.const 1) (call $r0))
          (then (return (i32.const 22))))
        (local.set $timeout (i64.sub (local.get $deadline) (i64.load (call $r0))))
        (if (i64.le_s (local.get $timeout) (i64.const 0))
          (then
            (if (i32.ne (i32.atomic.load (local.get $addr)) (local.get $value))
              (then (return (i32.const 11))))
            (return (i32.const 110))))))
    ;; Pepper variant: the host counts threads blocked without a deadline, to tell when
    ;; the app can make no further progress. A deadline more than a minute away counts as
    ;; none (the timeout -1 of an untimed wait is the largest unsigned): no timer an app
    ;; waits for at the end of its input is that far, and an idle thread that sleeps
    ;; INT_MAX ms between jobs (an engine's timer thread) would otherwise keep it alive.
    ;;@pepper (call $host_wait (i64.gt_u (local.get $timeout) (i64.const 60000000000)))
    (local.set $r (memory.atomic.wait32 (local.get $addr) (local.get $value) (local.get $timeout)))
    ;;@pepper (call $host_wait (i32.const -1))
    (if (i32.eq (local.get $r) (i32.const 1)) (then (return (i32.const 11))))
    (if (i32.eq (local.get $r) (i32.const 2)) (then (return (i32.const 110))))
    (i32.const 0))

  ;; Wakes at most nwake waiters (none for nwake <= 0) and stores how many woke.
  (func $irt_futex_wake (param $addr i32) (param $nwake i32) (param $count i32) (result i32)
    (local $n i32)
    (if (i32.gt_s (local.get $nwake) (i32.const 0))
      (then (local.set $n (memory.atomic.notify (local.get $addr) (local.get $nwake)))))
    (if (local.get $count) (then (i32.store (local.get $count) (local.get $n))))
    (i32.const 0))

@threads;)
  ;; ---------------------------------------------------------------------------------------
  ;; Float remainder for `frem`: C fmod/fmodf, exact (the result is computed on the
  ;; significands by shift-and-subtract, as in musl, never through a rounded quotient).
  ;; NaN for a NaN operand, an infinite x or a zero y; the result has x's sign; x itself
  ;; when |x| < |y|.

  (func $fmod (export "__pnacl_fmod") (param $x f64) (param $y f64) (result f64)
    (local $ux i64) (local $uy i64) (local $ex i32) (local $ey i32) (local $sx i64) (local $i i64)
    (local.set $ux (i64.reinterpret_f64 (local.get $x)))
    (local.set $uy (i64.reinterpret_f64 (local.get $y)))
    (local.set $ex (i32.wrap_i64 (i64.and (i64.shr_u (local.get $ux) (i64.const 52)) (i64.const 0x7ff))))
    (local.set $ey (i32.wrap_i64 (i64.and (i64.shr_u (local.get $uy) (i64.const 52)) (i64.const 0x7ff))))
    (local.set $sx (i64.and (local.get $ux) (i64.const 0x8000000000000000)))
    (if (i32.or (i32.or (i64.eqz (i64.shl (local.get $uy) (i64.const 1)))
                        (f64.ne (local.get $y) (local.get $y)))
                (i32.eq (local.get $ex) (i32.const 0x7ff)))
      (then (return (f64.div (f64.mul (local.get $x) (local.get $y)) (f64.mul (local.get $x) (local.get $y))))))
    (if (i64.le_u (i64.shl (local.get $ux) (i64.const 1)) (i64.shl (local.get $uy) (i64.const 1)))
      (then
        (if (i64.eq (i64.shl (local.get $ux) (i64.const 1)) (i64.shl (local.get $uy) (i64.const 1)))
          (then (return (f64.mul (f64.const 0) (local.get $x)))))
        (return (local.get $x))))
    ;; Significands with the implicit bit; subnormals normalized (their exponent goes below 1).
    (if (i32.eqz (local.get $ex))
      (then
        (local.set $ex (i32.sub (i32.const 0) (i32.wrap_i64 (i64.clz (i64.shl (local.get $ux) (i64.const 12))))))
        (local.set $ux (i64.shl (local.get $ux) (i64.extend_i32_u (i32.sub (i32.const 1) (local.get $ex))))))
      (else
        (local.set $ux (i64.or (i64.and (local.get $ux) (i64.const 0x000fffffffffffff))
                               (i64.const 0x0010000000000000)))))
    (if (i32.eqz (local.get $ey))
      (then
        (local.set $ey (i32.sub (i32.const 0) (i32.wrap_i64 (i64.clz (i64.shl (local.get $uy) (i64.const 12))))))
        (local.set $uy (i64.shl (local.get $uy) (i64.extend_i32_u (i32.sub (i32.const 1) (local.get $ey))))))
      (else
        (local.set $uy (i64.or (i64.and (local.get $uy) (i64.const 0x000fffffffffffff))
                               (i64.const 0x0010000000000000)))))
    (block $done
      (loop $step
        (br_if $done (i32.le_s (local.get $ex) (local.get $ey)))
        (local.set $i (i64.sub (local.get $ux) (local.get $uy)))
        (if (i64.ge_s (local.get $i) (i64.const 0))
          (then
            (if (i64.eqz (local.get $i)) (then (return (f64.mul (f64.const 0) (local.get $x)))))
            (local.set $ux (local.get $i))))
        (local.set $ux (i64.shl (local.get $ux) (i64.const 1)))
        (local.set $ex (i32.sub (local.get $ex) (i32.const 1)))
        (br $step)))
    (local.set $i (i64.sub (local.get $ux) (local.get $uy)))
    (if (i64.ge_s (local.get $i) (i64.const 0))
      (then
        (if (i64.eqz (local.get $i)) (then (return (f64.mul (f64.const 0) (local.get $x)))))
        (local.set $ux (local.get $i))))
    (block $normal
      (loop $shift
        (br_if $normal (i64.ne (i64.shr_u (local.get $ux) (i64.const 52)) (i64.const 0)))
        (local.set $ux (i64.shl (local.get $ux) (i64.const 1)))
        (local.set $ex (i32.sub (local.get $ex) (i32.const 1)))
        (br $shift)))
    (if (i32.gt_s (local.get $ex) (i32.const 0))
      (then
        (local.set $ux (i64.or (i64.sub (local.get $ux) (i64.const 0x0010000000000000))
                               (i64.shl (i64.extend_i32_u (local.get $ex)) (i64.const 52)))))
      (else
        (local.set $ux (i64.shr_u (local.get $ux) (i64.extend_i32_u (i32.sub (i32.const 1) (local.get $ex)))))))
    (f64.reinterpret_i64 (i64.or (local.get $ux) (local.get $sx))))

  (func $fmodf (export "__pnacl_fmodf") (param $x f32) (param $y f32) (result f32)
    (local $ux i32) (local $uy i32) (local $ex i32) (local $ey i32) (local $sx i32) (local $i i32)
    (local.set $ux (i32.reinterpret_f32 (local.get $x)))
    (local.set $uy (i32.reinterpret_f32 (local.get $y)))
    (local.set $ex (i32.and (i32.shr_u (local.get $ux) (i32.const 23)) (i32.const 0xff)))
    (local.set $ey (i32.and (i32.shr_u (local.get $uy) (i32.const 23)) (i32.const 0xff)))
    (local.set $sx (i32.and (local.get $ux) (i32.const 0x80000000)))
    (if (i32.or (i32.or (i32.eqz (i32.shl (local.get $uy) (i32.const 1)))
                        (f32.ne (local.get $y) (local.get $y)))
                (i32.eq (local.get $ex) (i32.const 0xff)))
      (then (return (f32.div (f32.mul (local.get $x) (local.get $y)) (f32.mul (local.get $x) (local.get $y))))))
    (if (i32.le_u (i32.shl (local.get $ux) (i32.const 1)) (i32.shl (local.get $uy) (i32.const 1)))
      (then
        (if (i32.eq (i32.shl (local.get $ux) (i32.const 1)) (i32.shl (local.get $uy) (i32.const 1)))
          (then (return (f32.mul (f32.const 0) (local.get $x)))))
        (return (local.get $x))))
    (if (i32.eqz (local.get $ex))
      (then
        (local.set $ex (i32.sub (i32.const 0) (i32.clz (i32.shl (local.get $ux) (i32.const 9)))))
        (local.set $ux (i32.shl (local.get $ux) (i32.sub (i32.const 1) (local.get $ex)))))
      (else
        (local.set $ux (i32.or (i32.and (local.get $ux) (i32.const 0x007fffff)) (i32.const 0x00800000)))))
    (if (i32.eqz (local.get $ey))
      (then
        (local.set $ey (i32.sub (i32.const 0) (i32.clz (i32.shl (local.get $uy) (i32.const 9)))))
        (local.set $uy (i32.shl (local.get $uy) (i32.sub (i32.const 1) (local.get $ey)))))
      (else
        (local.set $uy (i32.or (i32.and (local.get $uy) (i32.const 0x007fffff)) (i32.const 0x00800000)))))
    (block $done
      (loop $step
        (br_if $done (i32.le_s (local.get $ex) (local.get $ey)))
        (local.set $i (i32.sub (local.get $ux) (local.get $uy)))
        (if (i32.ge_s (local.get $i) (i32.const 0))
          (then
            (if (i32.eqz (local.get $i)) (then (return (f32.mul (f32.const 0) (local.get $x)))))
            (local.set $ux (local.get $i))))
        (local.set $ux (i32.shl (local.get $ux) (i32.const 1)))
        (local.set $ex (i32.sub (local.get $ex) (i32.const 1)))
        (br $step)))
    (local.set $i (i32.sub (local.get $ux) (local.get $uy)))
    (if (i32.ge_s (local.get $i) (i32.const 0))
      (then
        (if (i32.eqz (local.get $i)) (then (return (f32.mul (f32.const 0) (local.get $x)))))
        (local.set $ux (local.get $i))))
    (block $normal
      (loop $shift
        (br_if $normal (i32.ne (i32.shr_u (local.get $ux) (i32.const 23)) (i32.const 0)))
        (local.set $ux (i32.shl (local.get $ux) (i32.const 1)))
        (local.set $ex (i32.sub (local.get $ex) (i32.const 1)))
        (br $shift)))
    (if (i32.gt_s (local.get $ex) (i32.const 0))
      (then
        (local.set $ux (i32.or (i32.sub (local.get $ux) (i32.const 0x00800000))
                               (i32.shl (local.get $ex) (i32.const 23)))))
      (else
        (local.set $ux (i32.shr_u (local.get $ux) (i32.sub (i32.const 1) (local.get $ex))))))
    (f32.reinterpret_i32 (i32.or (local.get $ux) (local.get $sx))))

  ;; ---------------------------------------------------------------------------------------
  ;; Pepper variant: nacl-irt-ppapihook-0.1, PPB_GetInterface and the PPP entry points
  ;; (docs/PEPPER-ABI.md, docs/decisions/0015-pepper-abi.md).
(;@pepper

  ;; int ppapi_start(const struct PP_StartFunctions *funcs): hands the thread to the host's
  ;; main loop with the app's three entry points and the table slot of PPB_GetInterface.
  (func $ppapi_start (param $funcs i32) (result i32)
    (call $host_ppapi_start
      (i32.load offset=0 (local.get $funcs))
      (i32.load offset=4 (local.get $funcs))
      (i32.load offset=8 (local.get $funcs))
      (i32.add (global.get $__table_base) (i32.const 53))))

  ;; void ppapi_register_thread_creator(const struct PP_ThreadFunctions *fns): the host keeps
  ;; the app's thread_create and thread_join to start threads of its own (audio).
  (func $ppapi_register_thread_creator (param $fns i32)
    (call $host_thread_creator
      (i32.load offset=0 (local.get $fns))
      (i32.load offset=4 (local.get $fns))))

  ;; const void *PPB_GetInterface(const char *name): the interface's table of function
  ;; pointers when the pexe names it, the converter knows it and the host offers it; NULL
  ;; otherwise, so the app's own fallback runs as in Chrome. The tables and the directory
  ;; are the converter's (emit/pepper.rs), in the pages from RT + 64 KiB:
  ;;   +0 u32 pages the directory takes, +4 u32 record count,
  ;;   +8 records {u32 name address, u32 name length, u32 table address}.
  ;; The host is asked every time (it may note the names it lacks).
  (func $ppb_get_interface (param $name i32) (result i32)
    (local $len i32) (local $dir i32) (local $rec i32) (local $end i32) (local $table i32)
    (local.set $len (call $strnlen (local.get $name) (i32.const 255)))
    (if (i32.le_s (local.get $len) (i32.const 0)) (then (return (i32.const 0))))
    (local.set $dir (i32.add (call $rt) (i32.const 0x10000)))
    (local.set $rec (i32.add (local.get $dir) (i32.const 8)))
    (local.set $end (i32.add (local.get $rec) (i32.mul (i32.load offset=4 (local.get $dir)) (i32.const 12))))
    (block $found
      (loop $next
        (br_if $found (i32.ge_u (local.get $rec) (local.get $end)))
        (if (i32.eq (i32.load offset=4 (local.get $rec)) (local.get $len))
          (then
            (if (call $memeq (i32.load (local.get $rec)) (local.get $name) (local.get $len))
              (then
                (local.set $table (i32.load offset=8 (local.get $rec)))
                (br $found)))))
        (local.set $rec (i32.add (local.get $rec) (i32.const 12)))
        (br $next)))
    (if (result i32) (call $host_get_interface (local.get $name) (local.get $len))
      (then (local.get $table))
      (else (i32.const 0))))

  ;; PPP calls with scalar arguments: the host calls the app's function pointer $fn with
  ;; them on the calling thread. Named by wasm signature: parameters, then the result.
  (func (export "__ppp_call_v") (param $fn i32)
    (call_indirect $table (local.get $fn)))
  (func (export "__ppp_call_i_v") (param $fn i32) (param $a i32)
    (call_indirect $table (param i32) (local.get $a) (local.get $fn)))
  (func (export "__ppp_call_i_i") (param $fn i32) (param $a i32) (result i32)
    (call_indirect $table (param i32) (result i32) (local.get $a) (local.get $fn)))
  (func (export "__ppp_call_ii_v") (param $fn i32) (param $a i32) (param $b i32)
    (call_indirect $table (param i32 i32) (local.get $a) (local.get $b) (local.get $fn)))
  (func (export "__ppp_call_ii_i") (param $fn i32) (param $a i32) (param $b i32) (result i32)
    (call_indirect $table (param i32 i32) (result i32) (local.get $a) (local.get $b) (local.get $fn)))
  (func (export "__ppp_call_iii_v") (param $fn i32) (param $a i32) (param $b i32) (param $c i32)
    (call_indirect $table (param i32 i32 i32) (local.get $a) (local.get $b) (local.get $c) (local.get $fn)))
  (func (export "__ppp_call_iii_i") (param $fn i32) (param $a i32) (param $b i32) (param $c i32) (result i32)
    (call_indirect $table (param i32 i32 i32) (result i32)
      (local.get $a) (local.get $b) (local.get $c) (local.get $fn)))
  ;; PPB_Audio;1.1's callback: (buffer, size, latency in seconds, user_data).
  (func (export "__ppp_call_iidi_v") (param $fn i32) (param $a i32) (param $b i32) (param $c f64) (param $d i32)
    (call_indirect $table (param i32 i32 f64 i32)
      (local.get $a) (local.get $b) (local.get $c) (local.get $d) (local.get $fn)))

  ;; PPP_InitializeModule(module, get_browser_interface), with this runtime's PPB_GetInterface.
  (func (export "__ppp_initialize_module") (param $fn i32) (param $module i32) (result i32)
    (call_indirect $table (param i32 i32) (result i32)
      (local.get $module) (i32.add (global.get $__table_base) (i32.const 53)) (local.get $fn)))

  ;; PPP calls whose arguments point at structs or strings (a PP_Var, argn/argv, a
  ;; PP_Rect, an interface name): $n bytes are reserved on this thread's own stack, the host
  ;; fills them (fill), the app's function runs with every argument whose bit is set in
  ;; $mask moved by the space's address, the host reads back what it needs (done), and the
  ;; space is released. No host writes into the module's stack at any other time.
  (func $reserve (param $n i32) (result i32)
    (local $p i32)
    (local.set $p (i32.and (i32.sub (global.get $__stack_pointer) (local.get $n)) (i32.const -16)))
    (global.set $__stack_pointer (local.get $p))
    (call $host_fill (local.get $p) (local.get $n))
    (local.get $p))
  (func $release (param $p i32) (param $n i32) (param $sp i32)
    (call $host_done (local.get $p) (local.get $n))
    (global.set $__stack_pointer (local.get $sp)))
  (func $arg (param $v i32) (param $mask i32) (param $bit i32) (param $p i32) (result i32)
    (if (result i32) (i32.and (local.get $mask) (local.get $bit))
      (then (i32.add (local.get $v) (local.get $p)))
      (else (local.get $v))))
  (func (export "__ppp_callbuf_i_i") (param $fn i32) (param $n i32) (param $mask i32)
      (param $a i32) (result i32)
    (local $sp i32) (local $p i32) (local $r i32)
    (local.set $sp (global.get $__stack_pointer))
    (local.set $p (call $reserve (local.get $n)))
    (local.set $r (call_indirect $table (param i32) (result i32)
      (call $arg (local.get $a) (local.get $mask) (i32.const 1) (local.get $p))
      (local.get $fn)))
    (call $release (local.get $p) (local.get $n) (local.get $sp))
    (local.get $r))
  (func (export "__ppp_callbuf_ii_v") (param $fn i32) (param $n i32) (param $mask i32)
      (param $a i32) (param $b i32)
    (local $sp i32) (local $p i32)
    (local.set $sp (global.get $__stack_pointer))
    (local.set $p (call $reserve (local.get $n)))
    (call_indirect $table (param i32 i32)
      (call $arg (local.get $a) (local.get $mask) (i32.const 1) (local.get $p))
      (call $arg (local.get $b) (local.get $mask) (i32.const 2) (local.get $p))
      (local.get $fn))
    (call $release (local.get $p) (local.get $n) (local.get $sp)))
  (func (export "__ppp_callbuf_iii_v") (param $fn i32) (param $n i32) (param $mask i32)
      (param $a i32) (param $b i32) (param $c i32)
    (local $sp i32) (local $p i32)
    (local.set $sp (global.get $__stack_pointer))
    (local.set $p (call $reserve (local.get $n)))
    (call_indirect $table (param i32 i32 i32)
      (call $arg (local.get $a) (local.get $mask) (i32.const 1) (local.get $p))
      (call $arg (local.get $b) (local.get $mask) (i32.const 2) (local.get $p))
      (call $arg (local.get $c) (local.get $mask) (i32.const 4) (local.get $p))
      (local.get $fn))
    (call $release (local.get $p) (local.get $n) (local.get $sp)))
  (func (export "__ppp_callbuf_iii_i") (param $fn i32) (param $n i32) (param $mask i32)
      (param $a i32) (param $b i32) (param $c i32) (result i32)
    (local $sp i32) (local $p i32) (local $r i32)
    (local.set $sp (global.get $__stack_pointer))
    (local.set $p (call $reserve (local.get $n)))
    (local.set $r (call_indirect $table (param i32 i32 i32) (result i32)
      (call $arg (local.get $a) (local.get $mask) (i32.const 1) (local.get $p))
      (call $arg (local.get $b) (local.get $mask) (i32.const 2) (local.get $p))
      (call $arg (local.get $c) (local.get $mask) (i32.const 4) (local.get $p))
      (local.get $fn)))
    (call $release (local.get $p) (local.get $n) (local.get $sp))
    (local.get $r))
  (func (export "__ppp_callbuf_iiii_v") (param $fn i32) (param $n i32) (param $mask i32)
      (param $a i32) (param $b i32) (param $c i32) (param $d i32)
    (local $sp i32) (local $p i32)
    (local.set $sp (global.get $__stack_pointer))
    (local.set $p (call $reserve (local.get $n)))
    (call_indirect $table (param i32 i32 i32 i32)
      (call $arg (local.get $a) (local.get $mask) (i32.const 1) (local.get $p))
      (call $arg (local.get $b) (local.get $mask) (i32.const 2) (local.get $p))
      (call $arg (local.get $c) (local.get $mask) (i32.const 4) (local.get $p))
      (call $arg (local.get $d) (local.get $mask) (i32.const 8) (local.get $p))
      (local.get $fn))
    (call $release (local.get $p) (local.get $n) (local.get $sp)))
  (func (export "__ppp_callbuf_iiii_i") (param $fn i32) (param $n i32) (param $mask i32)
      (param $a i32) (param $b i32) (param $c i32) (param $d i32) (result i32)
    (local $sp i32) (local $p i32) (local $r i32)
    (local.set $sp (global.get $__stack_pointer))
    (local.set $p (call $reserve (local.get $n)))
    (local.set $r (call_indirect $table (param i32 i32 i32 i32) (result i32)
      (call $arg (local.get $a) (local.get $mask) (i32.const 1) (local.get $p))
      (call $arg (local.get $b) (local.get $mask) (i32.const 2) (local.get $p))
      (call $arg (local.get $c) (local.get $mask) (i32.const 4) (local.get $p))
      (call $arg (local.get $d) (local.get $mask) (i32.const 8) (local.get $p))
      (local.get $fn)))
    (call $release (local.get $p) (local.get $n) (local.get $sp))
    (local.get $r))

  ;; Pages of module memory for the host's array buffers (PPB_VarArrayBuffer Map): the
  ;; runtime's page allocator, so the app's own mmap never hands them out twice.
  (func (export "__ppapi_alloc") (param $len i32) (result i32)
    (local $p i32)
    (call $lock)
    (local.set $p (call $alloc_pages (call $pages (local.get $len))))
    (call $unlock)
    (if (result i32) (i32.lt_s (local.get $p) (i32.const 0))
      (then (i32.const 0))
      (else (i32.shl (local.get $p) (i32.const 16)))))
  (func (export "__ppapi_free") (param $addr i32) (param $len i32)
    (drop (call $irt_munmap_locked (local.get $addr) (local.get $len))))

  ;; A thread of the host's own in the app (PPB_Audio's: NaCl's IRT ran it in the plugin):
  ;; the host hands the app's registered thread_create this function (slot 54) and an
  ;; argument, and the new thread runs the host's loop for it (host_thread), which calls
  ;; back into the app (the audio callback) through the __ppp_call exports.
  (func $ppapi_host_thread (param $arg i32)
    (call $host_thread (local.get $arg)))
  (func (export "__ppapi_host_thread_slot") (result i32)
    (i32.add (global.get $__table_base) (i32.const 54)))
@pepper;)
)
