//! Calls: user functions (with overloads, templates and default
//! arguments), member functions, and the standard library.

use super::expr::mk;
use super::{Checker, DeclKind, TArg};
use crate::ast::{self, AddressSpace, ExprKind as A};
use crate::builtins::{self, Namespace};
use crate::diag::suggest;
use crate::hir::{self, BuiltinId, ConstValue, ExprKind as H, FuncId};
use crate::source::Span;
use crate::types::{implicit_conversion, ConvRank, Scalar, Type};
use std::rc::Rc;

/// The name constructor templates are declared under in their struct's
/// scope (the struct's own name must keep naming the type there).
pub(crate) const CTOR_TEMPLATE: &str = "$ctor";

/// A candidate function for overload resolution.
enum Candidate {
    Ready(FuncId, Vec<Type>),
    /// A template to instantiate with these arguments if chosen.
    Template(usize, Vec<TArg>, Vec<Type>),
}

impl Candidate {
    fn params(&self) -> &[Type] {
        match self {
            Candidate::Ready(_, p) | Candidate::Template(_, _, p) => p,
        }
    }
}

impl<'a> Checker<'a, '_> {
    pub(crate) fn call(&mut self, callee: &ast::Expr, args: &[ast::Expr], span: Span) -> Option<hir::Expr> {
        let args = self.expand_exprs(args)?;
        let args = &*args;
        if let Some(h) = self.log_call(callee, args, span) {
            return h;
        }
        match &callee.kind {
            A::Member { base, name, arrow, targs } => {
                let b = self.expr(base)?;
                let b = if *arrow {
                    match b.ty.clone() {
                        Type::Pointer { pointee, .. } => mk(H::Deref(Box::new(b)), *pointee, base.span),
                        _ => {
                            self.error(callee.span, "`->` needs a pointer");
                            return None;
                        }
                    }
                } else {
                    b
                };
                let explicit = match targs {
                    Some(t) => Some(self.template_args(t)?),
                    None => None,
                };
                let hargs = self.args(args)?;
                // `r.op(a, b)` with `op` a data member holding a functor.
                if let (Type::Struct(sid), None) = (&b.ty, &explicit) {
                    let sid = *sid;
                    let field = self.tables.struct_def(sid).fields.iter().position(|f| *f.name == *name.name);
                    let field =
                        field.filter(|&i| !self.has_method(sid, &name.name) && Self::is_class(&self.tables.struct_def(sid).fields[i].ty));
                    if let Some(idx) = field {
                        let obj = self.field_expr(b, sid, idx, callee.span);
                        return self.call_object(obj, hargs, span);
                    }
                }
                self.method_call_targs(b, name, explicit, hargs, span)
            }
            A::Name(path) => self.named_call(path, args, span),
            _ => {
                let h = self.expr(callee)?;
                if Self::is_class(&h.ty) {
                    let hargs = self.args(args)?;
                    return self.call_object(h, hargs, span);
                }
                if matches!(h.ty, Type::FnPtr { .. }) {
                    let hargs = self.args(args)?;
                    return self.call_through(h, hargs, span);
                }
                let n = self.ty_name(&h.ty);
                self.error(callee.span, format!("a value of type `{n}` cannot be called like a function"));
                None
            }
        }
    }

    fn args(&mut self, args: &[ast::Expr]) -> Option<Vec<hir::Expr>> {
        let mut out = Vec::with_capacity(args.len());
        let mut ok = true;
        for a in args {
            if let A::InitList(_) = a.kind {
                self.error(a.span, "a braced list cannot be passed directly here; write its type in front, e.g. `float2{1, 2}`");
                ok = false;
                continue;
            }
            match self.expr(a) {
                Some(h) => out.push(h),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    /// Functions `name` declared after the current template's definition
    /// that argument-dependent lookup finds for `args` (not in `have`).
    fn later_argument_dependent(&mut self, name: &str, args: &[ast::Expr], have: &[usize]) -> Vec<usize> {
        let later = self
            .by_name
            .get(name)
            .is_some_and(|all| all.iter().any(|&d| d >= self.env.visible && !have.contains(&d) && self.is_function_decl(d)));
        if !later || args.iter().any(|a| matches!(a.kind, A::InitList(_))) {
            return Vec::new();
        }
        // The argument types only; the call checks the arguments again.
        let trial = self.trial();
        let tys: Vec<Type> = args.iter().filter_map(|a| self.expr(a).map(|h| h.ty)).collect();
        drop(trial);
        let mut found = self.argument_dependent(name, tys.iter());
        found.retain(|d| !have.contains(d));
        found
    }

    fn named_call(&mut self, path: &ast::Path, args: &[ast::Expr], span: Span) -> Option<hir::Expr> {
        let segs = &path.segments;
        let (segs, in_metal) = if segs.len() > 1 && &*segs[0].ident.name == "metal" { (&segs[1..], true) } else { (&segs[..], false) };
        let (last, prefix) = segs.split_last()?;
        let name: &str = &last.ident.name;
        // numeric_limits<T>::max()
        if prefix.len() == 1 && &*prefix[0].ident.name == "numeric_limits" {
            let targs = prefix[0].template_args.as_ref()?;
            let t = self.template_args(targs)?;
            // `numeric_limits<indexed<float>>::max()`: the library's
            // specialization of `_numeric_limits_impl` for its own type.
            if !matches!(t.as_slice(), [TArg::Type(Type::Scalar(_))]) && self.limits_specialized(&t) {
                let mut impl_path = path.clone();
                impl_path.global = false;
                impl_path.segments = segs.to_vec();
                impl_path.segments[0].ident.name = Rc::from(super::templates::LIMITS_IMPL);
                return self.named_call(&impl_path, args, span);
            }
            return self.numeric_limits(&t, name, span);
        }
        // metal::fast::exp / metal::precise::sqrt
        let ns = match prefix.first().map(|s| &*s.ident.name) {
            Some("fast") if prefix.len() == 1 => Some(Namespace::Fast),
            Some("precise") if prefix.len() == 1 => Some(Namespace::Precise),
            _ => None,
        };
        if ns.is_some() || (in_metal && prefix.is_empty()) {
            let hargs = self.args(args)?;
            return self.builtin_call(name, ns.or(Some(Namespace::Metal)), last.template_args.as_deref(), hargs, span, last.ident.span);
        }
        if prefix.is_empty() && name == "__is_empty" {
            return self.is_empty_intrinsic(args, span);
        }
        if prefix.is_empty() && name == "is_function_constant_defined" {
            return self.is_function_constant_defined(args, span);
        }
        if prefix.is_empty() {
            let is_method = self.env.this_struct.is_some_and(|sid| self.has_method(sid, name));
            if self.find_local_pub(name).is_some() || (!is_method && self.this_field_type(name).is_some()) {
                let obj = self.expr(&ast::Expr { kind: ast::ExprKind::Name(path.clone()), span: last.ident.span })?;
                if Self::is_class(&obj.ty) {
                    let hargs = self.args(args)?;
                    return self.call_object(obj, hargs, span);
                }
                if matches!(obj.ty, Type::FnPtr { .. }) {
                    let hargs = self.args(args)?;
                    return self.call_through(obj, hargs, span);
                }
                self.error(last.ident.span, format!("`{name}` is a variable, not a function"));
                return None;
            }
            if let Some(sid) = self.env.this_struct {
                if self.has_method(sid, name) {
                    if let Some(this) = self.fs.as_ref().and_then(|f| f.this_local) {
                        let this_ty = self.fs.as_ref()?.locals[this.0 as usize].ty.clone();
                        let Type::Pointer { pointee, .. } = &this_ty else { return None };
                        let obj = mk(H::Deref(Box::new(mk(H::Local(this), this_ty.clone(), span))), (**pointee).clone(), span);
                        let hargs = self.args(args)?;
                        return self.method_call(obj, &last.ident, hargs, span);
                    }
                }
            }
        }
        // User declarations. `prefix_class`: the class a qualified name's
        // prefix names, when the name is looked up among its members.
        let mut prefix_class = None;
        let decls = if prefix.is_empty() {
            if in_metal {
                Vec::new()
            } else {
                self.lookup_global(name)
            }
        } else {
            let mut found = Vec::new();
            if prefix.iter().all(|s| s.template_args.is_none()) {
                let scope: Vec<Rc<str>> = prefix.iter().map(|s| s.ident.name.clone()).collect();
                found = self.lookup_qualified(&scope, name).map(|d| self.lookup_in(&self.decls[d].scope.clone(), name)).unwrap_or_default();
            }
            // `Struct<T>::f(...)`: a static member function.
            if found.is_empty() {
                let prefix_path = ast::Path { global: false, segments: prefix.to_vec(), span: path.span };
                if let Some(class @ Type::Struct(sid)) = self.resolve_type_prefix(&prefix_path).ok()? {
                    prefix_class = Some(class);
                    // `Base::f(...)` in a member function: `f` of this
                    // object's `Base` subobject (no virtual dispatch).
                    let this_sid = self.env.this_struct.filter(|&t| t == sid || self.is_base_of(sid, t));
                    if this_sid.is_some() && self.has_method(sid, name) && last.template_args.is_none() {
                        if let Some(obj) = self.this_as(sid, span) {
                            let hargs = self.args(args)?;
                            return self.method_call(obj, &last.ident, hargs, span);
                        }
                    }
                    found = self.lookup_member_decls(sid, name);
                }
            }
            found
        };
        let mut funcs: Vec<usize> = decls.iter().copied().filter(|&d| self.is_function_decl(d)).collect();
        if prefix.is_empty() && !in_metal {
            funcs.extend(self.later_argument_dependent(name, args, &funcs));
        }
        if !funcs.is_empty() {
            if args.iter().any(|a| matches!(a.kind, A::InitList(_))) {
                let explicit = match &last.template_args {
                    Some(t) => Some(self.template_args(t)?),
                    None => None,
                };
                return self.call_with_braced_args(name, &funcs, explicit, args, span, last.ident.span);
            }
            let hargs = self.args(args)?;
            let explicit = match &last.template_args {
                Some(t) => Some(self.template_args(t)?),
                None => None,
            };
            // Fall back to the standard library if no user overload fits
            // (MLX's preamble adds overloads beside Metal's own).
            if builtins::lookup(name).is_some() && explicit.is_none() && self.library_call_wins(name, &funcs, &hargs) {
                return self.builtin_call(name, None, None, hargs, span, last.ident.span);
            }
            return self.user_call(name, &funcs, explicit, hargs, span, last.ident.span);
        }
        if let Some(&d) = decls.last() {
            if matches!(
                self.decls[d].kind,
                DeclKind::Struct(_)
                    | DeclKind::Alias(_)
                    | DeclKind::Enum(_)
                    | DeclKind::StructTemplate { .. }
                    | DeclKind::AliasTemplate { .. }
            ) {
                let ty = self.resolve_type(&ast::TypeExpr {
                    kind: ast::TypeExprKind::Named { path: path.clone(), is_const: false, is_volatile: false, addr_space: None },
                    span: path.span,
                })?;
                return self.construct(&ty.ty, args, span, true);
            }
            // A program-scope function pointer (`constant Op op = f;`).
            if let DeclKind::Global(g) = self.decls[d].kind {
                if matches!(self.globals[g.0 as usize].ty, Type::FnPtr { .. }) {
                    let ty = self.globals[g.0 as usize].ty.clone();
                    let hargs = self.args(args)?;
                    return self.call_through(mk(H::Global(g), ty, last.ident.span), hargs, span);
                }
            }
            let n = name.to_string();
            self.error(last.ident.span, format!("`{n}` is not a function")).secondary(self.decls[d].span, "declared here");
            return None;
        }
        if prefix.is_empty() || in_metal {
            match self.env.targs.get(name).cloned() {
                Some(TArg::Type(t)) => return self.construct(&t, args, span, true),
                // `radix_func(x, y)` with a function template argument.
                Some(TArg::Func(f, ty)) => {
                    let hargs = self.args(args)?;
                    return self.call_through(mk(H::FuncRef(f), ty, last.ident.span), hargs, span);
                }
                _ => {}
            }
            // `make_uniform(x)`: the value itself (see `uniform<T>`).
            if name == "make_uniform" && last.template_args.is_none() {
                let mut hargs = self.args(args)?;
                if hargs.len() != 1 || !matches!(hargs[0].ty, Type::Scalar(_) | Type::Vector { .. }) {
                    self.error(span, "`make_uniform` takes one scalar or vector value");
                    return None;
                }
                return hargs.pop();
            }
            if builtins::lookup(name).is_some()
                || matches!(name, "as_type" | "make_filled_simdgroup_matrix")
                || super::matrix::MATRIX_FUNCTIONS.contains(&name)
            {
                let hargs = self.args(args)?;
                return self.builtin_call(name, None, last.template_args.as_deref(), hargs, span, last.ident.span);
            }
        }
        if prefix.is_empty() {
            if super::intrinsics::clang_bit_builtin(name).is_some() {
                let hargs = self.args(args)?;
                return self.clang_builtin_call(name, hargs, span, last.ident.span);
            }
            if let Some(intrinsic) = name.strip_prefix(super::intrinsics::PREFIX) {
                let hargs = self.args(args)?;
                return self.metal_intrinsic(intrinsic, hargs, span, last.ident.span);
            }
        }
        // `Struct<T>::f(...)` where that class has no `f`: name the class
        // (an explicit specialization may lack a member the others have).
        if let Some(t) = prefix_class {
            let _ = self.args(args);
            let class = self.ty_name(&t);
            self.error(last.ident.span, format!("no member named `{name}` in `{class}`"))
                .label(format!("`{class}` has no function or static member `{name}`"))
                .help("if a specialization of this class template lacks the member, add it there or avoid this instantiation");
            return None;
        }
        // Unknown function.
        let _ = self.args(args);
        let later = self.later_decl(name);
        let mut names: Vec<String> = self
            .decls
            .iter()
            .take(self.env.visible)
            .filter(|d| matches!(d.kind, DeclKind::Function { .. } | DeclKind::FunctionTemplate { .. }))
            .map(|d| d.name.to_string())
            .collect();
        names.extend(builtins::names().map(|s| s.to_string()));
        let shown = path.plain_name();
        let mut d = self
            .error(last.ident.span, format!("call to undeclared function `{shown}`"))
            .label("no function with this name is declared above")
            .code(crate::diag::codes::UNDECLARED_NAME)
            .subject(shown.clone());
        if let Some(l) = later {
            d = d
                .secondary(l, "it is declared here, after this call")
                .help(format!("move `{name}` above the function that calls it, or declare its prototype first"));
        } else if let Some(s) = suggest(name, names.iter().map(|s| s.as_str())) {
            d = d.help(format!("did you mean `{s}`?"));
        } else {
            d = d.note("functions must be declared before they are called; Metal's library functions are listed in the Metal Shading Language specification");
        }
        drop(d);
        None
    }

    /// `f({a, b})`: a braced list takes its type from the parameter (C++
    /// deduces nothing from it). The overloads of that arity are those
    /// functions, and the templates whose arguments are all written or
    /// defaulted (`elem_to_loc<IdxT>({x, y, z}, …)`); of these, the one call
    /// whose braced lists all initialize their parameters is made.
    fn call_with_braced_args(
        &mut self,
        name: &str,
        funcs: &[usize],
        explicit: Option<Vec<TArg>>,
        args: &[ast::Expr],
        span: Span,
        name_span: Span,
    ) -> Option<hir::Expr> {
        let mut fitting: Vec<(FuncId, Vec<Type>)> = Vec::new();
        for &d in funcs {
            let trial = self.trial();
            let cand = match self.decls[d].kind.clone() {
                DeclKind::Function { id, params, .. } if explicit.is_none() && params.len() == args.len() => Some((id, params)),
                DeclKind::FunctionTemplate { ast: f, .. } if f.params.len() == args.len() => self
                    .complete_targs(d, explicit.clone().unwrap_or_default(), span)
                    .and_then(|targs| self.instantiate_function(d, targs, span, None, None))
                    .map(|(id, sig)| (id, sig.params)),
                _ => None,
            };
            let fits = cand.as_ref().is_some_and(|(_, params)| {
                args.iter().zip(params).all(|(a, p)| match (&a.kind, p) {
                    (A::InitList(_), Type::Reference { referee, .. }) => self.coerce_ast(a, referee, "the argument").is_some(),
                    (A::InitList(_), _) => self.coerce_ast(a, p, "the argument").is_some(),
                    _ => true,
                })
            });
            drop(trial);
            if let (true, Some(c)) = (fits, cand) {
                fitting.push(c);
            }
        }
        let [(func, params)] = fitting.as_slice() else {
            let why = if fitting.is_empty() { "no overload of" } else { "more than one overload of" };
            self.error(name_span, format!("{why} `{name}` takes a braced list `{{...}}` here"))
                .help("write the argument's type in front of the braces, e.g. `uint4{a, b, c, d}`");
            return None;
        };
        let (func, params) = (*func, params.clone());
        let mut hargs = Vec::with_capacity(args.len());
        for (a, p) in args.iter().zip(&params) {
            let h = match (&a.kind, p) {
                (A::InitList(_), Type::Reference { referee, .. }) => self.coerce_ast(a, referee, "the argument")?,
                (A::InitList(_), _) => self.coerce_ast(a, p, "the argument")?,
                _ => self.expr(a)?,
            };
            hargs.push(h);
        }
        let hargs = self.bind_args(&params, hargs)?;
        if self.functions[func.0 as usize].as_ref().is_some_and(|f| f.span == Span::default()) {
            self.undefined_calls.push((func, span));
        }
        self.call_expr(func, hargs, span)
    }

    /// The object of a member call: its address (in its own space), or the
    /// address of a temporary holding it.
    pub(crate) fn this_pointer(&mut self, obj: hir::Expr, span: Span) -> Option<(hir::Expr, AddressSpace)> {
        Some(if obj.is_place() {
            let (space, is_const) = self.place_info(&obj);
            let ty = Type::Pointer { pointee: Box::new(obj.ty.clone()), space, is_const };
            (mk(H::AddrOf(Box::new(obj)), ty, span), space)
        } else {
            let tmp = self.temp_local(obj.ty.clone(), span)?;
            let place = mk(H::Local(tmp), obj.ty.clone(), span);
            let assign = mk(H::Assign { place: Box::new(place.clone()), value: Box::new(obj.clone()) }, obj.ty.clone(), span);
            let ty = Type::pointer(obj.ty.clone(), AddressSpace::Thread, false);
            let addr = mk(H::AddrOf(Box::new(place)), ty.clone(), span);
            (mk(H::Comma { lhs: Box::new(assign), rhs: Box::new(addr) }, ty, span), AddressSpace::Thread)
        })
    }

    /// `m.thread_elements()`: the two elements of SIMD-group matrix `m`
    /// this thread holds, as a `vec<T, 2>` place aliasing the matrix (a
    /// thread's share of a matrix is laid out exactly so).
    fn thread_elements(&mut self, m: hir::Expr, elem: crate::types::Scalar, span: Span) -> Option<hir::Expr> {
        let (ptr, _) = self.this_pointer(m, span)?;
        let Type::Pointer { space, is_const, .. } = ptr.ty else { return None };
        let vty = Type::vector(elem, 2);
        let vptr = Type::Pointer { pointee: Box::new(vty.clone()), space, is_const };
        Some(mk(H::Deref(Box::new(mk(H::PtrCast(Box::new(ptr)), vptr, span))), vty, span))
    }

    /// Whether struct `sid` has a member function (or member function
    /// template) called `name` that takes `this`.
    pub(crate) fn has_method(&self, sid: crate::types::StructId, name: &str) -> bool {
        let own = |c: &Self, s: crate::types::StructId| {
            c.structs[s.0 as usize].methods.iter().any(|(f, _)| *f.name.last().ident.name == *name)
                || c.own_member_decls(s, name).iter().any(|d| c.method_templates.contains_key(d))
        };
        own(self, sid) || !matches!(self.find_in_bases(sid, &own), super::inherit::Found::None)
    }

    fn find_local_pub(&self, name: &str) -> Option<hir::LocalId> {
        let fs = self.fs.as_ref()?;
        fs.scopes.iter().rev().find_map(|s| s.find(name))
    }

    /// Should a call of `name` go to the standard library rather than the
    /// user's overloads? Both are in the overload set (Metal's functions are
    /// visible everywhere): the library wins when no user overload fits, or
    /// when its own match is strictly better than every user overload's
    /// (MLX adds `simd_shuffle_down(int64_t, …)` beside Metal's: a `uint`
    /// argument still calls Metal's exact `uint` overload).
    fn library_call_wins(&mut self, name: &str, funcs: &[usize], args: &[hir::Expr]) -> bool {
        let trial = self.trial();
        let cands = self.candidates(funcs, None, args);
        drop(trial);
        let user: Vec<Vec<ConvRank>> = cands.iter().filter_map(|c| self.score(c.params(), args)).collect();
        if user.is_empty() {
            return true;
        }
        let Ok(r) = builtins::resolve(name, None, &self.arg_infos(args)) else { return false };
        let Some(lib) = self.score(&r.params, args) else { return false };
        let at_least_as_good = |u: &[ConvRank]| u.iter().zip(&lib).all(|(x, y)| x <= y);
        !user.iter().any(|u| at_least_as_good(u))
    }

    /// Whether some function of `funcs` can take `args` (quiet: deduction
    /// and instantiation leave no diagnostics).
    pub(crate) fn has_viable_overload(&mut self, funcs: &[usize], args: &[hir::Expr]) -> bool {
        let trial = self.trial();
        let cands = self.candidates(funcs, None, args);
        drop(trial);
        cands.iter().any(|c| self.score(c.params(), args).is_some())
    }

    /// Build the candidate list (deducing template arguments).
    fn candidates(&mut self, funcs: &[usize], explicit: Option<&Vec<TArg>>, args: &[hir::Expr]) -> Vec<Candidate> {
        let mut out = Vec::new();
        for &d in funcs {
            match self.decls[d].kind.clone() {
                DeclKind::Function { id, params, ast, .. } => {
                    if explicit.is_some() {
                        continue;
                    }
                    // Default arguments let a call pass fewer values.
                    let required = ast.params.iter().take_while(|p| p.default.is_none()).count().min(params.len());
                    if args.len() >= required && args.len() < params.len() {
                        out.push(Candidate::Ready(id, params[..args.len()].to_vec()));
                    } else {
                        out.push(Candidate::Ready(id, params));
                    }
                }
                DeclKind::FunctionTemplate { ast, params } => {
                    let Some(targs) = self.deduce_for(d, args, explicit.cloned().unwrap_or_default()) else { continue };
                    let trial = self.trial();
                    let fitted = self.complete_targs_quiet(d, &targs, ast.name.span).and_then(|targs| {
                        let ptys = self.candidate_param_types(d, ast, params, &targs)?;
                        Some((targs, ptys))
                    });
                    drop(trial);
                    let Some((targs, mut ptys)) = fitted else { continue };
                    // Default arguments let a call pass fewer values.
                    let required = ast.params.iter().take_while(|p| p.default.is_none()).count();
                    if args.len() >= required && args.len() < ptys.len() {
                        ptys.truncate(args.len());
                    }
                    out.push(Candidate::Template(d, targs, ptys));
                }
                _ => {}
            }
        }
        out
    }

    /// The parameter types of template `d` for complete arguments `targs`;
    /// `None` when a parameter or the return type does not exist for them
    /// (`enable_if_t<false, T>`). Memoized: every instance of a template
    /// calling the same helpers asks again.
    fn candidate_param_types(
        &mut self,
        d: usize,
        ast: &'a ast::Function,
        params: &'a [ast::TemplateParam],
        targs: &[TArg],
    ) -> Option<Vec<Type>> {
        if let Some(known) = self.inst.find(d, targs).and_then(|k| self.inst.candidate_params.get(&k)) {
            return known.clone();
        }
        let env = self.template_env(d, params, targs);
        let mut there = self.elsewhere(env);
        let mut ptys = Vec::new();
        let mut ok = true;
        let fparams = match there.expanded_params(ast) {
            Some(p) => p,
            None => {
                ok = false;
                std::borrow::Cow::Borrowed(&[][..])
            }
        };
        for p in fparams.iter() {
            match there.resolve_param_type(&p.ty) {
                Some(q) => ptys.push(super::decls::param_type(q, &p.ty)),
                None => ok = false,
            }
        }
        // SFINAE: a return type that does not exist for these
        // arguments (`enable_if_t<false, T>`) drops the candidate.
        let auto_ret = matches!(&ast.ret.kind, ast::TypeExprKind::Named { path, .. } if path.plain_name() == "auto");
        if ok && !auto_ret && there.signature_ret(ast).is_none() {
            ok = false;
        }
        drop(there);
        let got = ok.then_some(ptys);
        let key = self.inst.key(d, targs);
        self.inst.candidate_params.insert(key, got.clone());
        got
    }

    /// Conversion ranks of each argument, or None if one doesn't convert.
    fn score(&self, params: &[Type], args: &[hir::Expr]) -> Option<Vec<ConvRank>> {
        if params.len() != args.len() {
            return None;
        }
        params
            .iter()
            .zip(args)
            .map(|(p, a)| match p {
                Type::Reference { referee, space, is_const } => {
                    let to_base = a.is_place() && self.derived_to_base(&a.ty, referee);
                    if a.is_place() && (a.ty == **referee || to_base) {
                        let (s, c) = self.place_info(a);
                        // `constant` memory is read-only, so a `constant T&`
                        // is const whether or not it says so.
                        let binds_const = *is_const || *space == AddressSpace::Constant;
                        let rank = if to_base { ConvRank::Conversion } else { ConvRank::Exact };
                        (s == *space && (!c || binds_const)).then_some(rank)
                    } else if *is_const {
                        implicit_conversion(&a.ty, referee)
                    } else {
                        None
                    }
                }
                _ => {
                    if let (Type::Enum(e), Type::Scalar(_)) = (&a.ty, p) {
                        if self.tables.enum_def(*e).scoped {
                            return None;
                        }
                    }
                    let from = match &a.ty {
                        Type::Array { elem, .. } if p.is_pointer() => {
                            let (space, is_const) = if a.is_place() { self.place_info(a) } else { (AddressSpace::Thread, false) };
                            Type::Pointer { pointee: elem.clone(), space, is_const }
                        }
                        t => t.clone(),
                    };
                    implicit_conversion(&from, p)
                        .or_else(|| self.derived_to_base(&from, p).then_some(ConvRank::Conversion))
                        .or_else(|| self.may_convert_user_defined(&a.ty, p).then_some(ConvRank::UserDefined))
                }
            })
            .collect()
    }

    /// Whether a user-defined conversion from `from` to `to` may exist (the
    /// source struct has a conversion operator, or the target struct has a
    /// constructor); binding the argument does the real conversion.
    fn may_convert_user_defined(&self, from: &Type, to: &Type) -> bool {
        let from_ops = match from {
            Type::Struct(sid) => {
                let info = &self.structs[sid.0 as usize];
                info.methods.iter().any(|(f, _)| super::operators::is_conversion_name(&f.name.last().ident.name))
                    || !info.conversion_templates.is_empty()
            }
            _ => false,
        };
        let to_ctor = match to {
            Type::Struct(sid) => from != to && self.has_constructors(*sid),
            _ => false,
        };
        from_ops || to_ctor
    }

    /// No overload fits a call: one error naming each overload and why it
    /// does not fit (its first error, found quietly).
    fn no_overload_fits(&mut self, name: &str, funcs: &[usize], explicit: Option<&[TArg]>, args: &[hir::Expr], name_span: Span) {
        let mut reasons = Vec::new();
        for &d in funcs {
            let why = match self.decls[d].kind.clone() {
                DeclKind::FunctionTemplate { .. } => {
                    let trial = self.trial();
                    let given = explicit.unwrap_or_default().to_vec();
                    let done = self.deduce_for(d, args, given).and_then(|t| self.complete_targs(d, t, name_span));
                    let first = trial.first().map(|diag| diag.message);
                    drop(trial);
                    match (done, first) {
                        (_, Some(w)) => w,
                        (None, None) => "the call's argument types do not fit its parameters".to_string(),
                        (Some(_), None) => "its parameter or return types are not valid for these arguments".to_string(),
                    }
                }
                DeclKind::Function { .. } if explicit.is_some() => "not a template, so it takes no template arguments".to_string(),
                DeclKind::Function { params, .. } => {
                    let shown: Vec<String> = params.iter().map(|t| self.ty_name(t)).collect();
                    format!("it takes ({})", shown.join(", "))
                }
                _ => continue,
            };
            reasons.push((self.decls[d].span, why));
        }
        let mut diag = match explicit {
            Some(explicit) => {
                let shown = self.targs_display(explicit);
                self.error(name_span, format!("no overload of `{name}` takes the template arguments {shown}"))
            }
            None => {
                let shown: Vec<String> = args.iter().map(|a| self.ty_name(&a.ty)).collect();
                self.error(name_span, format!("no overload of `{name}` fits the arguments ({})", shown.join(", ")))
            }
        };
        for (at, why) in reasons {
            diag = diag.secondary(at, format!("not this one: {why}"));
        }
    }

    pub(crate) fn user_call(
        &mut self,
        name: &str,
        funcs: &[usize],
        explicit: Option<Vec<TArg>>,
        args: Vec<hir::Expr>,
        span: Span,
        name_span: Span,
    ) -> Option<hir::Expr> {
        let cands = self.candidates(funcs, explicit.as_ref(), &args);
        if cands.is_empty() && funcs.len() > 1 {
            self.no_overload_fits(name, funcs, explicit.as_deref(), &args, name_span);
            return None;
        }
        if cands.is_empty() {
            // Explain the most likely reason.
            if let Some(&d) = funcs.first() {
                if let DeclKind::FunctionTemplate { .. } = self.decls[d].kind {
                    if self.deduce_for(d, &args, explicit.clone().unwrap_or_default()).is_some() {
                        // Deduction worked but defaults failed: report that.
                        let targs = self.deduce_for(d, &args, explicit.unwrap_or_default())?;
                        if self.complete_targs(d, targs, span).is_some() {
                            // The types were deduced, but a parameter or the
                            // return type does not exist for them (SFINAE).
                            let shown: Vec<String> = args.iter().map(|a| self.ty_name(&a.ty)).collect();
                            self.error(name_span, format!("template `{name}` does not apply to arguments ({})", shown.join(", ")))
                                .secondary(self.decls[d].span, "template declared here")
                                .note("its parameter or return types (e.g. an `enable_if_t` condition) are not valid for these argument types");
                        }
                        return None;
                    }
                    let shown: Vec<String> = args.iter().map(|a| self.ty_name(&a.ty)).collect();
                    self.error(name_span, format!("no way to call template `{name}` with arguments ({})", shown.join(", ")))
                        .secondary(self.decls[d].span, "template declared here")
                        .help("the argument types must agree with the template's parameters; give template arguments explicitly if needed");
                    return None;
                }
            }
            self.error(name_span, format!("`{name}` cannot take template arguments"));
            return None;
        }
        let mut ready = Vec::new();
        for c in &cands {
            ready.push(c.params().to_vec());
        }
        let best = self.best_candidate(name, &cands, &args, span, name_span, funcs)?;
        let cand = cands.into_iter().nth(best)?;
        let (func, params) = match cand {
            Candidate::Ready(id, p) => (id, p),
            Candidate::Template(d, targs, _) => {
                let (id, sig) = self.instantiate_function(d, targs, span, None, None)?;
                (id, sig.params)
            }
        };
        let nargs = args.len();
        let mut hargs = self.bind_args(&params, args)?;
        self.default_args(func, nargs, funcs, &mut hargs)?;
        if self.functions[func.0 as usize].as_ref().is_some_and(|f| f.span == Span::default()) {
            self.undefined_calls.push((func, span));
        }
        self.call_expr(func, hargs, span)
    }

    /// Append the default arguments of the parameters a call of `func` (one
    /// of `funcs`, or an instance of one of them) left out after `nargs`.
    fn default_args(&mut self, func: FuncId, nargs: usize, funcs: &[usize], hargs: &mut Vec<hir::Expr>) -> Option<()> {
        let full = self.instance_param_types(func);
        if nargs >= full.len() {
            return Some(());
        }
        let origin = self.inst.fn_origin.get(&func).map(|&k| self.inst.of(k)).map(|(d, t)| (d, t.to_vec()));
        let (ast, env) = match origin {
            Some((d, targs)) => {
                let DeclKind::FunctionTemplate { ast, params } = self.decls[d].kind.clone() else { return None };
                (ast, self.template_env(d, params, &targs))
            }
            None => {
                let d = funcs.iter().copied().find(|&d| matches!(self.decls[d].kind, DeclKind::Function { id, .. } if id == func))?;
                let DeclKind::Function { ast, .. } = self.decls[d].kind.clone() else { return None };
                (ast, self.decls[d].env.clone())
            }
        };
        for (p, pty) in ast.params.iter().zip(&full).skip(nargs) {
            let default = p.default.as_ref()?;
            let h = self.with_env(env.clone()).coerce_ast(default, pty, "the default argument");
            hargs.push(h?);
        }
        Some(())
    }

    /// Overload resolution among already-instantiated functions
    /// (constructors); returns the chosen function and bound arguments.
    /// A constructor of struct `sid` for `args`: its constructors (`sigs`)
    /// and constructor templates compete by the usual ranking (templates
    /// whose `enable_if` fails drop out).
    pub(crate) fn pick_constructor(
        &mut self,
        sid: crate::types::StructId,
        name: &str,
        sigs: Vec<(FuncId, Vec<Type>)>,
        args: Vec<hir::Expr>,
        span: Span,
    ) -> Option<(FuncId, Vec<hir::Expr>)> {
        let mut cands: Vec<Candidate> = sigs.into_iter().map(|(id, p)| Candidate::Ready(id, p)).collect();
        let templates: Vec<usize> = self.lookup_member_decls(sid, CTOR_TEMPLATE);
        cands.extend(self.candidates(&templates, None, &args));
        if cands.is_empty() {
            let shown: Vec<String> = args.iter().map(|a| self.ty_name(&a.ty)).collect();
            self.error(span, format!("no constructor of `{name}` takes ({})", shown.join(", ")));
            return None;
        }
        let best = self.best_candidate(name, &cands, &args, span, span, &templates)?;
        let (func, params) = match cands.into_iter().nth(best)? {
            Candidate::Ready(id, p) => (id, p),
            Candidate::Template(d, targs, _) => {
                let (id, sig) = self.instantiate_function(d, targs, span, None, Some((sid, AddressSpace::Thread)))?;
                (id, sig.params)
            }
        };
        let args = self.bind_args(&params, args)?;
        Some((func, args))
    }

    /// Pick the best candidate by C++ ranking; report no-match/ambiguity.
    fn best_candidate(
        &mut self,
        name: &str,
        cands: &[Candidate],
        args: &[hir::Expr],
        span: Span,
        name_span: Span,
        funcs: &[usize],
    ) -> Option<usize> {
        let scored: Vec<(usize, Vec<ConvRank>)> =
            cands.iter().enumerate().filter_map(|(i, c)| self.score(c.params(), args).map(|s| (i, s))).collect();
        if scored.is_empty() {
            let arg_list: Vec<String> = args.iter().map(|a| self.ty_name(&a.ty)).collect();
            let counts: Vec<usize> = cands.iter().map(|c| c.params().len()).collect();
            if counts.iter().all(|&n| n != args.len()) {
                let full: Vec<usize> = funcs
                    .iter()
                    .filter_map(|&d| match &self.decls[d].kind {
                        DeclKind::Function { params, .. } => Some(params.len()),
                        DeclKind::FunctionTemplate { ast, .. } => Some(ast.params.len()),
                        _ => None,
                    })
                    .collect();
                let expected = full.first().copied().unwrap_or(0);
                let plural = |n: usize| if n == 1 { "" } else { "s" };
                let mut d = self
                    .error(
                        span,
                        format!(
                            "`{name}` takes {expected} argument{} but {} {} given",
                            plural(expected),
                            args.len(),
                            if args.len() == 1 { "was" } else { "were" }
                        ),
                    )
                    .label("wrong number of arguments");
                if let Some(&f) = funcs.first() {
                    d = d.secondary(self.decls[f].span, "declared here");
                }
                drop(d);
                return None;
            }
            let mut d = self.error(name_span, format!("no matching function for call to `{name}({})`", arg_list.join(", ")));
            for c in cands {
                let ps: Vec<String> = c.params().iter().map(|t| self.ty_name(t)).collect();
                d = d.note(format!("candidate: `{name}({})`", ps.join(", ")));
            }
            drop(d);
            return None;
        }
        let better = |a: &[ConvRank], b: &[ConvRank]| a.iter().zip(b).all(|(x, y)| x <= y) && a.iter().zip(b).any(|(x, y)| x < y);
        let mut best: Vec<usize> = Vec::new();
        for (i, s) in &scored {
            if scored.iter().any(|(j, t)| j != i && better(t, s)) {
                continue;
            }
            best.push(*i);
        }
        if best.len() > 1 {
            // Prefer non-templates on a tie.
            let plain: Vec<usize> = best.iter().copied().filter(|&i| matches!(cands[i], Candidate::Ready(..))).collect();
            if plain.len() == 1 {
                return Some(plain[0]);
            }
            // Among templates only, the more specialised one wins.
            if plain.is_empty() {
                let decl = |i: usize| match cands[i] {
                    Candidate::Template(d, ..) => d,
                    Candidate::Ready(..) => usize::MAX,
                };
                let winners: Vec<usize> = best
                    .iter()
                    .copied()
                    .filter(|&i| best.iter().all(|&j| j == i || self.more_specialized(decl(i), decl(j), args.len())))
                    .collect();
                if winners.len() == 1 {
                    return Some(winners[0]);
                }
            }
            let arg_list: Vec<String> = args.iter().map(|a| self.ty_name(&a.ty)).collect();
            let mut d = self.error(name_span, format!("call to `{name}({})` is ambiguous", arg_list.join(", ")));
            for &i in &best {
                let ps: Vec<String> = cands[i].params().iter().map(|t| self.ty_name(t)).collect();
                d = d.note(format!("candidate: `{name}({})`", ps.join(", ")));
                // Instances of templates with one parameter list (overloads
                // on their template parameters) differ only in where they are.
                if let Candidate::Template(decl, ..) = cands[i] {
                    d = d.secondary(self.decls[decl].span, "a candidate template");
                }
            }
            let same_params = best.iter().all(|&i| cands[i].params() == cands[best[0]].params());
            drop(if same_params && best.len() > 1 {
                d.note("these overloads differ only in their template parameters, and the template arguments fit more than one")
            } else {
                d.help("convert the arguments explicitly so that one candidate matches exactly")
            });
            return None;
        }
        best.first().copied()
    }

    /// A call of a checked function; one returning a reference is
    /// dereferenced, so the call can be assigned to and passed on by reference.
    pub(crate) fn call_expr(&mut self, func: FuncId, args: Vec<hir::Expr>, span: Span) -> Option<hir::Expr> {
        let f = self.functions[func.0 as usize].as_ref()?;
        if f.is_kernel {
            let name = f.name.clone();
            self.kernel_called(&name, span);
            return None;
        }
        self.use_function(func);
        let ret = self.functions[func.0 as usize].as_ref()?.ret.clone();
        let call = mk(H::Call { func, args }, ret.clone(), span);
        match ret {
            Type::Pointer { pointee, .. } if self.ref_returns.contains(&func) => Some(mk(H::Deref(Box::new(call)), *pointee, span)),
            _ => Some(call),
        }
    }

    /// Convert arguments to parameter types; reference parameters receive
    /// the address of their argument.
    pub(crate) fn bind_args_pub(&mut self, params: &[Type], args: Vec<hir::Expr>) -> Option<Vec<hir::Expr>> {
        self.bind_args(params, args)
    }

    fn bind_args(&mut self, params: &[Type], args: Vec<hir::Expr>) -> Option<Vec<hir::Expr>> {
        let mut out = Vec::with_capacity(args.len());
        for (p, a) in params.iter().zip(args) {
            let span = a.span;
            match p {
                Type::Reference { referee, space, is_const } => {
                    let pty = Type::Pointer { pointee: referee.clone(), space: *space, is_const: *is_const };
                    // A derived object binds to a reference to its base.
                    let a = if a.is_place() { self.upcast(a, referee).unwrap_or_else(|a| a) } else { a };
                    if a.is_place() && a.ty == **referee {
                        out.push(mk(H::AddrOf(Box::new(a)), pty, span));
                    } else {
                        // A const reference to a temporary: materialize it.
                        let v = self.coerce(a, referee, "the argument")?;
                        let tmp = self.temp_local((**referee).clone(), span)?;
                        let place = mk(H::Local(tmp), (**referee).clone(), span);
                        let assign = mk(H::Assign { place: Box::new(place.clone()), value: Box::new(v) }, (**referee).clone(), span);
                        let tptr = Type::Pointer { pointee: referee.clone(), space: AddressSpace::Thread, is_const: *is_const };
                        let addr = mk(H::AddrOf(Box::new(place)), tptr, span);
                        let addr = if *space == AddressSpace::Thread { addr } else { mk(H::PtrCast(Box::new(addr)), pty.clone(), span) };
                        out.push(mk(H::Comma { lhs: Box::new(assign), rhs: Box::new(addr) }, pty, span));
                    }
                }
                _ => out.push(self.coerce(a, p, "the argument")?),
            }
        }
        Some(out)
    }

    // ----- member functions ---------------------------------------------------

    pub(crate) fn method_call(&mut self, obj: hir::Expr, name: &ast::Ident, args: Vec<hir::Expr>, span: Span) -> Option<hir::Expr> {
        self.method_call_targs(obj, name, None, args, span)
    }

    /// A member function call; `explicit` holds template arguments written
    /// after the name (`obj.template f<4>(…)`), which only member function
    /// templates take.
    pub(crate) fn method_call_targs(
        &mut self,
        obj: hir::Expr,
        name: &ast::Ident,
        explicit: Option<Vec<TArg>>,
        args: Vec<hir::Expr>,
        span: Span,
    ) -> Option<hir::Expr> {
        // `metal::array<T, N>`'s size queries (compile-time constants) and
        // `data()`, a pointer to the first element in the array's own
        // address space.
        if let (Type::Array { len, .. }, true) = (obj.ty.strip_ref(), args.is_empty() && explicit.is_none()) {
            match &*name.name {
                "data" if matches!(obj.ty, Type::Array { .. }) => return Some(self.decay(obj)),
                "size" | "max_size" => return Some(mk(H::Const(ConstValue::UInt(*len as u64)), Type::Scalar(Scalar::ULong), span)),
                "empty" => return Some(mk(H::Const(ConstValue::Bool(*len == 0)), Type::BOOL, span)),
                _ => {}
            }
        }
        if let (Type::SimdMatrix { elem, .. }, "thread_elements", None, true) = (&obj.ty, &*name.name, &explicit, args.is_empty()) {
            return self.thread_elements(obj.clone(), *elem, span);
        }
        let Type::Struct(sid) = obj.ty.clone() else {
            let n = self.ty_name(&obj.ty);
            self.error(name.span, format!("`{n}` has no member function `{}`", name.name));
            return None;
        };
        let indices: Vec<usize> = self.structs[sid.0 as usize]
            .methods
            .iter()
            .enumerate()
            .filter(|(_, (f, _))| explicit.is_none() && *f.name.last().ident.name == *name.name)
            .map(|(i, _)| i)
            .collect();
        // Member function templates and static member functions.
        let member_fns: Vec<usize> = self.own_member_decls(sid, &name.name).into_iter().filter(|&d| self.is_function_decl(d)).collect();
        // Declared in a base: call it on the base subobject.
        if indices.is_empty() && member_fns.is_empty() {
            if let Some(base) = self.method_base(obj.clone(), sid, name) {
                return self.method_call(base?, name, args, span);
            }
        }
        // A data member holding a function pointer: a call through it.
        let fn_field = self.tables.struct_def(sid).fields.iter().any(|f| *f.name == *name.name && matches!(f.ty, Type::FnPtr { .. }));
        if indices.is_empty() && member_fns.is_empty() && fn_field && explicit.is_none() {
            let callee = self.member(obj, name, false, span)?;
            return self.call_through(callee, args, span);
        }
        if indices.is_empty() && member_fns.is_empty() {
            let sname = self.tables.struct_def(sid).name.clone();
            let methods: Vec<String> =
                self.structs[sid.0 as usize].methods.iter().map(|(f, _)| f.name.last().ident.name.to_string()).collect();
            let mut d = self.error(name.span, format!("no member function named `{}` in `{sname}`", name.name));
            if let Some(s) = suggest(&name.name, methods.iter().map(|s| s.as_str())) {
                d = d.help(format!("did you mean `{s}`?"));
            }
            drop(d);
            return None;
        }
        // `f() const` beside `f()` with the same parameters: a const object
        // calls the const one, any other object the non-const one.
        let obj_const = obj.is_place() && self.place_info(&obj).1;
        let (this_ptr, space) = self.this_pointer(obj, span)?;
        let mut ready: Vec<(bool, FuncId, Vec<Type>)> = Vec::new();
        for i in indices {
            if let Some((id, sig)) = self.method_instance(sid, i, space, span) {
                ready.push((self.structs[sid.0 as usize].methods[i].0.is_const_method, id, sig.params));
            }
        }
        let preferred = |r: &(bool, FuncId, Vec<Type>)| r.0 == obj_const;
        let cands_ready: Vec<(FuncId, Vec<Type>)> = ready
            .iter()
            .filter(|r| preferred(r) || !ready.iter().any(|o| preferred(o) && o.2 == r.2))
            .map(|r| (r.1, r.2.clone()))
            .collect();
        let mut cands = Vec::new();
        for (id, params) in cands_ready {
            cands.push(Candidate::Ready(id, params));
        }
        let n_methods = cands.len();
        cands.extend(self.candidates(&member_fns, explicit.as_ref(), &args));
        if cands.is_empty() {
            let shown: Vec<String> = args.iter().map(|a| self.ty_name(&a.ty)).collect();
            self.error(name.span, format!("no member function `{}` can be called with ({})", name.name, shown.join(", ")));
            return None;
        }
        let best = self.best_candidate(&name.name, &cands, &args, span, name.span, &member_fns)?;
        let (func, params, takes_this) = match cands.into_iter().nth(best)? {
            Candidate::Ready(id, p) => (id, p, best < n_methods),
            Candidate::Template(d, targs, _) => {
                let this = self.method_templates.get(&d).map(|&s| (s, space));
                let (id, sig) = self.instantiate_function(d, targs, span, None, this)?;
                (id, sig.params, this.is_some())
            }
        };
        let nargs = args.len();
        let mut hargs = if takes_this { vec![this_ptr] } else { Vec::new() };
        hargs.extend(self.bind_args(&params, args)?);
        self.default_args(func, nargs, &member_fns, &mut hargs)?;
        self.call_expr(func, hargs, span)
    }

    /// `simdgroup_multiply(d, a, b)` and `simdgroup_multiply_accumulate(d,
    /// a, b, c)` whose matrices mix float, half and bfloat (candle writes
    /// `simdgroup_multiply(half_d, float_a, half_b)`): Apple's compiler
    /// takes any mix; the product is computed in float and rounded to `d`'s
    /// type. Same-type calls go through the ordinary table.
    pub(crate) fn mixed_precision_simdgroup_product(&mut self, name: &str, args: &[hir::Expr], span: Span) -> Option<hir::Expr> {
        let n = match name {
            "simdgroup_multiply" => 3,
            "simdgroup_multiply_accumulate" => 4,
            _ => return None,
        };
        let elem = |t: &Type| match t.strip_ref() {
            Type::SimdMatrix { elem, rows: 8, cols: 8 } if matches!(elem, Scalar::Float | Scalar::Half | Scalar::BFloat) => Some(*elem),
            _ => None,
        };
        let elems: Vec<Scalar> = args.iter().filter_map(|a| elem(&a.ty)).collect();
        if args.len() != n || elems.len() != n || elems.iter().all(|e| *e == elems[0]) || !args[0].is_place() {
            return None;
        }
        let (space, is_const) = self.place_info(&args[0]);
        if is_const || space == AddressSpace::Constant {
            return None;
        }
        let d_ty = args[0].ty.strip_ref().clone();
        let mut param_types = vec![Type::Reference { referee: Box::new(d_ty), space, is_const: false }];
        param_types.extend(args[1..].iter().map(|a| a.ty.strip_ref().clone()));
        let id = if n == 3 { BuiltinId::SimdgroupMultiply } else { BuiltinId::SimdgroupMultiplyAccumulate };
        Some(mk(H::Builtin { id, fast: false, args: args.to_vec(), param_types }, Type::Void, span))
    }
}
