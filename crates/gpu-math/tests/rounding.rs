//! Rounding once into half and bfloat: `round_f64_to` (used by constant
//! folding and literals) agrees with `round_to` (used by the executor) on
//! every f32, which both must round the same way. Checked on every value of
//! the 16-bit kind and the f32 values around each of its midpoints (where
//! ties and near-ties are decided), plus a million random f32 patterns.

use gpu_math::{int_to_kind, round_f64_to, round_to, FloatKind};

fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn check(kind: FloatKind, x: f32) {
    let (once, exec) = (round_f64_to(kind, x as f64), round_to(kind, x));
    assert!(same(once, exec), "{kind:?}: {x:e} ({:#x}) rounds to {once:e} once but {exec:e} in the executor", x.to_bits());
}

fn widen(kind: FloatKind, bits: u16) -> f32 {
    match kind {
        FloatKind::F16 => half::f16::from_bits(bits).to_f32(),
        _ => half::bf16::from_bits(bits).to_f32(),
    }
}

#[test]
fn sixteen_bit_kinds_round_like_the_executor() {
    for kind in [FloatKind::F16, FloatKind::BF16] {
        for bits in 0..=u16::MAX {
            let v = widen(kind, bits);
            check(kind, v);
            let next = widen(kind, bits.wrapping_add(1));
            if v.is_finite() && next.is_finite() && (next > v) == (v >= 0.0) {
                // The midpoint between neighbours and the f32 values next to it.
                let mid = ((v as f64 + next as f64) / 2.0) as f32;
                for d in -3i32..=3 {
                    check(kind, f32::from_bits((mid.to_bits() as i32 + d) as u32));
                }
            }
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..1_000_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            check(kind, f32::from_bits(state as u32));
        }
    }
}

#[test]
fn integers_round_once() {
    // Through f32 first, these would tie and round to even (down).
    assert_eq!(int_to_kind(FloatKind::BF16, false, (1 << 25) + (1 << 17) + 1), (1u32 << 25) as f32 + (1u32 << 18) as f32);
    assert_eq!(int_to_kind(FloatKind::F32, false, (1 << 40) + (1 << 16) + 1), (1u64 << 40) as f32 + (1u64 << 17) as f32);
    // Exactly representable integers stay exact in every kind.
    for v in 0..4096u64 {
        for kind in [FloatKind::F16, FloatKind::BF16, FloatKind::F32] {
            assert_eq!(int_to_kind(kind, false, v), round_to(kind, v as f32));
            assert_eq!(int_to_kind(kind, true, v), -round_to(kind, v as f32));
        }
    }
}
