//! Placing debugger probes (see `crate::probe`): a request's expressions
//! are checked in the scope just before the statement and become one
//! `StmtKind::Probe`.

use super::Checker;
use crate::ast;
use crate::hir;
use crate::probe::ProbeSite;
use crate::source::Span;
use crate::types::Type;

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
            checked.extend(self.probe_value(e));
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

    /// The value of `e` as printed: an array decays to a pointer as an
    /// `auto` variable's initializer would, except an array in memory,
    /// which prints whole.
    fn probe_value(&mut self, e: &ast::Expr) -> Option<hir::Expr> {
        let h = self.expr(e)?;
        if h.ty == Type::Void {
            self.error(e.span, "this expression is `void`: it has no value to print");
            return None;
        }
        if matches!(h.ty, Type::Array { .. }) && h.is_place() {
            return Some(h);
        }
        Some(self.decay(h))
    }
}
