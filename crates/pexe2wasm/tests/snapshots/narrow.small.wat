  (func $narrow_mix (;0;) (type 0) (param i32 i32) (result i32)
    (local i32 i32 i32 i32 i32 i32 i32 i32 i64 i64 i64 f32 f32 f64 f64)
    local.get 0
    local.set 2
    local.get 1
    local.set 3
    local.get 2
    local.get 3
    i32.add
    i32.const 3
    i32.mul
    local.tee 4
    i32.extend8_s
    local.get 2
    i32.extend8_s
    i32.lt_s
    local.set 2
    local.get 4
    i32.const 255
    i32.and
    local.get 3
    i32.const 255
    i32.and
    i32.div_u
    local.set 3
    local.get 0
    local.tee 4
    i32.extend16_s
    i32.const 2
    i32.shr_s
    local.set 5
    local.get 2
    local.get 5
    i32.const 65535
    i32.and
    local.get 4
    i32.const 65535
    i32.and
    i32.lt_u
    i32.xor
    local.set 2
    local.get 3
    i32.extend8_s
    local.get 5
    i32.const 65535
    i32.and
    i32.add
    local.get 1
    local.get 2
    select
    return
    unreachable
  )
  (func $narrow_i16 (;1;) (type 1) (param i32 i32 i32) (result i32)
    (local i32 i32 i32 i32 i32 i32 i32 i64 i64 i64 f32 f32 f64 f64)
    local.get 0
    local.set 3
    local.get 1
    local.set 4
    local.get 3
    local.get 4
    i32.sub
    local.tee 3
    i32.extend16_s
    local.get 4
    i32.extend16_s
    i32.div_s
    local.set 5
    local.get 2
    local.get 5
    i32.store8
    local.get 3
    i32.const 65535
    i32.and
    local.get 4
    i32.shr_u
    local.get 5
    i32.or
    i32.const 65535
    i32.and
    return
    unreachable
  )
