;; fmod with C semantics (exact), used for `frem` when the runtime does not export
;; __pnacl_fmodf / __pnacl_fmod. r = |x|; while r >= |y|: subtract the largest t = |y|*2^k
;; with t <= r (exact by Sterbenz: t <= r < 2t); result has the sign of x.
(module
  (func $__pnacl_fmod (export "__pnacl_fmod") (param $x f64) (param $y f64) (result f64)
    (local $r f64) (local $ay f64) (local $t f64) (local $d i32)
    (if (i32.or
          (i32.or (f64.ne (local.get $x) (local.get $x)) (f64.ne (local.get $y) (local.get $y)))
          (i32.or (f64.eq (f64.abs (local.get $x)) (f64.const inf))
                  (f64.eq (local.get $y) (f64.const 0))))
      (then (return (f64.const nan))))
    (local.set $r (f64.abs (local.get $x)))
    (local.set $ay (f64.abs (local.get $y)))
    (block $done
      (loop $outer
        (br_if $done (f64.lt (local.get $r) (local.get $ay)))
        (local.set $d
          (i32.sub
            (i32.wrap_i64 (i64.shr_u (i64.reinterpret_f64 (local.get $r)) (i64.const 52)))
            (i32.wrap_i64 (i64.shr_u (i64.reinterpret_f64 (local.get $ay)) (i64.const 52)))))
        (local.set $t (local.get $ay))
        (block $sd
          (loop $sl
            (br_if $sd (i32.le_s (local.get $d) (i32.const 0)))
            (if (i32.gt_s (local.get $d) (i32.const 1000))
              (then
                (local.set $t (f64.mul (local.get $t) (f64.const 0x1p1000)))
                (local.set $d (i32.sub (local.get $d) (i32.const 1000))))
              (else
                (local.set $t
                  (f64.mul (local.get $t)
                    (f64.reinterpret_i64
                      (i64.shl (i64.extend_i32_u (i32.add (local.get $d) (i32.const 1023)))
                               (i64.const 52)))))
                (local.set $d (i32.const 0))))
            (br $sl)))
        (if (f64.gt (local.get $t) (local.get $r))
          (then (local.set $t (f64.mul (local.get $t) (f64.const 0.5)))))
        (block $ud
          (loop $ul
            (br_if $ud (f64.gt (f64.add (local.get $t) (local.get $t)) (local.get $r)))
            (local.set $t (f64.add (local.get $t) (local.get $t)))
            (br $ul)))
        (local.set $r (f64.sub (local.get $r) (local.get $t)))
        (br $outer)))
    (f64.copysign (local.get $r) (local.get $x)))

  (func $__pnacl_fmodf (export "__pnacl_fmodf") (param $x f32) (param $y f32) (result f32)
    (local $r f32) (local $ay f32) (local $t f32) (local $d i32)
    (if (i32.or
          (i32.or (f32.ne (local.get $x) (local.get $x)) (f32.ne (local.get $y) (local.get $y)))
          (i32.or (f32.eq (f32.abs (local.get $x)) (f32.const inf))
                  (f32.eq (local.get $y) (f32.const 0))))
      (then (return (f32.const nan))))
    (local.set $r (f32.abs (local.get $x)))
    (local.set $ay (f32.abs (local.get $y)))
    (block $done
      (loop $outer
        (br_if $done (f32.lt (local.get $r) (local.get $ay)))
        (local.set $d
          (i32.sub
            (i32.shr_u (i32.reinterpret_f32 (local.get $r)) (i32.const 23))
            (i32.shr_u (i32.reinterpret_f32 (local.get $ay)) (i32.const 23))))
        (local.set $t (local.get $ay))
        (block $sd
          (loop $sl
            (br_if $sd (i32.le_s (local.get $d) (i32.const 0)))
            (if (i32.gt_s (local.get $d) (i32.const 100))
              (then
                (local.set $t (f32.mul (local.get $t) (f32.const 0x1p100)))
                (local.set $d (i32.sub (local.get $d) (i32.const 100))))
              (else
                (local.set $t
                  (f32.mul (local.get $t)
                    (f32.reinterpret_i32
                      (i32.shl (i32.add (local.get $d) (i32.const 127)) (i32.const 23)))))
                (local.set $d (i32.const 0))))
            (br $sl)))
        (if (f32.gt (local.get $t) (local.get $r))
          (then (local.set $t (f32.mul (local.get $t) (f32.const 0.5)))))
        (block $ud
          (loop $ul
            (br_if $ud (f32.gt (f32.add (local.get $t) (local.get $t)) (local.get $r)))
            (local.set $t (f32.add (local.get $t) (local.get $t)))
            (br $ul)))
        (local.set $r (f32.sub (local.get $r) (local.get $t)))
        (br $outer)))
    (f32.copysign (local.get $r) (local.get $x)))
)
