//! The non-control-flow operations of the interpreter: arithmetic,
//! conversions, memory, atomics, barriers, SIMD-group functions, matrices.
//!
//! This file holds arithmetic, comparisons, conversions and the math
//! library; `memory` loads, stores, copies, atomics and barriers; `simd`
//! SIMD-group functions and `simdgroup_matrix` operations.

use crate::exec::{Machine, Mask};
use crate::findings::FindingKind;
use crate::ir::*;
use gpu_math::{FloatKind, IntKind};
use msl::ast::BinaryOp;
use msl::types::Scalar;

mod memory;
mod simd;

pub use simd::matrix_lane_slot;

#[inline]
fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

fn float_kind(s: Scalar) -> FloatKind {
    match s {
        Scalar::Half => FloatKind::F16,
        Scalar::BFloat => FloatKind::BF16,
        _ => FloatKind::F32,
    }
}

fn int_kind(s: Scalar) -> IntKind {
    IntKind { bits: s.size() * 8, signed: s.is_signed() }
}

/// Register bits (32-bit normalized) to a 64-bit normalized integer.
#[inline]
pub fn to_norm(s: Scalar, bits: u64) -> u64 {
    match s {
        Scalar::Long | Scalar::ULong => bits,
        _ if s.is_signed() => bits as u32 as i32 as i64 as u64,
        _ => bits as u32 as u64,
    }
}

/// A 64-bit normalized integer back to register bits.
#[inline]
pub fn from_norm(s: Scalar, v: u64) -> u64 {
    match s {
        Scalar::Long | Scalar::ULong => v,
        Scalar::Bool => (v != 0) as u64,
        _ => gpu_math::normalize(int_kind(s), v) as u32 as u64,
    }
}

/// Convert register bits of type `from` to register bits of type `to`, with
/// the one scalar arithmetic (`gpu_math::scalar::convert`) that constant
/// folding uses too.
pub fn convert_bits(from: Scalar, to: Scalar, bits: u64) -> u64 {
    if from == to {
        return bits;
    }
    let v = if from.is_float() { bits as u32 as u64 } else { to_norm(from, bits) };
    let r = gpu_math::scalar::convert(from.arith(), to.arith(), v);
    if to.is_float() {
        r
    } else {
        from_norm(to, r)
    }
}

/// Register bits from little-endian memory bytes of type `s`.
#[inline]
pub fn from_memory(s: Scalar, raw: u64) -> u64 {
    match s {
        Scalar::Half => half::f16::from_bits(raw as u16).to_f32().to_bits() as u64,
        Scalar::BFloat => half::bf16::from_bits(raw as u16).to_f32().to_bits() as u64,
        Scalar::Bool => (raw & 0xff != 0) as u64,
        Scalar::Char => raw as u8 as i8 as i32 as u32 as u64,
        Scalar::Short => raw as u16 as i16 as i32 as u32 as u64,
        _ => raw,
    }
}

/// Memory bytes (as an integer) from register bits of type `s`.
#[inline]
pub fn to_memory(s: Scalar, bits: u64) -> u64 {
    match s {
        Scalar::Half => half::f16::from_f32(f(bits as u32)).to_bits() as u64,
        Scalar::BFloat => half::bf16::from_f32(f(bits as u32)).to_bits() as u64,
        _ => bits,
    }
}

fn int_op(op: BinaryOp) -> Option<gpu_math::IntOp> {
    use gpu_math::IntOp as I;
    Some(match op {
        BinaryOp::Add => I::Add,
        BinaryOp::Sub => I::Sub,
        BinaryOp::Mul => I::Mul,
        BinaryOp::Div => I::Div,
        BinaryOp::Rem => I::Rem,
        BinaryOp::Shl => I::Shl,
        BinaryOp::Shr => I::Shr,
        BinaryOp::BitAnd => I::And,
        BinaryOp::BitOr => I::Or,
        BinaryOp::BitXor => I::Xor,
        _ => return None,
    })
}

impl Machine<'_> {
    pub(crate) fn unary(&mut self, op: UnOp, ty: Scalar, dst: Reg, a: Reg) {
        match (op, ty, dst) {
            (UnOp::Neg, Scalar::Float, Reg::W32(d)) => self.map1_32(d, a, |x| (-f(x)).to_bits()),
            (UnOp::Neg, Scalar::Half | Scalar::BFloat, Reg::W32(d)) => self.map1_32(d, a, |x| (-f(x)).to_bits()),
            (UnOp::Neg, Scalar::Int, Reg::W32(d)) | (UnOp::Neg, Scalar::UInt, Reg::W32(d)) => self.map1_32(d, a, |x| x.wrapping_neg()),
            (UnOp::Not, _, Reg::W32(d)) => self.map1_32(d, a, |x| (x == 0) as u32),
            (UnOp::BitNot, Scalar::Int | Scalar::UInt, Reg::W32(d)) => self.map1_32(d, a, |x| !x),
            _ => {
                let k = int_kind(ty);
                self.map_generic(dst, &[a], move |v| {
                    let x = to_norm(ty, v[0]);
                    let r = match op {
                        UnOp::Neg => gpu_math::int_op(k, gpu_math::IntOp::Sub, 0, x),
                        UnOp::BitNot => !x,
                        UnOp::Not => (x == 0) as u64,
                    };
                    from_norm(ty, r)
                })
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn binary(&mut self, op: BinaryOp, ty: Scalar, dst: Reg, a: Reg, b: Reg, at: AccessId, mask: &Mask) {
        use BinaryOp::*;
        if ty.is_float() {
            let Reg::W32(d) = dst else { return };
            let k = float_kind(ty);
            macro_rules! fop {
                ($e:expr) => {
                    if k == FloatKind::F32 {
                        self.map2_32(d, a, b, |x, y| {
                            let (x, y) = (f(x), f(y));
                            ($e)(x, y).to_bits()
                        })
                    } else {
                        self.map2_32(d, a, b, |x, y| {
                            let (x, y) = (f(x), f(y));
                            gpu_math::round_to(k, ($e)(x, y)).to_bits()
                        })
                    }
                };
            }
            match op {
                Add => fop!(|x: f32, y: f32| x + y),
                Sub => fop!(|x: f32, y: f32| x - y),
                Mul => fop!(|x: f32, y: f32| x * y),
                Div => fop!(|x: f32, y: f32| x / y),
                _ => {}
            }
            return;
        }
        if matches!(op, Div | Rem) && self.check_memory {
            // Integer division by zero in an active lane is a finding.
            for l in mask.lanes() {
                if to_norm(ty, self.get_pub(b, l)) == 0 {
                    self.report_lane(
                        FindingKind::DivisionByZero,
                        at,
                        l,
                        format!("integer {} by zero", if op == Div { "division" } else { "remainder" }),
                    );
                }
            }
        }
        match (ty, dst) {
            (Scalar::Int, Reg::W32(d)) => match op {
                Add => self.map2_32(d, a, b, |x, y| x.wrapping_add(y)),
                Sub => self.map2_32(d, a, b, |x, y| x.wrapping_sub(y)),
                Mul => self.map2_32(d, a, b, |x, y| x.wrapping_mul(y)),
                BitAnd => self.map2_32(d, a, b, |x, y| x & y),
                BitOr => self.map2_32(d, a, b, |x, y| x | y),
                BitXor => self.map2_32(d, a, b, |x, y| x ^ y),
                Shl => self.map2_32(d, a, b, |x, y| x.wrapping_shl(y & 31)),
                Shr => self.map2_32(d, a, b, |x, y| ((x as i32).wrapping_shr(y & 31)) as u32),
                Div => self.map2_32(d, a, b, |x, y| if y == 0 { 0 } else { (x as i32).wrapping_div(y as i32) as u32 }),
                Rem => self.map2_32(d, a, b, |x, y| if y == 0 { 0 } else { (x as i32).wrapping_rem(y as i32) as u32 }),
                _ => {}
            },
            (Scalar::UInt, Reg::W32(d)) => match op {
                Add => self.map2_32(d, a, b, |x, y| x.wrapping_add(y)),
                Sub => self.map2_32(d, a, b, |x, y| x.wrapping_sub(y)),
                Mul => self.map2_32(d, a, b, |x, y| x.wrapping_mul(y)),
                BitAnd => self.map2_32(d, a, b, |x, y| x & y),
                BitOr => self.map2_32(d, a, b, |x, y| x | y),
                BitXor => self.map2_32(d, a, b, |x, y| x ^ y),
                Shl => self.map2_32(d, a, b, |x, y| x.wrapping_shl(y & 31)),
                Shr => self.map2_32(d, a, b, |x, y| x.wrapping_shr(y & 31)),
                Div => self.map2_32(d, a, b, |x, y| x.checked_div(y).unwrap_or(0)),
                Rem => self.map2_32(d, a, b, |x, y| x.checked_rem(y).unwrap_or(0)),
                _ => {}
            },
            (Scalar::Bool, Reg::W32(d)) => match op {
                BitAnd | LogAnd => self.map2_32(d, a, b, |x, y| x & y & 1),
                BitOr | LogOr => self.map2_32(d, a, b, |x, y| (x | y) & 1),
                BitXor => self.map2_32(d, a, b, |x, y| (x ^ y) & 1),
                _ => {
                    // Arithmetic on bools happens after promotion; keep 0/1.
                    let k = IntKind { bits: 32, signed: true };
                    if let Some(io) = int_op(op) {
                        self.map_generic(dst, &[a, b], move |v| (gpu_math::int_op(k, io, v[0], v[1]) != 0) as u64);
                    }
                }
            },
            _ => {
                let Some(io) = int_op(op) else { return };
                let k = int_kind(ty);
                self.map_generic(dst, &[a, b], move |v| from_norm(ty, gpu_math::int_op(k, io, to_norm(ty, v[0]), to_norm(ty, v[1]))));
            }
        }
    }

    pub(crate) fn compare(&mut self, op: BinaryOp, ty: Scalar, dst: Reg, a: Reg, b: Reg) {
        use BinaryOp::*;
        let Reg::W32(d) = dst else { return };
        if ty.is_float() {
            macro_rules! c {
                ($e:expr) => {
                    self.map2_32(d, a, b, |x, y| ($e)(f(x), f(y)) as u32)
                };
            }
            match op {
                Eq => c!(|x: f32, y: f32| x == y),
                Ne => c!(|x: f32, y: f32| x != y),
                Lt => c!(|x: f32, y: f32| x < y),
                Gt => c!(|x: f32, y: f32| x > y),
                Le => c!(|x: f32, y: f32| x <= y),
                Ge => c!(|x: f32, y: f32| x >= y),
                _ => {}
            }
            return;
        }
        if matches!((a, b), (Reg::W32(_), Reg::W32(_))) && !matches!(ty, Scalar::Long | Scalar::ULong) {
            if ty.is_signed() {
                macro_rules! c {
                    ($e:expr) => {
                        self.map2_32(d, a, b, |x, y| ($e)(x as i32, y as i32) as u32)
                    };
                }
                match op {
                    Eq => c!(|x: i32, y: i32| x == y),
                    Ne => c!(|x: i32, y: i32| x != y),
                    Lt => c!(|x: i32, y: i32| x < y),
                    Gt => c!(|x: i32, y: i32| x > y),
                    Le => c!(|x: i32, y: i32| x <= y),
                    Ge => c!(|x: i32, y: i32| x >= y),
                    _ => {}
                }
            } else {
                macro_rules! c {
                    ($e:expr) => {
                        self.map2_32(d, a, b, |x, y| ($e)(x, y) as u32)
                    };
                }
                match op {
                    Eq => c!(|x: u32, y: u32| x == y),
                    Ne => c!(|x: u32, y: u32| x != y),
                    Lt => c!(|x: u32, y: u32| x < y),
                    Gt => c!(|x: u32, y: u32| x > y),
                    Le => c!(|x: u32, y: u32| x <= y),
                    Ge => c!(|x: u32, y: u32| x >= y),
                    _ => {}
                }
            }
            return;
        }
        let signed = ty.is_signed();
        self.map_generic(dst, &[a, b], move |v| {
            let ord = if signed { (v[0] as i64).cmp(&(v[1] as i64)) } else { v[0].cmp(&v[1]) };
            use std::cmp::Ordering::*;
            (match op {
                Eq => ord == Equal,
                Ne => ord != Equal,
                Lt => ord == Less,
                Gt => ord == Greater,
                Le => ord != Greater,
                Ge => ord != Less,
                _ => false,
            }) as u64
        });
    }

    pub(crate) fn convert(&mut self, from: Scalar, to: Scalar, dst: Reg, src: Reg) {
        match (from, to, dst) {
            (Scalar::Int, Scalar::Float, Reg::W32(d)) => self.map1_32(d, src, |x| (x as i32 as f32).to_bits()),
            (Scalar::UInt, Scalar::Float, Reg::W32(d)) => self.map1_32(d, src, |x| (x as f32).to_bits()),
            (Scalar::Int, Scalar::UInt, Reg::W32(d)) | (Scalar::UInt, Scalar::Int, Reg::W32(d)) => self.map1_32(d, src, |x| x),
            (Scalar::Float, Scalar::Int, Reg::W32(d)) => self.map1_32(d, src, |x| f(x) as i32 as u32),
            (Scalar::Float, Scalar::UInt, Reg::W32(d)) => self.map1_32(d, src, |x| f(x) as u32),
            _ => self.map_generic(dst, &[src], move |v| convert_bits(from, to, v[0])),
        }
    }

    pub(crate) fn bitcast(&mut self, dst: &[Reg], dst_ty: Scalar, src: &[Reg], src_ty: Scalar) {
        let n = self.n;
        let uniform = src.iter().all(|&r| self.is_uniform_pub(r));
        let lanes = if uniform { 1 } else { n };
        let (ss, ds) = (src_ty.size() as usize, dst_ty.size() as usize);
        let mut results = vec![vec![0u64; lanes]; dst.len()];
        for l in 0..lanes {
            let mut bytes = [0u8; 64];
            for (k, &r) in src.iter().enumerate() {
                let raw = to_memory(src_ty, self.get_pub(r, l));
                bytes[k * ss..k * ss + ss].copy_from_slice(&raw.to_le_bytes()[..ss]);
            }
            for (k, res) in results.iter_mut().enumerate() {
                let mut v = [0u8; 8];
                v[..ds].copy_from_slice(&bytes[k * ds..k * ds + ds]);
                res[l] = from_memory(dst_ty, u64::from_le_bytes(v));
            }
        }
        for (k, &d) in dst.iter().enumerate() {
            if uniform {
                self.set_uniform_pub(d, results[k][0]);
            } else {
                self.mark_varying(d);
                for (l, &v) in results[k].iter().enumerate().take(n) {
                    self.set_lane_pub(d, l, v);
                }
            }
        }
    }

    pub(crate) fn math(&mut self, func: MathFn, ty: Scalar, dst: Reg, args: &[Reg]) {
        let k = float_kind(ty);
        let round = move |x: f32| if k == FloatKind::F32 { x } else { gpu_math::round_to(k, x) };
        match (func, dst) {
            (MathFn::F1(g), Reg::W32(d)) => self.map1_32(d, args[0], move |x| round(g(f(x))).to_bits()),
            (MathFn::F2(g), Reg::W32(d)) => self.map2_32(d, args[0], args[1], move |x, y| round(g(f(x), f(y))).to_bits()),
            (MathFn::FPred(g), Reg::W32(d)) => self.map1_32(d, args[0], move |x| g(f(x)) as u32),
            (MathFn::FRel(g), Reg::W32(d)) => self.map2_32(d, args[0], args[1], move |x, y| g(f(x), f(y)) as u32),
            // Floats live in 32-bit registers; the generic forms keep any
            // other register correct rather than leaving it unwritten.
            (MathFn::F1(g), _) => self.map_generic(dst, args, move |v| round(g(f(v[0] as u32))).to_bits() as u64),
            (MathFn::F2(g), _) => self.map_generic(dst, args, move |v| round(g(f(v[0] as u32), f(v[1] as u32))).to_bits() as u64),
            (MathFn::F3(g), _) => {
                self.map_generic(dst, args, move |v| round(g(f(v[0] as u32), f(v[1] as u32), f(v[2] as u32))).to_bits() as u64)
            }
            (MathFn::FPred(g), _) => self.map_generic(dst, args, move |v| g(f(v[0] as u32)) as u64),
            (MathFn::FRel(g), _) => self.map_generic(dst, args, move |v| g(f(v[0] as u32), f(v[1] as u32)) as u64),
            (MathFn::I1(g), _) => {
                let ik = int_kind(ty);
                self.map_generic(dst, args, move |v| from_norm(ty, g(ik, to_norm(ty, v[0]))))
            }
            (MathFn::I2(g), _) => {
                let ik = int_kind(ty);
                self.map_generic(dst, args, move |v| from_norm(ty, g(ik, to_norm(ty, v[0]), to_norm(ty, v[1]))))
            }
            (MathFn::I3(g), _) => {
                let ik = int_kind(ty);
                self.map_generic(dst, args, move |v| from_norm(ty, g(ik, to_norm(ty, v[0]), to_norm(ty, v[1]), to_norm(ty, v[2]))))
            }
            (MathFn::I4(g), _) => {
                let ik = int_kind(ty);
                self.map_generic(dst, args, move |v| {
                    from_norm(ty, g(ik, to_norm(ty, v[0]), to_norm(ty, v[1]), to_norm(ty, v[2]), to_norm(ty, v[3])))
                })
            }
        }
    }

    pub(crate) fn geometric(&mut self, op: gpu_math::GeometricFn, ty: Scalar, dst: &[Reg], args: &[Vec<Reg>]) {
        let k = float_kind(ty);
        let n = self.n;
        let uniform = args.iter().flatten().all(|&r| self.is_uniform_pub(r));
        let lanes = if uniform { 1 } else { n };
        let mut outs = vec![vec![0u64; lanes]; dst.len()];
        for l in 0..lanes {
            let vecs: Vec<Vec<f32>> = args.iter().map(|a| a.iter().map(|&r| f(self.get_pub(r, l) as u32)).collect()).collect();
            let views: Vec<&[f32]> = vecs.iter().map(|v| v.as_slice()).collect();
            let mut res = [0f32; 4];
            let count = op.eval(&views, &mut res);
            for (c, o) in outs.iter_mut().enumerate().take(count) {
                o[l] = gpu_math::round_to(k, res[c]).to_bits() as u64;
            }
        }
        self.store_results(dst, &outs, uniform);
    }

    fn store_results(&mut self, dst: &[Reg], outs: &[Vec<u64>], uniform: bool) {
        for (c, &d) in dst.iter().enumerate() {
            if uniform {
                self.set_uniform_pub(d, outs[c][0]);
            } else {
                self.mark_varying(d);
                for (l, v) in outs[c].iter().enumerate() {
                    self.set_lane_pub(d, l, *v);
                }
            }
        }
    }

    pub(crate) fn special(&mut self, op: SpecialFn, ty: Scalar, dst: &[Reg], args: &[Reg]) {
        let k = float_kind(ty);
        let uniform = args.iter().all(|&r| self.is_uniform_pub(r));
        let lanes = if uniform { 1 } else { self.n };
        let mut outs = vec![vec![0u64; lanes]; dst.len()];
        #[allow(clippy::needless_range_loop)] // `l` indexes several outputs and registers
        for l in 0..lanes {
            let x = f(self.get_pub(args[0], l) as u32);
            let r = |v: f32| gpu_math::round_to(k, v).to_bits() as u64;
            match op {
                SpecialFn::Ldexp => {
                    let e = self.get_pub(args[1], l) as u32 as i32;
                    outs[0][l] = r(gpu_math::ldexp(x, e));
                }
                SpecialFn::Ilogb => {
                    let v = if x == 0.0 || x.is_nan() {
                        i32::MIN
                    } else if x.is_infinite() {
                        i32::MAX
                    } else {
                        frexp(x).1 - 1
                    };
                    outs[0][l] = v as u32 as u64;
                }
                SpecialFn::Frexp => {
                    let (m, e) = frexp(x);
                    outs[0][l] = r(m);
                    outs[1][l] = e as u32 as u64;
                }
                SpecialFn::Modf => {
                    let ip = x.trunc();
                    outs[0][l] = r(if x.is_infinite() { 0.0f32.copysign(x) } else { x - ip });
                    outs[1][l] = r(ip);
                }
                SpecialFn::Sincos => {
                    outs[0][l] = r(gpu_math::sin(x));
                    outs[1][l] = r(gpu_math::cos(x));
                }
            }
        }
        self.store_results(dst, &outs, uniform);
    }
}

fn frexp(x: f32) -> (f32, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let bits = x.to_bits();
    let exp = ((bits >> 23) & 0xff) as i32;
    if exp == 0 {
        // Denormal: scale up first.
        let (m, e) = frexp(x * 2f32.powi(64));
        return (m, e - 64);
    }
    let m = f32::from_bits((bits & 0x807f_ffff) | (126 << 23));
    (m, exp - 126)
}

fn int_min(k: IntKind, a: u64, b: u64) -> u64 {
    if gpu_math::int_cmp(k, a, b).is_le() {
        a
    } else {
        b
    }
}

fn int_max(k: IntKind, a: u64, b: u64) -> u64 {
    if gpu_math::int_cmp(k, a, b).is_ge() {
        a
    } else {
        b
    }
}
