;; fmod with C semantics (exact), used for `frem` when the module has no runtime (the
;; runtime's own is `__pnacl_fmod` in runtime/irt.wat). The remainder is computed on the
;; integer significands: r = mx * 2^(ex - ey) mod my, taking 11 exponent steps at a time
;; (r < my < 2^53, so r << 11 fits in 64 bits), then r is normalised back into a float
;; with y's exponent. Exact, and about (ex - ey) / 11 `i64.rem_u`s: a first version that
;; subtracted one scaled |y| per quotient bit took some 200,000 instructions for
;; fmod(1.2e107, 2.2e-317), which the differential fuzzer found (docs/FUZZING.md).
;; NaN for a NaN operand, an infinite x or a zero y; x itself when |x| < |y|; the result
;; has x's sign.
(module
  (func $__pnacl_fmod (export "__pnacl_fmod") (param $x f64) (param $y f64) (result f64)
    (local $ux i64) (local $uy i64) (local $ex i64) (local $ey i64)
    (local $mx i64) (local $my i64) (local $r i64) (local $d i64) (local $s i64)
    (if (i32.or
          (i32.or (f64.ne (local.get $x) (local.get $x)) (f64.ne (local.get $y) (local.get $y)))
          (i32.or (f64.eq (f64.abs (local.get $x)) (f64.const inf))
                  (f64.eq (local.get $y) (f64.const 0))))
      (then (return (f64.const nan))))
    (local.set $ux (i64.reinterpret_f64 (f64.abs (local.get $x))))
    (local.set $uy (i64.reinterpret_f64 (f64.abs (local.get $y))))
    (if (i64.lt_u (local.get $ux) (local.get $uy)) (then (return (local.get $x))))
    ;; value = m * 2^(e - 1075), e >= 1 (a subnormal has e = 1 and no implicit bit)
    (local.set $ex (i64.shr_u (local.get $ux) (i64.const 52)))
    (local.set $ey (i64.shr_u (local.get $uy) (i64.const 52)))
    (local.set $mx (i64.and (local.get $ux) (i64.const 0xfffffffffffff)))
    (local.set $my (i64.and (local.get $uy) (i64.const 0xfffffffffffff)))
    (if (i64.eqz (local.get $ex))
      (then (local.set $ex (i64.const 1)))
      (else (local.set $mx (i64.or (local.get $mx) (i64.const 0x10000000000000)))))
    (if (i64.eqz (local.get $ey))
      (then (local.set $ey (i64.const 1)))
      (else (local.set $my (i64.or (local.get $my) (i64.const 0x10000000000000)))))
    (local.set $r (i64.rem_u (local.get $mx) (local.get $my)))
    (local.set $d (i64.sub (local.get $ex) (local.get $ey)))
    (block $done
      (loop $step
        (br_if $done (i64.eqz (local.get $d)))
        (local.set $s (select (i64.const 11) (local.get $d) (i64.gt_u (local.get $d) (i64.const 11))))
        (local.set $r (i64.rem_u (i64.shl (local.get $r) (local.get $s)) (local.get $my)))
        (local.set $d (i64.sub (local.get $d) (local.get $s)))
        (br $step)))
    (if (i64.eqz (local.get $r)) (then (return (f64.copysign (f64.const 0) (local.get $x)))))
    ;; The top bit to bit 52, the exponent not below 1 (else the result is subnormal).
    (local.set $s (i64.sub (i64.clz (local.get $r)) (i64.const 11)))
    (if (i64.gt_s (local.get $s) (i64.sub (local.get $ey) (i64.const 1)))
      (then (local.set $s (i64.sub (local.get $ey) (i64.const 1)))))
    (local.set $r (i64.shl (local.get $r) (local.get $s)))
    (local.set $ey (i64.sub (local.get $ey) (local.get $s)))
    (f64.copysign
      (f64.reinterpret_i64
        (select
          (i64.or (i64.shl (local.get $ey) (i64.const 52)) (i64.and (local.get $r) (i64.const 0xfffffffffffff)))
          (local.get $r)
          (i64.ge_u (local.get $r) (i64.const 0x10000000000000))))
      (local.get $x)))

  ;; The same for f32 (value = m * 2^(e - 150)), in 64-bit integers: r < 2^24, so 39 steps
  ;; at a time fit.
  (func $__pnacl_fmodf (export "__pnacl_fmodf") (param $x f32) (param $y f32) (result f32)
    (local $ux i64) (local $uy i64) (local $ex i64) (local $ey i64)
    (local $mx i64) (local $my i64) (local $r i64) (local $d i64) (local $s i64)
    (if (i32.or
          (i32.or (f32.ne (local.get $x) (local.get $x)) (f32.ne (local.get $y) (local.get $y)))
          (i32.or (f32.eq (f32.abs (local.get $x)) (f32.const inf))
                  (f32.eq (local.get $y) (f32.const 0))))
      (then (return (f32.const nan))))
    (local.set $ux (i64.extend_i32_u (i32.reinterpret_f32 (f32.abs (local.get $x)))))
    (local.set $uy (i64.extend_i32_u (i32.reinterpret_f32 (f32.abs (local.get $y)))))
    (if (i64.lt_u (local.get $ux) (local.get $uy)) (then (return (local.get $x))))
    (local.set $ex (i64.shr_u (local.get $ux) (i64.const 23)))
    (local.set $ey (i64.shr_u (local.get $uy) (i64.const 23)))
    (local.set $mx (i64.and (local.get $ux) (i64.const 0x7fffff)))
    (local.set $my (i64.and (local.get $uy) (i64.const 0x7fffff)))
    (if (i64.eqz (local.get $ex))
      (then (local.set $ex (i64.const 1)))
      (else (local.set $mx (i64.or (local.get $mx) (i64.const 0x800000)))))
    (if (i64.eqz (local.get $ey))
      (then (local.set $ey (i64.const 1)))
      (else (local.set $my (i64.or (local.get $my) (i64.const 0x800000)))))
    (local.set $r (i64.rem_u (local.get $mx) (local.get $my)))
    (local.set $d (i64.sub (local.get $ex) (local.get $ey)))
    (block $done
      (loop $step
        (br_if $done (i64.eqz (local.get $d)))
        (local.set $s (select (i64.const 39) (local.get $d) (i64.gt_u (local.get $d) (i64.const 39))))
        (local.set $r (i64.rem_u (i64.shl (local.get $r) (local.get $s)) (local.get $my)))
        (local.set $d (i64.sub (local.get $d) (local.get $s)))
        (br $step)))
    (if (i64.eqz (local.get $r)) (then (return (f32.copysign (f32.const 0) (local.get $x)))))
    (local.set $s (i64.sub (i64.clz (local.get $r)) (i64.const 40)))
    (if (i64.gt_s (local.get $s) (i64.sub (local.get $ey) (i64.const 1)))
      (then (local.set $s (i64.sub (local.get $ey) (i64.const 1)))))
    (local.set $r (i64.shl (local.get $r) (local.get $s)))
    (local.set $ey (i64.sub (local.get $ey) (local.get $s)))
    (f32.copysign
      (f32.reinterpret_i32
        (i32.wrap_i64
          (select
            (i64.or (i64.shl (local.get $ey) (i64.const 23)) (i64.and (local.get $r) (i64.const 0x7fffff)))
            (local.get $r)
            (i64.ge_u (local.get $r) (i64.const 0x800000)))))
      (local.get $x)))
)
