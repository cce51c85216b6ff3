//! The HIR verifier: checks that a checked program keeps the promises the
//! later stages rely on. A violation is a bug of the checker, never of the
//! user's program; `compile` runs the verifier in debug builds (so every
//! test and fuzzing run checks it) and reports a violation as an internal
//! error, and the corpus tests run it on every file.
//!
//! The invariants, per [`Program`]:
//!
//! 1. **Ids resolve**: every `FuncId`, `GlobalId` and `LocalId` indexes its
//!    table; every struct and enum a type names is in `Program::types`; a
//!    field index is a field of its struct; swizzle components are inside
//!    the vector.
//! 2. **Locals are declared**: a local the program declared is a parameter
//!    or is used after its declaration statement (`StmtKind::Local`), in
//!    statement order; only the checker's own locals (`LocalOrigin::Compiler`,
//!    temporaries) may be used without one. Program-scope initializers use
//!    no locals.
//! 3. **Everything is typed**: an expression whose value is used (an
//!    operand, an argument, an initializer, an assigned value, a condition)
//!    has a type other than `void`, and no expression has a reference type
//!    (references are pointers, dereferenced on use).
//! 4. **No template remnants**: the type model cannot spell a dependent
//!    type, so a remnant of a template would be an id that resolves to
//!    nothing (1.) or a struct whose field layout disagrees with its size:
//!    every field of every struct lies inside it (offset + size <= the
//!    struct's size, a union's fields at offset 0).
//! 5. **Places where memory is written or addressed**: the target of `=`,
//!    `op=`, `++`/`--` and `&` (a reference parameter of a user function is
//!    a pointer, bound with `&`), and every argument of a builtin's
//!    non-const reference parameter, is a place (`Expr::is_place`).
//! 6. **Operand shapes**: `&&`/`||`, `if`/loop conditions are `bool`;
//!    `Deref`'s operand is a pointer; a call passes one argument per
//!    parameter (builtins: one per parameter type); `break` is inside a
//!    loop or `switch`, `continue` inside a loop; `return` has a value
//!    exactly when the function returns one; kernels return `void`.

use crate::hir::{ExprKind as E, *};
use crate::source::Span;
use crate::types::{Scalar, Type};

/// One broken invariant.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// The function it is in (`None`: program scope).
    pub function: Option<String>,
    pub span: Span,
    pub what: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.function {
            Some(name) => write!(f, "in `{name}`: {}", self.what),
            None => write!(f, "at program scope: {}", self.what),
        }
    }
}

/// Every violation of the module's invariants in `prog` (empty when it
/// keeps them all).
pub fn verify(prog: &Program) -> Vec<Violation> {
    let mut v = Verifier { prog, func: None, declared: Vec::new(), loops: 0, switches: 0, out: Vec::new() };
    for g in &prog.globals {
        v.ty(&g.ty, g.span);
        v.expr(&g.init);
    }
    for c in &prog.function_constants {
        if c.global.0 as usize >= prog.globals.len() {
            v.fail(Span::default(), format!("function constant `{}` names global #{}, which does not exist", c.name, c.global.0));
        }
    }
    for s in &prog.types.structs {
        for f in &s.fields {
            let size = prog.types.size_of(&f.ty);
            if f.offset as u64 + size > s.size as u64 || (s.is_union && f.offset != 0) {
                v.fail(
                    Span::default(),
                    format!(
                        "field `{}` of `{}` lies outside it (offset {}, size {size}, struct size {})",
                        f.name, s.name, f.offset, s.size
                    ),
                );
            }
        }
    }
    for f in &prog.functions {
        v.function(f);
    }
    v.out
}

struct Verifier<'p> {
    prog: &'p Program,
    func: Option<&'p Function>,
    /// Per local of the current function: declared (or a parameter) yet.
    declared: Vec<bool>,
    loops: u32,
    switches: u32,
    out: Vec<Violation>,
}

impl<'p> Verifier<'p> {
    fn fail(&mut self, span: Span, what: impl Into<String>) {
        self.out.push(Violation { function: self.func.map(|f| f.name.clone()), span, what: what.into() });
    }

    fn function(&mut self, f: &'p Function) {
        self.func = Some(f);
        self.declared = vec![false; f.locals.len()];
        self.loops = 0;
        self.switches = 0;
        if f.is_kernel && f.ret != Type::Void {
            self.fail(f.span, "a kernel returns a value");
        }
        for l in &f.locals {
            self.ty(&l.ty, l.span);
        }
        for p in &f.params {
            match self.declared.get_mut(p.local.0 as usize) {
                Some(d) => *d = true,
                None => self.fail(f.span, format!("parameter local #{} does not exist", p.local.0)),
            }
        }
        self.block(&f.body);
        self.func = None;
    }

    /// Struct and enum ids resolve.
    fn ty(&mut self, t: &Type, span: Span) {
        match t {
            Type::Struct(id) if id.0 as usize >= self.prog.types.structs.len() => {
                self.fail(span, format!("struct #{} does not exist", id.0))
            }
            Type::Enum(id) if id.0 as usize >= self.prog.types.enums.len() => self.fail(span, format!("enum #{} does not exist", id.0)),
            Type::Array { elem, .. } => self.ty(elem, span),
            // A pointer may point to a type that is only declared.
            Type::Pointer { .. } | Type::Reference { .. } | Type::FnPtr { .. } => {}
            _ => {}
        }
    }

    fn block(&mut self, stmts: &'p [Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn cond(&mut self, c: &'p Expr, what: &str) {
        self.expr(c);
        self.value(c);
        if c.ty != Type::BOOL {
            self.fail(c.span, format!("the condition of {what} has type `{}`, not `bool`", c.ty));
        }
    }

    fn stmt(&mut self, s: &'p Stmt) {
        match &s.kind {
            StmtKind::Expr(e) => self.expr(e),
            StmtKind::Local { local, init } => {
                if let Some(e) = init {
                    self.expr(e);
                    self.value(e);
                }
                match self.declared.get_mut(local.0 as usize) {
                    Some(d) => *d = true,
                    None => self.fail(s.span, format!("declaration of local #{}, which does not exist", local.0)),
                }
            }
            StmtKind::Block(b) => self.block(b),
            StmtKind::If { cond, then, els } => {
                self.cond(cond, "`if`");
                self.block(then);
                self.block(els);
            }
            StmtKind::Loop { cond, body, step, .. } => {
                if let Some(c) = cond {
                    self.cond(c, "a loop");
                }
                self.loops += 1;
                self.block(body);
                self.loops -= 1;
                if let Some(e) = step {
                    self.expr(e);
                }
            }
            StmtKind::Switch { cond, cases } => {
                self.expr(cond);
                self.switches += 1;
                for c in cases {
                    self.block(&c.body);
                }
                self.switches -= 1;
            }
            StmtKind::Break if self.loops + self.switches == 0 => self.fail(s.span, "`break` outside a loop or `switch`"),
            StmtKind::Continue if self.loops == 0 => self.fail(s.span, "`continue` outside a loop"),
            StmtKind::Break | StmtKind::Continue => {}
            StmtKind::Probe { exprs, .. } => {
                for e in exprs {
                    self.expr(e);
                    self.value(e);
                }
            }
            StmtKind::Return(value) => {
                let ret = self.func.map(|f| &f.ret);
                match (value, ret) {
                    (Some(e), Some(Type::Void)) => {
                        // `return f();` with `f` returning void is valid C++.
                        self.expr(e);
                        if e.ty != Type::Void {
                            self.fail(s.span, "`return` with a value in a function returning `void`");
                        }
                    }
                    (Some(e), _) => self.expr(e),
                    (None, Some(t)) if *t != Type::Void => self.fail(s.span, "`return` without a value in a function returning one"),
                    (None, _) => {}
                }
            }
        }
    }

    /// An expression whose value is used.
    fn value(&mut self, e: &Expr) {
        if e.ty == Type::Void {
            self.fail(e.span, "an expression of type `void` is used as a value");
        }
    }

    fn place(&mut self, e: &Expr, what: &str) {
        if !e.is_place() {
            self.fail(e.span, format!("{what} is not a place (a variable, element, member or dereference)"));
        }
    }

    fn expr(&mut self, e: &'p Expr) {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.expr_inner(e));
    }

    fn expr_inner(&mut self, e: &'p Expr) {
        if matches!(e.ty, Type::Reference { .. }) {
            self.fail(e.span, format!("an expression of reference type `{}`", e.ty));
        }
        self.ty(&e.ty, e.span);
        match &e.kind {
            E::Local(id) => self.local(*id, e.span),
            E::Global(id) if id.0 as usize >= self.prog.globals.len() => self.fail(e.span, format!("global #{} does not exist", id.0)),
            E::FuncRef(id) if id.0 as usize >= self.prog.functions.len() => self.fail(e.span, format!("function #{} does not exist", id.0)),
            E::Deref(p) if !matches!(p.ty, Type::Pointer { .. }) => {
                self.fail(e.span, format!("dereference of a `{}`, which is not a pointer", p.ty))
            }
            E::Field { base, field } => {
                let fields = match &base.ty {
                    Type::Struct(id) => self.prog.types.structs.get(id.0 as usize).map(|s| s.fields.len()),
                    _ => None,
                };
                match fields {
                    Some(n) if (*field as usize) < n => {}
                    _ => self.fail(e.span, format!("field #{field} of a `{}`", base.ty)),
                }
            }
            E::Swizzle { base, comps } => {
                let len = match base.ty {
                    Type::Vector { len, .. } => len,
                    Type::Scalar(_) => 1,
                    _ => 0,
                };
                if comps.is_empty() || comps.iter().any(|&c| c >= len) {
                    self.fail(e.span, format!("swizzle {comps:?} of a `{}`", base.ty));
                }
            }
            E::AddrOf(x) => self.place(x, "the operand of `&`"),
            E::Assign { place, value } => {
                self.place(place, "the target of an assignment");
                self.value(value);
            }
            E::CompoundAssign { place, value, .. } => {
                self.place(place, "the target of a compound assignment");
                self.value(value);
            }
            E::IncDec { place, .. } => self.place(place, "the operand of `++`/`--`"),
            E::Unary { operand: x, .. } | E::Convert(x) | E::BitCast(x) | E::PtrCast(x) => self.value(x),
            E::Binary { lhs, rhs, .. } | E::PtrCompare { lhs, rhs, .. } | E::PtrDiff { lhs, rhs } => {
                self.value(lhs);
                self.value(rhs);
            }
            E::Index { index, .. } | E::PtrOffset { offset: index, .. } => self.value(index),
            E::Construct(xs) => xs.iter().for_each(|x| self.value(x)),
            E::Logical { lhs, rhs, .. } => {
                for x in [lhs, rhs] {
                    if x.ty != Type::Scalar(Scalar::Bool) {
                        self.fail(x.span, format!("an operand of `&&`/`||` has type `{}`, not `bool`", x.ty));
                    }
                }
            }
            E::Call { func, args } => match self.prog.functions.get(func.0 as usize) {
                None => self.fail(e.span, format!("function #{} does not exist", func.0)),
                Some(callee) if args.len() != callee.params.len() => self.fail(
                    e.span,
                    format!("a call of `{}` with {} arguments for {} parameters", callee.name, args.len(), callee.params.len()),
                ),
                Some(_) => args.iter().for_each(|a| self.value(a)),
            },
            E::Builtin { id, args, param_types, .. } => {
                if args.len() != param_types.len() {
                    self.fail(e.span, format!("`{id}` has {} arguments for {} parameters", args.len(), param_types.len()));
                }
                for (a, p) in args.iter().zip(param_types) {
                    self.value(a);
                    if matches!(p, Type::Reference { is_const: false, .. }) {
                        self.place(a, &format!("an argument `{id}` writes"));
                    }
                }
            }
            _ => {}
        }
        e.for_each_child(&mut |x| self.expr(x));
    }

    fn local(&mut self, id: LocalId, span: Span) {
        let Some(f) = self.func else {
            self.fail(span, format!("local #{} used at program scope", id.0));
            return;
        };
        match f.locals.get(id.0 as usize) {
            None => self.fail(span, format!("local #{} does not exist", id.0)),
            Some(l) if l.origin == LocalOrigin::Source && !self.declared[id.0 as usize] => {
                self.fail(span, format!("local `{}` is used before its declaration", l.name))
            }
            Some(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "#include <metal_stdlib>
using namespace metal;
struct P { float x; int n; };
void bump(thread int& v) { v += 1; }
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    int a = 1;
    bump(a);
    P p = {2.0f, a};
    for (int j = 0; j < 4; j++) { if (j == 2) { break; } a += j; }
    out[i] = p.x + float(a) + fma(1.0f, 2.0f, 3.0f);
}
";

    fn program() -> Program {
        let c = crate::compile("t.metal", SRC, &Default::default());
        assert!(!c.has_errors(), "{}", c.render(false));
        c.program.expect("program")
    }

    fn kernel(p: &mut Program) -> &mut Function {
        p.functions.iter_mut().find(|f| f.is_kernel).expect("kernel")
    }

    /// The first expression in the kernel (pre-order) for which `pick`
    /// says yes, replaced by `with(old)`.
    fn replace(p: &mut Program, pick: impl Fn(&Expr) -> bool, with: impl Fn(&Expr) -> Expr) {
        fn walk(e: &mut Expr, pick: &dyn Fn(&Expr) -> bool, with: &dyn Fn(&Expr) -> Expr) -> bool {
            if pick(e) {
                *e = with(e);
                return true;
            }
            let mut done = false;
            children_mut(e, &mut |c| done = done || walk(c, pick, with));
            done
        }
        fn stmts(b: &mut [Stmt], pick: &dyn Fn(&Expr) -> bool, with: &dyn Fn(&Expr) -> Expr) -> bool {
            b.iter_mut().any(|s| match &mut s.kind {
                StmtKind::Expr(e) | StmtKind::Return(Some(e)) | StmtKind::Local { init: Some(e), .. } => walk(e, pick, with),
                StmtKind::Block(b) => stmts(b, pick, with),
                StmtKind::If { cond, then, els } => walk(cond, pick, with) || stmts(then, pick, with) || stmts(els, pick, with),
                StmtKind::Loop { cond, body, step, .. } => {
                    cond.as_mut().is_some_and(|c| walk(c, pick, with))
                        || stmts(body, pick, with)
                        || step.as_mut().is_some_and(|c| walk(c, pick, with))
                }
                _ => false,
            })
        }
        assert!(stmts(&mut kernel(p).body, &pick, &with), "no expression matched");
    }

    /// Mutable children, for the tests only (the verifier reads).
    fn children_mut(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
        match &mut e.kind {
            E::Assign { place: a, value: b } | E::CompoundAssign { place: a, value: b, .. } | E::Binary { lhs: a, rhs: b, .. } => {
                f(a);
                f(b);
            }
            E::Index { base: a, index: b } => {
                f(a);
                f(b);
            }
            E::Call { args, .. } | E::Builtin { args, .. } | E::Aggregate(args) | E::Construct(args) => args.iter_mut().for_each(f),
            E::Convert(x) | E::Deref(x) | E::Field { base: x, .. } | E::IncDec { place: x, .. } | E::AddrOf(x) => f(x),
            _ => {}
        }
    }

    fn violations(p: &Program) -> Vec<String> {
        verify(p).iter().map(|v| v.to_string()).collect()
    }

    fn assert_breaks(p: &Program, fragment: &str) {
        let v = violations(p);
        assert!(v.iter().any(|m| m.contains(fragment)), "expected a violation containing {fragment:?}, got {v:?}");
    }

    #[test]
    fn a_checked_program_keeps_every_invariant() {
        assert_eq!(violations(&program()), Vec::<String>::new());
    }

    #[test]
    fn an_unknown_local_is_caught() {
        let mut p = program();
        replace(&mut p, |e| matches!(e.kind, E::Local(_)), |e| Expr { kind: E::Local(LocalId(999)), ..e.clone() });
        assert_breaks(&p, "local #999 does not exist");
    }

    #[test]
    fn a_use_before_the_declaration_is_caught() {
        let mut p = program();
        // Declare `a` after everything else.
        let k = kernel(&mut p);
        let pos = k.body.iter().position(|s| matches!(s.kind, StmtKind::Local { .. })).expect("a declaration");
        let decl = k.body.remove(pos);
        k.body.push(decl);
        assert_breaks(&p, "used before its declaration");
    }

    #[test]
    fn storing_into_a_value_is_caught() {
        let mut p = program();
        replace(
            &mut p,
            |e| matches!(e.kind, E::Assign { .. }),
            |e| {
                let E::Assign { value, .. } = &e.kind else { unreachable!() };
                let c = Expr { kind: E::Const(ConstValue::Float(0.0)), ty: value.ty.clone(), span: e.span };
                Expr { kind: E::Assign { place: Box::new(c), value: value.clone() }, ..e.clone() }
            },
        );
        assert_breaks(&p, "the target of an assignment is not a place");
    }

    #[test]
    fn a_reference_bound_to_a_value_is_caught() {
        // `bump(a)` binds `a` with `&a`; bind a constant instead.
        let mut p = program();
        replace(
            &mut p,
            |e| matches!(e.kind, E::AddrOf(_)),
            |e| {
                let E::AddrOf(x) = &e.kind else { unreachable!() };
                let c = Expr { kind: E::Const(ConstValue::Int(1)), ty: x.ty.clone(), span: e.span };
                Expr { kind: E::AddrOf(Box::new(c)), ..e.clone() }
            },
        );
        assert_breaks(&p, "the operand of `&` is not a place");
    }

    #[test]
    fn wrong_argument_counts_are_caught() {
        let mut p = program();
        replace(
            &mut p,
            |e| matches!(e.kind, E::Builtin { .. }),
            |e| {
                let E::Builtin { id, fast, args, param_types } = &e.kind else { unreachable!() };
                let kind = E::Builtin { id: *id, fast: *fast, args: args[..2].to_vec(), param_types: param_types.clone() };
                Expr { kind, ..e.clone() }
            },
        );
        assert_breaks(&p, "`fma` has 2 arguments for 3 parameters");
        let mut p = program();
        replace(
            &mut p,
            |e| matches!(e.kind, E::Call { .. }),
            |e| {
                let E::Call { func, .. } = &e.kind else { unreachable!() };
                Expr { kind: E::Call { func: *func, args: Vec::new() }, ..e.clone() }
            },
        );
        assert_breaks(&p, "with 0 arguments for 1 parameters");
    }

    #[test]
    fn a_void_operand_and_a_bad_field_are_caught() {
        let mut p = program();
        replace(
            &mut p,
            |e| matches!(e.kind, E::Binary { .. }),
            |e| {
                let E::Binary { op, rhs, .. } = &e.kind else { unreachable!() };
                let void = Expr { kind: E::Zero, ty: Type::Void, span: e.span };
                Expr { kind: E::Binary { op: *op, lhs: Box::new(void), rhs: rhs.clone() }, ..e.clone() }
            },
        );
        assert_breaks(&p, "type `void` is used as a value");
        let mut p = program();
        replace(
            &mut p,
            |e| matches!(e.kind, E::Field { .. }),
            |e| {
                let E::Field { base, .. } = &e.kind else { unreachable!() };
                Expr { kind: E::Field { base: base.clone(), field: 7 }, ..e.clone() }
            },
        );
        assert_breaks(&p, "field #7");
    }

    #[test]
    fn misplaced_control_flow_is_caught() {
        let mut p = program();
        let k = kernel(&mut p);
        let span = k.span;
        k.body.push(Stmt { kind: StmtKind::Break, span });
        k.body.push(Stmt { kind: StmtKind::Continue, span });
        k.body.push(Stmt { kind: StmtKind::Return(Some(Expr { kind: E::Const(ConstValue::Int(0)), ty: Type::INT, span })), span });
        k.body.push(Stmt {
            kind: StmtKind::If {
                cond: Expr { kind: E::Const(ConstValue::Int(0)), ty: Type::INT, span },
                then: Vec::new(),
                els: Vec::new(),
            },
            span,
        });
        assert_breaks(&p, "`break` outside a loop");
        assert_breaks(&p, "`continue` outside a loop");
        assert_breaks(&p, "`return` with a value in a function returning `void`");
        assert_breaks(&p, "the condition of `if` has type `int`");
    }

    #[test]
    fn unknown_ids_are_caught() {
        let mut p = program();
        replace(
            &mut p,
            |e| matches!(e.kind, E::Call { .. }),
            |e| Expr { kind: E::Call { func: FuncId(77), args: Vec::new() }, ..e.clone() },
        );
        assert_breaks(&p, "function #77 does not exist");
        let mut p = program();
        kernel(&mut p).locals[0].ty = Type::Struct(crate::types::StructId(55));
        assert_breaks(&p, "struct #55 does not exist");
    }
}
