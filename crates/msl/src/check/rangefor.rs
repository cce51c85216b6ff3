//! Range-based `for` over arrays: C arrays in any address space and
//! `metal::array` (which is an array here). C++ defines the loop by the
//! indexed loop it stands for, and that is what it becomes:
//!
//! ```text
//! { auto& $range = range;            // a copy when `range` is a value
//!   for (int $i = 0; $i < N; ++$i) { decl = $range[$i]; body } }
//! ```
//!
//! so `break`/`continue`, lowering, the sanitizer and the debugger see an
//! ordinary loop with ordinary indexing. The `$` names cannot clash with the
//! user's.

use super::Checker;
use crate::ast::{self, AddressSpace};
use crate::hir::{self, ExprKind};
use crate::source::Span;
use crate::types::Type;
use std::rc::Rc;

impl Checker<'_, '_> {
    pub(crate) fn range_for(&mut self, var: &ast::VarDecl, range: &ast::Expr, body: &ast::Stmt, span: Span, out: &mut Vec<hir::Stmt>) {
        self.push_scope();
        let mut block = Vec::new();
        match self.range_local(range) {
            Some((local, len)) => {
                block.push(local);
                let lp = indexed_loop(var, range.span, len, body, span);
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

    /// `$range`, bound to the range once, and the range's length.
    fn range_local(&mut self, range: &ast::Expr) -> Option<(hir::Stmt, u32)> {
        let h = self.expr(range)?;
        let len = match &h.ty {
            Type::Array { len, .. } => *len,
            Type::Struct(sid) if self.has_method(*sid, "begin") && self.has_method(*sid, "end") => {
                let n = self.ty_name(&h.ty);
                self.error(
                    range.span,
                    format!("a range-based `for` over `{n}` (through its `begin()`/`end()`) is not supported by this simulator yet"),
                )
                .help("loop over an index instead: `for (int i = 0; i < n; ++i)`");
                return None;
            }
            t => {
                let n = self.ty_name(t);
                self.error(range.span, format!("a range-based `for` cannot loop over a value of type `{n}`"))
                    .help("it loops over the elements of an array (`T a[N]`, `metal::array<T, N>`)");
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
        Some((hir::Stmt { kind: hir::StmtKind::Local { local: id, init: Some(init) }, span: sp }, len))
    }
}

/// `for (int $i = 0; $i < len; ++$i) { var = $range[$i]; body }`, spanned
/// at the range so that diagnostics about it point there.
fn indexed_loop(var: &ast::VarDecl, sp: Span, len: u32, body: &ast::Stmt, span: Span) -> ast::Stmt {
    let e = |kind| ast::Expr { kind, span: sp };
    let int = |value: u64| e(ast::ExprKind::IntLit { value, unsigned: false, long: false, decimal: true });
    let path = |n: &str| ast::Path {
        global: false,
        segments: vec![ast::PathSegment { ident: ast::Ident { name: Rc::from(n), span: sp }, template_args: None }],
        span: sp,
    };
    let name = |n: &str| e(ast::ExprKind::Name(path(n)));
    let index = ast::VarDecl {
        name: ast::Ident { name: Rc::from("$i"), span: sp },
        ty: ast::TypeExpr {
            kind: ast::TypeExprKind::Named { path: path("int"), is_const: false, is_volatile: false, addr_space: None },
            span: sp,
        },
        init: Some(ast::Init::Assign(int(0))),
        attrs: Vec::new(),
        is_constexpr: false,
        is_static: false,
        specialization: None,
        owner: None,
        span: sp,
    };
    let cond = e(ast::ExprKind::Binary { op: ast::BinaryOp::Lt, lhs: Box::new(name("$i")), rhs: Box::new(int(len as u64)) });
    let step = e(ast::ExprKind::Unary { op: ast::UnaryOp::PreInc, operand: Box::new(name("$i")) });
    let mut elem = var.clone();
    elem.init = Some(ast::Init::Assign(e(ast::ExprKind::Index { base: Box::new(name("$range")), index: Box::new(name("$i")) })));
    let body = ast::Stmt {
        kind: ast::StmtKind::Block(ast::Block {
            stmts: vec![ast::Stmt { kind: ast::StmtKind::Decl(vec![elem]), span: var.span }, body.clone()],
            span: body.span,
        }),
        span: body.span,
    };
    ast::Stmt {
        kind: ast::StmtKind::For {
            init: Some(Box::new(ast::Stmt { kind: ast::StmtKind::Decl(vec![index]), span: sp })),
            cond: Some(cond),
            step: Some(step),
            body: Box::new(body),
        },
        span,
    }
}
