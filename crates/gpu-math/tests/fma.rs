//! `fma` rounds once in every precision: a million random triples per kind
//! (plus triples built to cancel and to land near ties) compared with an
//! exact reference: the product and sum computed as big integers, rounded
//! to nearest-even by inspecting the dropped bits.

use gpu_math::{float_ternary, float_ternary_in, round_to, FloatKind};

// ------------------------------------------------------------ exact reference

/// An unsigned integer of up to 640 bits (little-endian 64-bit limbs); the
/// widest exact sum needed is an f32 product (exponents down to -298) plus an
/// f32 (up to 2^128): under 600 bits.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Big([u64; 10]);

impl Big {
    fn from(v: u64) -> Big {
        let mut b = [0; 10];
        b[0] = v;
        Big(b)
    }
    fn shl(self, s: u32) -> Big {
        let (w, r) = ((s / 64) as usize, s % 64);
        let mut out = [0u64; 10];
        for i in (w..10).rev() {
            let lo = self.0[i - w];
            let below = if r > 0 && i > w { self.0[i - w - 1] >> (64 - r) } else { 0 };
            out[i] = (lo << r) | below;
        }
        Big(out)
    }
    fn bit(&self, i: u32) -> bool {
        (self.0[(i / 64) as usize] >> (i % 64)) & 1 == 1
    }
    /// Whether any bit below `i` is set.
    fn any_below(&self, i: u32) -> bool {
        let (w, r) = ((i / 64) as usize, i % 64);
        self.0[..w].iter().any(|&l| l != 0) || (r > 0 && self.0[w] & ((1u64 << r) - 1) != 0)
    }
    fn bit_len(&self) -> u32 {
        for i in (0..10).rev() {
            if self.0[i] != 0 {
                return i as u32 * 64 + 64 - self.0[i].leading_zeros();
            }
        }
        0
    }
    /// Bits [from, from + 64) as a number.
    fn bits_from(&self, from: u32) -> u64 {
        let (w, r) = ((from / 64) as usize, from % 64);
        let lo = self.0.get(w).copied().unwrap_or(0) >> r;
        let hi = if r > 0 { self.0.get(w + 1).copied().unwrap_or(0) << (64 - r) } else { 0 };
        lo | hi
    }
    fn add(self, o: Big) -> Big {
        let mut out = [0u64; 10];
        let mut carry = 0u128;
        for (i, slot) in out.iter_mut().enumerate() {
            let s = self.0[i] as u128 + o.0[i] as u128 + carry;
            *slot = s as u64;
            carry = s >> 64;
        }
        Big(out)
    }
    /// self - o, for self >= o.
    fn sub(self, o: Big) -> Big {
        let mut out = [0u64; 10];
        let mut borrow = 0i128;
        for (i, slot) in out.iter_mut().enumerate() {
            let d = self.0[i] as i128 - o.0[i] as i128 - borrow;
            borrow = (d < 0) as i128;
            *slot = d.rem_euclid(1 << 64) as u64;
        }
        Big(out)
    }
    fn cmp(&self, o: &Big) -> std::cmp::Ordering {
        for i in (0..10).rev() {
            match self.0[i].cmp(&o.0[i]) {
                std::cmp::Ordering::Equal => {}
                other => return other,
            }
        }
        std::cmp::Ordering::Equal
    }
}

/// A finite f32 as (negative, m, e) with value m * 2^e, m < 2^24.
fn parts(x: f32) -> (bool, u64, i32) {
    let b = x.to_bits();
    let exp = ((b >> 23) & 0xff) as i32;
    let frac = (b & 0x7f_ffff) as u64;
    let (m, e) = if exp == 0 { (frac, -149) } else { (frac | 0x80_0000, exp - 150) };
    (b >> 31 == 1, m, e)
}

/// (significand bits, smallest normal exponent, largest exponent).
fn format(kind: FloatKind) -> (i32, i32, i32) {
    match kind {
        FloatKind::F16 => (11, -14, 15),
        FloatKind::BF16 => (8, -126, 127),
        FloatKind::F32 => (24, -126, 127),
    }
}

/// a * b + c for finite a, b, c, rounded once to nearest-even in `kind`.
fn fma_exact(kind: FloatKind, a: f32, b: f32, c: f32) -> f32 {
    let (sa, ma, ea) = parts(a);
    let (sb, mb, eb) = parts(b);
    let (sc, mc, ec) = parts(c);
    let (sp, mp, ep) = (sa != sb, ma * mb, ea + eb);
    if mp == 0 && mc == 0 {
        // Exact zero: -0 only when both terms are -0.
        return if sp && sc { -0.0 } else { 0.0 };
    }
    // Both terms as integers times 2^e0 with a common exponent.
    let e0 = if mp == 0 {
        ec
    } else if mc == 0 {
        ep
    } else {
        ep.min(ec)
    };
    let p = Big::from(mp).shl((ep - e0).max(0) as u32);
    let q = Big::from(mc).shl((ec - e0).max(0) as u32);
    let (p, q) = (if mp == 0 { Big::from(0) } else { p }, if mc == 0 { Big::from(0) } else { q });
    let (neg, n) = if sp == sc {
        (sp, p.add(q))
    } else {
        match p.cmp(&q) {
            std::cmp::Ordering::Greater => (sp, p.sub(q)),
            std::cmp::Ordering::Less => (sc, q.sub(p)),
            std::cmp::Ordering::Equal => return 0.0, // x - x = +0
        }
    };
    let (prec, emin, emax) = format(kind);
    let top = e0 + n.bit_len() as i32 - 1; // value in [2^top, 2^(top+1))
    let quantum = top.max(emin) - (prec - 1);
    let m = if quantum <= e0 {
        // Exact at this quantum.
        n.bits_from(0) << (e0 - quantum)
    } else {
        let s = (quantum - e0) as u32;
        let kept = n.bits_from(s);
        let half = n.bit(s - 1);
        let rest = n.any_below(s - 1);
        if half && (rest || kept & 1 == 1) {
            kept + 1
        } else {
            kept
        }
    };
    let v = m as f64 * 2f64.powi(quantum);
    let v = if v >= 2f64.powi(emax + 1) { f64::INFINITY } else { v };
    let v = v as f32; // exact: a value of the kind
    if neg {
        -v
    } else {
        v
    }
}

// ------------------------------------------------------------ sampling

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// A random finite value of `kind`, widened to f32.
fn random_value(kind: FloatKind, rng: &mut Rng) -> f32 {
    loop {
        let r = rng.next();
        let x = match kind {
            FloatKind::F16 => half::f16::from_bits(r as u16).to_f32(),
            FloatKind::BF16 => half::bf16::from_bits(r as u16).to_f32(),
            FloatKind::F32 => f32::from_bits(r as u32),
        };
        if x.is_finite() {
            return x;
        }
    }
}

/// A triple whose sum cancels most of the product or sits near a tie: c is
/// minus the product rounded to the kind, nudged by a few ulps, or a small
/// value next to a product that needs rounding.
fn hard_triple(kind: FloatKind, rng: &mut Rng) -> (f32, f32, f32) {
    let a = random_value(kind, rng);
    let b = random_value(kind, rng);
    let p = round_to(kind, a * b);
    let c = match rng.next() % 3 {
        0 => -p,
        1 => {
            let small = random_value(kind, rng) * 2f32.powi(-((rng.next() % 30) as i32));
            round_to(kind, small)
        }
        _ => round_to(kind, -p * (1.0 + (rng.next() % 8) as f32 * 2f32.powi(-9))),
    };
    (a, b, if c.is_finite() { c } else { 0.0 })
}

fn same(x: f32, y: f32) -> bool {
    x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
}

/// Compare `fma` for `kind` with the reference on `n` random and `n / 4`
/// hard triples; returns how many triples the old double rounding (f32 fma,
/// then round to the kind) got wrong, to show the samples can tell.
fn check_kind(kind: FloatKind, n: usize, seed: u64) -> usize {
    let fma = float_ternary_in(kind, "fma", false).unwrap();
    let mad = float_ternary_in(kind, "mad", false).unwrap();
    let fast = float_ternary_in(kind, "fma", true).unwrap();
    let mut rng = Rng(seed);
    let mut double_rounding_wrong = 0;
    for i in 0..n + n / 4 {
        let (a, b, c) = if i < n {
            (random_value(kind, &mut rng), random_value(kind, &mut rng), random_value(kind, &mut rng))
        } else {
            hard_triple(kind, &mut rng)
        };
        let want = fma_exact(kind, a, b, c);
        for (name, f) in [("fma", fma), ("mad", mad), ("fast::fma", fast)] {
            let got = f(a, b, c);
            // The executor rounds every result to the element kind; that must
            // change nothing.
            assert!(same(round_to(kind, got), got), "{kind:?} {name}({a:e}, {b:e}, {c:e}) = {got:e} is not a value of the kind");
            assert!(same(got, want), "{kind:?} {name}({a:e}, {b:e}, {c:e}) = {got:e}, correctly rounded {want:e}");
        }
        if !same(round_to(kind, a.mul_add(b, c)), want) {
            double_rounding_wrong += 1;
        }
    }
    double_rounding_wrong
}

#[test]
fn half_fma_rounds_once() {
    let wrong_before = check_kind(FloatKind::F16, 1_000_000, 0x1234_5678_9abc_def1);
    assert!(wrong_before > 0, "the samples never catch a double rounding");
}

#[test]
fn bfloat_fma_rounds_once() {
    let wrong_before = check_kind(FloatKind::BF16, 1_000_000, 0x0fed_cba9_8765_4321);
    assert!(wrong_before > 0, "the samples never catch a double rounding");
}

#[test]
fn float_fma_rounds_once() {
    check_kind(FloatKind::F32, 1_000_000, 0x5555_aaaa_3333_cccc);
    assert!(float_ternary("fma", false).is_some());
}

#[test]
fn fma_special_values() {
    for kind in [FloatKind::F16, FloatKind::BF16, FloatKind::F32] {
        let fma = float_ternary_in(kind, "fma", false).unwrap();
        assert!(fma(f32::INFINITY, 0.0, 1.0).is_nan());
        assert!(fma(f32::INFINITY, 1.0, f32::NEG_INFINITY).is_nan());
        assert!(fma(f32::NAN, 1.0, 1.0).is_nan());
        assert_eq!(fma(f32::INFINITY, 2.0, 1.0), f32::INFINITY);
        assert_eq!(fma(2.0, 3.0, f32::NEG_INFINITY), f32::NEG_INFINITY);
        assert!(same(fma(-0.0, 1.0, -0.0), -0.0));
        assert!(same(fma(1.0, 1.0, -1.0), 0.0));
    }
    let h = float_ternary_in(FloatKind::F16, "fma", false).unwrap();
    assert_eq!(h(256.0, 256.0, 0.0), f32::INFINITY); // 65536 overflows half
    assert_eq!(h(255.875, 256.0, 0.0), 65504.0);
}

#[test]
fn reference_agrees_with_exact_cases() {
    // Sanity of the reference itself on values exact in f64.
    let mut rng = Rng(99);
    for _ in 0..100_000 {
        let (a, b, c) = (random_value(FloatKind::F16, &mut rng), random_value(FloatKind::F16, &mut rng), 0.0f32);
        // a*b is exact in f32; rounding it to half once is the answer, and
        // an exact zero product plus +0 is +0.
        let p = a * b;
        let want = if p == 0.0 { 0.0 } else { round_to(FloatKind::F16, p) };
        let got = fma_exact(FloatKind::F16, a, b, c);
        assert!(same(got, want), "{a:e} * {b:e}: {got:e}, want {want:e}");
    }
}
