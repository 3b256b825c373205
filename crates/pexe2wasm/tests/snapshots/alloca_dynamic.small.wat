  (func $vla_fill (;0;) (type 0) (param i32) (result i32)
    (local i32 i32 i32 i32 i32 i32 i32 i32 i64 i64 i64 f32 f32 f64 f64)
    global.get 0
    local.tee 7
    local.tee 8
    global.set 0
    local.get 0
    i32.const 0
    i32.gt_s
    if ;; label = @1
      global.get 0
      local.get 0
      i32.const 4
      i32.mul
      i32.const 15
      i32.add
      i32.const -16
      i32.and
      i32.sub
      local.tee 3
      global.set 0
      local.get 3
      local.set 1
      global.get 0
      i32.const 32
      i32.sub
      local.tee 3
      global.set 0
      local.get 3
      local.get 0
      i32.store align=1
      i32.const 0
      local.set 2
      loop ;; label = @2
        local.get 1
        local.get 2
        i32.const 4
        i32.mul
        i32.add
        local.get 2
        i32.store align=1
        local.get 2
        i32.const 1
        i32.add
        local.tee 2
        local.get 0
        i32.eq
        if ;; label = @3
        else
          br 1 (;@2;)
        end
      end
    else
      i32.const 0
      local.set 2
    end
    local.get 2
    local.get 7
    global.set 0
    return
    unreachable
  )
