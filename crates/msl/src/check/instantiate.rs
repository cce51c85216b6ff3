//! Template instantiation: template arguments completed with defaults and
//! fitted to their parameters, then function, struct, member function and
//! constructor instances made (memoized), each checked in its template's
//! environment one level deeper (`Checker::instantiating`).

use super::decls::{param_type, Signature};
use super::{Checker, DeclId, DeclKind, Env, TArg};
use crate::ast::{self, AddressSpace};
use crate::hir::{self, FuncId};
use crate::source::Span;
use crate::types::{Scalar, StructId, Type};
use std::rc::Rc;

impl<'a> Checker<'a, '_> {
    /// Fill in default template arguments after the explicit ones.
    pub(crate) fn complete_targs(&mut self, d: DeclId, targs: Vec<TArg>, span: Span) -> Option<Vec<TArg>> {
        let params = match &self.decls[d].kind {
            DeclKind::FunctionTemplate { params, .. }
            | DeclKind::StructTemplate { params, .. }
            | DeclKind::AliasTemplate { params, .. }
            | DeclKind::VarTemplate { params, .. } => *params,
            _ => return Some(targs),
        };
        // The written arguments, when they are these (packs make positions differ).
        let written = self.written_targs.take().filter(|(s, w)| *s == span && w.len() == targs.len() && !params.iter().any(|p| p.is_pack));
        if let Some(done) = self.inst.find(d, &targs).and_then(|k| self.inst.completed.get(&k)) {
            return Some(done.clone());
        }
        if !self.targs_within_limit(&targs, span) {
            return None;
        }
        let key = self.inst.key(d, &targs);
        let done = self.complete_targs_uncached(d, params, targs, span, written)?;
        self.inst.completed.insert(key, done.clone());
        Some(done)
    }

    pub(crate) fn complete_targs_uncached(
        &mut self,
        d: DeclId,
        params: &'a [ast::TemplateParam],
        targs: Vec<TArg>,
        span: Span,
        written: Option<(Span, Vec<Span>)>,
    ) -> Option<Vec<TArg>> {
        let arg_span = |i: usize| written.as_ref().and_then(|(_, w)| w.get(i).copied()).unwrap_or(span);
        let mut targs = super::packs::gather_pack(params, targs);
        if targs.len() > params.len() {
            self.error(span, format!("too many template arguments: `{}` takes {}", self.decls[d].name, params.len()));
            return None;
        }
        while targs.len() < params.len() {
            let p = &params[targs.len()];
            let env = self.template_env(d, params, &targs);
            let trial = self.trial();
            let mut there = self.with_env(env);
            let v = match &p.kind {
                // A pack nothing was given or deduced for is empty.
                _ if p.is_pack => Some(TArg::Pack(Vec::new())),
                ast::TemplateParamKind::Type { default: Some(t) } => there.resolve_type(t).map(|q| TArg::Type(q.ty)),
                ast::TemplateParamKind::Template { default: Some(path), .. } => {
                    let t = there.template_default(path);
                    if t.is_none() {
                        // Reported at the default.
                        trial.commit();
                        return None;
                    }
                    t
                }
                ast::TemplateParamKind::Value { default: Some(e), ty } => {
                    let ty = there.value_param_type(ty);
                    // `template <op_t f = plus>`: the function the default names.
                    let named = ty.as_ref().and_then(|t| there.coerce_function_name(e, t));
                    let h = match named {
                        Some(f) => f,
                        None => there.expr(e),
                    };
                    match (h, ty) {
                        (Some(hir::Expr { kind: hir::ExprKind::FuncRef(f), ty: fty, .. }), Some(_)) => Some(TArg::Func(f, fty)),
                        (Some(h), Some(ty)) => {
                            there.const_value(&h).map(|v| TArg::Value(v.cast(ty.elem_scalar().unwrap_or(Scalar::Int)), ty))
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            drop(there);
            match v {
                Some(v) => {
                    trial.commit();
                    targs.push(v);
                }
                None => {
                    let fname = self.decls[d].name.clone();
                    let shown = self.targs_display(&targs);
                    if is_enable_if_param(p) {
                        // SFINAE: the constraint is false for these arguments
                        // (said once, here, rather than inside the condition).
                        drop(trial);
                        self.error(
                            span,
                            format!("`{fname}` does not apply here: its `enable_if` condition is false for `{fname}{shown}…`"),
                        )
                        .secondary(p.span, "the condition, checked here")
                        .help("call it with argument types the condition accepts, or add an overload for these types");
                    } else if has_default(p) {
                        trial.commit();
                        let who = param_display(p);
                        self.error(span, format!("the default argument of {who} of `{fname}` is not valid for `{fname}{shown}…`"))
                            .secondary(p.span, "template parameter declared here")
                            .help("give the argument explicitly, or call it with other argument types");
                    } else {
                        trial.commit();
                        self.error(span, format!("couldn't infer template argument {}", param_display(p)))
                            .secondary(p.span, "template parameter declared here")
                            .help(format!("give it explicitly, e.g. `{fname}<float>(...)`"));
                    }
                    return None;
                }
            }
        }
        // Convert value arguments to the parameter's declared type (which
        // may name an earlier parameter: `template <class T, T v>`).
        let bound = targs.clone();
        for (i, (p, a)) in params.iter().zip(targs.iter_mut()).enumerate() {
            match self.fit_template_targ(p, a, arg_span(i)) {
                Some(true) => continue,
                Some(false) => return None,
                None => {}
            }
            match (&p.kind, &*a) {
                (ast::TemplateParamKind::Value { ty, .. }, TArg::Func(..) | TArg::FuncName { .. }) if !p.is_pack => {
                    let env = self.template_env(d, params, &bound);
                    let t = self.with_env(env).value_param_type(ty);
                    *a = self.bind_function_targ(a, &t?, &p.name.name, span)?;
                }
                (ast::TemplateParamKind::Value { ty, .. }, TArg::Value(v, _)) => {
                    let env = self.template_env(d, params, &bound);
                    let t = self.with_env(env).value_param_type(ty);
                    if let Some(t) = t {
                        if matches!(t, Type::FnPtr { .. }) {
                            self.error(span, format!("template parameter `{}` takes a function, not a value", p.name.name));
                            return None;
                        }
                        let s = t.elem_scalar().unwrap_or(Scalar::Int);
                        *a = TArg::Value(v.cast(s), t);
                    }
                }
                (_, TArg::Pack(elems)) if p.is_pack => {
                    let kind_ok = elems.iter().all(|e| {
                        matches!(
                            (&p.kind, e),
                            (ast::TemplateParamKind::Type { .. }, TArg::Type(_)) | (ast::TemplateParamKind::Value { .. }, TArg::Value(..))
                        )
                    });
                    if !kind_ok {
                        let what = if matches!(p.kind, ast::TemplateParamKind::Type { .. }) { "types" } else { "values" };
                        self.error(span, format!("template parameter pack `{}` takes {what}", p.name.name));
                        return None;
                    }
                }
                _ if p.is_pack => {
                    self.error(
                        span,
                        format!("template parameter pack `{}` was given a single argument where a list was expected", p.name.name),
                    );
                    return None;
                }
                (_, TArg::Pack(_)) => {
                    self.error(span, format!("template parameter `{}` is not a pack; it takes one argument", p.name.name));
                    return None;
                }
                (ast::TemplateParamKind::Value { .. }, TArg::Type(_)) => {
                    self.error(span, format!("template parameter `{}` takes a value, not a type", p.name.name));
                    return None;
                }
                (ast::TemplateParamKind::Type { .. }, TArg::Value(..)) => {
                    self.error(span, format!("template parameter `{}` takes a type, not a value", p.name.name));
                    return None;
                }
                _ => {}
            }
        }
        Some(targs)
    }

    /// `complete_targs` leaving no diagnostics when the arguments don't fit.
    pub(crate) fn complete_targs_quiet(&mut self, d: DeclId, targs: &[TArg], span: Span) -> Option<Vec<TArg>> {
        if self.inst.find(d, targs).is_some_and(|k| self.inst.failed.contains(&k)) {
            return None;
        }
        let trial = self.trial();
        let got = self.complete_targs(d, targs.to_vec(), span);
        match got {
            Some(_) => trial.commit(),
            None => {
                drop(trial);
                let key = self.inst.key(d, targs);
                self.inst.failed.insert(key);
            }
        }
        got
    }

    /// The environment for a template's body with the given arguments.
    pub(crate) fn template_env(&self, d: DeclId, params: &[ast::TemplateParam], targs: &[TArg]) -> Env {
        let mut env = self.decls[d].env.clone();
        let mut map = (*env.targs).clone();
        for (p, a) in params.iter().zip(targs) {
            super::packs::bind_targ(&mut map, &p.name.name, a.clone());
        }
        env.targs = Rc::new(map);
        // A template may refer to itself (e.g. a struct template's methods);
        // a member template sees every member of its struct (see `struct_item`).
        env.visible = env.visible.max(d + 1);
        env
    }

    /// Instantiate a function template; returns the instance and its signature.
    /// `kernel` carries the host name and kernel flag of an explicit
    /// instantiation.
    pub(crate) fn instantiate_function(
        &mut self,
        d: DeclId,
        targs: Vec<TArg>,
        span: Span,
        kernel: Option<(String, bool)>,
        this: Option<(StructId, AddressSpace)>,
    ) -> Option<(FuncId, Signature)> {
        let DeclKind::FunctionTemplate { ast: f, params } = self.decls[d].kind.clone() else { return None };
        // A member template has one instance per address space of `this`.
        let mut key_args = targs.clone();
        if let Some((_, space)) = this {
            key_args.push(TArg::Value(hir::ConstValue::Int(space as i64), Type::Void));
        }
        if let Some(&id) = self.inst.find(d, &key_args).and_then(|k| self.inst.fns.get(&k)) {
            let func = self.functions[id.0 as usize].as_ref()?;
            let sig = Signature { params: self.instance_param_types(id), ret: func.ret.clone() };
            if let Some((host, is_kernel)) = kernel {
                if let Some(func) = self.functions[id.0 as usize].as_mut() {
                    func.host_name = Some(host);
                    func.is_kernel |= is_kernel;
                }
            }
            return Some((id, sig));
        }
        const TOO_DEEP: &str = "template instantiation is nested too deeply (is a template instantiating itself?)";
        if !self.may_instantiate(span, TOO_DEEP) {
            return None;
        }
        if !self.targs_within_limit(&targs, span) || !self.count_instantiation(span, &format!("`{}`", self.decls[d].name)) {
            return None;
        }
        let mut env = self.template_env(d, params, &targs);
        // `template <> T f<int>(...)` replaces the primary template's body.
        let f = match self.inst.find(d, &targs).and_then(|k| self.inst.fn_specs.get(&k)) {
            Some((spec, spec_env)) => {
                env = spec_env.clone();
                *spec
            }
            None => f,
        };
        let mut there = self.instantiating(env, span, TOO_DEEP)?;
        let is_kernel = f.is_kernel || kernel.as_ref().is_some_and(|k| k.1);
        let mut fcopy_kernel = None;
        let sig = if is_kernel && !f.is_kernel {
            let mut fk = f.clone();
            fk.is_kernel = true;
            let s = there.signature(&fk, None);
            fcopy_kernel = Some(fk);
            s
        } else {
            there.signature(f, None)
        };
        let result = sig.map(|sig| {
            let id = there.new_function_slot();
            let key = there.inst.key(d, &key_args);
            there.inst.fns.insert(key, id);
            let origin = there.inst.key(d, &targs);
            there.inst.fn_origin.insert(id, origin);
            let display = format!("{}{}", f.name.last().ident.name, there.targs_display(&targs));
            there.functions[id.0 as usize] = Some(hir::Function {
                name: display.clone(),
                host_name: None,
                is_kernel,
                params: Vec::new(),
                ret: there.hir_ret(id, &sig.ret),
                locals: Vec::new(),
                body: Vec::new(),
                span: f.span,
            });
            there.instance_sigs.insert(id, sig.params.clone());
            // Only an explicit instantiation makes a kernel template's
            // instance an entry point; one merely named (`decltype(k<1>)`)
            // is not compiled for the host to call.
            let host = kernel.as_ref().map(|k| k.0.clone());
            if let Some(h) = &host {
                if let Some(prev) = there.kernel_names.get(h).copied() {
                    there.error(span, format!("there is already a kernel named `{h}`")).secondary(prev, "the first one");
                }
                there.kernel_names.insert(h.clone(), span);
            }
            let fref = fcopy_kernel.as_ref().unwrap_or(f);
            there.checking_instance(display.clone(), span).function_body(
                fref,
                id,
                &sig,
                display,
                host,
                this.map(|(sid, space)| (sid, space, false)),
            );
            (id, there.deduced_signature(fref, id, sig))
        });
        result
    }

    /// A body's local aliases (`using res_t = …;`) can't be named once it
    /// ends: drop them from the name index, which otherwise grows by one
    /// entry per template instance and slows every later lookup of the name.
    /// Local structs stay, since their members may be checked later.
    pub(crate) fn forget_local_aliases(&mut self, scope: &Rc<str>, first: DeclId) {
        for d in first..self.decls.len() {
            let decl = &self.decls[d];
            if matches!(decl.kind, DeclKind::Alias(_)) && decl.scope.last() == Some(scope) {
                if let Some(ids) = self.by_name.get_mut(&decl.name) {
                    ids.retain(|&x| x != d);
                }
            }
        }
    }

    pub(crate) fn instance_param_types(&self, id: FuncId) -> Vec<Type> {
        self.instance_sigs.get(&id).cloned().unwrap_or_default()
    }

    pub(crate) fn instantiate_struct(&mut self, d: DeclId, targs: Vec<TArg>, span: Span) -> Option<StructId> {
        let targs = self.complete_targs(d, targs, span)?;
        if let Some(&sid) = self.inst.find(d, &targs).and_then(|k| self.inst.structs.get(&k)) {
            return Some(sid);
        }
        let DeclKind::StructTemplate { ast: s, params } = self.decls[d].kind.clone() else { return None };
        if !self.may_instantiate(span, "template instantiation is nested too deeply") {
            return None;
        }
        if !self.count_instantiation(span, &format!("`{}`", self.decls[d].name)) {
            return None;
        }
        // An explicit specialization replaces the primary template's body,
        // else the most specialised matching partial specialization does.
        let (s, env) = match self.inst.find(d, &targs).and_then(|k| self.inst.struct_specs.get(&k)) {
            Some((spec, env)) => (*spec, env.clone()),
            None => match self.matching_partial_spec(d, &targs) {
                Some(found) => found,
                None => (s, self.template_env(d, params, &targs)),
            },
        };
        let mut there = self.instantiating(env, span, "template instantiation is nested too deeply")?;
        let r = there.with_stack(|c| c.struct_item(s, Some((d, targs))));
        drop(there);
        r
    }

    /// The function for method `index` of struct `sid` called on an object
    /// in `space`.
    pub(crate) fn method_instance(&mut self, sid: StructId, index: usize, space: AddressSpace, span: Span) -> Option<(FuncId, Signature)> {
        let (f, env) = self.structs[sid.0 as usize].methods.get(index)?.clone();
        if let Some(&id) = self.structs[sid.0 as usize].method_ids.get(&(index, space)) {
            let func = self.functions[id.0 as usize].as_ref()?;
            return Some((id, Signature { params: self.instance_param_types(id), ret: func.ret.clone() }));
        }
        if !self.may_instantiate(span, "member function instantiation is nested too deeply") {
            return None;
        }
        if !self.count_instantiation(span, "a member function") {
            return None;
        }
        let mut there = self.instantiating(env, span, "member function instantiation is nested too deeply")?;
        let sig = there.signature(f, Some(sid));
        let out = sig.map(|sig| {
            let id = there.new_function_slot();
            there.structs[sid.0 as usize].method_ids.insert((index, space), id);
            let name = format!("{}::{}", there.tables.struct_def(sid).name, f.name.last().ident.name);
            there.functions[id.0 as usize] = Some(hir::Function {
                name: name.clone(),
                host_name: None,
                is_kernel: false,
                params: Vec::new(),
                ret: there.hir_ret(id, &sig.ret),
                locals: Vec::new(),
                body: Vec::new(),
                span: f.span,
            });
            there.instance_sigs.insert(id, sig.params.clone());
            there.function_body(f, id, &sig, name, None, Some((sid, space, false)));
            (id, there.deduced_signature(f, id, sig))
        });
        drop(there);
        out
    }

    /// The function for constructor `index` of struct `sid`.
    pub(crate) fn ctor_instance(&mut self, sid: StructId, index: usize, span: Span) -> Option<(FuncId, Signature)> {
        let (f, inits, env) = self.structs[sid.0 as usize].ctors.get(index)?.clone();
        if let Some(&id) = self.structs[sid.0 as usize].ctor_ids.get(&index) {
            return Some((id, Signature { params: self.instance_param_types(id), ret: Type::Void }));
        }
        if !self.may_instantiate(span, "constructor instantiation is nested too deeply") {
            return None;
        }
        if !self.count_instantiation(span, "a constructor") {
            return None;
        }
        let mut there = self.instantiating(env, span, "constructor instantiation is nested too deeply")?;
        let mut params = Vec::new();
        let mut ok = true;
        for p in &f.params {
            match there.resolve_param_type(&p.ty) {
                Some(q) => params.push(param_type(q, &p.ty)),
                None => ok = false,
            }
        }
        let out = ok.then(|| {
            let sig = Signature { params, ret: Type::Void };
            let id = there.new_function_slot();
            there.structs[sid.0 as usize].ctor_ids.insert(index, id);
            let name = format!("{}::{}", there.tables.struct_def(sid).name, f.name.last().ident.name);
            there.functions[id.0 as usize] = Some(hir::Function {
                name: name.clone(),
                host_name: None,
                is_kernel: false,
                params: Vec::new(),
                ret: Type::Void,
                locals: Vec::new(),
                body: Vec::new(),
                span: f.span,
            });
            there.instance_sigs.insert(id, sig.params.clone());
            // Member initializers run first (base classes before members),
            // then the body.
            let inits = there.with_base_inits(sid, &inits, f.name.span);
            let inits = there.with_member_defaults(sid, inits, f.name.span);
            let fbody = ast::with_member_inits(f, &inits);
            there.function_body(&fbody, id, &sig, name, None, Some((sid, AddressSpace::Thread, false)));
            (id, sig)
        });
        drop(there);
        out
    }
}

/// A template parameter of the form `enable_if_t<cond, T> = v` (or
/// `typename = enable_if_t<cond>`), which exists only to constrain.
pub(crate) fn is_enable_if_param(p: &ast::TemplateParam) -> bool {
    let names_enable_if = |t: &ast::TypeExpr| match &t.kind {
        ast::TypeExprKind::Named { path, .. } => path.segments.iter().any(|s| matches!(&*s.ident.name, "enable_if_t" | "enable_if")),
        _ => false,
    };
    match &p.kind {
        ast::TemplateParamKind::Value { ty, default: Some(_) } => names_enable_if(ty),
        ast::TemplateParamKind::Type { default: Some(t) } => names_enable_if(t),
        _ => false,
    }
}

pub(crate) fn has_default(p: &ast::TemplateParam) -> bool {
    match &p.kind {
        ast::TemplateParamKind::Value { default, .. } => default.is_some(),
        ast::TemplateParamKind::Type { default } => default.is_some(),
        ast::TemplateParamKind::Template { default, .. } => default.is_some(),
    }
}

/// A template parameter as messages name it (unnamed ones have a hidden name).
pub(crate) fn param_display(p: &ast::TemplateParam) -> String {
    if p.name.name.starts_with('$') {
        "an unnamed template parameter".to_string()
    } else {
        format!("`{}`", p.name.name)
    }
}
