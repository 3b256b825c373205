;; Placeholder runtime following the env contract of docs/ARCHITECTURE.md (for tests and
;; until src/runtime/irt.wat is linked). __nacl_irt_query answers 0 for every interface.
(module
  (import "env" "memory" (memory 1))
  (import "env" "__indirect_function_table" (table 0 funcref))
  (import "env" "__stack_pointer" (global $sp (mut i32)))
  (import "env" "__thread_pointer" (global $tp (mut i32)))
  (import "env" "__heap_base" (global $heap_base i32))
  (import "env" "__table_base" (global $table_base i32))
  (import "env" "pexe_start" (func $pexe_start (param i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))

  (func $__nacl_irt_query (param i32 i32 i32) (result i32)
    (i32.const 0))
  (elem (global.get $table_base) func $__nacl_irt_query)

  ;; Startup block (32-bit words): fini=0, envc=0, argc=0, argv NULL, envp NULL,
  ;; auxv {AT_SYSINFO=32, slot of __nacl_irt_query}, {AT_NULL, 0}.
  (func (export "_start")
    (local $b i32)
    (global.set $sp (i32.sub (global.get $sp) (i32.const 64)))
    (local.set $b (global.get $sp))
    (i32.store offset=0 (local.get $b) (i32.const 0))
    (i32.store offset=4 (local.get $b) (i32.const 0))
    (i32.store offset=8 (local.get $b) (i32.const 0))
    (i32.store offset=12 (local.get $b) (i32.const 0))
    (i32.store offset=16 (local.get $b) (i32.const 0))
    (i32.store offset=20 (local.get $b) (i32.const 32))
    (i32.store offset=24 (local.get $b) (global.get $table_base))
    (i32.store offset=28 (local.get $b) (i32.const 0))
    (i32.store offset=32 (local.get $b) (i32.const 0))
    (call $pexe_start (local.get $b))
    (call $proc_exit (i32.const 0)))
)
