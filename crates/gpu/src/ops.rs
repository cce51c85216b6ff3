//! The non-control-flow operations of the interpreter: arithmetic,
//! conversions, memory, atomics, barriers, SIMD-group functions, matrices.

use crate::access::MemOp;
use crate::exec::{Machine, Mask};
use crate::findings::FindingKind;
use crate::ir::*;
use crate::memory::AllocKind;
use crate::memory::{ptr_add, ptr_offset, read_le, write_le};
use crate::undefined::{Undefined, POISON};

/// The offset part of a pointer (`memory.rs`).
const OFFSET_BITS: u64 = (1 << 40) - 1;
use gpu_math::{FloatKind, IntKind};
use msl::ast::BinaryOp;
use msl::types::Scalar;

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

    // ----- memory --------------------------------------------------------------
    // Every access is checked and observed through `access.rs`; the code
    // here only moves the data, fast when the lanes allow it.

    pub(crate) fn load(&mut self, dst: Reg, ty: Scalar, ptr: Reg, at: AccessId, mask: &Mask) {
        let size = ty.size() as usize;
        let checked = self.check_lanes(ptr, size, mask, at, false);
        let ok = checked.ok;
        let full = self.is_full(mask);
        let Some(first) = ok.lanes().next() else {
            // Every lane faulted: its value is 0 (after the finding).
            self.write_zero(dst, mask, full);
            return;
        };
        let p0 = self.get_pub(ptr, first);
        let shared = !matches!(crate::memory::ptr_alloc(p0).kind(), AllocKind::Private(_));
        let fast = checked.one_allocation && shared && !self.tracing();
        // One shared location read by every lane: load once.
        if fast && full && self.is_uniform_pub(ptr) {
            let raw = self.mem.region(p0, first).and_then(|(b, off)| read_le(b, off, size)).unwrap_or(0);
            self.observe_lanes(ptr, size, at, mask, MemOp::Read, true);
            self.set_uniform_pub(dst, from_memory(ty, raw));
            return;
        }
        if full {
            self.mark_varying(dst);
        } else {
            self.expand_pub(dst);
        }
        for l in mask.and_not(&ok).lanes() {
            self.set_lane_pub(dst, l, 0);
        }
        // 32-bit values, every lane checked and in one allocation: a block
        // copy when the lanes read consecutive words (`a[i]`), else a gather.
        if let (Reg::W32(d), Reg::W64(pr), 4, true) = (dst, ptr, size, fast) {
            if let Some((bytes, _)) = self.mem.region(p0, first) {
                let (s, d, pr, n) = (self.stride, d as usize, pr as usize, self.n);
                let pu = self.u64f[pr];
                let all = first == 0 && ok.count() as usize == n;
                let off0 = ptr_offset(p0) as usize;
                let word = |p: u64| {
                    let o = (p & OFFSET_BITS) as usize;
                    bytes.get(o..o + 4).map_or(0, |w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                };
                if all && !pu && consecutive(&self.r64[pr * s..pr * s + n], p0, 4) {
                    if let Some(src) = bytes.get(off0..off0 + 4 * n) {
                        words_from_bytes(&mut self.r32[d * s..d * s + n], src);
                    }
                } else if all && !pu {
                    let (ptrs, outs) = (&self.r64[pr * s..pr * s + n], &mut self.r32[d * s..d * s + n]);
                    for (o, &p) in outs.iter_mut().zip(ptrs) {
                        *o = word(p);
                    }
                } else {
                    for l in ok.lanes() {
                        self.r32[d * s + l] = word(if pu { p0 } else { self.r64[pr * s + l] });
                    }
                }
                self.observe_lanes(ptr, size, at, &ok, MemOp::Read, checked.one_allocation);
                return;
            }
        }
        for l in ok.lanes() {
            self.load_lane(dst, ty, ptr, at, l);
        }
        self.observe_lanes(ptr, size, at, &ok, MemOp::Read, checked.one_allocation);
    }

    /// `dst = 0` in the lanes of `mask` (faulted loads).
    fn write_zero(&mut self, dst: Reg, mask: &Mask, full: bool) {
        if full {
            self.set_uniform_pub(dst, 0);
        } else {
            self.expand_pub(dst);
            for l in mask.lanes() {
                self.set_lane_pub(dst, l, 0);
            }
        }
    }

    /// One lane's load, already checked.
    fn load_lane(&mut self, dst: Reg, ty: Scalar, ptr: Reg, at: AccessId, l: usize) {
        let size = ty.size() as usize;
        let p = self.get_pub(ptr, l);
        let raw = self.mem.region(p, l).and_then(|(b, off)| read_le(b, off, size)).unwrap_or(0);
        self.set_lane_pub(dst, l, from_memory(ty, raw));
        if self.tracing() {
            self.trace_access(Some(dst), false, p, size, l, at);
        }
    }

    pub(crate) fn store(&mut self, src: Reg, ty: Scalar, ptr: Reg, at: AccessId, mask: &Mask) {
        // Every lane storing one value to one place: one store, and a warning.
        if let Some((first, rest)) = self.agreeing_store(src, ptr, mask) {
            let mut one = Mask::empty();
            one.set(first, true);
            self.store(src, ty, ptr, at, &one);
            self.note_agreeing_store(ptr, at, first, &rest);
            return;
        }
        let size = ty.size() as usize;
        let checked = self.check_lanes(ptr, size, mask, at, true);
        let ok = checked.ok;
        let Some(first) = ok.lanes().next() else { return };
        let p0 = self.get_pub(ptr, first);
        let shared = !matches!(crate::memory::ptr_alloc(p0).kind(), AllocKind::Private(_));
        // 32-bit values, every lane checked and in one allocation: a block
        // copy when the lanes write consecutive words, else a scatter.
        if let (Reg::W32(sr), Reg::W64(pr), 4, true) = (src, ptr, size, checked.one_allocation && shared && !self.tracing()) {
            let (s, sr, pr, n) = (self.stride, sr as usize, pr as usize, self.n);
            let (su, pu) = (self.u32f[sr], self.u64f[pr]);
            let all = first == 0 && ok.count() as usize == n;
            let Machine { mem, r32, r64, .. } = self;
            if let Some((bytes, _)) = mem.region_mut(p0, first) {
                let off0 = ptr_offset(p0) as usize;
                let value = |l: usize| r32[sr * s + if su { 0 } else { l }];
                let block = all && !pu && consecutive(&r64[pr * s..pr * s + n], p0, 4) && off0 + 4 * n <= bytes.len();
                let mut put = |p: u64, v: u32| {
                    let o = (p & OFFSET_BITS) as usize;
                    if let Some(w) = bytes.get_mut(o..o + 4) {
                        w.copy_from_slice(&v.to_le_bytes());
                    }
                };
                if block {
                    let dst = &mut bytes[off0..off0 + 4 * n];
                    if su {
                        let v = r32[sr * s].to_le_bytes();
                        for c in dst.chunks_exact_mut(4) {
                            c.copy_from_slice(&v);
                        }
                    } else {
                        bytes_from_words(dst, &r32[sr * s..sr * s + n]);
                    }
                } else if all && !pu {
                    for (l, &p) in r64[pr * s..pr * s + n].iter().enumerate() {
                        put(p, value(l));
                    }
                } else {
                    for l in ok.lanes() {
                        put(if pu { p0 } else { r64[pr * s + l] }, value(l));
                    }
                }
                self.observe_lanes(ptr, size, at, &ok, MemOp::Write, checked.one_allocation);
                return;
            }
        }
        for l in ok.lanes() {
            self.store_lane(src, ty, ptr, at, l);
        }
        self.observe_lanes(ptr, size, at, &ok, MemOp::Write, checked.one_allocation);
    }

    /// One lane's store, already checked.
    fn store_lane(&mut self, src: Reg, ty: Scalar, ptr: Reg, at: AccessId, l: usize) {
        let size = ty.size() as usize;
        let p = self.get_pub(ptr, l);
        let bits = self.get_pub(src, l);
        if let Some((b, off)) = self.mem.region_mut(p, l) {
            write_le(b, off, size, to_memory(ty, bits));
        }
        if self.tracing() {
            self.trace_access_value(Some(src), Some((ty, bits)), true, p, size, l, at);
        }
    }

    pub(crate) fn memcopy(&mut self, dst: Reg, src: Reg, bytes: u32, at: AccessId, mask: &Mask) {
        let n = bytes as usize;
        let mut buf = vec![0u8; n];
        for l in mask.lanes() {
            let (s, d) = (self.get_pub(src, l), self.get_pub(dst, l));
            if !self.check_lane(s, n, l, at, false) || !self.check_lane(d, n, l, at, true) {
                continue;
            }
            if let Some((b, off)) = self.mem.region(s, l) {
                buf.copy_from_slice(&b[off as usize..off as usize + n]);
            }
            if let Some((b, off)) = self.mem.region_mut(d, l) {
                b[off as usize..off as usize + n].copy_from_slice(&buf);
            }
            // A copy carries its source's initialization state (a struct's
            // padding, never written, is copied, not read).
            let src_init = self.private_init_bits(s, n, l);
            if src_init.is_some() {
                self.set_private_init_bits(s, l, &vec![true; n]);
            }
            self.observe_lane(s, n, at, l, MemOp::Read);
            self.observe_lane(d, n, at, l, MemOp::Write);
            if let Some(bits) = src_init {
                self.set_private_init_bits(s, l, &bits);
                self.set_private_init_bits(d, l, &bits);
            }
            if self.tracing() {
                self.trace_access(None, true, d, n, l, at);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn atomic(&mut self, op: AtomicOp, ty: Scalar, dst: Reg, ptr: Reg, a: Reg, b: Reg, at: AccessId, mask: &Mask) {
        let size = ty.size() as usize;
        let checked = self.check_lanes(ptr, size, mask, at, op != AtomicOp::Load);
        let ok = checked.ok;
        if !self.is_full(mask) {
            self.expand_pub(dst);
        } else {
            self.mark_varying(dst);
        }
        for l in mask.and_not(&ok).lanes() {
            self.set_lane_pub(dst, l, 0);
        }
        if ok.is_empty() {
            return;
        }
        // Lanes in order: atomics are applied one thread at a time,
        // deterministically.
        if op != AtomicOp::CompareExchange && !self.tracing() && self.atomic_block(op, ty, dst, ptr, a, &ok) {
            self.observe_lanes(ptr, size, at, &ok, MemOp::Atomic(op), checked.one_allocation);
            return;
        }
        if let Some(t) = self.tracer.as_mut() {
            t.atomic = true;
        }
        for l in self.atomic_lanes(&ok) {
            let p = self.get_pub(ptr, l);
            let old = self.mem.region(p, l).and_then(|(bts, off)| read_le(bts, off, size)).map(|raw| from_memory(ty, raw)).unwrap_or(0);
            let x = self.get_pub(a, l);
            let (new, result) = match op {
                AtomicOp::CompareExchange => {
                    // `a` points at the expected value in thread memory.
                    let exp_ptr = x;
                    let expected =
                        self.mem.region(exp_ptr, l).and_then(|(bts, off)| read_le(bts, off, size)).map(|r| from_memory(ty, r)).unwrap_or(0);
                    let desired = self.get_pub(b, l);
                    if expected == old {
                        (Some(desired), 1)
                    } else {
                        if let Some((bts, off)) = self.mem.region_mut(exp_ptr, l) {
                            write_le(bts, off, size, to_memory(ty, old));
                        }
                        (None, 0)
                    }
                }
                _ => atomic_update(op, ty, old, x),
            };
            if let Some(v) = new {
                if let Some((bts, off)) = self.mem.region_mut(p, l) {
                    write_le(bts, off, size, to_memory(ty, v));
                }
            }
            self.set_lane_pub(dst, l, result);
            if self.tracing() {
                self.trace_access(Some(dst), false, p, size, l, at);
                if new.is_some() {
                    self.trace_access(Some(a), true, p, size, l, at);
                }
            }
        }
        if let Some(t) = self.tracer.as_mut() {
            t.atomic = false;
        }
        // Atomics never race with each other, so recording them after the
        // loop, in lane order, finds exactly what recording each in turn would.
        self.observe_lanes(ptr, size, at, &ok, MemOp::Atomic(op), checked.one_allocation);
    }

    /// The lanes of `mask` in the order their atomics are applied.
    fn atomic_lanes(&self, mask: &Mask) -> Vec<usize> {
        let mut lanes: Vec<usize> = mask.lanes().collect();
        if self.atomics_last_lane_first {
            lanes.reverse();
        }
        lanes
    }

    /// Atomics of all lanes (already checked) on one shared allocation: the
    /// allocation is looked up once. Returns false (nothing done) when the
    /// lanes' pointers are not all in one such allocation.
    #[allow(clippy::too_many_arguments)]
    fn atomic_block(&mut self, op: AtomicOp, ty: Scalar, dst: Reg, ptr: Reg, a: Reg, mask: &Mask) -> bool {
        let size = ty.size() as usize;
        let Some(first) = mask.lanes().next() else { return true };
        let p0 = self.get_pub(ptr, first);
        let alloc = crate::memory::ptr_alloc(p0);
        if matches!(alloc.kind(), AllocKind::Private(_)) {
            return false;
        }
        let (s, n) = (self.stride, self.n);
        let lanes = self.atomic_lanes(mask);
        let Machine { mem, r32, r64, u32f, u64f, .. } = self;
        // Register `r` of lane `l`, from the register file borrowed apart from memory.
        let get = |r: Reg, l: usize| -> u64 {
            match r {
                Reg::W32(i) => r32[i as usize * s + if u32f[i as usize] { 0 } else { l }] as u64,
                Reg::W64(i) => r64[i as usize * s + if u64f[i as usize] { 0 } else { l }],
            }
        };
        let all_lanes = first == 0 && mask.count() as usize == n;
        let same = match ptr {
            Reg::W64(pr) if all_lanes && !u64f[pr as usize] => crate::memory::all_in(&r64[pr as usize * s..pr as usize * s + n], alloc),
            _ => mask.lanes().all(|l| crate::memory::ptr_alloc(get(ptr, l)) == alloc),
        };
        if !same {
            return false;
        }
        let mut results = Vec::with_capacity(mask.count() as usize);
        let Some((bytes, _)) = mem.region_mut(p0, first) else { return false };
        // 32-bit integer read-modify-writes (counters, histograms): the
        // operation picked once, the word read and written in place.
        let int32: Option<fn(u32, u32) -> u32> = match (op, ty) {
            (_, Scalar::UInt | Scalar::Int) if size == 4 => match op {
                AtomicOp::Add => Some(u32::wrapping_add),
                AtomicOp::Sub => Some(u32::wrapping_sub),
                AtomicOp::And => Some(|a, b| a & b),
                AtomicOp::Or => Some(|a, b| a | b),
                AtomicOp::Xor => Some(|a, b| a ^ b),
                AtomicOp::Min if ty == Scalar::UInt => Some(u32::min),
                AtomicOp::Max if ty == Scalar::UInt => Some(u32::max),
                AtomicOp::Min => Some(|a, b| (a as i32).min(b as i32) as u32),
                AtomicOp::Max => Some(|a, b| (a as i32).max(b as i32) as u32),
                _ => None,
            },
            _ => None,
        };
        for l in lanes {
            let (p, x) = (get(ptr, l), get(a, l));
            let off = ptr_offset(p);
            if let Some(f) = int32 {
                let Some(w) = usize::try_from(off).ok().and_then(|o| bytes.get_mut(o..o.checked_add(4)?)) else { continue };
                let old = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                w.copy_from_slice(&f(old, x as u32).to_le_bytes());
                results.push((l, old as u64));
                continue;
            }
            let Some(raw) = read_le(bytes, off, size) else { continue };
            let (new, result) = atomic_update(op, ty, from_memory(ty, raw), x);
            if let Some(v) = new {
                write_le(bytes, off, size, to_memory(ty, v));
            }
            results.push((l, result));
        }
        for (l, r) in results {
            self.set_lane_pub(dst, l, r);
        }
        true
    }

    pub(crate) fn barrier(&mut self, simdgroup: bool, flags: u32, at: AccessId, mask: &Mask) {
        let all = Mask::first(self.n);
        if simdgroup {
            // Every thread of each SIMD-group that has an arriving thread.
            for g in 0..self.n.div_ceil(32) {
                let group = Mask::first((g + 1) * 32).and_not(&Mask::first(g * 32)).and(&all);
                let arrived = mask.and(&group);
                if !arrived.is_empty() && arrived != group {
                    self.divergence(at, &arrived, &group, true);
                    break;
                }
            }
        } else if *mask != all {
            self.divergence(at, mask, &all, false);
        }
        self.on_barrier(simdgroup, flags, at);
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn lane_op(
        &mut self,
        op: LaneOp,
        quad: bool,
        ty: Scalar,
        dst: Reg,
        (a, arg, fill): (Reg, Reg, Reg),
        at: AccessId,
        mask: &Mask,
    ) {
        let g = if quad { 4 } else { 32 };
        let n = self.n;
        let mut result = vec![0u64; n];
        let mut written = Mask::empty();
        // Lanes whose result the specification leaves undefined, and why.
        let mut undefined = Mask::empty();
        let mut first_undefined: Option<(usize, Undefined)> = None;
        let tracing = self.tracing();
        // For the trace: each lane's sources (register, lane).
        let mut provenance: Vec<(usize, Vec<(Reg, usize)>)> = Vec::new();
        for start in (0..n).step_by(g) {
            let end = (start + g).min(n);
            let active: Vec<usize> = (start..end).filter(|&l| mask.get(l)).collect();
            if active.is_empty() {
                continue;
            }
            // (source lane, destination lane) of shuffles, for the trace.
            let mut moves: Vec<(usize, usize)> = Vec::new();
            let mut shuffled: Vec<(usize, Vec<(Reg, usize)>)> = Vec::new();
            let val = |m: &Self, l: usize| m.get_pub(a, l);
            match op {
                LaneOp::Sum | LaneOp::Product | LaneOp::Min | LaneOp::Max | LaneOp::And | LaneOp::Or | LaneOp::Xor => {
                    let mut acc = val(self, active[0]);
                    for &l in &active[1..] {
                        acc = reduce(op, ty, acc, val(self, l));
                    }
                    for &l in &active {
                        result[l] = acc;
                    }
                }
                LaneOp::PrefixInclusiveSum
                | LaneOp::PrefixExclusiveSum
                | LaneOp::PrefixInclusiveProduct
                | LaneOp::PrefixExclusiveProduct => {
                    let (rop, identity) = match op {
                        LaneOp::PrefixInclusiveSum | LaneOp::PrefixExclusiveSum => (LaneOp::Sum, convert_bits(Scalar::Int, ty, 0)),
                        _ => (LaneOp::Product, convert_bits(Scalar::Int, ty, 1)),
                    };
                    let inclusive = matches!(op, LaneOp::PrefixInclusiveSum | LaneOp::PrefixInclusiveProduct);
                    let mut acc = identity;
                    for &l in &active {
                        let v = val(self, l);
                        let next = reduce(rop, ty, acc, v);
                        result[l] = if inclusive { next } else { acc };
                        acc = next;
                    }
                }
                LaneOp::Broadcast
                | LaneOp::Shuffle
                | LaneOp::ShuffleXor
                | LaneOp::ShuffleUp
                | LaneOp::ShuffleDown
                | LaneOp::ShuffleRotateUp
                | LaneOp::ShuffleRotateDown
                | LaneOp::ShuffleAndFillUp
                | LaneOp::ShuffleAndFillDown => {
                    // Metal asks the lane, delta or mask to be the same in
                    // every thread for all but `simd_shuffle`.
                    let d0 = self.get_pub(arg, active[0]);
                    let uniform = op == LaneOp::Shuffle || active.iter().all(|&l| self.get_pub(arg, l) == d0);
                    for &l in &active {
                        let i = l - start;
                        let d = self.get_pub(arg, l) as usize;
                        // Where the value comes from: (lane in the group, from `fill`),
                        // `None` for the caller's own value, or undefined.
                        let from: Result<Option<(usize, bool)>, Undefined> = match op {
                            _ if !uniform => Err(Undefined::NotUniform),
                            LaneOp::Broadcast | LaneOp::Shuffle if d >= g => Err(Undefined::BadLane(d)),
                            LaneOp::Broadcast | LaneOp::Shuffle => Ok(Some((d, false))),
                            LaneOp::ShuffleXor if i ^ d >= g => Err(Undefined::BadLane(i ^ d)),
                            LaneOp::ShuffleXor => Ok(Some((i ^ d, false))),
                            // The lanes shifted in from outside the group keep their own value.
                            LaneOp::ShuffleUp => Ok(i.checked_sub(d).map(|s| (s, false))),
                            LaneOp::ShuffleDown => Ok((i + d < g).then_some((i + d, false))),
                            LaneOp::ShuffleRotateUp => Ok(Some(((i + g - d % g) % g, false))),
                            LaneOp::ShuffleRotateDown => Ok(Some(((i + d) % g, false))),
                            LaneOp::ShuffleAndFillUp if i >= d % g => Ok(Some((i - d % g, false))),
                            LaneOp::ShuffleAndFillUp => Ok(Some(((i + g - d % g) % g, true))),
                            _ if i + d % g < g => Ok(Some((i + d % g, false))),
                            _ => Ok(Some(((i + d) % g, true))),
                        };
                        let from = from.and_then(|f| match f {
                            // A source that is inactive here (or does not exist in a
                            // partial SIMD-group) has no value to give.
                            Some((s, _)) if start + s >= end || !mask.get(start + s) => Err(Undefined::Inactive(start + s)),
                            other => Ok(other),
                        });
                        result[l] = match from {
                            Ok(None) => val(self, l),
                            Ok(Some((s, false))) => val(self, start + s),
                            Ok(Some((s, true))) => self.get_pub(fill, start + s),
                            Err(why) => {
                                undefined.set(l, true);
                                first_undefined.get_or_insert((l, why));
                                POISON
                            }
                        };
                        if let (true, Ok(Some((s, _)))) = (tracing, from) {
                            moves.push((start + s, l));
                        }
                        if tracing {
                            shuffled.push((
                                l,
                                vec![match from {
                                    Ok(Some((s, false))) => (a, start + s),
                                    Ok(Some((s, true))) => (fill, start + s),
                                    _ => (a, l),
                                }],
                            ));
                        }
                    }
                }
                LaneOp::BroadcastFirst => {
                    let v = val(self, active[0]);
                    for &l in &active {
                        result[l] = v;
                        if tracing {
                            moves.push((active[0], l));
                            shuffled.push((l, vec![(a, active[0])]));
                        }
                    }
                }
                LaneOp::All | LaneOp::Any => {
                    let all = active.iter().all(|&l| val(self, l) & 1 != 0);
                    let any = active.iter().any(|&l| val(self, l) & 1 != 0);
                    let v = if op == LaneOp::All { all } else { any } as u64;
                    for &l in &active {
                        result[l] = v;
                    }
                }
                LaneOp::Ballot | LaneOp::ActiveMask => {
                    let mut bits = 0u64;
                    for &l in &active {
                        if op == LaneOp::ActiveMask || val(self, l) & 1 != 0 {
                            bits |= 1 << (l - start);
                        }
                    }
                    for &l in &active {
                        result[l] = bits;
                    }
                }
                LaneOp::IsFirst => {
                    for &l in &active {
                        result[l] = (l == active[0]) as u64;
                    }
                }
            }
            for &l in &active {
                written.set(l, true);
            }
            if tracing {
                // Reductions and scans: the lanes they combined.
                let exclusive = matches!(op, LaneOp::PrefixExclusiveSum | LaneOp::PrefixExclusiveProduct);
                for &l in &active {
                    let from: Vec<(Reg, usize)> = match crate::trace::exchange_kind(op) {
                        Some(crate::trace::ExchangeKind::Reduce) => active.iter().map(|&s| (a, s)).collect(),
                        Some(crate::trace::ExchangeKind::Scan) => {
                            active.iter().filter(|&&s| if exclusive { s < l } else { s <= l }).map(|&s| (a, s)).collect()
                        }
                        Some(_) => continue,
                        None => Vec::new(),
                    };
                    provenance.push((l, from));
                }
                provenance.append(&mut shuffled);
            }
            if let (Some(kind), true) = (crate::trace::exchange_kind(op), tracing) {
                let moves = moves.into_iter().filter(|(a, b)| a != b).map(|(a, b)| (a as u32, b as u32)).collect();
                let lanes = active.iter().map(|&l| l as u32).collect();
                self.trace_exchange(crate::trace::lane_op_name(op, quad), kind, lanes, moves, at);
            }
        }
        if self.is_full(mask) {
            self.mark_varying(dst);
        } else {
            self.expand_pub(dst);
        }
        for l in written.lanes() {
            self.set_lane_pub(dst, l, result[l]);
        }
        if let Some(t) = self.tracer.as_mut() {
            t.lane_provenance(dst, &provenance);
        }
        self.track_lane_result(dst, a, (mask, &undefined), first_undefined, (op, quad), at);
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn matrix(&mut self, op: MatrixOp, ty: Scalar, dst: &[Reg], args: &[Reg], mats: &[Vec<Reg>], at: AccessId, mask: &Mask) {
        let n = self.n;
        let k = float_kind(ty);
        let es = ty.size() as i64;
        for start in (0..n).step_by(32) {
            let end = (start + 32).min(n);
            if !(start..end).any(|l| mask.get(l)) {
                continue;
            }
            // Element e of the 8x8 matrix lives in the lane and slot
            // `matrix_lane_slot` says.
            let read_mat = |m: &Self, regs: &[Reg]| -> [f32; 64] {
                let mut out = [0f32; 64];
                for (e, o) in out.iter_mut().enumerate() {
                    let (lane, slot) = matrix_lane_slot(e);
                    let l = start + lane;
                    if l < end {
                        *o = f(m.get_pub(regs[slot], l) as u32);
                    }
                }
                out
            };
            let mut result: Option<[f32; 64]> = None;
            match op {
                MatrixOp::Fill => {
                    let v = f(self.get_pub(args[0], start) as u32);
                    result = Some([gpu_math::round_to(k, v); 64]);
                }
                MatrixOp::Diagonal => {
                    let v = gpu_math::round_to(k, f(self.get_pub(args[0], start) as u32));
                    let mut d = [0f32; 64];
                    for i in 0..8 {
                        d[i * 8 + i] = v;
                    }
                    result = Some(d);
                }
                MatrixOp::Multiply | MatrixOp::MultiplyAccumulate => {
                    if self.tracing() {
                        let name = if op == MatrixOp::Multiply { "simdgroup_multiply" } else { "simdgroup_multiply_accumulate" };
                        let lanes = (start..end).filter(|&l| mask.get(l)).map(|l| l as u32).collect();
                        self.trace_exchange(name.to_string(), crate::trace::ExchangeKind::Matrix, lanes, Vec::new(), at);
                    }
                    let a = read_mat(self, &mats[0]);
                    let b = read_mat(self, &mats[1]);
                    let c = if op == MatrixOp::MultiplyAccumulate { read_mat(self, &mats[2]) } else { [0f32; 64] };
                    let mut d = [0f32; 64];
                    for r in 0..8 {
                        for col in 0..8 {
                            let mut acc = c[r * 8 + col];
                            for i in 0..8 {
                                acc += a[r * 8 + i] * b[i * 8 + col];
                            }
                            d[r * 8 + col] = gpu_math::round_to(k, acc);
                        }
                    }
                    result = Some(d);
                }
                MatrixOp::Load { transpose } | MatrixOp::Store { transpose } => {
                    let base = self.get_pub(args[0], start);
                    let stride = self.get_pub(args[1], start) as i64;
                    let (ox, oy) = (self.get_pub(args[2], start) as i64, self.get_pub(args[3], start) as i64);
                    let is_load = matches!(op, MatrixOp::Load { .. });
                    let mut d = if is_load { [0f32; 64] } else { read_mat(self, &mats[0]) };
                    for r in 0..8i64 {
                        for c in 0..8i64 {
                            let (row, col) = if transpose { (oy + c, ox + r) } else { (oy + r, ox + c) };
                            let p = ptr_add(base, (row * stride + col) * es);
                            let (lane, slot) = matrix_lane_slot((r * 8 + c) as usize);
                            let lane = start + lane.min(end - start - 1);
                            if !self.check_lane(p, es as usize, lane, at, !is_load) {
                                continue;
                            }
                            if is_load {
                                if let Some(raw) = self.mem.region(p, lane).and_then(|(b, off)| read_le(b, off, es as usize)) {
                                    d[(r * 8 + c) as usize] = f(from_memory(ty, raw) as u32);
                                }
                                self.observe_lane(p, es as usize, at, lane, MemOp::Read);
                                // Element e lands in register slot e % 2 of its lane.
                                if self.tracing() {
                                    self.trace_access(dst.get(slot).copied(), false, p, es as usize, lane, at);
                                }
                            } else {
                                let v = to_memory(ty, d[(r * 8 + c) as usize].to_bits() as u64);
                                if let Some((b, off)) = self.mem.region_mut(p, lane) {
                                    write_le(b, off, es as usize, v);
                                }
                                self.observe_lane(p, es as usize, at, lane, MemOp::Write);
                                if self.tracing() {
                                    let src = mats.first().and_then(|m| m.get(slot)).copied();
                                    self.trace_access(src, true, p, es as usize, lane, at);
                                }
                            }
                        }
                    }
                    if is_load {
                        result = Some(d);
                    }
                    let _ = &mut d;
                }
            }
            if let Some(m) = result {
                for (slot, &reg) in dst.iter().enumerate().take(2) {
                    self.expand_pub(reg);
                    for l in start..end {
                        let e = matrix_element(l - start, slot);
                        self.set_lane_pub(reg, l, m[e].to_bits() as u64);
                    }
                }
            }
        }
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

/// The value an atomic leaves in memory (if it writes) and the one it
/// returns, for every operation but compare-exchange.
#[inline]
fn atomic_update(op: AtomicOp, ty: Scalar, old: u64, x: u64) -> (Option<u64>, u64) {
    match op {
        AtomicOp::Load => (None, old),
        AtomicOp::Store => (Some(x), 0),
        AtomicOp::Exchange => (Some(x), old),
        _ => (Some(atomic_arith(op, ty, old, x)), old),
    }
}

#[inline]
fn atomic_arith(op: AtomicOp, ty: Scalar, old: u64, x: u64) -> u64 {
    if ty.is_float() {
        let (a, b) = (f(old as u32), f(x as u32));
        let r = match op {
            AtomicOp::Add => a + b,
            AtomicOp::Sub => a - b,
            AtomicOp::Min => a.min(b),
            AtomicOp::Max => a.max(b),
            _ => a,
        };
        return r.to_bits() as u64;
    }
    let k = int_kind(ty);
    let (a, b) = (to_norm(ty, old), to_norm(ty, x));
    let r = match op {
        AtomicOp::Add => gpu_math::int_op(k, gpu_math::IntOp::Add, a, b),
        AtomicOp::Sub => gpu_math::int_op(k, gpu_math::IntOp::Sub, a, b),
        AtomicOp::And => a & b,
        AtomicOp::Or => a | b,
        AtomicOp::Xor => a ^ b,
        AtomicOp::Min => int_min(k, a, b),
        AtomicOp::Max => int_max(k, a, b),
        _ => a,
    };
    from_norm(ty, r)
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

/// Combine two lane values for a SIMD-group reduction.
fn reduce(op: LaneOp, ty: Scalar, a: u64, b: u64) -> u64 {
    if ty.is_float() {
        let k = float_kind(ty);
        let (x, y) = (f(a as u32), f(b as u32));
        let r = match op {
            LaneOp::Sum => x + y,
            LaneOp::Product => x * y,
            LaneOp::Min => gpu_math::fmin(x, y),
            LaneOp::Max => gpu_math::fmax(x, y),
            _ => x,
        };
        return gpu_math::round_to(k, r).to_bits() as u64;
    }
    if ty == Scalar::Bool {
        return match op {
            LaneOp::And | LaneOp::Min | LaneOp::Product => a & b & 1,
            LaneOp::Or | LaneOp::Max | LaneOp::Sum => (a | b) & 1,
            LaneOp::Xor => (a ^ b) & 1,
            _ => a,
        };
    }
    let k = int_kind(ty);
    let (x, y) = (to_norm(ty, a), to_norm(ty, b));
    let r = match op {
        LaneOp::Sum => gpu_math::int_op(k, gpu_math::IntOp::Add, x, y),
        LaneOp::Product => gpu_math::int_op(k, gpu_math::IntOp::Mul, x, y),
        LaneOp::Min => int_min(k, x, y),
        LaneOp::Max => int_max(k, x, y),
        LaneOp::And => x & y,
        LaneOp::Or => x | y,
        LaneOp::Xor => x ^ y,
        _ => x,
    };
    from_norm(ty, r)
}

/// Whether `ptrs[l] == p0 + step * l` for every lane: consecutive lanes
/// touching consecutive elements. The caller has checked that the whole
/// range lies in the allocation, so plain addition cannot leave it. Checked
/// a SIMD-group at a time without early exits inside, which vectorizes.
#[inline]
fn consecutive(ptrs: &[u64], p0: u64, step: u64) -> bool {
    let mut expect = p0;
    for chunk in ptrs.chunks(32) {
        let mut diff = 0u64;
        for (i, &p) in chunk.iter().enumerate() {
            diff |= p ^ expect.wrapping_add(step * i as u64);
        }
        if diff != 0 {
            return false;
        }
        expect = expect.wrapping_add(step * chunk.len() as u64);
    }
    true
}

/// Little-endian 32-bit words from bytes (`src.len() == 4 * out.len()`).
#[inline]
fn words_from_bytes(out: &mut [u32], src: &[u8]) {
    for (i, o) in out.iter_mut().enumerate() {
        let b: [u8; 4] = src[4 * i..4 * i + 4].try_into().unwrap_or([0; 4]);
        *o = u32::from_le_bytes(b);
    }
}

/// Bytes of little-endian 32-bit words (`dst.len() == 4 * words.len()`).
#[inline]
fn bytes_from_words(dst: &mut [u8], words: &[u32]) {
    for (i, w) in words.iter().enumerate() {
        dst[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
}

/// The lane of a SIMD-group holding element `e` (row-major) of an 8x8
/// SIMD-group matrix, and which of its two slots (`thread_elements()[slot]`).
/// This is Apple GPUs' layout, the one MLX's steel kernels rely on when they
/// fill fragments through `thread_elements()`: lane `l` holds row
/// `(l / 16) * 4 + (l / 2) % 4`, columns `c` and `c + 1` with
/// `c = ((l / 8) % 2) * 4 + (l % 2) * 2`.
pub fn matrix_lane_slot(e: usize) -> (usize, usize) {
    let (r, c) = (e / 8, e % 8);
    ((r / 4) * 16 + (c / 4) * 8 + (r % 4) * 2 + (c % 4) / 2, c % 2)
}

/// The element (row-major index) lane `lane` holds in `slot`: the inverse
/// of `matrix_lane_slot`.
pub fn matrix_element(lane: usize, slot: usize) -> usize {
    let row = (lane / 16) * 4 + (lane / 2) % 4;
    let col = ((lane / 8) % 2) * 4 + (lane % 2) * 2 + slot;
    row * 8 + col
}

#[cfg(test)]
mod matrix_layout_tests {
    use super::{matrix_element, matrix_lane_slot};

    #[test]
    fn layout_is_a_bijection_matching_apples_coordinates() {
        let mut seen = [false; 64];
        for lane in 0..32 {
            // The coordinates MLX computes for a lane (its `get_coord`).
            let qid = lane / 4;
            let fm = (qid & 4) + (lane / 2) % 4;
            let fn_ = (qid & 2) * 2 + (lane % 2) * 2;
            for slot in 0..2 {
                let e = matrix_element(lane, slot);
                assert_eq!(e, fm * 8 + fn_ + slot);
                assert!(!seen[e]);
                seen[e] = true;
                assert_eq!(matrix_lane_slot(e), (lane, slot));
            }
        }
    }
}
