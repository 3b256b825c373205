  (func $counted_loop (;0;) (type 0) (param i32) (result i32)
    (local i32 i32 i32 i32 i32 i32 i32 i64 i64 i64 f32 f32 f64 f64)
    local.get 0
    i32.const 0
    i32.gt_s
    if ;; label = @1
      i32.const 0
      i32.const 0
      local.set 2
      local.set 1
      loop ;; label = @2
        local.get 1
        i32.const 1
        i32.add
        local.set 3
        local.get 2
        local.get 1
        i32.add
        local.set 2
        local.get 3
        local.get 0
        i32.lt_s
        if ;; label = @3
          local.get 3
          local.set 1
          br 1 (;@2;)
        else
        end
      end
    else
      i32.const 0
      local.set 2
    end
    local.get 2
    return
    unreachable
  )
  (func $nested_loops (;1;) (type 1) (param i32 i32) (result i32)
    (local i32 i32 i32 i32 i32 i32 i32 i32 i64 i64 i64 f32 f32 f64 f64)
    local.get 0
    i32.const 0
    i32.gt_s
    if ;; label = @1
      i32.const 0
      i32.const 0
      local.set 4
      local.set 3
      loop ;; label = @2
        local.get 1
        i32.const 0
        i32.gt_s
        if ;; label = @3
          i32.const 0
          local.get 4
          local.set 5
          local.set 4
          loop ;; label = @4
            local.get 3
            local.get 4
            i32.mul
            local.set 2
            local.get 4
            i32.const 1
            i32.add
            local.set 4
            local.get 5
            local.get 2
            i32.add
            local.set 5
            local.get 4
            local.get 1
            i32.lt_s
            if ;; label = @5
              br 1 (;@4;)
            else
              local.get 5
              local.set 4
            end
          end
        else
        end
        local.get 3
        i32.const 1
        i32.add
        local.tee 3
        local.get 0
        i32.lt_s
        if ;; label = @3
          br 1 (;@2;)
        else
        end
      end
    else
      i32.const 0
      local.set 4
    end
    local.get 4
    return
    unreachable
  )
