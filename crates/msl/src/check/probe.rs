//! Placing debugger probes (see `crate::probe`): a request's expressions
//! are checked as `auto` locals initialized with them would be, in the
//! scope just before the statement, and become one `StmtKind::Probe`.

use super::Checker;
use crate::ast;
use crate::hir;
use crate::probe::ProbeSite;
use crate::source::Span;
use std::rc::Rc;

impl Checker<'_, '_> {
    /// The probes that go before statement `s` (once for several
    /// statements with the same span: one macro's).
    pub(super) fn probes_before(&mut self, s: &ast::Stmt, out: &mut Vec<hir::Stmt>) {
        let prev = self.probe_prev.take();
        let Some(plan) = &self.probes else { return };
        if prev == Some(s.span) {
            return;
        }
        if let Some(reqs) = plan.before.get(&s.span).cloned() {
            reqs.into_iter().for_each(|r| self.place_probe(r, s.span, out));
        }
    }

    /// The probes that go at the start of block `span` (a loop's body).
    pub(super) fn probes_at_block_top(&mut self, span: Span, out: &mut Vec<hir::Stmt>) {
        let Some(reqs) = self.probes.as_ref().and_then(|p| p.block_top.get(&span)).cloned() else { return };
        reqs.into_iter().for_each(|r| self.place_probe(r, span, out));
    }

    fn place_probe(&mut self, r: u32, at: Span, out: &mut Vec<hir::Stmt>) {
        // A function body checked without a function (none here) or lint's
        // diagnostics-only run still places it: the errors are the point.
        let Some(plan) = &self.probes else { return };
        let exprs = plan.exprs.get(r as usize).cloned().unwrap_or_default();
        let optional = plan.optional.get(r as usize).copied().unwrap_or(false);
        let (stmt, place) = plan.place_of(r, at);
        if self.fs.is_none() || exprs.is_empty() {
            return;
        }
        let trial = self.trial();
        let mut checked = Vec::with_capacity(exprs.len());
        for e in &exprs {
            // Each in a scope of its own: the stand-in locals share a name.
            self.push_scope();
            let value = self.probe_value(e);
            self.pop_scope();
            checked.extend(value);
        }
        let placed = checked.len() == exprs.len() && !trial.has_errors();
        if !placed && !optional {
            if !trial.has_errors() {
                let span = exprs.first().map_or(at, |e| e.span);
                self.error(span, "this expression cannot be printed here");
            }
            trial.annotate(|d| {
                if d.is_error() {
                    d.notes.push(format!("the expressions are compiled where they are printed: before {place}"));
                }
            });
            trial.commit();
        } else if placed {
            // Warnings about the expressions themselves stay.
            trial.commit();
        }
        let Some(plan) = self.probes.as_mut() else { return };
        let site = plan.sites.len() as u32;
        plan.sites.push(ProbeSite { request: r, stmt, placed });
        if placed {
            out.push(hir::Stmt { kind: hir::StmtKind::Probe { site, exprs: checked }, span: at });
        }
    }

    /// `e` as the initializer of `auto $probe = (e);` (references read
    /// their referent), except that an array in memory stays an array: it
    /// prints whole rather than as the address it would decay to.
    fn probe_value(&mut self, e: &ast::Expr) -> Option<hir::Expr> {
        {
            let trial = self.trial();
            if let Some(h) = self.expr(e).filter(|h| matches!(h.ty, crate::types::Type::Array { .. }) && h.is_place()) {
                if !trial.has_errors() {
                    trial.commit();
                    return Some(h);
                }
            }
        }
        let auto = ast::Path {
            global: false,
            segments: vec![ast::PathSegment { ident: ast::Ident { name: Rc::from("auto"), span: e.span }, template_args: None }],
            span: e.span,
        };
        let v = ast::VarDecl {
            name: ast::Ident { name: Rc::from("$probe"), span: e.span },
            ty: ast::TypeExpr {
                kind: ast::TypeExprKind::Named { path: auto, is_const: false, is_volatile: false, addr_space: None },
                span: e.span,
            },
            init: Some(ast::Init::Assign(e.clone())),
            attrs: Vec::new(),
            is_constexpr: false,
            is_static: false,
            specialization: None,
            owner: None,
            span: e.span,
        };
        match self.local_decl(&v)?.kind {
            hir::StmtKind::Local { init, .. } => init,
            _ => None,
        }
    }
}
