//! Lowering calls to the Metal standard library.

use super::{components, err, scalar_of, LResult, Lowerer, Place, Val};
use crate::ir::*;
use msl::ast::{AddressSpace, BinaryOp};
use msl::hir::{self, ConstValue};
use msl::source::Span;
use msl::types::{Scalar, Type};

impl<'p> Lowerer<'p> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn builtin(
        &mut self,
        name: &'static str,
        fast: bool,
        args: &[hir::Expr],
        param_types: &[Type],
        ret: &Type,
        span: Span,
        out: &mut Block,
    ) -> LResult<Val> {
        let _ = param_types;
        // Functions whose arguments are not plain values come first.
        match name {
            "threadgroup_barrier" | "simdgroup_barrier" => {
                let flags = self.scalar(&args[0], out)?;
                let at = self.access(span, name);
                out.push(Inst::Barrier { simdgroup: name == "simdgroup_barrier", flags, at });
                return Ok(Val::Regs(Vec::new()));
            }
            "__os_log" => {
                let index = match args.first().map(|a| &a.kind) {
                    Some(msl::hir::ExprKind::Const(c)) => c.as_i64() as usize,
                    _ => return super::err(span, "internal error: a log call without its format"),
                };
                let Some(f) = self.prog.log_formats.get(index) else { return super::err(span, "internal error: unknown log format") };
                let (format, level) = (std::sync::Arc::from(f.text.as_str()), f.level);
                let mut values = Vec::new();
                for a in &args[1..] {
                    let kind = match &a.ty {
                        Type::Pointer { .. } | Type::NullPtr => crate::probe::ProbeKind::Pointer,
                        t => crate::probe::ProbeKind::Value(super::scalar_of(t, self.tables).unwrap_or(Scalar::Int)),
                    };
                    values.push((kind, self.scalar(a, out)?));
                }
                out.push(Inst::Log { format, level, args: values });
                return Ok(Val::Regs(Vec::new()));
            }
            "atomic_thread_fence" => {
                for a in args {
                    self.expr(a, out)?;
                }
                return Ok(Val::Regs(Vec::new()));
            }
            _ => {}
        }
        if let Some(op) = atomic_op(name) {
            return self.atomic(op, args, ret, span, out);
        }
        if matches!(name, "__matrix_multiply" | "transpose" | "determinant") {
            return self.linalg(name, args, span, out);
        }
        if name.starts_with("simdgroup_") || matches!(name, "make_filled_simdgroup_matrix" | "__simdgroup_diagonal") {
            return self.matrix(name, args, ret, span, out);
        }
        if let Some((op, quad)) = lane_op(name) {
            self.uses_lanes = true;
            let ty =
                scalar_of(ret, self.tables).or_else(|| args.first().and_then(|a| scalar_of(&a.ty, self.tables))).unwrap_or(Scalar::UInt);
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
            return Ok(Val::Regs(res));
        }
        // Everything else works on register values, except the out
        // parameter of `frexp(x, e)`, `modf(x, ip)` and `sincos(x, c)`: it is
        // only written, so reading it here would be a false uninitialized read.
        let out_param = matches!(name, "frexp" | "modf" | "sincos") && args.len() == 2;
        let mut vals = Vec::with_capacity(args.len());
        for a in if out_param { &args[..1] } else { args } {
            vals.push(self.expr(a, out)?);
        }
        let regs: Vec<Vec<Reg>> = vals
            .iter()
            .map(|v| match v {
                Val::Regs(r) => r.clone(),
                Val::Mem { ptr, .. } => vec![*ptr],
            })
            .collect();
        let arg_ty = |i: usize| args.get(i).map(|a| a.ty.clone()).unwrap_or(Type::Void);
        let elem = args.first().and_then(|a| scalar_of(&a.ty, self.tables)).unwrap_or(Scalar::Float);
        let (rs, rn) = components(ret, self.tables).unwrap_or((Scalar::Float, 0));
        match name {
            "select" => {
                // select(a, b, c) = c ? b : a, per component.
                let n = regs[0].len().max(regs[1].len());
                let mut res = Vec::new();
                for k in 0..n {
                    let dst = self.reg_for(rs);
                    let c = regs[2][k.min(regs[2].len() - 1)];
                    out.push(Inst::Select { dst, cond: c, a: regs[1][k.min(regs[1].len() - 1)], b: regs[0][k.min(regs[0].len() - 1)] });
                    res.push(dst);
                }
                return Ok(Val::Regs(res));
            }
            "all" | "any" => {
                let op = if name == "all" { BinaryOp::BitAnd } else { BinaryOp::BitOr };
                let mut acc = regs[0][0];
                for r in &regs[0][1..] {
                    let d = self.reg32();
                    out.push(Inst::Binary { op, ty: Scalar::Bool, dst: d, a: acc, b: *r, at: 0 });
                    acc = d;
                }
                return Ok(Val::Regs(vec![acc]));
            }
            "dot" | "length" | "length_squared" | "distance" | "distance_squared" | "normalize" | "cross" | "reflect" | "refract"
            | "faceforward" => {
                let dst: Vec<Reg> = (0..rn).map(|_| self.reg_for(rs)).collect();
                out.push(Inst::Geometric { name, ty: elem, dst: dst.clone(), args: regs });
                return Ok(Val::Regs(dst));
            }
            "ldexp" | "frexp" | "modf" | "sincos" | "ilogb" => {
                return self.special(name, elem, args, &vals, &regs, ret, span, out);
            }
            _ => {}
        }
        let _ = arg_ty;
        // Component-wise functions: find the scalar implementation.
        let f = if elem.is_float() && !matches!(name, "abs" if !elem.is_float()) {
            // The element kind picks functions that depend on its own spacing,
            // range or rounding (nextafter, isnormal, fma).
            let kind = elem.float_kind();
            match regs.len() {
                1 => gpu_math::float_unary(name, fast)
                    .map(MathFn::F1)
                    .or_else(|| gpu_math::float_predicate_in(kind, name).map(MathFn::FPred)),
                2 => {
                    gpu_math::float_binary_in(kind, name, fast).map(MathFn::F2).or_else(|| gpu_math::float_relation(name).map(MathFn::FRel))
                }
                3 => gpu_math::float_ternary_in(kind, name, fast).map(MathFn::F3),
                _ => None,
            }
        } else {
            match regs.len() {
                1 => gpu_math::int_unary(name).map(MathFn::I1),
                2 => gpu_math::int_binary(name).map(MathFn::I2),
                3 => gpu_math::int_ternary(name).map(MathFn::I3),
                _ => None,
            }
        };
        let Some(f) = f else {
            return err(span, format!("the simulator does not implement `{name}` for these argument types yet"));
        };
        let n = regs.iter().map(|r| r.len()).max().unwrap_or(1);
        let mut res = Vec::with_capacity(n);
        for k in 0..n {
            let dst = self.reg_for(rs);
            let a: Vec<Reg> = regs.iter().map(|r| r[k.min(r.len() - 1)]).collect();
            out.push(Inst::Math { f, ty: elem, dst, args: a, name });
            res.push(dst);
        }
        Ok(Val::Regs(res))
    }

    #[allow(clippy::too_many_arguments)]
    fn special(
        &mut self,
        name: &'static str,
        elem: Scalar,
        args: &[hir::Expr],
        vals: &[Val],
        regs: &[Vec<Reg>],
        ret: &Type,
        span: Span,
        out: &mut Block,
    ) -> LResult<Val> {
        let (rs, rn) = components(ret, self.tables).unwrap_or((elem, 1));
        let n = regs[0].len();
        match name {
            "ldexp" => {
                let mut res = Vec::new();
                for k in 0..n {
                    let dst = self.reg_for(rs);
                    out.push(Inst::Special { name, ty: elem, dst: vec![dst], args: vec![regs[0][k], regs[1][k.min(regs[1].len() - 1)]] });
                    res.push(dst);
                }
                Ok(Val::Regs(res))
            }
            "ilogb" => {
                let mut res = Vec::new();
                for &x in &regs[0] {
                    let dst = self.reg32();
                    out.push(Inst::Special { name, ty: elem, dst: vec![dst], args: vec![x] });
                    res.push(dst);
                }
                Ok(Val::Regs(res))
            }
            // Functions with an out parameter (a place): result and second part.
            "frexp" | "modf" | "sincos" => {
                let out_place = self.place(&args[1], out)?;
                let second_ty = args[1].ty.clone();
                let (ss, _) = components(&second_ty, self.tables).unwrap_or((elem, 1));
                let mut res = Vec::new();
                let mut second = Vec::new();
                for &x in &regs[0] {
                    let d1 = self.reg_for(rs);
                    let d2 = self.reg_for(ss);
                    out.push(Inst::Special { name, ty: elem, dst: vec![d1, d2], args: vec![x] });
                    res.push(d1);
                    second.push(d2);
                }
                let at = self.access(span, name);
                self.write(&out_place, &Val::Regs(second), &second_ty, at, out)?;
                let _ = (vals, rn);
                Ok(Val::Regs(res))
            }
            _ => err(span, format!("`{name}` is not implemented")),
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

    fn matrix(&mut self, name: &str, args: &[hir::Expr], ret: &Type, span: Span, out: &mut Block) -> LResult<Val> {
        self.uses_lanes = true;
        let at = self.access(span, name);
        match name {
            "make_filled_simdgroup_matrix" | "__simdgroup_diagonal" => {
                let Type::SimdMatrix { elem, .. } = ret else { return err(span, "bad matrix type") };
                let v = self.scalar(&args[0], out)?;
                let dst = vec![self.reg32(), self.reg32()];
                out.push(Inst::Matrix {
                    op: if name == "__simdgroup_diagonal" { MatrixOp::Diagonal } else { MatrixOp::Fill },
                    ty: *elem,
                    dst: dst.clone(),
                    args: vec![v],
                    mats: Vec::new(),
                    space: AddressSpace::Thread,
                    at,
                });
                Ok(Val::Regs(dst))
            }
            "simdgroup_load" | "simdgroup_store" => {
                let load = name == "simdgroup_load";
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
            "simdgroup_multiply" | "simdgroup_multiply_accumulate" => {
                let d = self.place(&args[0], out)?;
                let Type::SimdMatrix { elem, .. } = args[0].ty.strip_ref().clone() else { return err(span, "bad matrix") };
                let mut mats = Vec::new();
                for a in &args[1..] {
                    mats.push(self.regs(a, out)?);
                }
                let tmp = vec![self.reg32(), self.reg32()];
                let op = if name == "simdgroup_multiply" { MatrixOp::Multiply } else { MatrixOp::MultiplyAccumulate };
                out.push(Inst::Matrix { op, ty: elem, dst: tmp.clone(), args: Vec::new(), mats, space: AddressSpace::Thread, at });
                let mat_ty = args[0].ty.strip_ref().clone();
                self.write(&d, &Val::Regs(tmp), &mat_ty, at, out)?;
                Ok(Val::Regs(Vec::new()))
            }
            _ => err(span, format!("`{name}` is not implemented by the simulator yet")),
        }
    }
}

fn atomic_op(name: &str) -> Option<AtomicOp> {
    Some(match name {
        "atomic_load_explicit" => AtomicOp::Load,
        "atomic_store_explicit" => AtomicOp::Store,
        "atomic_exchange_explicit" => AtomicOp::Exchange,
        "atomic_compare_exchange_weak_explicit" | "atomic_compare_exchange_strong_explicit" => AtomicOp::CompareExchange,
        "atomic_fetch_add_explicit" => AtomicOp::Add,
        "atomic_fetch_sub_explicit" => AtomicOp::Sub,
        "atomic_fetch_and_explicit" => AtomicOp::And,
        "atomic_fetch_or_explicit" => AtomicOp::Or,
        "atomic_fetch_xor_explicit" => AtomicOp::Xor,
        "atomic_fetch_min_explicit" | "atomic_min_explicit" => AtomicOp::Min,
        "atomic_fetch_max_explicit" | "atomic_max_explicit" => AtomicOp::Max,
        _ => return None,
    })
}

fn lane_op(name: &str) -> Option<(LaneOp, bool)> {
    let (quad, rest) = if let Some(r) = name.strip_prefix("simd_") {
        (false, r)
    } else if let Some(r) = name.strip_prefix("quad_") {
        (true, r)
    } else {
        return None;
    };
    let op = match rest {
        "sum" => LaneOp::Sum,
        "product" => LaneOp::Product,
        "min" => LaneOp::Min,
        "max" => LaneOp::Max,
        "and" => LaneOp::And,
        "or" => LaneOp::Or,
        "xor" => LaneOp::Xor,
        "prefix_inclusive_sum" => LaneOp::PrefixInclusiveSum,
        "prefix_exclusive_sum" => LaneOp::PrefixExclusiveSum,
        "prefix_inclusive_product" => LaneOp::PrefixInclusiveProduct,
        "prefix_exclusive_product" => LaneOp::PrefixExclusiveProduct,
        "broadcast" => LaneOp::Broadcast,
        "broadcast_first" => LaneOp::BroadcastFirst,
        "shuffle" => LaneOp::Shuffle,
        "shuffle_xor" => LaneOp::ShuffleXor,
        "shuffle_up" => LaneOp::ShuffleUp,
        "shuffle_down" => LaneOp::ShuffleDown,
        "shuffle_rotate_up" => LaneOp::ShuffleRotateUp,
        "shuffle_rotate_down" => LaneOp::ShuffleRotateDown,
        "shuffle_and_fill_up" => LaneOp::ShuffleAndFillUp,
        "shuffle_and_fill_down" => LaneOp::ShuffleAndFillDown,
        "all" => LaneOp::All,
        "any" => LaneOp::Any,
        "ballot" => LaneOp::Ballot,
        "active_threads_mask" => LaneOp::ActiveMask,
        "is_first" => LaneOp::IsFirst,
        _ => return None,
    };
    Some((op, quad))
}
