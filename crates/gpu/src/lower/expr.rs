//! Lowering expressions: places (memory or registers), values, calls.

use super::{components, const_bits, err, scalar_of, Frame, LResult, Lowerer, Place, Storage, Val};
use crate::ir::*;
use crate::memory::AllocId;
use msl::ast::{AddressSpace, BinaryOp};
use msl::hir::{self, ConstValue, ExprKind as H};
use msl::source::Span;
use msl::types::{Scalar, Type};

impl<'p> Lowerer<'p> {
    /// Program-scope constants become read-only memory.
    pub(super) fn lower_constants(&mut self) -> LResult<()> {
        for (i, g) in self.prog.globals.iter().enumerate() {
            let size = self.tables.size_of(&g.ty).max(1) as usize;
            let mut bytes = vec![0u8; size];
            self.const_into(&g.init, &g.ty, &mut bytes, 0)?;
            let align = self.tables.align_of(&g.ty) as u32;
            self.constants
                .push((MemVar { name: g.name.clone(), size: size as u32, align, span: g.span, grain: 1, dims: Vec::new() }, bytes));
            self.global_ids.insert(i as u32, i as u32);
        }
        Ok(())
    }

    fn const_into(&self, e: &hir::Expr, ty: &Type, buf: &mut [u8], at: usize) -> LResult<()> {
        let put = |buf: &mut [u8], at: usize, s: Scalar, v: ConstValue| {
            let bits = const_bits(v, s);
            let bytes = scalar_bytes(bits, s);
            if at + bytes.len() <= buf.len() {
                buf[at..at + bytes.len()].copy_from_slice(&bytes);
            }
        };
        match (&e.kind, ty) {
            (H::Zero, _) => Ok(()),
            // A table of functions: each entry the function's number + 1.
            (H::FuncRef(f), Type::FnPtr { .. }) => {
                put(buf, at, Scalar::ULong, ConstValue::UInt(f.0 as u64 + 1));
                Ok(())
            }
            (H::Const(v), t) => {
                let s = scalar_of(t, self.tables).unwrap_or(Scalar::Int);
                put(buf, at, s, *v);
                Ok(())
            }
            (H::Convert(x), Type::Vector { elem, len, .. }) if x.ty.is_scalar() => {
                if let H::Const(v) = x.kind {
                    for k in 0..*len as usize {
                        put(buf, at + k * elem.size() as usize, *elem, v);
                    }
                    return Ok(());
                }
                err(e.span, "program-scope constant initializer is not constant")
            }
            (H::Construct(parts), Type::Vector { elem, .. } | Type::Matrix { elem, .. }) => {
                let mut k = 0usize;
                for p in parts {
                    match (&p.kind, &p.ty) {
                        (H::Const(v), _) => {
                            put(buf, at + k * elem.size() as usize, *elem, *v);
                            k += 1;
                        }
                        (_, Type::Vector { len, .. }) => {
                            let mut tmp = vec![0u8; self.tables.size_of(&p.ty) as usize];
                            self.const_into(p, &p.ty, &mut tmp, 0)?;
                            let n = *len as usize * elem.size() as usize;
                            let dst = at + k * elem.size() as usize;
                            if dst + n <= buf.len() {
                                buf[dst..dst + n].copy_from_slice(&tmp[..n]);
                            }
                            k += *len as usize;
                        }
                        _ => return err(p.span, "program-scope constant initializer is not constant"),
                    }
                }
                Ok(())
            }
            (H::Aggregate(items), Type::Array { elem, .. }) => {
                let es = self.tables.size_of(elem) as usize;
                for (i, it) in items.iter().enumerate() {
                    self.const_into(it, elem, buf, at + i * es)?;
                }
                Ok(())
            }
            (H::Aggregate(items), Type::Struct(id)) => {
                let def = self.tables.struct_def(*id);
                for (it, f) in items.iter().zip(&def.fields) {
                    self.const_into(it, &f.ty, buf, at + f.offset as usize)?;
                }
                Ok(())
            }
            // Static storage starts zeroed: a member left unset stays zero.
            (H::Uninit, _) => Ok(()),
            (H::ArrayInit { items, rest }, Type::Array { elem, len }) => {
                let es = self.tables.size_of(elem) as usize;
                for i in 0..*len as usize {
                    self.const_into(items.get(i).unwrap_or(rest), elem, buf, at + i * es)?;
                }
                Ok(())
            }
            (H::Global(g), _) => {
                let (_, bytes) = &self.constants[g.0 as usize];
                let n = bytes.len().min(buf.len().saturating_sub(at));
                buf[at..at + n].copy_from_slice(&bytes[..n]);
                Ok(())
            }
            _ => err(e.span, "the simulator cannot evaluate this program-scope initializer"),
        }
    }

    // ----- values -----------------------------------------------------------

    /// Lower an expression whose value is one register (scalars, pointers).
    pub(super) fn scalar(&mut self, e: &hir::Expr, out: &mut Block) -> LResult<Reg> {
        match self.expr(e, out)? {
            Val::Regs(r) if r.len() == 1 => Ok(r[0]),
            _ => err(e.span, "internal error: expected a scalar value"),
        }
    }

    pub(super) fn regs(&mut self, e: &hir::Expr, out: &mut Block) -> LResult<Vec<Reg>> {
        match self.expr(e, out)? {
            Val::Regs(r) => Ok(r),
            Val::Mem { .. } => err(e.span, "internal error: expected a register value"),
        }
    }

    pub(super) fn expr(&mut self, e: &hir::Expr, out: &mut Block) -> LResult<Val> {
        self.check_size(e.span)?;
        // The HIR's depth follows the source's (a long chain of `+` is a
        // deep tree): grow the stack on the heap instead of overflowing it.
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.expr_inner(e, out))
    }

    fn expr_inner(&mut self, e: &hir::Expr, out: &mut Block) -> LResult<Val> {
        let span = e.span;
        match &e.kind {
            H::Const(v) => {
                let s = scalar_of(&e.ty, self.tables).unwrap_or(Scalar::Int);
                Ok(Val::Regs(vec![self.const_scalar(*v, s)]))
            }
            H::Zero => self.zero_value(&e.ty, span, out),
            // A scalar program-scope constant is its value: no memory access.
            H::Global(g) if e.ty.is_scalar() && matches!(self.prog.globals[g.0 as usize].init.kind, H::Const(_)) => {
                let H::Const(v) = self.prog.globals[g.0 as usize].init.kind else { unreachable!() };
                let s = scalar_of(&e.ty, self.tables).unwrap_or(Scalar::Int);
                Ok(Val::Regs(vec![self.const_scalar(v, s)]))
            }
            H::Local(_) | H::Global(_) | H::Deref(_) | H::Index { .. } | H::Field { .. } | H::Swizzle { .. } => {
                let p = self.place(e, out)?;
                let at = self.access(span, describe(self, e));
                self.read(&p, &e.ty, at, out)
            }
            H::AddrOf(x) => {
                let p = self.place(x, out)?;
                match p {
                    Place::Mem { ptr, .. } => Ok(Val::Regs(vec![ptr])),
                    _ => err(span, "internal error: address of a register variable"),
                }
            }
            H::PtrOffset { ptr, offset, negate } => {
                let p = self.scalar(ptr, out)?;
                let i = self.scalar(offset, out)?;
                let its = scalar_of(&offset.ty, self.tables).unwrap_or(Scalar::Int);
                let size = match &ptr.ty {
                    Type::Pointer { pointee, .. } => self.tables.size_of(pointee) as i64,
                    _ => 1,
                };
                let dst = self.reg64();
                out.push(Inst::PtrIndex { dst, ptr: p, index: i, index_ty: its, scale: if *negate { -size } else { size } });
                Ok(Val::Regs(vec![dst]))
            }
            H::PtrDiff { lhs, rhs } => {
                let a = self.scalar(lhs, out)?;
                let b = self.scalar(rhs, out)?;
                let size = match &lhs.ty {
                    Type::Pointer { pointee, .. } => self.tables.size_of(pointee).max(1) as i64,
                    _ => 1,
                };
                let dst = self.reg64();
                out.push(Inst::PtrDiff { dst, a, b, scale: size });
                Ok(Val::Regs(vec![dst]))
            }
            H::PtrCompare { op, lhs, rhs } => {
                let a = self.scalar(lhs, out)?;
                let b = self.scalar(rhs, out)?;
                let dst = self.reg32();
                out.push(Inst::Compare { op: *op, ty: Scalar::ULong, dst, a, b });
                Ok(Val::Regs(vec![dst]))
            }
            H::Unary { op, operand } => {
                let xs = self.regs(operand, out)?;
                let s = scalar_of(&e.ty, self.tables).unwrap_or(Scalar::Int);
                let op = match op {
                    hir::UnaryOp::Neg => UnOp::Neg,
                    hir::UnaryOp::Not => UnOp::Not,
                    hir::UnaryOp::BitNot => UnOp::BitNot,
                };
                let mut res = Vec::with_capacity(xs.len());
                for a in xs {
                    let dst = self.reg_for(s);
                    out.push(Inst::Unary { op, ty: s, dst, a });
                    res.push(dst);
                }
                Ok(Val::Regs(res))
            }
            H::Binary { op, lhs, rhs } => {
                let a = self.regs(lhs, out)?;
                let b = self.regs(rhs, out)?;
                let s = scalar_of(&lhs.ty, self.tables).unwrap_or(Scalar::Int);
                let at = self.access(span, op.as_str());
                Ok(Val::Regs(self.binary(*op, s, &a, &b, at, out)))
            }
            H::Logical { and, lhs, rhs } => {
                let l = self.scalar(lhs, out)?;
                let res = self.reg32();
                out.push(Inst::Copy { dst: res, src: l });
                let mut inner = Vec::new();
                let r = self.scalar(rhs, &mut inner)?;
                inner.push(Inst::Assign { dst: res, src: r });
                if *and {
                    let at = self.access(span, "&&");
                    out.push(Inst::If { cond: l, then: inner, els: Vec::new(), at });
                } else {
                    let at = self.access(span, "||");
                    out.push(Inst::If { cond: l, then: Vec::new(), els: inner, at });
                }
                Ok(Val::Regs(vec![res]))
            }
            H::Assign { place, value } => {
                let p = self.place(place, out)?;
                let v = self.expr(value, out)?;
                let at = self.access(span, describe(self, place));
                self.write(&p, &v, &place.ty, at, out)?;
                Ok(v)
            }
            H::CompoundAssign { op, place, value, op_ty } => {
                let p = self.place(place, out)?;
                let at = self.access(span, describe(self, place));
                let old = self.read(&p, &place.ty, at, out)?;
                let Val::Regs(old) = old else { return err(span, "compound assignment on an aggregate") };
                let rhs = self.regs(value, out)?;
                let new = if let Type::Pointer { pointee, .. } = &place.ty {
                    let size = self.tables.size_of(pointee) as i64;
                    let dst = self.reg64();
                    let its = scalar_of(&value.ty, self.tables).unwrap_or(Scalar::Int);
                    out.push(Inst::PtrIndex {
                        dst,
                        ptr: old[0],
                        index: rhs[0],
                        index_ty: its,
                        scale: if *op == BinaryOp::Sub { -size } else { size },
                    });
                    vec![dst]
                } else {
                    let pt = scalar_of(&place.ty, self.tables).unwrap_or(Scalar::Int);
                    let ot = scalar_of(op_ty, self.tables).unwrap_or(pt);
                    let conv = self.convert_regs(&old, pt, ot, out);
                    let rhs = if rhs.len() == 1 && conv.len() > 1 { vec![rhs[0]; conv.len()] } else { rhs };
                    let opat = self.access(span, op.as_str());
                    let r = self.binary(*op, ot, &conv, &rhs, opat, out);
                    self.convert_regs(&r, ot, pt, out)
                };
                let v = Val::Regs(new);
                self.write(&p, &v, &place.ty, at, out)?;
                Ok(v)
            }
            H::IncDec { place, increment, prefix } => {
                let p = self.place(place, out)?;
                let at = self.access(span, describe(self, place));
                let old = self.read(&p, &place.ty, at, out)?;
                let Val::Regs(old) = old else { return err(span, "++/-- on an aggregate") };
                // Keep a copy of the old value: the variable is about to change.
                let saved: Vec<Reg> = old
                    .iter()
                    .map(|r| {
                        let d = match r {
                            Reg::W32(_) => self.reg32(),
                            Reg::W64(_) => self.reg64(),
                        };
                        out.push(Inst::Copy { dst: d, src: *r });
                        d
                    })
                    .collect();
                let new: Vec<Reg> = if let Type::Pointer { pointee, .. } = &place.ty {
                    let size = self.tables.size_of(pointee) as i64;
                    let dst = self.reg64();
                    out.push(Inst::PtrAdd { dst, ptr: saved[0], bytes: if *increment { size } else { -size } });
                    vec![dst]
                } else {
                    let s = scalar_of(&place.ty, self.tables).unwrap_or(Scalar::Int);
                    let one = self.const_scalar(ConstValue::Int(1), s);
                    let op = if *increment { BinaryOp::Add } else { BinaryOp::Sub };
                    let ones = vec![one; saved.len()];
                    self.binary(op, s, &saved, &ones, at, out)
                };
                self.write(&p, &Val::Regs(new.clone()), &place.ty, at, out)?;
                Ok(Val::Regs(if *prefix { new } else { saved }))
            }
            H::Conditional { cond, then, els } => {
                let c = self.scalar(cond, out)?;
                match components(&e.ty, self.tables) {
                    Some((s, n)) => {
                        let res: Vec<Reg> = (0..n).map(|_| self.reg_for(s)).collect();
                        let mut tb = Vec::new();
                        let tv = self.regs(then, &mut tb)?;
                        for (d, s) in res.iter().zip(&tv) {
                            tb.push(Inst::Assign { dst: *d, src: *s });
                        }
                        let mut eb = Vec::new();
                        let ev = self.regs(els, &mut eb)?;
                        for (d, s) in res.iter().zip(&ev) {
                            eb.push(Inst::Assign { dst: *d, src: *s });
                        }
                        let at = self.access(cond.span, "?:");
                        out.push(Inst::If { cond: c, then: tb, els: eb, at });
                        Ok(Val::Regs(res))
                    }
                    None => {
                        let tmp = self.temp_mem(&e.ty, span);
                        let mut tb = Vec::new();
                        self.store_expr_into(&tmp, then, &mut tb)?;
                        let mut eb = Vec::new();
                        self.store_expr_into(&tmp, els, &mut eb)?;
                        let at = self.access(cond.span, "?:");
                        out.push(Inst::If { cond: c, then: tb, els: eb, at });
                        let Place::Mem { ptr, space, .. } = tmp else { unreachable!() };
                        Ok(Val::Mem { ptr, space })
                    }
                }
            }
            H::Comma { lhs, rhs } => {
                self.expr(lhs, out)?;
                self.expr(rhs, out)
            }
            H::Convert(x) => {
                let xs = self.regs(x, out)?;
                let from = scalar_of(&x.ty, self.tables).unwrap_or(Scalar::Int);
                let (to, n) = components(&e.ty, self.tables).unwrap_or((Scalar::Int, 1));
                let conv = self.convert_regs(&xs, from, to, out);
                // A scalar converted to a vector splats.
                if conv.len() == 1 && n > 1 {
                    Ok(Val::Regs(vec![conv[0]; n]))
                } else {
                    Ok(Val::Regs(conv))
                }
            }
            H::PtrCast(x) => {
                let v = self.expr(x, out)?;
                match (&x.ty, &e.ty) {
                    // Pointers and 64-bit integers share their bits (the address).
                    (Type::Pointer { .. } | Type::NullPtr, _) | (_, Type::Pointer { .. }) => Ok(v),
                    _ => {
                        // enum <-> integer casts: convert between the underlying types.
                        let Val::Regs(xs) = v else { return Ok(v) };
                        let from = scalar_of(&x.ty, self.tables).unwrap_or(Scalar::Int);
                        let to = scalar_of(&e.ty, self.tables).unwrap_or(Scalar::Int);
                        Ok(Val::Regs(self.convert_regs(&xs, from, to, out)))
                    }
                }
            }
            H::BitCast(x) => {
                let xs = self.regs(x, out)?;
                let from = scalar_of(&x.ty, self.tables).unwrap_or(Scalar::UInt);
                let (to, n) = components(&e.ty, self.tables).unwrap_or((Scalar::UInt, 1));
                // 3-component vectors occupy 4 slots: pad or drop the last.
                let dst: Vec<Reg> = (0..n).map(|_| self.reg_for(to)).collect();
                out.push(Inst::BitCast { dst: dst.clone(), dst_ty: to, src: xs, src_ty: from });
                Ok(Val::Regs(dst))
            }
            H::Construct(parts) => {
                let mut regs = Vec::new();
                for p in parts {
                    regs.extend(self.regs(p, out)?);
                }
                Ok(Val::Regs(regs))
            }
            // Only an aggregate item (handled by `store_expr_into`); as a
            // value it is some value of its type.
            H::Uninit => self.zero_value(&e.ty, span, out),
            H::Aggregate(_) | H::ArrayInit { .. } => {
                let tmp = self.temp_mem(&e.ty, span);
                self.store_expr_into(&tmp, e, out)?;
                let Place::Mem { ptr, space, .. } = tmp else { unreachable!() };
                Ok(Val::Mem { ptr, space })
            }
            H::Call { func, args } => self.call(*func, args, &e.ty, span, out),
            H::CallPtr { callee, args } => match self.static_fn(callee) {
                Some(f) => self.call(f, args, &e.ty, span, out),
                None => self.call_dynamic(callee, args, &e.ty, span, out),
            },
            H::FuncRef(f) => Ok(Val::Regs(vec![self.const_reg(f.0 as u64 + 1, true)])),
            H::Builtin { id, fast, args, .. } => self.builtin(*id, *fast, args, &e.ty, span, out),
        }
    }

    fn zero_value(&mut self, ty: &Type, span: Span, out: &mut Block) -> LResult<Val> {
        match components(ty, self.tables) {
            Some((s, n)) => {
                let z = self.const_scalar(ConstValue::Int(0), s);
                Ok(Val::Regs(vec![z; n]))
            }
            None => {
                let tmp = self.temp_mem(ty, span);
                self.zero_fill(&tmp, ty, out)?;
                let Place::Mem { ptr, space, .. } = tmp else { unreachable!() };
                Ok(Val::Mem { ptr, space })
            }
        }
    }

    /// A fresh per-thread memory temporary of type `ty`.
    pub(super) fn temp_mem(&mut self, ty: &Type, span: Span) -> Place {
        let size = self.tables.size_of(ty).max(1) as u32;
        let align = self.tables.align_of(ty).max(1) as u32;
        self.private_vars.push(MemVar { name: "(temporary)".into(), size, align, span, grain: 1, dims: Vec::new() });
        let ptr = self.const_ptr(AllocId::private(self.private_vars.len() as u32 - 1), 0);
        Place::Mem { ptr, space: AddressSpace::Thread, ty: ty.clone() }
    }

    pub(super) fn convert_regs(&mut self, xs: &[Reg], from: Scalar, to: Scalar, out: &mut Block) -> Vec<Reg> {
        if from == to {
            return xs.to_vec();
        }
        xs.iter()
            .map(|&src| {
                let dst = self.reg_for(to);
                out.push(Inst::Convert { from, to, dst, src });
                dst
            })
            .collect()
    }

    /// Component-wise binary operator; a single-register side splats.
    pub(super) fn binary(&mut self, op: BinaryOp, s: Scalar, a: &[Reg], b: &[Reg], at: AccessId, out: &mut Block) -> Vec<Reg> {
        let n = a.len().max(b.len());
        let mut res = Vec::with_capacity(n);
        for k in 0..n {
            let (x, y) = (a[k.min(a.len() - 1)], b[k.min(b.len() - 1)]);
            if op.is_comparison() {
                let dst = self.reg32();
                out.push(Inst::Compare { op, ty: s, dst, a: x, b: y });
                res.push(dst);
            } else {
                let dst = self.reg_for(s);
                out.push(Inst::Binary { op, ty: s, dst, a: x, b: y, at });
                res.push(dst);
            }
        }
        res
    }

    // ----- places -------------------------------------------------------------

    pub(super) fn place(&mut self, e: &hir::Expr, out: &mut Block) -> LResult<Place> {
        let span = e.span;
        match &e.kind {
            H::Local(id) => self.local_place(*id, span),
            H::Global(g) => {
                let ptr = self.const_ptr(AllocId::constant(g.0), 0);
                Ok(Place::Mem { ptr, space: AddressSpace::Constant, ty: e.ty.clone() })
            }
            H::Deref(p) => {
                let ptr = self.scalar(p, out)?;
                let space = match &p.ty {
                    Type::Pointer { space, .. } => *space,
                    _ => AddressSpace::Thread,
                };
                Ok(Place::Mem { ptr, space, ty: e.ty.clone() })
            }
            H::Field { base, field } => {
                let b = self.place_or_temp(base, out)?;
                let Type::Struct(sid) = &base.ty else { return err(span, "field of a non-struct") };
                let f = &self.tables.struct_def(*sid).fields[*field as usize];
                match b {
                    Place::Mem { ptr, space, .. } => {
                        let dst = if f.offset == 0 {
                            ptr
                        } else {
                            let d = self.reg64();
                            out.push(Inst::PtrAdd { dst: d, ptr, bytes: f.offset as i64 });
                            d
                        };
                        Ok(Place::Mem { ptr: dst, space, ty: f.ty.clone() })
                    }
                    _ => err(span, "internal error: struct in registers"),
                }
            }
            H::Index { base, index } => {
                let i = self.scalar(index, out)?;
                let its = scalar_of(&index.ty, self.tables).unwrap_or(Scalar::Int);
                match &base.ty {
                    Type::Array { elem, .. } => {
                        let b = self.place_or_temp(base, out)?;
                        let Place::Mem { ptr, space, .. } = b else { return err(span, "internal error: array in registers") };
                        let dst = self.reg64();
                        out.push(Inst::PtrIndex { dst, ptr, index: i, index_ty: its, scale: self.tables.size_of(elem) as i64 });
                        Ok(Place::Mem { ptr: dst, space, ty: (**elem).clone() })
                    }
                    Type::Vector { elem, len, .. } | Type::Matrix { elem, rows: len, .. } => {
                        let is_matrix = matches!(base.ty, Type::Matrix { .. });
                        let b = self.place_or_temp(base, out)?;
                        if is_matrix {
                            // Column `i` of a matrix in memory.
                            // A matrix value in registers (a temporary): a
                            // constant column is its registers; for a column
                            // chosen at run time it is stored to memory first.
                            let b = match b {
                                Place::Regs(regs) => {
                                    if let H::Const(c) = &index.kind {
                                        let (k, rows) = (c.as_i64(), *len as usize);
                                        if let Some(col) = usize::try_from(k).ok().and_then(|k| regs.get(k * rows..(k + 1) * rows)) {
                                            return Ok(Place::Regs(col.to_vec()));
                                        }
                                    }
                                    let tmp = self.temp_mem(&base.ty, span);
                                    let at = self.access(span, "(temporary)");
                                    self.write(&tmp, &Val::Regs(regs), &base.ty, at, out)?;
                                    tmp
                                }
                                other => other,
                            };
                            let Place::Mem { ptr, space, .. } = b else {
                                return err(span, "internal error: a matrix that is neither in registers nor in memory");
                            };
                            let col = Type::vector(*elem, *len);
                            let dst = self.reg64();
                            out.push(Inst::PtrIndex { dst, ptr, index: i, index_ty: its, scale: self.tables.size_of(&col) as i64 });
                            return Ok(Place::Mem { ptr: dst, space, ty: col });
                        }
                        match b {
                            Place::Mem { ptr, space, .. } => {
                                let dst = self.reg64();
                                out.push(Inst::PtrIndex { dst, ptr, index: i, index_ty: its, scale: elem.size() as i64 });
                                Ok(Place::Mem { ptr: dst, space, ty: Type::Scalar(*elem) })
                            }
                            other => Ok(Place::DynElem { base: Box::new(other), index: i, index_ty: its, elem: *elem, len: *len }),
                        }
                    }
                    _ => err(span, "indexing an unexpected type"),
                }
            }
            H::Swizzle { base, comps } => {
                let b = self.place_or_temp(base, out)?;
                let elem = scalar_of(&base.ty, self.tables).unwrap_or(Scalar::Float);
                Ok(Place::Swizzle { base: Box::new(b), comps: comps.clone(), elem })
            }
            H::Assign { place, .. } | H::CompoundAssign { place, .. } | H::IncDec { place, .. } => {
                self.expr(e, out)?;
                self.place(place, out)
            }
            _ => {
                // An rvalue used as a place (e.g. a member of a returned struct).
                let v = self.expr(e, out)?;
                match v {
                    Val::Mem { ptr, space } => Ok(Place::Mem { ptr, space, ty: e.ty.clone() }),
                    Val::Regs(r) => Ok(Place::Regs(r)),
                }
            }
        }
    }

    fn place_or_temp(&mut self, e: &hir::Expr, out: &mut Block) -> LResult<Place> {
        self.place(e, out)
    }

    /// Read a place of type `ty`.
    pub(super) fn read(&mut self, p: &Place, ty: &Type, at: AccessId, out: &mut Block) -> LResult<Val> {
        match p {
            Place::Regs(r) => Ok(Val::Regs(r.clone())),
            Place::Mem { ptr, space, .. } => match components(ty, self.tables) {
                Some((s, n)) => {
                    let es = s.size() as i64;
                    let mut regs = Vec::with_capacity(n);
                    for k in 0..n {
                        let addr = if k == 0 {
                            *ptr
                        } else {
                            let d = self.reg64();
                            let off = self.component_offset(ty, k) as i64;
                            let _ = es;
                            out.push(Inst::PtrAdd { dst: d, ptr: *ptr, bytes: off });
                            d
                        };
                        let dst = self.reg_for(s);
                        out.push(Inst::Load { dst, ty: s, ptr: addr, space: *space, at });
                        regs.push(dst);
                    }
                    Ok(Val::Regs(regs))
                }
                _ => Ok(Val::Mem { ptr: *ptr, space: *space }),
            },
            Place::Swizzle { base, comps, elem } if matches!(**base, Place::Mem { .. }) => {
                // Only the components named are read (`p.w` reads 4 bytes, not
                // the whole vector: the sanitizer must see exactly that).
                let Place::Mem { ptr, space, .. } = **base else { unreachable!("matched above") };
                let mut loaded: Vec<(u8, Reg)> = Vec::new();
                let mut regs = Vec::with_capacity(comps.len());
                for &c in comps {
                    if let Some(&(_, r)) = loaded.iter().find(|(k, _)| *k == c) {
                        regs.push(r);
                        continue;
                    }
                    let addr = if c == 0 {
                        ptr
                    } else {
                        let d = self.reg64();
                        out.push(Inst::PtrAdd { dst: d, ptr, bytes: c as i64 * elem.size() as i64 });
                        d
                    };
                    let dst = self.reg_for(*elem);
                    out.push(Inst::Load { dst, ty: *elem, ptr: addr, space, at });
                    loaded.push((c, dst));
                    regs.push(dst);
                }
                Ok(Val::Regs(regs))
            }
            Place::Swizzle { base, comps, .. } => {
                let bty = self.swizzle_base_type(ty, comps);
                let Val::Regs(b) = self.read(base, &bty, at, out)? else { return err(Span::default(), "swizzle of aggregate") };
                Ok(Val::Regs(comps.iter().map(|&c| b[(c as usize).min(b.len() - 1)]).collect()))
            }
            Place::DynElem { base, index, index_ty, elem, len } => {
                let vty = Type::vector(*elem, *len);
                let Val::Regs(b) = self.read(base, &vty, at, out)? else { return err(Span::default(), "dynamic element of aggregate") };
                // Select the component whose number equals the index.
                let mut acc = b[0];
                for (k, r) in b.iter().enumerate().skip(1) {
                    let kc = self.const_scalar(ConstValue::Int(k as i64), *index_ty);
                    let c = self.reg32();
                    out.push(Inst::Compare { op: BinaryOp::Eq, ty: *index_ty, dst: c, a: *index, b: kc });
                    let d = self.reg_for(*elem);
                    out.push(Inst::Select { dst: d, cond: c, a: *r, b: acc });
                    acc = d;
                }
                Ok(Val::Regs(vec![acc]))
            }
        }
    }

    /// The type a swizzle reads from (enough components for the largest).
    fn swizzle_base_type(&self, ty: &Type, comps: &[u8]) -> Type {
        let elem = scalar_of(ty, self.tables).unwrap_or(Scalar::Float);
        let n = comps.iter().copied().max().unwrap_or(0) + 1;
        Type::vector(elem, n.max(2))
    }

    /// Byte offset of component `k` of a vector/matrix type in memory.
    fn component_offset(&self, ty: &Type, k: usize) -> u32 {
        match ty {
            Type::Matrix { elem, rows, .. } => {
                let col = self.tables.size_of(&Type::vector(*elem, *rows)) as usize;
                ((k / *rows as usize) * col + (k % *rows as usize) * elem.size() as usize) as u32
            }
            // A thread's share of a SIMD-group matrix: two elements, as `vec<T, 2>`.
            Type::SimdMatrix { elem, .. } => (k as u32) * elem.size(),
            t => (k as u32) * scalar_of(t, self.tables).map(|s| s.size()).unwrap_or(8),
        }
    }

    /// Fresh registers holding copies of `regs` (same widths).
    pub(super) fn copy_regs(&mut self, regs: &[Reg], out: &mut Block) -> Vec<Reg> {
        regs.iter()
            .map(|&src| {
                let dst = match src {
                    Reg::W32(_) => self.reg32(),
                    Reg::W64(_) => self.reg64(),
                };
                out.push(Inst::Copy { dst, src });
                dst
            })
            .collect()
    }

    /// Write a value into a place of type `ty`.
    pub(super) fn write(&mut self, p: &Place, v: &Val, ty: &Type, at: AccessId, out: &mut Block) -> LResult<()> {
        // A value read from the very registers being written (`d.yw = d.wy`)
        // must be copied first, or the first write would clobber it.
        let copied;
        let v = match (p, v) {
            (Place::Regs(_) | Place::Swizzle { .. } | Place::DynElem { .. }, Val::Regs(src))
                if src.iter().any(|r| place_regs(p).contains(r)) =>
            {
                copied = Val::Regs(self.copy_regs(src, out));
                &copied
            }
            _ => v,
        };
        match (p, v) {
            (Place::Regs(dst), Val::Regs(src)) => {
                for (d, s) in dst.iter().zip(src.iter().cycle()) {
                    out.push(Inst::Assign { dst: *d, src: *s });
                }
                Ok(())
            }
            (Place::Mem { ptr, space, .. }, Val::Regs(src)) => {
                let (s, n) = components(ty, self.tables).unwrap_or((Scalar::Int, 1));
                for k in 0..n {
                    let addr = if k == 0 {
                        *ptr
                    } else {
                        let d = self.reg64();
                        out.push(Inst::PtrAdd { dst: d, ptr: *ptr, bytes: self.component_offset(ty, k) as i64 });
                        d
                    };
                    let src_reg = src[k.min(src.len() - 1)];
                    out.push(Inst::Store { src: src_reg, ty: s, ptr: addr, space: *space, at });
                }
                Ok(())
            }
            (Place::Mem { ptr, space, .. }, Val::Mem { ptr: sp, space: ss }) => {
                let bytes = self.tables.size_of(ty) as u32;
                let align = self.tables.align_of(ty) as u32;
                out.push(Inst::MemCopy { dst: *ptr, src: *sp, bytes, align, dst_space: *space, src_space: *ss, at });
                Ok(())
            }
            (Place::Swizzle { base, comps, elem }, Val::Regs(src)) => match &**base {
                Place::Regs(dst) => {
                    for (k, &c) in comps.iter().enumerate() {
                        out.push(Inst::Assign { dst: dst[c as usize], src: src[k.min(src.len() - 1)] });
                    }
                    Ok(())
                }
                Place::Mem { ptr, space, .. } => {
                    for (k, &c) in comps.iter().enumerate() {
                        let addr = if c == 0 {
                            *ptr
                        } else {
                            let d = self.reg64();
                            out.push(Inst::PtrAdd { dst: d, ptr: *ptr, bytes: c as i64 * elem.size() as i64 });
                            d
                        };
                        out.push(Inst::Store { src: src[k.min(src.len() - 1)], ty: *elem, ptr: addr, space: *space, at });
                    }
                    Ok(())
                }
                _ => err(Span::default(), "nested swizzle writes are not supported"),
            },
            (Place::DynElem { base, index, index_ty, elem, len }, Val::Regs(src)) => {
                let Place::Regs(dst) = &**base else { return err(Span::default(), "dynamic element write") };
                for (k, &old) in dst.iter().enumerate().take(*len as usize) {
                    let kc = self.const_scalar(ConstValue::Int(k as i64), *index_ty);
                    let c = self.reg32();
                    out.push(Inst::Compare { op: BinaryOp::Eq, ty: *index_ty, dst: c, a: *index, b: kc });
                    let d = self.reg_for(*elem);
                    out.push(Inst::Select { dst: d, cond: c, a: src[0], b: old });
                    out.push(Inst::Assign { dst: old, src: d });
                }
                Ok(())
            }
            _ => err(Span::default(), "internal error: value and place do not match"),
        }
    }

    /// Initialize a place from an expression, writing aggregates member by
    /// member (so `{...}` never needs a temporary).
    pub(super) fn store_expr_into(&mut self, p: &Place, e: &hir::Expr, out: &mut Block) -> LResult<()> {
        match (&e.kind, p) {
            (H::Aggregate(items), Place::Mem { ptr, space, ty }) => {
                let ty = ty.clone();
                match &ty {
                    Type::Array { elem, len } => {
                        let es = self.tables.size_of(elem) as i64;
                        for i in 0..*len as usize {
                            self.check_size(e.span)?;
                            let sub = self.offset_place(*ptr, *space, elem, i as i64 * es, out);
                            match items.get(i) {
                                Some(it) => self.store_expr_into(&sub, it, out)?,
                                None => self.zero_fill(&sub, elem, out)?,
                            }
                        }
                        Ok(())
                    }
                    // A union's members share its bytes: store the values
                    // given (one, or a default member initializer), zero all
                    // when none is.
                    Type::Struct(sid) if self.tables.struct_def(*sid).is_union => {
                        if items.is_empty() {
                            return self.zero_fill(p, &ty, out);
                        }
                        let fields = self.tables.struct_def(*sid).fields.clone();
                        for (f, it) in fields.iter().zip(items) {
                            let sub = self.offset_place(*ptr, *space, &f.ty, 0, out);
                            self.store_expr_into(&sub, it, out)?;
                        }
                        Ok(())
                    }
                    Type::Struct(sid) => {
                        let fields = self.tables.struct_def(*sid).fields.clone();
                        for (i, f) in fields.iter().enumerate() {
                            let sub = self.offset_place(*ptr, *space, &f.ty, f.offset as i64, out);
                            match items.get(i) {
                                Some(it) => self.store_expr_into(&sub, it, out)?,
                                None => self.zero_fill(&sub, &f.ty, out)?,
                            }
                        }
                        Ok(())
                    }
                    _ => err(e.span, "internal error: aggregate of a non-aggregate type"),
                }
            }
            (H::ArrayInit { items, rest }, Place::Mem { ptr, space, ty: Type::Array { elem, len } }) => {
                let (elem, len) = ((**elem).clone(), *len);
                let es = self.tables.size_of(&elem) as i64;
                for i in 0..len as usize {
                    self.check_size(e.span)?;
                    let sub = self.offset_place(*ptr, *space, &elem, i as i64 * es, out);
                    self.store_expr_into(&sub, items.get(i).unwrap_or(rest), out)?;
                }
                Ok(())
            }
            (H::Uninit, _) => Ok(()),
            (H::Zero, Place::Mem { ty, .. }) if components(ty, self.tables).is_none() => {
                let ty = ty.clone();
                self.zero_fill(p, &ty, out)
            }
            _ => {
                let v = self.expr(e, out)?;
                let at = self.access(e.span, "initializer");
                self.write(p, &v, &e.ty, at, out)
            }
        }
    }

    fn offset_place(&mut self, ptr: Reg, space: AddressSpace, ty: &Type, offset: i64, out: &mut Block) -> Place {
        let p = if offset == 0 {
            ptr
        } else {
            let d = self.reg64();
            out.push(Inst::PtrAdd { dst: d, ptr, bytes: offset });
            d
        };
        Place::Mem { ptr: p, space, ty: ty.clone() }
    }

    pub(super) fn zero_fill(&mut self, p: &Place, ty: &Type, out: &mut Block) -> LResult<()> {
        let Place::Mem { ptr, space, .. } = p else {
            let v = self.zero_value(ty, Span::default(), out)?;
            return self.write(p, &v, ty, 0, out);
        };
        match ty {
            Type::Array { elem, len } => {
                let es = self.tables.size_of(elem) as i64;
                for i in 0..*len as i64 {
                    self.check_size(self.stmt_span)?;
                    let sub = self.offset_place(*ptr, *space, elem, i * es, out);
                    self.zero_fill(&sub, elem, out)?;
                }
                Ok(())
            }
            Type::Struct(sid) => {
                let fields = self.tables.struct_def(*sid).fields.clone();
                for f in &fields {
                    let sub = self.offset_place(*ptr, *space, &f.ty, f.offset as i64, out);
                    self.zero_fill(&sub, &f.ty, out)?;
                }
                Ok(())
            }
            t => {
                let v = self.zero_value(t, Span::default(), out)?;
                let at = self.access(Span::default(), "zero initializer");
                self.write(p, &v, t, at, out)
            }
        }
    }

    // ----- calls ------------------------------------------------------------------

    fn call(&mut self, func: hir::FuncId, args: &[hir::Expr], ret_ty: &Type, span: Span, out: &mut Block) -> LResult<Val> {
        if self.frames.len() > 64 {
            return err(span, "calls are nested too deeply to inline");
        }
        self.inlined_calls += 1;
        self.check_size(span)?;
        // Evaluate arguments in the caller's frame; a function pointer
        // argument known now, to a parameter the callee never changes, is
        // the function it names.
        self.compute_addr_taken(func);
        let callee = self.prog.function(func);
        let mut vals = Vec::with_capacity(args.len());
        for (a, p) in args.iter().zip(&callee.params) {
            let fixed = || !self.assigned.get(&func).is_some_and(|s| s.contains(&p.local));
            vals.push(match self.static_fn(a).filter(|_| matches!(a.ty, Type::FnPtr { .. }) && fixed()) {
                Some(f) => Err(f),
                None => Ok(self.expr(a, out)?),
            });
        }
        let ret = self.return_slot(ret_ty, span);
        // Recursion is unrolled: each level is inlined again, up to a depth
        // and a total that keep the emitted code small. A call past them
        // becomes a run-time stop, reported only if a thread reaches it.
        if self.frames.iter().any(|f| f.func == func) {
            let depth = self.frames.iter().filter(|f| f.func == func).count() as u32;
            if self.recursive_inlines >= super::MAX_RECURSIVE_INLINES {
                self.recursion_overflowed = true;
            }
            if depth >= self.recursion_depth || self.recursion_overflowed {
                let at = self.access(span, format!("`{}`", callee.name));
                out.push(Inst::RecursionTooDeep { at, limit: self.recursion_depth });
                return slot_value(ret, span);
            }
            self.recursive_inlines += 1;
        }
        self.frames.push(Frame { func, locals: vec![Storage::Unset; callee.locals.len()], visible: Vec::new(), ret: ret.clone() });
        let mut body = Vec::new();
        for (p, v) in callee.params.iter().zip(vals) {
            let v = match v {
                Ok(v) => v,
                Err(f) => {
                    self.bind_fn(p.local, f);
                    continue;
                }
            };
            let place = self.declare_local(p.local, span)?;
            let ty = callee.local(p.local).ty.clone();
            let at = self.access(span, "argument");
            self.write(&place, &v, &ty, at, &mut body)?;
        }
        let stmts = self.stmts(&callee.body);
        self.frames.pop();
        body.extend(stmts?);
        if ret.is_some() && !msl::check::stmt_always_returns(&callee.body, self.tables) {
            let end = callee.span.hi.max(callee.span.lo + 1);
            let at = self.access(Span::new(callee.span.file, end - 1, end), format!("`{}`", callee.name));
            body.push(Inst::NoReturn { at });
        }
        out.push(Inst::Scope { body });
        slot_value(ret, span)
    }

    /// Where a call's value goes: registers, or memory for an aggregate
    /// (`None` for `void`).
    fn return_slot(&mut self, ret_ty: &Type, span: Span) -> Option<Place> {
        match components(ret_ty, self.tables) {
            _ if *ret_ty == Type::Void => None,
            Some((s, n)) => Some(Place::Regs((0..n).map(|_| self.reg_for(s)).collect())),
            None => Some(self.temp_mem(ret_ty, span)),
        }
    }
}

/// The value a call left in its return slot.
fn slot_value(ret: Option<Place>, span: Span) -> LResult<Val> {
    match ret {
        None => Ok(Val::Regs(Vec::new())),
        Some(Place::Regs(r)) => Ok(Val::Regs(r)),
        Some(Place::Mem { ptr, space, .. }) => Ok(Val::Mem { ptr, space }),
        Some(_) => err(span, "internal error: return slot"),
    }
}

impl Lowerer<'_> {
    /// The function a function pointer expression holds when it is known
    /// at compile time (a function named, a parameter or local bound to
    /// one); `None` for one held at run time.
    pub(super) fn static_fn(&self, e: &hir::Expr) -> Option<hir::FuncId> {
        match &e.kind {
            H::FuncRef(f) => Some(*f),
            H::Local(l) => match self.frame().locals.get(l.0 as usize) {
                Some(Storage::Func(f)) => Some(*f),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether the current function assigns local `id` (or takes its address).
    pub(super) fn is_assigned(&mut self, id: hir::LocalId) -> bool {
        let f = self.frame().func;
        self.compute_addr_taken(f);
        self.assigned.get(&f).is_some_and(|s| s.contains(&id))
    }

    /// The functions whose address the program takes, with type `ty`: what
    /// a pointer of that type can hold.
    fn fn_targets_of(&mut self, ty: &Type) -> Vec<hir::FuncId> {
        let prog = self.prog;
        let all = self.fn_targets.get_or_insert_with(|| {
            let mut found: Vec<(Type, hir::FuncId)> = Vec::new();
            let mut note = |e: &hir::Expr| {
                fn walk(e: &hir::Expr, found: &mut Vec<(Type, hir::FuncId)>) {
                    if let H::FuncRef(f) = &e.kind {
                        if !found.iter().any(|(t, g)| g == f && *t == e.ty) {
                            found.push((e.ty.clone(), *f));
                        }
                    }
                    super::visit_children(e, &mut |c| walk(c, found));
                }
                walk(e, &mut found);
            };
            for f in &prog.functions {
                super::visit_stmts(&f.body, &mut note);
            }
            for g in &prog.globals {
                note(&g.init);
            }
            found.sort_by_key(|x| x.1 .0);
            found
        });
        all.iter().filter(|(t, _)| t == ty).map(|x| x.1).collect()
    }

    /// A call through a function pointer held at run time: each lane calls
    /// the function its pointer holds, one of those whose address the
    /// program takes (a `switch` over them); any other value stops the run
    /// with a finding, as a jump to a bad address would fault.
    fn call_dynamic(&mut self, callee: &hir::Expr, args: &[hir::Expr], ret_ty: &Type, span: Span, out: &mut Block) -> LResult<Val> {
        let which = self.scalar(callee, out)?;
        let ret = self.return_slot(ret_ty, span);
        let mut cases = Vec::new();
        for f in self.fn_targets_of(&callee.ty) {
            self.check_size(span)?;
            let mut body = Vec::new();
            let v = self.call(f, args, ret_ty, span, &mut body)?;
            if let Some(place) = &ret {
                let at = self.access(span, "the returned value");
                self.write(place, &v, ret_ty, at, &mut body)?;
            }
            body.push(Inst::Break);
            cases.push((vec![f.0 as u64 + 1], false, body));
        }
        let at = self.access(span, "call through a function pointer");
        cases.push((Vec::new(), true, vec![Inst::BadCall { at }, Inst::Break]));
        out.push(Inst::Switch { value: which, ty: Scalar::ULong, cases });
        slot_value(ret, span)
    }

    /// Bind function pointer local `id` of the current frame to `f`.
    pub(super) fn bind_fn(&mut self, id: hir::LocalId, f: hir::FuncId) {
        if let Some(frame) = self.frames.last_mut() {
            frame.locals[id.0 as usize] = Storage::Func(f);
        }
    }
}

/// The registers a register-resident place writes.
fn place_regs(p: &Place) -> Vec<Reg> {
    match p {
        Place::Regs(r) => r.clone(),
        Place::Swizzle { base, .. } | Place::DynElem { base, .. } => place_regs(base),
        Place::Mem { .. } => Vec::new(),
    }
}

/// Little-endian bytes of a register value stored as type `s`.
pub(crate) fn scalar_bytes(bits: u64, s: Scalar) -> Vec<u8> {
    match s {
        Scalar::Half => half::f16::from_f32(f32::from_bits(bits as u32)).to_bits().to_le_bytes().to_vec(),
        Scalar::BFloat => half::bf16::from_f32(f32::from_bits(bits as u32)).to_bits().to_le_bytes().to_vec(),
        _ => bits.to_le_bytes()[..s.size() as usize].to_vec(),
    }
}

/// A short description of what a place expression touches, for messages.
pub(super) fn describe(l: &Lowerer, e: &hir::Expr) -> String {
    match &e.kind {
        H::Local(id) => l.func().local(*id).name.clone(),
        H::Global(g) => l.prog.globals[g.0 as usize].name.clone(),
        H::Deref(p) => match &p.kind {
            H::PtrOffset { ptr, .. } => describe(l, ptr),
            H::Local(_) => describe(l, p),
            _ => describe(l, p),
        },
        H::Index { base, .. } => describe(l, base),
        H::Field { base, field } => {
            let fname = match &base.ty {
                Type::Struct(s) => l.tables.struct_def(*s).fields.get(*field as usize).map(|f| f.name.clone()).unwrap_or_default(),
                _ => String::new(),
            };
            format!("{}.{}", describe(l, base), fname)
        }
        H::Swizzle { base, .. } => describe(l, base),
        H::PtrOffset { ptr, .. } | H::PtrCast(ptr) => describe(l, ptr),
        H::AddrOf(x) => describe(l, x),
        _ => "value".into(),
    }
}
