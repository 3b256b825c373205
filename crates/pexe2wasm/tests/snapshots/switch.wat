  (func $switch_dense (;0;) (type 0) (param i32) (result i32)
    (local i32 i32 i32 i32 i32 i64 i64 i64 f32 f32 f64 f64)
    block ;; label = @1
      block ;; label = @2
        block ;; label = @3
          block ;; label = @4
            block ;; label = @5
              block ;; label = @6
                local.get 0
                br_table 1 (;@5;) 2 (;@4;) 3 (;@3;) 1 (;@5;) 4 (;@2;) 2 (;@4;) 0 (;@6;)
              end
              i32.const 30
              local.set 1
              br 4 (;@1;)
            end
            i32.const 10
            local.set 1
            br 3 (;@1;)
          end
          i32.const 20
          local.set 1
          br 2 (;@1;)
        end
        i32.const 40
        return
      end
      local.get 0
      local.set 1
    end
    local.get 1
    return
    unreachable
  )
  (func $switch_sparse (;1;) (type 0) (param i32) (result i32)
    (local i32 i32 i32 i32 i64 i64 i64 f32 f32 f64 f64)
    block ;; label = @1
      block ;; label = @2
        block ;; label = @3
          block ;; label = @4
            local.get 0
            local.set 1
            local.get 1
            i32.const -1000
            i32.eq
            br_if 1 (;@3;)
            local.get 1
            i32.const 7
            i32.eq
            br_if 2 (;@2;)
            local.get 1
            i32.const 1048576
            i32.eq
            br_if 3 (;@1;)
            local.get 1
            i32.const 99
            i32.eq
            br_if 1 (;@3;)
            br 0 (;@4;)
          end
          i32.const 0
          return
        end
        i32.const 1
        return
      end
      i32.const 2
      return
    end
    i32.const 3
    return
    unreachable
  )
