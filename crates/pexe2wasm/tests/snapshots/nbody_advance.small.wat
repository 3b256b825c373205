  (func $advance_inner (;0;) (type 0) (param i32 i32 i32 f64)
    (local i32 i32 i32 i32 i32 i32 i32 i32 i64 i64 i64 f32 f32 f64 f64 f64 f64 f64 f64 f64 f64)
    block ;; label = @1
      local.get 1
      i32.const 1
      i32.add
      local.set 6
      local.get 0
      local.get 1
      i32.const 56
      i32.mul
      i32.add
      local.set 7
      local.get 6
      local.get 2
      i32.ge_s
      br_if 0 (;@1;)
      loop ;; label = @2
        local.get 0
        local.get 6
        i32.const 56
        i32.mul
        i32.add
        local.set 5
        local.get 7
        f64.load
        local.get 5
        f64.load
        f64.sub
        local.set 22
        local.get 7
        f64.load offset=8
        local.get 5
        f64.load offset=8
        f64.sub
        local.set 21
        local.get 7
        f64.load offset=16
        local.get 5
        f64.load offset=16
        f64.sub
        local.set 20
        local.get 22
        local.get 22
        f64.mul
        local.get 21
        local.get 21
        f64.mul
        f64.add
        local.get 20
        local.get 20
        f64.mul
        f64.add
        local.set 18
        local.get 3
        local.get 18
        local.get 18
        f64.sqrt
        f64.mul
        f64.div
        local.set 19
        local.get 7
        f64.load offset=48
        local.set 17
        local.get 5
        f64.load offset=48
        local.get 19
        f64.mul
        local.set 18
        local.get 17
        local.get 19
        f64.mul
        local.set 17
        local.get 7
        i32.const 24
        i32.add
        local.tee 4
        local.get 4
        f64.load
        local.get 22
        local.get 18
        f64.mul
        f64.sub
        f64.store
        local.get 5
        i32.const 24
        i32.add
        local.tee 4
        local.get 4
        f64.load
        local.get 22
        local.get 17
        f64.mul
        f64.add
        f64.store
        local.get 7
        i32.const 32
        i32.add
        local.tee 4
        local.get 4
        f64.load
        local.get 21
        local.get 18
        f64.mul
        f64.sub
        f64.store
        local.get 5
        i32.const 32
        i32.add
        local.tee 4
        local.get 4
        f64.load
        local.get 21
        local.get 17
        f64.mul
        f64.add
        f64.store
        local.get 7
        i32.const 40
        i32.add
        local.tee 4
        local.get 4
        f64.load
        local.get 20
        local.get 18
        f64.mul
        f64.sub
        f64.store
        local.get 5
        i32.const 40
        i32.add
        local.tee 4
        local.get 4
        f64.load
        local.get 20
        local.get 17
        f64.mul
        f64.add
        f64.store
        local.get 6
        i32.const 1
        i32.add
        local.tee 6
        local.get 2
        i32.ge_s
        br_if 1 (;@1;)
        br 0 (;@2;)
      end
    end
    return
  )
