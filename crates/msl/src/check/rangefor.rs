//! Range-based `for`. C++ defines it by the ordinary loop it stands for,
//! and that is what it becomes, so `break`/`continue`, lowering, the
//! sanitizer and the debugger see plain loops and plain accesses:
//!
//! ```text
//! over an array (C arrays in any address space, `metal::array`):
//! { auto& $range = range;            // a copy when `range` is a value
//!   for (int $i = 0; $i < N; ++$i) { decl = $range[$i]; body } }
//! over a struct with member functions begin() and end():
//! { auto& $range = range;
//!   for (auto $begin = $range.begin(), $end = $range.end(); $begin != $end; ++$begin)
//!     { decl = *$begin; body } }
//! over a struct without them, with free functions begin(s) and end(s):
//!   the same with `begin($range)` and `end($range)`.
//! over a braced list `{a, b, c}` (an `std::initializer_list<E>`):
//!   the array case, with `E $range[3] = {a, b, c};`
//! ```
//!
//! The `$` names cannot clash with the user's.

use super::Checker;
use crate::ast::{self, AddressSpace};
use crate::hir::{self, ExprKind};
use crate::source::Span;
use crate::types::Type;
use std::rc::Rc;

/// What a range-based `for` walks over.
enum Range {
    Array(u32),
    Iterators,
    FreeIterators,
}

impl Checker<'_, '_> {
    pub(crate) fn range_for(&mut self, var: &ast::VarDecl, range: &ast::Expr, body: &ast::Stmt, span: Span, out: &mut Vec<hir::Stmt>) {
        self.push_scope();
        let mut block = Vec::new();
        match self.range_local(range) {
            Some((local, kind)) => {
                block.push(local);
                let lp = Syn { sp: range.span }.lowered_loop(var, kind, body, span);
                self.stmt(&lp, &mut block);
            }
            None => {
                // Still check the body, with the variable poisoned so its
                // uses stay silent.
                if let Some(id) = self.declare_local(&var.name, Type::Void, AddressSpace::Thread, false) {
                    self.fs.as_mut().expect("in function").poisoned.insert(id);
                }
                let b = self.loop_body(body);
                block.extend(b);
            }
        }
        self.pop_scope();
        out.push(hir::Stmt { kind: hir::StmtKind::Block(block), span });
    }

    /// `$range`, bound to the range once, and how to walk it.
    fn range_local(&mut self, range: &ast::Expr) -> Option<(hir::Stmt, Range)> {
        if let ast::ExprKind::InitList(items) = &range.kind {
            return self.list_range(items, range.span);
        }
        let h = self.expr(range)?;
        let kind = match &h.ty {
            Type::Array { len, .. } => Range::Array(*len),
            Type::Struct(sid) if self.has_method(*sid, "begin") && self.has_method(*sid, "end") => Range::Iterators,
            Type::Struct(_) if self.free_functions_named(&["begin", "end"]) => Range::FreeIterators,
            Type::Struct(_) => {
                let n = self.ty_name(&h.ty);
                self.error(range.span, format!("a range-based `for` over `{n}` needs functions `begin()` and `end()`"))
                    .help(format!("give `{n}` member functions `begin()` and `end()`, declare free functions `begin({n}&)` and `end({n}&)`, or loop over an index"));
                return None;
            }
            t => {
                let n = self.ty_name(t);
                self.error(range.span, format!("a range-based `for` cannot loop over a value of type `{n}`")).help(
                    "it loops over the elements of an array (`T a[N]`, `metal::array<T, N>`) or of a struct with `begin()` and `end()`",
                );
                return None;
            }
        };
        let sp = range.span;
        let name = ast::Ident { name: Rc::from("$range"), span: sp };
        let (ty, init) = if h.is_place() {
            let (space, is_const) = self.place_info(&h);
            let ty = Type::Pointer { pointee: Box::new(h.ty.clone()), space, is_const };
            (ty.clone(), hir::Expr { kind: ExprKind::AddrOf(Box::new(h)), ty, span: sp })
        } else {
            (h.ty.clone(), h)
        };
        let is_ref = matches!(init.kind, ExprKind::AddrOf(_));
        let id = self.declare_local(&name, ty, AddressSpace::Thread, false)?;
        if is_ref {
            self.ref_locals_insert(id);
        }
        Some((hir::Stmt { kind: hir::StmtKind::Local { local: id, init: Some(init) }, span: sp }, kind))
    }
}

impl Checker<'_, '_> {
    /// `for (x : {a, b, c})`: C++ deduces one element type `E` for the
    /// `std::initializer_list<E>` (every element must have it), which
    /// here is an array `E $range[n]` holding the elements.
    fn list_range(&mut self, items: &[ast::Expr], sp: Span) -> Option<(hir::Stmt, Range)> {
        if items.is_empty() {
            self.error(sp, "a range-based `for` over `{}` has no element type to deduce")
                .help("a braced list to loop over needs at least one element");
            return None;
        }
        let mut elem: Option<Type> = None;
        for e in items {
            let h = self.expr(e)?;
            let t = self.decay(h).ty;
            match &elem {
                None => elem = Some(t),
                Some(first) if *first != t => {
                    let (a, b) = (self.ty_name(first), self.ty_name(&t));
                    self.error(e.span, format!("the elements of this braced list have different types (`{a}` and `{b}`)"))
                        .label(format!("this one is `{b}`"))
                        .note("C++ deduces one element type for the `std::initializer_list` a range-based `for` walks")
                        .help(format!("write every element as a `{a}` (or cast it: `{a}(…)`)"));
                    return None;
                }
                Some(_) => {}
            }
        }
        let elem = elem?;
        let len = items.len() as u32;
        let ty = Type::Array { elem: Box::new(elem), len };
        let init = self.initializer(&ast::Init::Brace(items.to_vec(), sp), &ty, sp)?;
        let name = ast::Ident { name: Rc::from("$range"), span: sp };
        let id = self.declare_local(&name, ty, AddressSpace::Thread, true)?;
        Some((hir::Stmt { kind: hir::StmtKind::Local { local: id, init: Some(init) }, span: sp }, Range::Array(len)))
    }

    /// Whether every name in `names` is declared where the loop is.
    fn free_functions_named(&self, names: &[&str]) -> bool {
        let scope = self.env.scope.clone();
        names.iter().all(|n| !self.lookup_in(&scope, n).is_empty())
    }
}

/// Builds the syntax of the loop, every node spanned at the range so that
/// diagnostics about it point there.
struct Syn {
    sp: Span,
}

impl Syn {
    fn e(&self, kind: ast::ExprKind) -> ast::Expr {
        ast::Expr { kind, span: self.sp }
    }

    fn ident(&self, n: &str) -> ast::Ident {
        ast::Ident { name: Rc::from(n), span: self.sp }
    }

    fn path(&self, n: &str) -> ast::Path {
        ast::Path { global: false, segments: vec![ast::PathSegment { ident: self.ident(n), template_args: None }], span: self.sp }
    }

    fn name(&self, n: &str) -> ast::Expr {
        self.e(ast::ExprKind::Name(self.path(n)))
    }

    fn int(&self, value: u64) -> ast::Expr {
        self.e(ast::ExprKind::IntLit { value, unsigned: false, long: false, decimal: true })
    }

    /// `$range.f()`
    fn range_call(&self, f: &str) -> ast::Expr {
        let member = self.e(ast::ExprKind::Member { base: Box::new(self.name("$range")), name: self.ident(f), arrow: false, targs: None });
        self.e(ast::ExprKind::Call { callee: Box::new(member), args: Vec::new() })
    }

    /// `f($range)`
    fn free_call(&self, f: &str) -> ast::Expr {
        self.e(ast::ExprKind::Call { callee: Box::new(self.name(f)), args: vec![self.name("$range")] })
    }

    /// `ty name = init`
    fn decl(&self, ty: &str, name: &str, init: ast::Expr) -> ast::VarDecl {
        let ty = ast::TypeExpr {
            kind: ast::TypeExprKind::Named { path: self.path(ty), is_const: false, is_volatile: false, addr_space: None },
            span: self.sp,
        };
        ast::VarDecl {
            name: self.ident(name),
            ty,
            init: Some(ast::Init::Assign(init)),
            attrs: Vec::new(),
            is_constexpr: false,
            is_static: false,
            specialization: None,
            owner: None,
            span: self.sp,
        }
    }

    fn lowered_loop(&self, var: &ast::VarDecl, kind: Range, body: &ast::Stmt, span: Span) -> ast::Stmt {
        let binary = |op, l, r| self.e(ast::ExprKind::Binary { op, lhs: Box::new(l), rhs: Box::new(r) });
        let unary = |op, x| self.e(ast::ExprKind::Unary { op, operand: Box::new(x) });
        let (init, cond, step, elem) = match kind {
            Range::Array(len) => (
                vec![self.decl("int", "$i", self.int(0))],
                binary(ast::BinaryOp::Lt, self.name("$i"), self.int(len as u64)),
                unary(ast::UnaryOp::PreInc, self.name("$i")),
                self.e(ast::ExprKind::Index { base: Box::new(self.name("$range")), index: Box::new(self.name("$i")) }),
            ),
            Range::Iterators | Range::FreeIterators => {
                let call = |f| if matches!(kind, Range::Iterators) { self.range_call(f) } else { self.free_call(f) };
                (
                    vec![self.decl("auto", "$begin", call("begin")), self.decl("auto", "$end", call("end"))],
                    binary(ast::BinaryOp::Ne, self.name("$begin"), self.name("$end")),
                    unary(ast::UnaryOp::PreInc, self.name("$begin")),
                    unary(ast::UnaryOp::Deref, self.name("$begin")),
                )
            }
        };
        let mut var = var.clone();
        var.init = Some(ast::Init::Assign(elem));
        // The block is the compiler's, not the user's body: an empty span
        // of its own, so what is placed at the body (debugger probes) goes
        // inside, after the variable.
        let at = Span::new(body.span.file, body.span.lo, body.span.lo);
        let body = ast::Stmt {
            kind: ast::StmtKind::Block(ast::Block {
                stmts: vec![ast::Stmt { kind: ast::StmtKind::Decl(vec![var.clone()]), span: var.span }, body.clone()],
                span: at,
            }),
            span: at,
        };
        ast::Stmt {
            kind: ast::StmtKind::For {
                init: Some(Box::new(ast::Stmt { kind: ast::StmtKind::Decl(init), span: self.sp })),
                cond: Some(cond),
                step: Some(step),
                body: Box::new(body),
            },
            span,
        }
    }
}
