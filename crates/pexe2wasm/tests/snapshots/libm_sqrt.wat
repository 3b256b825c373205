  (func $norm (;0;) (type 0) (param f64 f32) (result f64)
    (local i32 i32 i32 i32 i64 i64 i64 f32 f32 f64 f64)
    local.get 0
    local.tee 11
    f64.const 0x0p+0 (;=0;)
    f64.ge
    if (result f64) ;; label = @1
      local.get 11
      f64.sqrt
    else
      local.get 11
      call $sqrt
    end
    local.get 1
    local.tee 9
    f32.const 0x0p+0 (;=0;)
    f32.ge
    if (result f32) ;; label = @1
      local.get 9
      f32.sqrt
    else
      local.get 9
      call $sqrtf
    end
    f64.promote_f32
    f64.add
    return
    unreachable
  )
  (func $sqrt (;1;) (type 1) (param f64) (result f64)
    (local i32 i32 i32 i32 i64 i64 i64 f32 f32 f64 f64)
    local.get 0
    f64.sqrt
    return
    unreachable
  )
  (func $sqrtf (;2;) (type 2) (param f32) (result f32)
    (local i32 i32 i32 i32 i64 i64 i64 f32 f32 f64 f64)
    local.get 0
    f32.sqrt
    return
    unreachable
  )
