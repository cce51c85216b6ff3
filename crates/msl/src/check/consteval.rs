//! Compile-time evaluation of `constexpr` function calls.
//!
//! Template arguments, array sizes and `static_assert`s may call `constexpr`
//! functions (`div_ceil<8, sizeof(T)>()`). This module runs such a call on the
//! checked HIR of the function: scalar locals, loops, `if`, `switch`,
//! assignments and nested `constexpr` calls. Anything else (memory, vectors,
//! built-ins with side effects) makes the call "not a constant", which the
//! caller reports as such. A step budget and a call-depth cap keep hostile
//! input from hanging the front end.

use super::fold::{fold_binary, fold_with};
use super::Checker;
use crate::hir::{self, ConstValue, ExprKind as H, FuncId, LocalId, StmtKind};
use crate::types::{Scalar, Type};

/// Most statements and expressions one top-level evaluation may visit.
const MAX_STEPS: u32 = 1_000_000;
/// Deepest nesting of `constexpr` calls.
const MAX_CALL_DEPTH: u32 = 64;

/// Evaluate `func(args)` at compile time; `None` if it is not a constant.
pub(crate) fn call(c: &Checker, func: FuncId, args: &[ConstValue]) -> Option<ConstValue> {
    let mut ev = Eval { c, steps: 0, depth: 0, object: None };
    ev.call(func, args)
}

/// Run the `constexpr` constructor `func` at compile time on an object of
/// struct type `sid`: `args` are the constructor's arguments after `this`
/// (`None` for one that is not a scalar constant; reading it makes the call
/// not a constant). Returns the value of every field, or `None` when a field
/// is left unset, is not a scalar, or the body does anything else.
pub(crate) fn construct(c: &Checker, func: FuncId, sid: crate::types::StructId, args: &[Option<ConstValue>]) -> Option<Vec<ConstValue>> {
    if !c.constexpr_fns.contains(&func) {
        return None;
    }
    let f = c.functions.get(func.0 as usize)?.as_ref()?;
    let (this, rest) = f.params.split_first()?;
    if rest.len() != args.len() {
        return None;
    }
    let def = c.tables.struct_def(sid);
    let field_scalars: Vec<Scalar> = def.fields.iter().map(|fd| scalar_of(&fd.ty)).collect::<Option<_>>()?;
    let mut frame = Frame { func: f, locals: vec![None; f.locals.len()] };
    for (p, v) in rest.iter().zip(args) {
        let s = scalar_of(&f.local(p.local).ty);
        frame.locals[p.local.0 as usize] = match (s, v) {
            (Some(s), Some(v)) => Some(v.cast(s)),
            _ => None,
        };
    }
    let mut ev = Eval { c, steps: 0, depth: 1, object: Some((this.local, vec![None; field_scalars.len()])) };
    match ev.stmts(&mut frame, &f.body)? {
        Flow::Next | Flow::Return(None) => {}
        _ => return None,
    }
    let (_, fields) = ev.object?;
    fields.into_iter().zip(field_scalars).map(|(v, s)| v.map(|v| v.cast(s))).collect()
}

struct Eval<'c, 'a, 'd> {
    c: &'c Checker<'a, 'd>,
    steps: u32,
    depth: u32,
    /// While a constructor runs (`construct`): its `this` parameter and the
    /// fields stored so far.
    object: Option<(LocalId, Vec<Option<ConstValue>>)>,
}

/// How a statement finished.
enum Flow {
    Next,
    Break,
    Continue,
    Return(Option<ConstValue>),
}

struct Frame<'f> {
    func: &'f hir::Function,
    locals: Vec<Option<ConstValue>>,
}

fn scalar_of(ty: &Type) -> Option<Scalar> {
    match ty {
        Type::Scalar(s) => Some(*s),
        _ => None,
    }
}

impl Eval<'_, '_, '_> {
    fn tick(&mut self) -> Option<()> {
        self.steps += 1;
        (self.steps <= MAX_STEPS).then_some(())
    }

    fn call(&mut self, func: FuncId, args: &[ConstValue]) -> Option<ConstValue> {
        if !self.c.constexpr_fns.contains(&func) || self.depth >= MAX_CALL_DEPTH {
            return None;
        }
        let f = self.c.functions.get(func.0 as usize)?.as_ref()?;
        if f.params.len() != args.len() {
            return None;
        }
        let mut frame = Frame { func: f, locals: vec![None; f.locals.len()] };
        for (p, v) in f.params.iter().zip(args) {
            let s = scalar_of(&f.local(p.local).ty)?;
            frame.locals[p.local.0 as usize] = Some(v.cast(s));
        }
        self.depth += 1;
        // A called function never sees the caller's object under construction.
        let object = self.object.take();
        let flow = self.stmts(&mut frame, &f.body);
        self.object = object;
        self.depth -= 1;
        match flow? {
            Flow::Return(Some(v)) => Some(v.cast(scalar_of(&f.ret)?)),
            _ => None,
        }
    }

    fn stmts(&mut self, fr: &mut Frame, stmts: &[hir::Stmt]) -> Option<Flow> {
        for s in stmts {
            match self.stmt(fr, s)? {
                Flow::Next => {}
                other => return Some(other),
            }
        }
        Some(Flow::Next)
    }

    fn stmt(&mut self, fr: &mut Frame, s: &hir::Stmt) -> Option<Flow> {
        self.tick()?;
        match &s.kind {
            StmtKind::Expr(e) => {
                self.expr(fr, e)?;
            }
            StmtKind::Local { local, init } => {
                let sc = scalar_of(&fr.func.local(*local).ty)?;
                let v = match init {
                    Some(e) => Some(self.expr(fr, e)?.cast(sc)),
                    None => None,
                };
                fr.locals[local.0 as usize] = v;
            }
            StmtKind::Block(b) => return self.stmts(fr, b),
            StmtKind::If { cond, then, els } => {
                let branch = if self.expr(fr, cond)?.is_true() { then } else { els };
                return self.stmts(fr, branch);
            }
            StmtKind::Loop { cond, body, step, check_first } => {
                let mut first = true;
                loop {
                    self.tick()?;
                    if let Some(cond) = cond {
                        if (*check_first || !first) && !self.expr(fr, cond)?.is_true() {
                            break;
                        }
                    }
                    first = false;
                    match self.stmts(fr, body)? {
                        Flow::Break => break,
                        Flow::Return(v) => return Some(Flow::Return(v)),
                        Flow::Next | Flow::Continue => {}
                    }
                    if let Some(step) = step {
                        self.expr(fr, step)?;
                    }
                }
            }
            StmtKind::Switch { cond, cases } => {
                let v = self.expr(fr, cond)?.as_i64();
                let start = cases.iter().position(|k| k.values.contains(&v)).or_else(|| cases.iter().position(|k| k.is_default));
                if let Some(start) = start {
                    for case in &cases[start..] {
                        match self.stmts(fr, &case.body)? {
                            Flow::Next => {}
                            Flow::Break => break,
                            other => return Some(other),
                        }
                    }
                }
            }
            // Only a run on the simulated GPU records probes.
            StmtKind::Probe { .. } => {}
            StmtKind::Break => return Some(Flow::Break),
            StmtKind::Continue => return Some(Flow::Continue),
            StmtKind::Return(e) => {
                let v = match e {
                    Some(e) => Some(self.expr(fr, e)?),
                    None => None,
                };
                return Some(Flow::Return(v));
            }
        }
        Some(Flow::Next)
    }

    fn local_of(place: &hir::Expr) -> Option<LocalId> {
        match &place.kind {
            H::Local(id) => Some(*id),
            _ => None,
        }
    }

    /// `this->field` of the object under construction: the field's index.
    fn this_field(&self, place: &hir::Expr) -> Option<usize> {
        let (this, _) = self.object.as_ref()?;
        let H::Field { base, field } = &place.kind else { return None };
        let H::Deref(p) = &base.kind else { return None };
        (Self::local_of(p)? == *this).then_some(*field as usize)
    }

    fn store(&mut self, fr: &mut Frame, place: &hir::Expr, v: ConstValue) -> Option<ConstValue> {
        if let Some(i) = self.this_field(place) {
            let v = v.cast(scalar_of(&place.ty)?);
            *self.object.as_mut()?.1.get_mut(i)? = Some(v);
            return Some(v);
        }
        let id = Self::local_of(place)?;
        let v = v.cast(scalar_of(&place.ty)?);
        fr.locals[id.0 as usize] = Some(v);
        Some(v)
    }

    fn expr(&mut self, fr: &mut Frame, e: &hir::Expr) -> Option<ConstValue> {
        self.tick()?;
        if let Some(i) = self.this_field(e) {
            return *self.object.as_ref()?.1.get(i)?;
        }
        match &e.kind {
            H::Local(id) => *fr.locals.get(id.0 as usize)?,
            H::Assign { place, value } => {
                let v = self.expr(fr, value)?;
                self.store(fr, place, v)
            }
            H::CompoundAssign { op, place, value, op_ty } => {
                let cur = self.expr(fr, place)?;
                let rhs = self.expr(fr, value)?;
                let os = scalar_of(op_ty)?;
                let v = fold_binary(*op, cur.cast(os), rhs, os)?;
                self.store(fr, place, v)
            }
            H::IncDec { place, increment, prefix } => {
                let cur = self.expr(fr, place)?;
                let s = scalar_of(&place.ty)?;
                let one = ConstValue::Int(1).cast(s);
                let op = if *increment { hir::BinOp::Add } else { hir::BinOp::Sub };
                let new = self.store(fr, place, fold_binary(op, cur, one, s)?)?;
                Some(if *prefix { new } else { cur })
            }
            H::Logical { and, lhs, rhs } => {
                let l = self.expr(fr, lhs)?.is_true();
                if *and != l {
                    return Some(ConstValue::Bool(l));
                }
                Some(ConstValue::Bool(self.expr(fr, rhs)?.is_true()))
            }
            H::Conditional { cond, then, els } => {
                if self.expr(fr, cond)?.is_true() {
                    self.expr(fr, then)
                } else {
                    self.expr(fr, els)
                }
            }
            H::Comma { lhs, rhs } => {
                self.expr(fr, lhs)?;
                self.expr(fr, rhs)
            }
            H::Call { func, args } => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.expr(fr, a)?);
                }
                self.call(*func, &vals)
            }
            // Pure operators: evaluate the operands here (they may read
            // locals or call functions), then fold the node itself.
            H::Unary { operand, .. } | H::Convert(operand) => {
                let v = self.expr(fr, operand)?;
                let leaf = hir::Expr { kind: H::Const(v), ty: operand.ty.clone(), span: operand.span };
                let node = hir::Expr { kind: rebuild_unary(&e.kind, leaf)?, ty: e.ty.clone(), span: e.span };
                fold_with(self.c, &node, &|_| None)
            }
            H::Binary { op, lhs, rhs } => {
                let l = self.expr(fr, lhs)?;
                let r = self.expr(fr, rhs)?;
                fold_binary(*op, l, r, lhs.ty.elem_scalar()?)
            }
            _ => {
                let locals = &fr.locals;
                fold_with(self.c, e, &|id| locals.get(id.0 as usize).copied().flatten())
            }
        }
    }
}

/// `e` with its operand replaced by `leaf` (for Unary and Convert).
fn rebuild_unary(kind: &H, leaf: hir::Expr) -> Option<H> {
    Some(match kind {
        H::Unary { op, .. } => H::Unary { op: *op, operand: Box::new(leaf) },
        H::Convert(_) => H::Convert(Box::new(leaf)),
        _ => return None,
    })
}
