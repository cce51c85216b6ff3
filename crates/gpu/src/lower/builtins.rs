//! Lowering calls to the Metal standard library.
//!
//! [`semantics`] says what each [`BuiltinId`] is, with no catch-all arm:
//! a builtin added to the checker's table does not compile until it has
//! semantics here, and none can fall through to a silent zero.

use super::linalg::Linalg as LinalgFn;
use super::{components, err, scalar_of, LResult, Lowerer, Place, Val};
use crate::ir::*;
use gpu_math::{FloatFn, FloatImpl, GeometricFn, IntFn, IntImpl};
use msl::ast::{AddressSpace, BinaryOp};
use msl::hir::{self, BuiltinId, ConstValue};
use msl::source::Span;
use msl::types::{Scalar, Type};

/// What a builtin call lowers to.
#[derive(Clone, Copy, Debug)]
enum Semantics {
    Barrier {
        simdgroup: bool,
    },
    /// `atomic_thread_fence`: every access is already ordered in lockstep.
    Fence,
    /// Shader logging (`__os_log`).
    Log,
    Atomic(AtomicOp),
    Linalg(LinalgFn),
    Matrix(MatrixFn),
    Lane(LaneOp, bool),
    Select,
    /// `all` / `any`: the components folded with the operator.
    Reduce(BinaryOp),
    Geometric(GeometricFn),
    Special(SpecialFn),
    /// Component-wise math; the element type picks the float or the
    /// integer function (a table overload without one is a lowering error).
    Math {
        float: Option<FloatFn>,
        int: Option<IntFn>,
    },
    /// `simd_is_helper_thread()`: compute kernels have no helper threads.
    False,
}

/// SIMD-group matrix functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MatrixFn {
    Fill,
    Diagonal,
    Load,
    Store,
    Multiply,
    MultiplyAccumulate,
}

fn semantics(id: BuiltinId) -> Semantics {
    use BuiltinId as B;
    use Semantics::*;
    let float = |f: FloatFn| Math { float: Some(f), int: None };
    let int = |i: IntFn| Math { float: None, int: Some(i) };
    let both = |f: FloatFn, i: IntFn| Math { float: Some(f), int: Some(i) };
    let simd = |op: LaneOp| Lane(op, false);
    let quad = |op: LaneOp| Lane(op, true);
    match id {
        B::Abs => both(FloatFn::Fabs, IntFn::Abs),
        B::Fabs => float(FloatFn::Fabs),
        B::Acos => float(FloatFn::Acos),
        B::Acosh => float(FloatFn::Acosh),
        B::Asin => float(FloatFn::Asin),
        B::Asinh => float(FloatFn::Asinh),
        B::Atan => float(FloatFn::Atan),
        B::Atan2 => float(FloatFn::Atan2),
        B::Atanh => float(FloatFn::Atanh),
        B::Ceil => float(FloatFn::Ceil),
        B::Copysign => float(FloatFn::Copysign),
        B::Cos => float(FloatFn::Cos),
        B::Cosh => float(FloatFn::Cosh),
        B::Cospi => float(FloatFn::Cospi),
        B::Divide => float(FloatFn::Divide),
        B::Exp => float(FloatFn::Exp),
        B::Exp2 => float(FloatFn::Exp2),
        B::Exp10 => float(FloatFn::Exp10),
        B::Fdim => float(FloatFn::Fdim),
        B::Floor => float(FloatFn::Floor),
        B::Fma => float(FloatFn::Fma),
        B::Fmax => float(FloatFn::Fmax),
        B::Fmin => float(FloatFn::Fmin),
        B::Fmax3 => float(FloatFn::Fmax3),
        B::Fmin3 => float(FloatFn::Fmin3),
        B::Fmedian3 => float(FloatFn::Fmedian3),
        B::Fmod => float(FloatFn::Fmod),
        B::Fract => float(FloatFn::Fract),
        B::Frexp => Special(SpecialFn::Frexp),
        B::Ilogb => Special(SpecialFn::Ilogb),
        B::Ldexp => Special(SpecialFn::Ldexp),
        B::Log => float(FloatFn::Log),
        B::Log2 => float(FloatFn::Log2),
        B::Log10 => float(FloatFn::Log10),
        B::Modf => Special(SpecialFn::Modf),
        B::Nextafter => float(FloatFn::Nextafter),
        B::Pow => float(FloatFn::Pow),
        B::Powr => float(FloatFn::Powr),
        B::Rint => float(FloatFn::Rint),
        B::Round => float(FloatFn::Round),
        B::Rsqrt => float(FloatFn::Rsqrt),
        B::Sin => float(FloatFn::Sin),
        B::Sincos => Special(SpecialFn::Sincos),
        B::Sinh => float(FloatFn::Sinh),
        B::Sinpi => float(FloatFn::Sinpi),
        B::Sqrt => float(FloatFn::Sqrt),
        B::Tan => float(FloatFn::Tan),
        B::Tanh => float(FloatFn::Tanh),
        B::Tanpi => float(FloatFn::Tanpi),
        B::Trunc => float(FloatFn::Trunc),
        B::Isfinite => float(FloatFn::IsFinite),
        B::Isinf => float(FloatFn::IsInf),
        B::Isnan => float(FloatFn::IsNan),
        B::Isnormal => float(FloatFn::IsNormal),
        B::Signbit => float(FloatFn::SignBit),
        B::Isordered => float(FloatFn::IsOrdered),
        B::Isunordered => float(FloatFn::IsUnordered),
        B::All => Reduce(BinaryOp::BitAnd),
        B::Any => Reduce(BinaryOp::BitOr),
        B::Select => Select,
        B::Clamp => both(FloatFn::Clamp, IntFn::Clamp),
        B::Mix => float(FloatFn::Mix),
        B::Saturate => float(FloatFn::Saturate),
        B::Sign => float(FloatFn::Sign),
        B::Smoothstep => float(FloatFn::Smoothstep),
        B::Step => float(FloatFn::Step),
        B::Min => both(FloatFn::Fmin, IntFn::Min),
        B::Max => both(FloatFn::Fmax, IntFn::Max),
        B::Min3 => both(FloatFn::Fmin3, IntFn::Min3),
        B::Max3 => both(FloatFn::Fmax3, IntFn::Max3),
        B::Median3 => both(FloatFn::Fmedian3, IntFn::Median3),
        B::Absdiff => int(IntFn::Absdiff),
        B::Addsat => int(IntFn::Addsat),
        B::Subsat => int(IntFn::Subsat),
        B::Clz => int(IntFn::Clz),
        B::Ctz => int(IntFn::Ctz),
        B::Popcount => int(IntFn::Popcount),
        B::ReverseBits => int(IntFn::ReverseBits),
        B::ExtractBits => int(IntFn::ExtractBits),
        B::InsertBits => int(IntFn::InsertBits),
        B::Hadd => int(IntFn::Hadd),
        B::Rhadd => int(IntFn::Rhadd),
        B::Mad24 => int(IntFn::Mad24),
        B::Mul24 => int(IntFn::Mul24),
        B::Madhi => int(IntFn::Madhi),
        B::Madsat => int(IntFn::Madsat),
        B::Mulhi => int(IntFn::Mulhi),
        B::Rotate => int(IntFn::Rotate),
        B::Cross => Geometric(GeometricFn::Cross),
        B::Distance => Geometric(GeometricFn::Distance),
        B::DistanceSquared => Geometric(GeometricFn::DistanceSquared),
        B::Dot => Geometric(GeometricFn::Dot),
        B::Faceforward => Geometric(GeometricFn::Faceforward),
        B::Length => Geometric(GeometricFn::Length),
        B::LengthSquared => Geometric(GeometricFn::LengthSquared),
        B::Normalize => Geometric(GeometricFn::Normalize),
        B::Reflect => Geometric(GeometricFn::Reflect),
        B::Refract => Geometric(GeometricFn::Refract),
        B::ThreadgroupBarrier => Barrier { simdgroup: false },
        B::SimdgroupBarrier => Barrier { simdgroup: true },
        B::AtomicThreadFence => Fence,
        B::AtomicLoadExplicit => Atomic(AtomicOp::Load),
        B::AtomicStoreExplicit => Atomic(AtomicOp::Store),
        B::AtomicExchangeExplicit => Atomic(AtomicOp::Exchange),
        B::AtomicCompareExchangeWeakExplicit => Atomic(AtomicOp::CompareExchange),
        B::AtomicFetchAddExplicit => Atomic(AtomicOp::Add),
        B::AtomicFetchSubExplicit => Atomic(AtomicOp::Sub),
        B::AtomicFetchAndExplicit => Atomic(AtomicOp::And),
        B::AtomicFetchOrExplicit => Atomic(AtomicOp::Or),
        B::AtomicFetchXorExplicit => Atomic(AtomicOp::Xor),
        B::AtomicFetchMinExplicit | B::AtomicMinExplicit => Atomic(AtomicOp::Min),
        B::AtomicFetchMaxExplicit | B::AtomicMaxExplicit => Atomic(AtomicOp::Max),
        B::SimdSum => simd(LaneOp::Sum),
        B::SimdProduct => simd(LaneOp::Product),
        B::SimdMin => simd(LaneOp::Min),
        B::SimdMax => simd(LaneOp::Max),
        B::SimdAnd => simd(LaneOp::And),
        B::SimdOr => simd(LaneOp::Or),
        B::SimdXor => simd(LaneOp::Xor),
        B::SimdPrefixInclusiveSum => simd(LaneOp::PrefixInclusiveSum),
        B::SimdPrefixInclusiveProduct => simd(LaneOp::PrefixInclusiveProduct),
        B::SimdPrefixExclusiveSum => simd(LaneOp::PrefixExclusiveSum),
        B::SimdPrefixExclusiveProduct => simd(LaneOp::PrefixExclusiveProduct),
        B::SimdBroadcast => simd(LaneOp::Broadcast),
        B::SimdBroadcastFirst => simd(LaneOp::BroadcastFirst),
        B::SimdShuffle => simd(LaneOp::Shuffle),
        B::SimdShuffleXor => simd(LaneOp::ShuffleXor),
        B::SimdShuffleUp => simd(LaneOp::ShuffleUp),
        B::SimdShuffleDown => simd(LaneOp::ShuffleDown),
        B::SimdShuffleRotateUp => simd(LaneOp::ShuffleRotateUp),
        B::SimdShuffleRotateDown => simd(LaneOp::ShuffleRotateDown),
        B::SimdShuffleAndFillUp => simd(LaneOp::ShuffleAndFillUp),
        B::SimdShuffleAndFillDown => simd(LaneOp::ShuffleAndFillDown),
        B::SimdAll => simd(LaneOp::All),
        B::SimdAny => simd(LaneOp::Any),
        B::SimdBallot => simd(LaneOp::Ballot),
        B::SimdActiveThreadsMask => simd(LaneOp::ActiveMask),
        B::SimdIsFirst => simd(LaneOp::IsFirst),
        B::SimdIsHelperThread | B::QuadIsHelperThread => False,
        B::QuadSum => quad(LaneOp::Sum),
        B::QuadProduct => quad(LaneOp::Product),
        B::QuadMin => quad(LaneOp::Min),
        B::QuadMax => quad(LaneOp::Max),
        B::QuadAnd => quad(LaneOp::And),
        B::QuadOr => quad(LaneOp::Or),
        B::QuadXor => quad(LaneOp::Xor),
        B::QuadPrefixInclusiveSum => quad(LaneOp::PrefixInclusiveSum),
        B::QuadPrefixInclusiveProduct => quad(LaneOp::PrefixInclusiveProduct),
        B::QuadPrefixExclusiveSum => quad(LaneOp::PrefixExclusiveSum),
        B::QuadPrefixExclusiveProduct => quad(LaneOp::PrefixExclusiveProduct),
        B::QuadBroadcast => quad(LaneOp::Broadcast),
        B::QuadBroadcastFirst => quad(LaneOp::BroadcastFirst),
        B::QuadShuffle => quad(LaneOp::Shuffle),
        B::QuadShuffleXor => quad(LaneOp::ShuffleXor),
        B::QuadShuffleUp => quad(LaneOp::ShuffleUp),
        B::QuadShuffleDown => quad(LaneOp::ShuffleDown),
        B::QuadShuffleRotateUp => quad(LaneOp::ShuffleRotateUp),
        B::QuadShuffleRotateDown => quad(LaneOp::ShuffleRotateDown),
        B::QuadShuffleAndFillUp => quad(LaneOp::ShuffleAndFillUp),
        B::QuadShuffleAndFillDown => quad(LaneOp::ShuffleAndFillDown),
        B::QuadAll => quad(LaneOp::All),
        B::QuadAny => quad(LaneOp::Any),
        B::QuadBallot => quad(LaneOp::Ballot),
        B::QuadActiveThreadsMask => quad(LaneOp::ActiveMask),
        B::QuadIsFirst => quad(LaneOp::IsFirst),
        B::SimdgroupLoad => Matrix(MatrixFn::Load),
        B::SimdgroupStore => Matrix(MatrixFn::Store),
        B::SimdgroupMultiply => Matrix(MatrixFn::Multiply),
        B::SimdgroupMultiplyAccumulate => Matrix(MatrixFn::MultiplyAccumulate),
        B::MakeFilledSimdgroupMatrix => Matrix(MatrixFn::Fill),
        B::SimdgroupDiagonal => Matrix(MatrixFn::Diagonal),
        B::Transpose => Linalg(LinalgFn::Transpose),
        B::Determinant => Linalg(LinalgFn::Determinant),
        B::MatrixMultiply => Linalg(LinalgFn::Multiply),
        B::OsLog => Log,
    }
}

impl<'p> Lowerer<'p> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn builtin(
        &mut self,
        id: BuiltinId,
        fast: bool,
        args: &[hir::Expr],
        ret: &Type,
        span: Span,
        out: &mut Block,
    ) -> LResult<Val> {
        let _ = fast; // `metal::fast::` may be less precise; the precise result is a valid one
        let name = id.name();
        match semantics(id) {
            Semantics::Barrier { simdgroup } => {
                let flags = self.scalar(&args[0], out)?;
                let at = self.access(span, name);
                out.push(Inst::Barrier { simdgroup, flags, at });
                Ok(Val::Regs(Vec::new()))
            }
            Semantics::Log => self.log_call(args, span, out),
            Semantics::Fence => {
                for a in args {
                    self.expr(a, out)?;
                }
                Ok(Val::Regs(Vec::new()))
            }
            Semantics::Atomic(op) => self.atomic(op, args, ret, span, out),
            Semantics::Linalg(op) => self.linalg(op, name, args, span, out),
            Semantics::Matrix(op) => self.matrix(op, name, args, ret, span, out),
            Semantics::Lane(op, quad) => self.lane(op, quad, name, args, ret, span, out),
            Semantics::False => Ok(Val::Regs(vec![self.const_scalar(ConstValue::Bool(false), Scalar::Bool)])),
            Semantics::Select => {
                let regs = self.arg_regs(args, out)?;
                let (rs, _) = components(ret, self.tables).unwrap_or((Scalar::Float, 0));
                // select(a, b, c) = c ? b : a, per component.
                let n = regs[0].len().max(regs[1].len());
                let mut res = Vec::new();
                for k in 0..n {
                    let dst = self.reg_for(rs);
                    let c = regs[2][k.min(regs[2].len() - 1)];
                    out.push(Inst::Select { dst, cond: c, a: regs[1][k.min(regs[1].len() - 1)], b: regs[0][k.min(regs[0].len() - 1)] });
                    res.push(dst);
                }
                Ok(Val::Regs(res))
            }
            Semantics::Reduce(op) => {
                let regs = self.arg_regs(args, out)?;
                let mut acc = regs[0][0];
                for r in &regs[0][1..] {
                    let d = self.reg32();
                    out.push(Inst::Binary { op, ty: Scalar::Bool, dst: d, a: acc, b: *r, at: 0 });
                    acc = d;
                }
                Ok(Val::Regs(vec![acc]))
            }
            Semantics::Geometric(op) => {
                let regs = self.arg_regs(args, out)?;
                let elem = args.first().and_then(|a| scalar_of(&a.ty, self.tables)).unwrap_or(Scalar::Float);
                let (rs, rn) = components(ret, self.tables).unwrap_or((Scalar::Float, 0));
                let dst: Vec<Reg> = (0..rn).map(|_| self.reg_for(rs)).collect();
                out.push(Inst::Geometric { op, func: id, ty: elem, dst: dst.clone(), args: regs });
                Ok(Val::Regs(dst))
            }
            Semantics::Special(op) => self.special(op, id, args, ret, span, out),
            Semantics::Math { float, int } => self.math(id, float, int, args, ret, span, out),
        }
    }

    /// Every argument's registers (a memory value as its pointer).
    fn arg_regs(&mut self, args: &[hir::Expr], out: &mut Block) -> LResult<Vec<Vec<Reg>>> {
        let mut regs = Vec::with_capacity(args.len());
        for a in args {
            regs.push(match self.expr(a, out)? {
                Val::Regs(r) => r,
                Val::Mem { ptr, .. } => vec![ptr],
            });
        }
        Ok(regs)
    }

    /// A component-wise function: the element type of the first argument
    /// picks the float or integer implementation.
    #[allow(clippy::too_many_arguments)]
    fn math(
        &mut self,
        id: BuiltinId,
        float: Option<FloatFn>,
        int: Option<IntFn>,
        args: &[hir::Expr],
        ret: &Type,
        span: Span,
        out: &mut Block,
    ) -> LResult<Val> {
        let regs = self.arg_regs(args, out)?;
        let elem = args.first().and_then(|a| scalar_of(&a.ty, self.tables)).unwrap_or(Scalar::Float);
        let (rs, _) = components(ret, self.tables).unwrap_or((Scalar::Float, 0));
        let f = if elem.is_float() {
            // The element kind picks functions that depend on its own spacing,
            // range or rounding (nextafter, isnormal, fma).
            float.map(|f| match f.func(elem.float_kind()) {
                FloatImpl::F1(g) => (1, MathFn::F1(g)),
                FloatImpl::F2(g) => (2, MathFn::F2(g)),
                FloatImpl::F3(g) => (3, MathFn::F3(g)),
                FloatImpl::Pred(g) => (1, MathFn::FPred(g)),
                FloatImpl::Rel(g) => (2, MathFn::FRel(g)),
            })
        } else {
            int.map(|i| match i.func() {
                IntImpl::I1(g) => (1, MathFn::I1(g)),
                IntImpl::I2(g) => (2, MathFn::I2(g)),
                IntImpl::I3(g) => (3, MathFn::I3(g)),
                IntImpl::I4(g) => (4, MathFn::I4(g)),
            })
        };
        let f = match f {
            Some((arity, f)) if arity == regs.len() => f,
            _ => {
                let ty = args.first().map(|a| a.ty.to_string()).unwrap_or_default();
                return err(span, format!("the simulator does not implement `{id}` for `{ty}` arguments ({} of them)", args.len()));
            }
        };
        let n = regs.iter().map(|r| r.len()).max().unwrap_or(1);
        let mut res = Vec::with_capacity(n);
        for k in 0..n {
            let dst = self.reg_for(rs);
            let a: Vec<Reg> = regs.iter().map(|r| r[k.min(r.len() - 1)]).collect();
            out.push(Inst::Math { f, ty: elem, dst, args: a, func: id });
            res.push(dst);
        }
        Ok(Val::Regs(res))
    }

    /// `simd_*` / `quad_*` lane functions.
    #[allow(clippy::too_many_arguments)]
    fn lane(&mut self, op: LaneOp, quad: bool, name: &str, args: &[hir::Expr], ret: &Type, span: Span, out: &mut Block) -> LResult<Val> {
        self.uses_lanes = true;
        let ty = scalar_of(ret, self.tables).or_else(|| args.first().and_then(|a| scalar_of(&a.ty, self.tables))).unwrap_or(Scalar::UInt);
        let src_ty = args.first().and_then(|a| scalar_of(&a.ty, self.tables)).unwrap_or(ty);
        let a = match args.first() {
            Some(x) => self.regs(x, out)?,
            None => vec![self.const_scalar(ConstValue::Int(0), Scalar::UInt)],
        };
        let and_fill = matches!(op, LaneOp::ShuffleAndFillUp | LaneOp::ShuffleAndFillDown);
        // `shuffle_and_fill_*(data, filling, delta)`: the lane argument is last.
        let fill = if and_fill { Some(self.regs(&args[1], out)?) } else { None };
        let arg = match args.get(if and_fill { 2 } else { 1 }) {
            Some(x) => {
                let r = self.scalar(x, out)?;
                let s = scalar_of(&x.ty, self.tables).unwrap_or(Scalar::UShort);
                self.convert_regs(&[r], s, Scalar::UInt, out)[0]
            }
            None => self.const_scalar(ConstValue::Int(0), Scalar::UInt),
        };
        let at = self.access(span, name);
        let mut res = Vec::new();
        for (k, comp) in a.iter().enumerate() {
            let dst = self.reg_for(ty);
            let fill = fill.as_ref().map(|f| f[k.min(f.len() - 1)]).unwrap_or(*comp);
            out.push(Inst::Lane { op, quad, ty: src_ty, dst, a: *comp, arg, fill, at });
            res.push(dst);
        }
        Ok(Val::Regs(res))
    }

    /// `__os_log(format index, values...)`.
    fn log_call(&mut self, args: &[hir::Expr], span: Span, out: &mut Block) -> LResult<Val> {
        let index = match args.first().map(|a| &a.kind) {
            Some(msl::hir::ExprKind::Const(c)) => c.as_i64() as usize,
            _ => return err(span, "internal error: a log call without its format"),
        };
        let Some(f) = self.prog.log_formats.get(index) else { return err(span, "internal error: unknown log format") };
        let site = std::sync::Arc::new(f.clone());
        let mut values = Vec::new();
        for a in &args[1..] {
            let kind = match &a.ty {
                Type::Pointer { .. } | Type::NullPtr => crate::probe::ProbeKind::Pointer,
                t => crate::probe::ProbeKind::Value(super::scalar_of(t, self.tables).unwrap_or(Scalar::Int)),
            };
            values.push((kind, self.scalar(a, out)?));
        }
        out.push(Inst::Log { site, args: values });
        Ok(Val::Regs(Vec::new()))
    }

    /// `ldexp`, `ilogb`, and the functions with an out parameter (`frexp`,
    /// `modf`, `sincos`), whose second result is written to a place.
    fn special(&mut self, op: SpecialFn, id: BuiltinId, args: &[hir::Expr], ret: &Type, span: Span, out: &mut Block) -> LResult<Val> {
        let elem = args.first().and_then(|a| scalar_of(&a.ty, self.tables)).unwrap_or(Scalar::Float);
        let (rs, _) = components(ret, self.tables).unwrap_or((elem, 1));
        match op {
            SpecialFn::Ldexp => {
                let regs = self.arg_regs(args, out)?;
                let mut res = Vec::new();
                for k in 0..regs[0].len() {
                    let dst = self.reg_for(rs);
                    let e = regs[1][k.min(regs[1].len() - 1)];
                    out.push(Inst::Special { op, func: id, ty: elem, dst: vec![dst], args: vec![regs[0][k], e] });
                    res.push(dst);
                }
                Ok(Val::Regs(res))
            }
            SpecialFn::Ilogb => {
                let x = self.regs(&args[0], out)?;
                let mut res = Vec::new();
                for &x in &x {
                    let dst = self.reg32();
                    out.push(Inst::Special { op, func: id, ty: elem, dst: vec![dst], args: vec![x] });
                    res.push(dst);
                }
                Ok(Val::Regs(res))
            }
            SpecialFn::Frexp | SpecialFn::Modf | SpecialFn::Sincos => {
                // The out parameter is only written: reading it here would be
                // a false uninitialized read.
                let x = self.regs(&args[0], out)?;
                let out_place = self.place(&args[1], out)?;
                let second_ty = args[1].ty.clone();
                let (ss, _) = components(&second_ty, self.tables).unwrap_or((elem, 1));
                let mut res = Vec::new();
                let mut second = Vec::new();
                for &x in &x {
                    let d1 = self.reg_for(rs);
                    let d2 = self.reg_for(ss);
                    out.push(Inst::Special { op, func: id, ty: elem, dst: vec![d1, d2], args: vec![x] });
                    res.push(d1);
                    second.push(d2);
                }
                let at = self.access(span, id.name());
                self.write(&out_place, &Val::Regs(second), &second_ty, at, out)?;
                Ok(Val::Regs(res))
            }
        }
    }

    fn atomic(&mut self, op: AtomicOp, args: &[hir::Expr], ret: &Type, span: Span, out: &mut Block) -> LResult<Val> {
        let ptr = self.scalar(&args[0], out)?;
        let (ty, space) = match &args[0].ty {
            Type::Pointer { pointee, space, .. } => match &**pointee {
                Type::Atomic(s) => (*s, *space),
                _ => return err(span, "atomic operation on a non-atomic pointer"),
            },
            _ => return err(span, "atomic operation needs a pointer"),
        };
        let zero = self.const_scalar(ConstValue::Int(0), ty);
        let (a, b) = match op {
            AtomicOp::Load => (zero, zero),
            AtomicOp::CompareExchange => {
                // (object, thread T* expected, T desired, order, order)
                let expected = self.scalar(&args[1], out)?;
                let desired = self.regs(&args[2], out)?[0];
                (expected, desired)
            }
            _ => (self.regs(&args[1], out)?[0], zero),
        };
        for extra in args.iter().skip(match op {
            AtomicOp::Load => 1,
            AtomicOp::CompareExchange => 3,
            _ => 2,
        }) {
            self.expr(extra, out)?;
        }
        let dst = match ret {
            Type::Scalar(s) => self.reg_for(*s),
            _ => self.reg_for(ty),
        };
        // (Named after the atomic object, as the messages about it need.)
        let at = self.access(span, super::expr::describe(self, &args[0]));
        self.device_atomics |= space != AddressSpace::Threadgroup;
        out.push(Inst::Atomic { op, ty, dst, ptr, space, a, b, at });
        Ok(Val::Regs(if *ret == Type::Void { Vec::new() } else { vec![dst] }))
    }

    #[allow(clippy::too_many_arguments)]
    fn matrix(&mut self, op: MatrixFn, name: &str, args: &[hir::Expr], ret: &Type, span: Span, out: &mut Block) -> LResult<Val> {
        self.uses_lanes = true;
        let at = self.access(span, name);
        match op {
            MatrixFn::Fill | MatrixFn::Diagonal => {
                let Type::SimdMatrix { elem, .. } = ret else { return err(span, "bad matrix type") };
                let v = self.scalar(&args[0], out)?;
                let dst = vec![self.reg32(), self.reg32()];
                out.push(Inst::Matrix {
                    op: if op == MatrixFn::Diagonal { MatrixOp::Diagonal } else { MatrixOp::Fill },
                    ty: *elem,
                    dst: dst.clone(),
                    args: vec![v],
                    mats: Vec::new(),
                    space: AddressSpace::Thread,
                    at,
                });
                Ok(Val::Regs(dst))
            }
            MatrixFn::Load | MatrixFn::Store => {
                let load = op == MatrixFn::Load;
                let mat_place = self.place(&args[0], out)?;
                let Type::SimdMatrix { elem, .. } = args[0].ty.strip_ref().clone() else { return err(span, "bad matrix") };
                let ptr = self.scalar(&args[1], out)?;
                let space = match &args[1].ty {
                    Type::Pointer { space, .. } => *space,
                    _ => AddressSpace::Device,
                };
                let stride = match args.get(2) {
                    Some(a) => {
                        let r = self.scalar(a, out)?;
                        let s = scalar_of(&a.ty, self.tables).unwrap_or(Scalar::ULong);
                        self.convert_regs(&[r], s, Scalar::ULong, out)[0]
                    }
                    None => self.const_scalar(ConstValue::Int(8), Scalar::ULong),
                };
                let (ox, oy) = match args.get(3) {
                    Some(a) => {
                        let r = self.regs(a, out)?;
                        let s = scalar_of(&a.ty, self.tables).unwrap_or(Scalar::ULong);
                        let c = self.convert_regs(&r, s, Scalar::ULong, out);
                        (c[0], c[c.len().min(2) - 1])
                    }
                    None => {
                        let z = self.const_scalar(ConstValue::Int(0), Scalar::ULong);
                        (z, z)
                    }
                };
                let transpose = match args.get(4) {
                    Some(a) => match &a.kind {
                        hir::ExprKind::Const(v) => v.is_true(),
                        _ => return err(a.span, "the simulator needs `transpose` to be a constant"),
                    },
                    None => false,
                };
                let mat_ty = args[0].ty.strip_ref().clone();
                // A matrix in memory (an array element, a struct member, one
                // whose address was taken) goes through registers.
                let regs = match &mat_place {
                    Place::Regs(r) => r.clone(),
                    _ if load => vec![self.reg_for(elem), self.reg_for(elem)],
                    _ => match self.read(&mat_place, &mat_ty, at, out)? {
                        Val::Regs(r) => r,
                        _ => return err(span, "internal error: matrix not readable"),
                    },
                };
                if load {
                    out.push(Inst::Matrix {
                        op: MatrixOp::Load { transpose },
                        ty: elem,
                        dst: regs.clone(),
                        args: vec![ptr, stride, ox, oy],
                        mats: Vec::new(),
                        space,
                        at,
                    });
                    if !matches!(mat_place, Place::Regs(_)) {
                        self.write(&mat_place, &Val::Regs(regs), &mat_ty, at, out)?;
                    }
                } else {
                    out.push(Inst::Matrix {
                        op: MatrixOp::Store { transpose },
                        ty: elem,
                        dst: Vec::new(),
                        args: vec![ptr, stride, ox, oy],
                        mats: vec![regs],
                        space,
                        at,
                    });
                }
                Ok(Val::Regs(Vec::new()))
            }
            MatrixFn::Multiply | MatrixFn::MultiplyAccumulate => {
                let d = self.place(&args[0], out)?;
                let Type::SimdMatrix { elem, .. } = args[0].ty.strip_ref().clone() else { return err(span, "bad matrix") };
                let mut mats = Vec::new();
                for a in &args[1..] {
                    mats.push(self.regs(a, out)?);
                }
                let tmp = vec![self.reg32(), self.reg32()];
                let op = if op == MatrixFn::Multiply { MatrixOp::Multiply } else { MatrixOp::MultiplyAccumulate };
                out.push(Inst::Matrix { op, ty: elem, dst: tmp.clone(), args: Vec::new(), mats, space: AddressSpace::Thread, at });
                let mat_ty = args[0].ty.strip_ref().clone();
                self.write(&d, &Val::Regs(tmp), &mat_ty, at, out)?;
                Ok(Val::Regs(Vec::new()))
            }
        }
    }
}
