  (func $eval_A (;0;) (type 0) (param i32 i32) (result f64)
    (local i32 i32 i32 i32 i32 i64 i64 i64 f32 f32 f64 f64)
    local.get 1
    local.get 0
    i32.add
    local.set 2
    f64.const 0x1p+0 (;=1;)
    local.get 2
    i32.const 1
    i32.add
    local.get 2
    i32.mul
    i32.const 1
    i32.shr_s
    local.get 0
    i32.const 1
    i32.add
    i32.add
    f64.convert_i32_s
    f64.div
    return
    unreachable
  )
