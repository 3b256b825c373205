  (func $mandel_iter (;0;) (type 0) (param f64 f64 i32) (result i32)
    (local i32 i32 i32 i32 i32 i32 i32 i64 i64 i64 f32 f32 f64 f64 f64 f64 f64 f64 f64 f64)
    f64.const 0x0p+0 (;=0;)
    f64.const 0x0p+0 (;=0;)
    i32.const 0
    local.set 3
    local.set 16
    local.set 15
    loop ;; label = @1
      block ;; label = @2
        local.get 15
        local.get 15
        f64.mul
        local.set 17
        local.get 16
        local.get 16
        f64.mul
        local.set 18
        local.get 17
        local.get 18
        f64.add
        f64.const 0x1p+2 (;=4;)
        f64.gt
        if ;; label = @3
          local.get 3
          local.set 5
        else
          local.get 17
          local.get 18
          f64.sub
          local.get 0
          f64.add
          local.set 19
          local.get 15
          local.get 16
          f64.mul
          f64.const 0x1p+1 (;=2;)
          f64.mul
          local.get 1
          f64.add
          local.set 20
          local.get 3
          i32.const 1
          i32.add
          local.tee 4
          local.get 2
          i32.lt_s
          if ;; label = @4
            local.get 19
            local.get 20
            local.get 4
            local.set 3
            local.set 16
            local.set 15
            br 3 (;@1;)
          else
            local.get 4
            local.set 5
          end
        end
      end
      local.get 5
      return
    end
    unreachable
  )
