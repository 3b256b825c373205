  (func $irreducible (;0;) (type 0) (param i32 i32) (result i32)
    (local i32 i32 i32 i32 i32 i32 i64 i64 i64 f32 f32 f64 f64)
    local.get 1
    if ;; label = @1
      local.get 0
      local.set 2
      i32.const 2
      local.set 7
      loop ;; label = @2
        block ;; label = @3
          block ;; label = @4
            local.get 7
            i32.const 1
            i32.eq
            br_if 0 (;@4;)
            local.get 7
            i32.const 2
            i32.eq
            br_if 1 (;@3;)
            br 0 (;@4;)
          end
          local.get 2
          i32.const 3
          i32.mul
          local.tee 2
          i32.const 1000
          i32.gt_u
          if ;; label = @4
            local.get 2
            return
          else
            i32.const 2
            local.set 7
            br 2 (;@2;)
          end
        end
        local.get 2
        i32.const 1
        i32.add
        local.set 2
        i32.const 1
        local.set 7
        br 0 (;@2;)
      end
    else
      local.get 0
      local.set 2
      i32.const 1
      local.set 7
      loop ;; label = @2
        block ;; label = @3
          block ;; label = @4
            local.get 7
            i32.const 1
            i32.eq
            br_if 0 (;@4;)
            local.get 7
            i32.const 2
            i32.eq
            br_if 1 (;@3;)
            br 0 (;@4;)
          end
          local.get 2
          i32.const 3
          i32.mul
          local.tee 2
          i32.const 1000
          i32.gt_u
          if ;; label = @4
            local.get 2
            return
          else
            i32.const 2
            local.set 7
            br 2 (;@2;)
          end
        end
        local.get 2
        i32.const 1
        i32.add
        local.set 2
        i32.const 1
        local.set 7
        br 0 (;@2;)
      end
    end
    unreachable
  )
