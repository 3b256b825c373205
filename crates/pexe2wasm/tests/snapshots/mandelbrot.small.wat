  (func $mandel_iter (;0;) (type 0) (param f64 f64 i32) (result i32)
    (local i32 i32 i32 i32 i32 i64 i64 i64 f32 f32 f64 f64 f64 f64 f64 f64)
    f64.const 0x0p+0 (;=0;)
    f64.const 0x0p+0 (;=0;)
    i32.const 0
    local.set 3
    local.set 14
    local.set 13
    loop ;; label = @1
      block ;; label = @2
        local.get 13
        local.get 13
        f64.mul
        local.set 15
        local.get 14
        local.get 14
        f64.mul
        local.set 16
        local.get 15
        local.get 16
        f64.add
        f64.const 0x1p+2 (;=4;)
        f64.gt
        if ;; label = @3
        else
          local.get 15
          local.get 16
          f64.sub
          local.get 0
          f64.add
          local.set 15
          local.get 13
          local.get 14
          f64.mul
          f64.const 0x1p+1 (;=2;)
          f64.mul
          local.get 1
          f64.add
          local.set 14
          local.get 3
          i32.const 1
          i32.add
          local.tee 3
          local.get 2
          i32.lt_s
          if ;; label = @4
            local.get 15
            local.set 13
            br 3 (;@1;)
          else
          end
        end
      end
      local.get 3
      return
    end
    unreachable
  )
