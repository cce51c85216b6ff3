//! Scoped checker state: what a piece of checking changes is put back when
//! its guard is dropped, so an early `return` or `?` cannot leave it behind.
//!
//! - [`DiagSink`] holds the run's diagnostics; a [`Trial`] drops those
//!   reported under it unless it is committed (overload probing, SFINAE).
//! - [`Entered`] checks code of another place: it swaps in that place's
//!   environment (and, unless asked otherwise, puts the caller's locals out
//!   of scope); an instantiation also goes one level deeper and starts
//!   counting expression nesting afresh.

use super::{Checker, Env, FnState, MAX_INSTANTIATION_DEPTH};
use crate::diag::Diagnostic;
use crate::source::Span;
use std::cell::RefCell;
use std::ops::{Deref, DerefMut};
use std::rc::Rc;

/// The diagnostics of one run, in report order. Shared (`Rc`) so a
/// [`Trial`] can hold it while the checker is borrowed mutably.
#[derive(Default)]
pub(crate) struct DiagSink {
    items: RefCell<Vec<Diagnostic>>,
    /// Index ranges of `items` reported by function bodies: a rollback
    /// keeps them. A body is checked once, whoever asked first, and its
    /// errors are the program's (in C++ too they are never a substitution
    /// failure); dropping them left a memoized function with a hole in its
    /// body that ran as a silent wrong result.
    body_ranges: RefCell<Vec<(usize, usize)>>,
}

impl DiagSink {
    pub fn push(&self, d: Diagnostic) {
        self.items.borrow_mut().push(d);
    }

    fn len(&self) -> usize {
        self.items.borrow().len()
    }

    /// Whether an error has been reported (and not rolled back).
    pub fn has_errors(&self) -> bool {
        self.items.borrow().iter().any(Diagnostic::is_error)
    }

    pub fn error_count(&self) -> usize {
        self.items.borrow().iter().filter(|d| d.is_error()).count()
    }

    /// Everything reported, for the end of the run.
    pub fn take(&self) -> Vec<Diagnostic> {
        self.body_ranges.borrow_mut().clear();
        self.items.take()
    }

    /// Drop the diagnostics from `mark` on, except those of function bodies.
    fn rollback(&self, mark: usize) {
        let mut items = self.items.borrow_mut();
        let mut ranges = self.body_ranges.borrow_mut();
        let mut kept = Vec::new();
        for &(a, b) in ranges.iter() {
            for i in a.max(mark)..b.min(items.len()) {
                kept.push(items[i].clone());
            }
        }
        ranges.retain(|&(_, b)| b <= mark);
        items.truncate(mark);
        if !kept.is_empty() {
            ranges.push((mark, mark + kept.len()));
            items.extend(kept);
        }
    }
}

/// Diagnostics reported while it lives are dropped when it is dropped,
/// unless [`Trial::commit`] was called (diagnostics of function bodies are
/// always kept, see [`DiagSink`]). Trials nest: an inner one ends first.
#[must_use = "a trial rolls back when dropped"]
pub(crate) struct Trial {
    sink: Rc<DiagSink>,
    mark: usize,
    committed: bool,
}

impl Trial {
    /// Keep what was reported.
    pub fn commit(mut self) {
        self.committed = true;
    }

    /// Whether anything was reported under this trial so far.
    pub fn reported(&self) -> bool {
        self.sink.len() > self.mark
    }

    /// The first diagnostic reported under this trial (the reason a
    /// candidate was rejected).
    pub fn first(&self) -> Option<Diagnostic> {
        self.sink.items.borrow().get(self.mark).cloned()
    }

    /// Whether an error was reported under this trial so far.
    pub fn has_errors(&self) -> bool {
        self.sink.items.borrow().iter().skip(self.mark).any(Diagnostic::is_error)
    }

    /// Change each diagnostic reported under this trial so far.
    pub fn annotate(&self, f: impl Fn(&mut Diagnostic)) {
        self.sink.items.borrow_mut().iter_mut().skip(self.mark).for_each(f);
    }
}

impl Drop for Trial {
    fn drop(&mut self) {
        if !self.committed {
            self.sink.rollback(self.mark);
        }
    }
}

/// While it lives, the diagnostics reported are a function body's: no
/// [`Trial`] drops them.
pub(crate) struct BodyDiagnostics {
    sink: Rc<DiagSink>,
    mark: usize,
}

impl Drop for BodyDiagnostics {
    fn drop(&mut self) {
        let end = self.sink.len();
        if end > self.mark {
            self.sink.body_ranges.borrow_mut().push((self.mark, end));
        }
    }
}

/// The checker, checking code of another place; what that changed is put
/// back when this is dropped. Use it in place of the checker (it derefs to
/// it).
pub(crate) struct Entered<'c, 'a, 'd> {
    c: &'c mut Checker<'a, 'd>,
    saved_env: Option<Env>,
    /// `Some(caller's state)` when the caller's locals were put out of scope.
    saved_fs: Option<Option<FnState>>,
    saved_inst_depth: u32,
    saved_expr_depth: u32,
    saved_inst_stack: usize,
    saved_defaults_stack: usize,
}

impl<'a, 'd> Checker<'a, 'd> {
    /// Report nothing from here on unless the returned trial is committed.
    pub fn trial(&self) -> Trial {
        Trial { sink: self.sink.clone(), mark: self.sink.len(), committed: false }
    }

    /// What is reported while the result lives comes from a function body.
    pub fn body_diagnostics(&self) -> BodyDiagnostics {
        BodyDiagnostics { sink: self.sink.clone(), mark: self.sink.len() }
    }

    /// Check code in environment `env`, the current function's locals still
    /// in scope (a default argument, a deduction seen from a declaration).
    pub fn with_env<'c>(&'c mut self, env: Env) -> Entered<'c, 'a, 'd> {
        let saved = std::mem::replace(&mut self.env, env);
        let mut e = self.entered();
        e.saved_env = Some(saved);
        e
    }

    /// Check code written elsewhere, in environment `env`: the caller's
    /// locals are not in scope there (a kernel parameter `K` must not hide
    /// the template parameter `K`).
    pub fn elsewhere<'c>(&'c mut self, env: Env) -> Entered<'c, 'a, 'd> {
        let saved_fs = self.fs.take();
        let mut e = self.with_env(env);
        e.saved_fs = Some(saved_fs);
        e
    }

    /// Check a template instance in environment `env`: as
    /// [`Self::elsewhere`], one instantiation level deeper, with expression
    /// nesting counted afresh (the instance's expressions are not nested in
    /// the caller's). None, with the error `too_deep`, when instances nest
    /// `MAX_INSTANTIATION_DEPTH` deep.
    pub fn instantiating<'c>(&'c mut self, env: Env, span: Span, too_deep: &str) -> Option<Entered<'c, 'a, 'd>> {
        if !self.may_instantiate(span, too_deep) {
            return None;
        }
        let e = self.elsewhere(env);
        e.c.inst_depth += 1;
        e.c.expr_depth = 0;
        Some(e)
    }

    /// False, with the error `too_deep`, when instances already nest
    /// `MAX_INSTANTIATION_DEPTH` deep.
    pub fn may_instantiate(&self, span: Span, too_deep: &str) -> bool {
        if self.inst_depth >= MAX_INSTANTIATION_DEPTH {
            self.error(span, too_deep.to_string());
            return false;
        }
        true
    }

    /// Only the depth counters and the instance stack are restored (one
    /// more level of a recursion that changes no environment).
    pub fn deeper<'c>(&'c mut self) -> Entered<'c, 'a, 'd> {
        let e = self.entered();
        e.c.inst_depth += 1;
        e
    }

    /// The body of instance `name`, instantiated at `span`, is being
    /// checked: diagnostics reported inside it say so.
    pub fn checking_instance<'c>(&'c mut self, name: String, span: Span) -> Entered<'c, 'a, 'd> {
        let e = self.entered();
        e.c.inst_stack.push((name, span));
        e
    }

    /// Run `f` with room on the stack: instances nest up to
    /// `MAX_INSTANTIATION_DEPTH` deep, each level many frames (threads may
    /// have small stacks), so the stack grows on the heap instead of
    /// overflowing.
    pub fn with_stack<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        stacker::maybe_grow(256 * 1024, 4 * 1024 * 1024, || f(self))
    }

    fn entered<'c>(&'c mut self) -> Entered<'c, 'a, 'd> {
        Entered {
            saved_inst_depth: self.inst_depth,
            saved_expr_depth: self.expr_depth,
            saved_inst_stack: self.inst_stack.len(),
            saved_defaults_stack: self.defaults_stack.len(),
            saved_env: None,
            saved_fs: None,
            c: self,
        }
    }
}

impl<'a, 'd> Deref for Entered<'_, 'a, 'd> {
    type Target = Checker<'a, 'd>;
    fn deref(&self) -> &Self::Target {
        self.c
    }
}

impl DerefMut for Entered<'_, '_, '_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.c
    }
}

impl Drop for Entered<'_, '_, '_> {
    fn drop(&mut self) {
        if let Some(env) = self.saved_env.take() {
            self.c.env = env;
        }
        if let Some(fs) = self.saved_fs.take() {
            self.c.fs = fs;
        }
        self.c.inst_depth = self.saved_inst_depth;
        self.c.expr_depth = self.saved_expr_depth;
        self.c.inst_stack.truncate(self.saved_inst_stack);
        self.c.defaults_stack.truncate(self.saved_defaults_stack);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Checker, Env, FnState};
    use crate::diag::Diagnostics;
    use crate::source::Span;
    use crate::types::Type;
    use std::rc::Rc;

    fn messages(c: &Checker) -> Vec<String> {
        let all = c.sink.take();
        let out = all.iter().map(|d| d.message.clone()).collect();
        for d in all {
            c.sink.push(d);
        }
        out
    }

    #[test]
    fn a_trial_rolls_back_unless_committed() {
        let mut diags = Diagnostics::default();
        let c = Checker::new(&mut diags);
        c.error(Span::default(), "before");
        {
            let outer = c.trial();
            c.error(Span::default(), "kept");
            {
                let inner = c.trial();
                c.error(Span::default(), "dropped");
                assert!(inner.reported());
                assert_eq!(inner.first().map(|d| d.message), Some("dropped".to_string()));
            }
            assert_eq!(messages(&c), ["before", "kept"]);
            outer.commit();
        }
        assert_eq!(messages(&c), ["before", "kept"]);
        {
            let _t = c.trial();
            c.error(Span::default(), "probe");
        }
        assert_eq!(messages(&c), ["before", "kept"]);
    }

    #[test]
    fn a_rollback_keeps_the_diagnostics_of_function_bodies() {
        let mut diags = Diagnostics::default();
        let c = Checker::new(&mut diags);
        {
            let _t = c.trial();
            c.error(Span::default(), "probe");
            {
                let _body = c.body_diagnostics();
                c.error(Span::default(), "in a body");
            }
            c.error(Span::default(), "probe again");
        }
        assert_eq!(messages(&c), ["in a body"]);
        // Still kept by a later, outer rollback.
        {
            let _t = c.trial();
        }
        let t = c.trial();
        drop(t);
        assert_eq!(messages(&c), ["in a body"]);
    }

    #[test]
    fn an_early_return_out_of_an_instantiation_restores_the_state() {
        let mut diags = Diagnostics::default();
        let mut c = Checker::new(&mut diags);
        let here: Rc<str> = Rc::from("here");
        c.env.scope = vec![here.clone()];
        c.fs = Some(FnState::new(Type::Void, false));
        c.expr_depth = 7;
        let there = Env { scope: vec![Rc::from("there")], ..Env::default() };
        let failing = |c: &mut Checker| -> Option<()> {
            let mut inst = c.instantiating(there.clone(), Span::default(), "too deep")?;
            assert_eq!(inst.env.scope, [Rc::from("there")]);
            assert!(inst.fs.is_none(), "the caller's locals are out of scope");
            assert_eq!((inst.inst_depth, inst.expr_depth), (1, 0));
            let mut body = inst.checking_instance("f<int>".into(), Span::default());
            body.expr_depth = 3;
            body.env.visible = 99;
            None?;
            Some(())
        };
        assert_eq!(failing(&mut c), None);
        assert_eq!(c.env.scope, [here]);
        assert_eq!(c.env.visible, 0);
        assert!(c.fs.is_some());
        assert_eq!((c.inst_depth, c.expr_depth, c.inst_stack.len()), (0, 7, 0));
    }

    #[test]
    fn instances_nest_at_most_max_instantiation_depth() {
        let mut diags = Diagnostics::default();
        let mut c = Checker::new(&mut diags);
        fn nest(c: &mut Checker, levels: &mut u32) {
            if let Some(mut inner) = c.instantiating(Env::default(), Span::default(), "too deep") {
                *levels += 1;
                nest(&mut inner, levels);
            }
        }
        let mut levels = 0;
        nest(&mut c, &mut levels);
        assert_eq!(levels, super::MAX_INSTANTIATION_DEPTH);
        assert_eq!(c.inst_depth, 0);
        assert_eq!(messages(&c), ["too deep"]);
    }
}
