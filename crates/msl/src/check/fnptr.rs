//! Function pointers: a function named in the source (`f`, `&f`, `f<T>`,
//! an overloaded name chosen by the pointer type it initializes), passed
//! as a template argument (`template <RadixFunc<T> radix_func>`), bound to
//! a function parameter (`T (*op)(T, T)`), or held as a value (locals,
//! struct members, arrays, `constant` tables, chosen with `?:`, compared
//! with `==`). A call through a template argument is a direct call; a call
//! through anything else is `hir::ExprKind::CallPtr`, which the lowering
//! turns into a direct call when it knows the function at that inlining,
//! and otherwise into a choice among the functions whose address the
//! program takes. Kernel parameters of function pointer type (host
//! function handles) are refused.

use super::expr::mk;
use super::typeexpr::QualType;
use super::{Checker, DeclId, DeclKind, TArg};
use crate::ast::{self, ExprKind as A};
use crate::hir::{self, ExprKind as H, FuncId};
use crate::source::Span;
use crate::types::Type;

/// Why the simulator cannot keep function pointers where a program puts them.
pub(crate) const RUNTIME_NOTE: &str =
    "the simulator supports pointers to the program's own functions (in variables, struct members, arrays and `constant` tables), not pointers to them or function handles from the host";

impl<'a> Checker<'a, '_> {
    /// The type of a pointer to function `f`.
    pub(crate) fn fn_ptr_type(&self, f: FuncId) -> Option<Type> {
        let ret = self.functions[f.0 as usize].as_ref()?.ret.clone();
        Some(Type::FnPtr { ret: Box::new(ret), params: self.instance_param_types(f) })
    }

    /// `R (*)(P1, P2)` as written: parameters resolve as a function's do.
    pub(crate) fn fn_ptr_type_expr(&mut self, ret: &ast::TypeExpr, params: &[ast::TypeExpr], span: Span) -> Option<Type> {
        let r = self.resolve_type(ret).map(|q| q.ty);
        let mut ps = Vec::with_capacity(params.len());
        for p in params {
            ps.push(self.resolve_param_type(p).map(|q| super::decls::param_type(q, p)));
        }
        let ret = r?;
        let mut params: Vec<Type> = ps.into_iter().collect::<Option<_>>()?;
        // `R (*)(void)`
        if params == [Type::Void] {
            params.clear();
        }
        if matches!(ret, Type::Reference { .. }) {
            self.error(span, "a function pointer returning a reference is not supported by the simulator yet")
                .help("return the value instead of a reference");
            return None;
        }
        Some(Type::FnPtr { ret: Box::new(ret), params })
    }

    /// The type of a value template parameter declared as `te`. A function
    /// type there (`template <impl_t f>` after `typedef void (impl_t)(…);`)
    /// is adjusted to a pointer to such a function, as in C++.
    pub(crate) fn value_param_type(&mut self, te: &ast::TypeExpr) -> Option<Type> {
        match self.function_type_named(te) {
            Some((sig, _)) => self.pointer_to_function_type(sig, te.span),
            None => self.resolve_type(te).map(|q| q.ty),
        }
    }

    /// A function parameter's declared type, resolved: a function type
    /// there (`float apply(unary_t f, float x)`) is adjusted to a pointer
    /// to such a function, as in C++.
    pub(crate) fn resolve_param_type(&mut self, te: &ast::TypeExpr) -> Option<QualType> {
        match self.function_type_named(te) {
            Some((sig, _)) => Some(QualType { ty: self.pointer_to_function_type(sig, te.span)?, is_const: false, space: None }),
            None => self.resolve_type(te),
        }
    }

    /// The pointer type to functions of signature `sig` (written at `span`).
    pub(crate) fn pointer_to_function_type(&mut self, sig: super::decls::Signature, span: Span) -> Option<Type> {
        if matches!(sig.ret, Type::Reference { .. }) {
            self.error(span, "a function pointer returning a reference is not supported by the simulator yet")
                .help("return the value instead of a reference");
            return None;
        }
        Some(Type::FnPtr { ret: Box::new(sig.ret), params: sig.params })
    }

    /// The function declarations `path` names, when it names functions (and
    /// nothing closer hides them); `None` for any other name.
    pub(crate) fn function_decls(&self, path: &ast::Path) -> Option<Vec<DeclId>> {
        let segs = &path.segments;
        let (last, prefix) = segs.split_last()?;
        let name = &*last.ident.name;
        let decls = if prefix.is_empty() {
            if self.fs.as_ref().is_some_and(|fs| fs.scopes.iter().any(|s| s.find(name).is_some())) || self.env.targs.contains_key(name) {
                return None;
            }
            if self.env.this_struct.is_some_and(|sid| self.has_method(sid, name)) {
                return None;
            }
            self.lookup_global(name)
        } else if prefix.iter().all(|s| s.template_args.is_none()) {
            let scope: Vec<std::rc::Rc<str>> = prefix.iter().map(|s| s.ident.name.clone()).collect();
            self.lookup_qualified_all(&scope, name)
        } else {
            return None;
        };
        (!decls.is_empty() && decls.iter().all(|&d| self.is_function_decl(d))).then_some(decls)
    }

    /// `f`, `&f`, `(f)`, `f<T>` naming functions: their declarations and
    /// the template arguments written.
    fn named_functions(&self, e: &ast::Expr) -> Option<(Vec<DeclId>, ast::PathSegment, Span)> {
        match &e.kind {
            A::Unary { op: ast::UnaryOp::AddrOf, operand } => self.named_functions(operand),
            A::Name(path) => Some((self.function_decls(path)?, path.last().clone(), e.span)),
            _ => None,
        }
    }

    /// The address of one of the functions `decls` (named `name`), chosen
    /// by the template arguments written (`explicit`) and, when given, the
    /// pointer type `target` — C++'s address of an overloaded function
    /// ([over.over]): each template's remaining arguments are deduced from
    /// the target's parameter and return types, candidates whose type is
    /// not the target's drop out, a non-template function beats template
    /// instances, and of instances the most specialised template's wins.
    pub(crate) fn function_value(
        &mut self,
        decls: &[DeclId],
        name: &str,
        explicit: Option<Vec<TArg>>,
        target: Option<&Type>,
        span: Span,
    ) -> Option<hir::Expr> {
        let (target_ret, target_params) = match target {
            Some(Type::FnPtr { ret, params }) => (Some((**ret).clone()), Some(params.clone())),
            _ => (None, None),
        };
        // Fitting candidates (the function, and the template it is an
        // instance of), and why each other declaration does not fit.
        let mut found: Vec<(FuncId, Option<DeclId>)> = Vec::new();
        let mut rejected: Vec<(DeclId, String)> = Vec::new();
        for &d in decls {
            // Where an instance's diagnostics start: dropped if it does not fit.
            let mut trial = None;
            let (id, template) = match self.decls[d].kind.clone() {
                DeclKind::Function { .. } if explicit.is_some() => {
                    rejected.push((d, "not a template, so it takes no template arguments".to_string()));
                    continue;
                }
                DeclKind::Function { id, .. } => (id, None),
                DeclKind::FunctionTemplate { .. } => {
                    let t = trial.insert(self.trial());
                    let given = explicit.clone().unwrap_or_default();
                    let targs = match &target_params {
                        Some(p) => self.deduce_for_fn_type(d, p, target_ret.as_ref(), given),
                        None => Some(given),
                    };
                    let deduced = targs.is_some();
                    let inst = targs
                        .and_then(|t| self.complete_targs(d, t, span))
                        .and_then(|t| self.instantiate_function(d, t, span, None, None))
                        .map(|(id, _)| id);
                    let Some(id) = inst else {
                        let why = t.first().map(|diag| diag.message);
                        drop(trial.take());
                        let why = match (why, target) {
                            (Some(w), _) => w,
                            (None, Some(t)) if !deduced => {
                                format!("its template arguments cannot be deduced from `{}`", self.ty_name(t))
                            }
                            (None, _) => "it cannot be instantiated with these template arguments".to_string(),
                        };
                        rejected.push((d, why));
                        continue;
                    };
                    (id, Some(d))
                }
                _ => continue,
            };
            let ty = self.fn_ptr_type(id);
            match target {
                Some(t) if ty.as_ref() != Some(t) => {
                    drop(trial);
                    let got = ty.map(|t| self.ty_name(&t)).unwrap_or_default();
                    let what = if template.is_some() { "this instance" } else { "it" };
                    rejected.push((d, format!("{what} is a `{got}`")));
                }
                _ => {
                    if let Some(t) = trial {
                        t.commit();
                    }
                    if !found.iter().any(|&(f, _)| f == id) {
                        found.push((id, template));
                    }
                }
            }
        }
        // [over.over]: a function that is not a template beats instances of
        // templates; of those, the most specialised template's wins.
        if found.len() > 1 && found.iter().any(|(_, t)| t.is_none()) {
            found.retain(|(_, t)| t.is_none());
        }
        if found.len() > 1 && found.iter().all(|(_, t)| t.is_some()) {
            let nargs = target_params.as_ref().map_or(0, |p| p.len());
            let ds: Vec<DeclId> = found.iter().filter_map(|(_, t)| *t).collect();
            let best: Vec<(FuncId, Option<DeclId>)> = found
                .iter()
                .copied()
                .filter(|(_, t)| t.is_some_and(|d| ds.iter().all(|&e| e == d || self.more_specialized(d, e, nargs))))
                .collect();
            if best.len() == 1 {
                found = best;
            }
        }
        let [(f, _)] = found.as_slice() else {
            let want = target.map(|t| format!(" as `{}`", self.ty_name(t))).unwrap_or_default();
            let mut d = if found.is_empty() {
                let msg = match (&explicit, target) {
                    (Some(e), None) => format!("no overload of `{name}` takes the template arguments {}", self.targs_display(e)),
                    _ => format!("no function `{name}` fits here{want}"),
                };
                let mut d = self.error(span, msg);
                for (decl, why) in &rejected {
                    d = d.secondary(self.decls[*decl].span, format!("not this one: {why}"));
                }
                d
            } else {
                let mut d = self.error(span, format!("`{name}` is overloaded: which function it means is ambiguous here{want}"));
                for (_, t) in &found {
                    if let Some(decl) = t {
                        d = d.secondary(self.decls[*decl].span, "it could be this one");
                    }
                }
                d
            };
            if !found.is_empty() && explicit.is_some() {
                d = d.note("more than one overload takes these template arguments");
            } else if target.is_none() && explicit.is_none() {
                d = d.help(format!(
                    "use it where the pointer type is known (`R (*p)(P…) = {name};`), or write a template's arguments (`{name}<float>`)"
                ));
            }
            drop(d);
            return None;
        };
        let f = *f;
        if self.ref_returns.contains(&f) {
            self.error(span, format!("a pointer to `{name}`, which returns a reference, is not supported by the simulator yet"))
                .help("return the value instead of a reference");
            return None;
        }
        let ty = self.fn_ptr_type(f)?;
        Some(mk(H::FuncRef(f), ty, span))
    }

    /// `e` converted to function pointer type `to`, when `e` names
    /// functions (an overloaded name is chosen by `to`); `None` when `e` is
    /// some other expression.
    pub(crate) fn coerce_function_name(&mut self, e: &ast::Expr, to: &Type) -> Option<Option<hir::Expr>> {
        if !matches!(to, Type::FnPtr { .. }) {
            return None;
        }
        let (decls, seg, span) = self.named_functions(e)?;
        Some(self.written_targs(&seg).and_then(|explicit| self.function_value(&decls, &seg.ident.name, explicit, Some(to), span)))
    }

    /// A function named as a template argument: resolved now when the name
    /// alone picks it, otherwise when the parameter's type is known.
    pub(crate) fn function_targ(&mut self, e: &ast::Expr) -> Option<Option<TArg>> {
        let (decls, seg, span) = self.named_functions(e)?;
        let Some(explicit) = self.written_targs(&seg) else { return Some(None) };
        let single = decls.len() == 1 && (explicit.is_some() || matches!(self.decls[decls[0]].kind, DeclKind::Function { .. }));
        // A template whose written arguments leave some to deduce
        // (`impl<2>` of `template <int N, typename T>`) takes them from the
        // function type of the parameter it is given to.
        let partial = |c: &mut Self| match (&explicit, &c.decls[decls[0]].kind) {
            (Some(given), DeclKind::FunctionTemplate { .. }) => c.complete_targs_quiet(decls[0], given, span).is_none(),
            _ => false,
        };
        if single && !partial(self) {
            let h = self.function_value(&decls, &seg.ident.name, explicit, None, span);
            return Some(h.and_then(|h| match h.kind {
                H::FuncRef(f) => Some(TArg::Func(f, h.ty)),
                _ => None,
            }));
        }
        Some(Some(TArg::FuncName { decls, explicit, name: seg.ident.name.clone(), span }))
    }

    /// The template arguments written after a name (`Some(None)`: none).
    pub(crate) fn written_targs(&mut self, seg: &ast::PathSegment) -> Option<Option<Vec<TArg>>> {
        match &seg.template_args {
            Some(t) => Some(Some(self.template_args(t)?)),
            None => Some(None),
        }
    }

    /// A function template argument given to a value parameter of type
    /// `ty`: the function (an overload set is resolved by `ty`), or an error.
    pub(crate) fn bind_function_targ(&mut self, a: &TArg, ty: &Type, pname: &str, span: Span) -> Option<TArg> {
        match a {
            TArg::Func(f, fty) if fty == ty => Some(TArg::Func(*f, fty.clone())),
            TArg::Func(_, fty) => {
                let (got, want) = (self.ty_name(fty), self.ty_name(ty));
                self.error(span, format!("template parameter `{pname}` takes a `{want}`, but this function is a `{got}`"));
                None
            }
            TArg::FuncName { decls, explicit, name, span: at } => {
                let h = self.function_value(decls, name, explicit.clone(), Some(ty), *at)?;
                let H::FuncRef(f) = h.kind else { return None };
                Some(TArg::Func(f, h.ty))
            }
            _ => {
                let want = self.ty_name(ty);
                self.error(span, format!("template parameter `{pname}` takes a function (a `{want}`)"));
                None
            }
        }
    }

    /// A call through function pointer `callee`: arguments are checked
    /// against its parameter types. A pointer known here (a function
    /// named, a template argument) becomes a direct call.
    pub(crate) fn call_through(&mut self, callee: hir::Expr, args: Vec<hir::Expr>, span: Span) -> Option<hir::Expr> {
        let Type::FnPtr { ret, params } = callee.ty.clone() else { return None };
        if args.len() != params.len() {
            let shown = self.ty_name(&callee.ty);
            let given = if args.len() == 1 { "1 was".to_string() } else { format!("{} were", args.len()) };
            self.error(span, format!("this function pointer (`{shown}`) takes {} arguments, but {given} given", params.len()));
            return None;
        }
        let hargs = self.bind_args_pub(&params, args)?;
        match callee.kind {
            H::FuncRef(f) => self.call_expr(f, hargs, span),
            _ => Some(mk(H::CallPtr { callee: Box::new(callee), args: hargs }, *ret, span)),
        }
    }

    /// `f == g`, `f != nullptr`: whether two function pointers hold the
    /// same function.
    pub(crate) fn fn_ptr_compare(&mut self, op: ast::BinaryOp, l: hir::Expr, r: hir::Expr, span: Span) -> Option<hir::Expr> {
        use ast::BinaryOp::{Eq, Ne};
        let (l, r) = meet_null(l, r);
        if !matches!(op, Eq | Ne) || l.ty != r.ty {
            let (a, b) = (self.ty_name(&l.ty), self.ty_name(&r.ty));
            self.error(span, format!("invalid operands to `{}`: `{a}` and `{b}`", op.as_str()))
                .note("function pointers of one type compare with `==` and `!=` (with each other or with `nullptr`)");
            return None;
        }
        Some(mk(H::PtrCompare { op, lhs: Box::new(l), rhs: Box::new(r) }, Type::BOOL, span))
    }

    /// Refuse a function pointer type where the host would have to supply
    /// it (`what` names the place).
    pub(crate) fn refuse_stored_fn_ptr(&self, ty: &Type, span: Span, what: &str) -> bool {
        let mut t = ty;
        while let Type::Array { elem, .. } = t {
            t = elem;
        }
        if !matches!(t, Type::FnPtr { .. }) {
            return false;
        }
        self.error(span, format!("{what} of function pointer type is not supported by the simulator"))
            .note(RUNTIME_NOTE)
            .help("choose the function in the kernel (a `constant` table of functions indexed by an argument works)");
        true
    }
}

/// Two operands where one may be `nullptr`: it becomes the null value of
/// the other's type.
pub(crate) fn meet_null(a: hir::Expr, b: hir::Expr) -> (hir::Expr, hir::Expr) {
    match (&a.ty, &b.ty) {
        (Type::NullPtr, t) => (mk(H::Zero, t.clone(), a.span), b),
        (t, Type::NullPtr) => {
            let z = mk(H::Zero, t.clone(), b.span);
            (a, z)
        }
        _ => (a, b),
    }
}
