  (func $phi_swap (;0;) (type 0) (param i32 i32 i32) (result i32)
    (local i32 i32 i32 i32 i32 i32 i32 i64 i64 i64 f32 f32 f64 f64)
    local.get 0
    local.get 1
    local.get 2
    local.set 3
    local.set 5
    local.set 4
    loop ;; label = @1
      local.get 3
      i32.const 1
      i32.sub
      local.tee 3
      i32.const 1
      i32.gt_s
      if ;; label = @2
        local.get 5
        local.get 4
        local.set 5
        local.set 4
        br 1 (;@1;)
      else
        local.get 4
        local.get 5
        i32.sub
        return
      end
    end
    unreachable
  )
  (func $phi_rotate (;1;) (type 0) (param i32 i32 i32) (result i32)
    (local i32 i32 i32 i32 i32 i32 i32 i32 i64 i64 i64 f32 f32 f64 f64)
    local.get 0
    local.get 1
    local.get 2
    i32.const 0
    local.set 3
    local.set 6
    local.set 5
    local.set 4
    loop ;; label = @1
      local.get 3
      i32.const 1
      i32.add
      local.tee 3
      i32.const 10
      i32.lt_u
      if ;; label = @2
        local.get 5
        local.get 6
        local.get 4
        local.set 6
        local.set 5
        local.set 4
        br 1 (;@1;)
      else
        local.get 4
        i32.const 100
        i32.mul
        local.get 5
        i32.const 10
        i32.mul
        i32.add
        local.get 6
        i32.add
        return
      end
    end
    unreachable
  )
