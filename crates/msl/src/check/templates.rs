//! Templates beyond functions and structs: alias templates, variable
//! templates with their partial and explicit specializations, explicit
//! specializations of function templates, and redeclarations of function
//! templates.

use super::{Checker, DeclId, DeclKind, Env, TArg};
use crate::ast;
use crate::hir;
use crate::source::Span;
use crate::types::Type;
use std::rc::Rc;

/// The template behind `<metal_limits>`' `numeric_limits` (see
/// `declare_limits_primary`).
pub(crate) const LIMITS_IMPL: &str = "_numeric_limits_impl";

impl<'a> Checker<'a, '_> {
    /// A function template declared again in the same scope with the same
    /// signature (a forward declaration, then the definition — PyTorch's
    /// headers declare `log_gamma` in two of them) is one template, not
    /// overloads that make every call ambiguous. The definition takes the
    /// declaration's place, with the names visible where it stands. True
    /// when `f` was merged into an earlier declaration.
    pub(crate) fn function_template_redeclared(&mut self, params: &'a [ast::TemplateParam], f: &'a ast::Function) -> bool {
        let name = &f.name.last().ident.name;
        let key = template_signature(params, f);
        let scope = self.env.scope.clone();
        let earlier = self.lookup_in(&scope, name).into_iter().rev().find(|&d| match &self.decls[d].kind {
            DeclKind::FunctionTemplate { ast, params } => template_signature(params, ast) == key,
            _ => false,
        });
        let Some(d) = earlier else { return false };
        let DeclKind::FunctionTemplate { ast: prev, .. } = self.decls[d].kind else { return false };
        match (&prev.body, &f.body) {
            (_, None) => true,
            (None, Some(_)) => {
                self.decls[d].kind = DeclKind::FunctionTemplate { ast: f, params };
                self.decls[d].env = Env { visible: self.decls.len(), ..self.env.clone() };
                true
            }
            (Some(_), Some(_)) => {
                self.error(f.name.span, format!("redefinition of the function template `{name}`"))
                    .secondary(self.decls[d].span, "first defined here");
                true
            }
        }
    }

    /// `template <...> constexpr T name = ...;`, or a specialization of one
    /// (`name<Args>` after the name).
    pub(crate) fn var_template_item(&mut self, params: &'a [ast::TemplateParam], v: &'a ast::VarDecl) {
        if let Some(owner) = &v.owner {
            if v.init.is_none() && self.template_declares_static(owner, &v.name) {
                // `template <class T> constexpr int S<T>::x;` restates a
                // member that has its value in the class: it adds nothing.
                return;
            }
            self.error(
                v.span,
                format!(
                    "an out-of-class definition of static data member `{}::{}` in a template is not supported by this simulator yet",
                    owner.plain_name(),
                    v.name.name
                ),
            )
            .help("give the member its value inside the struct and leave out this definition");
            return;
        }
        if v.specialization.is_none() {
            if params.is_empty() {
                self.error(v.name.span, "`template <>` needs the specialized arguments after the name, e.g. `name<float>`");
                return;
            }
            self.add_decl(v.name.name.clone(), DeclKind::VarTemplate { ast: v, params }, v.name.span);
            return;
        }
        let Some(d) = self.primary_template(&v.name, "variable", |k| matches!(k, DeclKind::VarTemplate { .. })) else { return };
        let env = Env { visible: self.decls.len(), ..self.env.clone() };
        self.var_specs.entry(d).or_default().push((params, v, env));
    }

    /// Whether `owner` (`S<T>`) names a class template declaring the static
    /// data member `name` with its value in the class.
    fn template_declares_static(&self, owner: &ast::Path, name: &ast::Ident) -> bool {
        let scope = self.env.scope.clone();
        let class = &owner.last().ident.name;
        self.lookup_in(&scope, class).into_iter().any(|d| match &self.decls[d].kind {
            DeclKind::StructTemplate { ast, .. } => ast
                .members
                .iter()
                .any(|m| matches!(&m.kind, ast::MemberKind::StaticConst(sv) if sv.name.name == name.name && sv.init.is_some())),
            _ => false,
        })
    }

    /// `template <class T> struct S<complex_t<T>> {...}`: a partial
    /// specialization, used for the arguments its pattern matches.
    pub(crate) fn struct_partial_specialization(&mut self, params: &'a [ast::TemplateParam], s: &'a ast::Struct) {
        self.declare_limits_primary(params, s);
        let Some(d) = self.primary_template(&s.name, "struct", |k| matches!(k, DeclKind::StructTemplate { .. })) else { return };
        let env = Env { visible: self.decls.len(), ..self.env.clone() };
        self.struct_partial_specs.entry(d).or_default().push((params, s, env));
    }

    /// `<metal_limits>` builds `numeric_limits<T>` on an internal template,
    /// `_numeric_limits_impl<T>`, which libraries specialize for their own
    /// types. Its primary is declared on first use; its body is never used
    /// (numeric_limits of a scalar is built in, of anything else it is the
    /// specialization's).
    fn declare_limits_primary(&mut self, params: &'a [ast::TemplateParam], s: &'a ast::Struct) {
        if &*s.name.name != LIMITS_IMPL || self.limits_impl().is_some() {
            return;
        }
        self.add_decl(s.name.name.clone(), DeclKind::StructTemplate { ast: s, params }, s.name.span);
    }

    /// The `_numeric_limits_impl` template, once a library specialized it.
    fn limits_impl(&self) -> Option<DeclId> {
        self.lookup_global(LIMITS_IMPL).into_iter().rev().find(|&d| matches!(self.decls[d].kind, DeclKind::StructTemplate { .. }))
    }

    /// Whether a library specialized `_numeric_limits_impl` for `targs`
    /// (the primary's body is never instantiated).
    pub(crate) fn limits_specialized(&mut self, targs: &[TArg]) -> bool {
        let Some(d) = self.limits_impl() else { return false };
        self.inst.find(d, targs).is_some_and(|k| self.inst.struct_specs.contains_key(&k)) || self.matching_partial_spec(d, targs).is_some()
    }

    /// The partial specialization of struct template `d` whose pattern
    /// matches `targs` (substitution failures do not match), with its
    /// parameters bound. Of several, the one whose pattern the others also
    /// match — the more specialised — wins; without one, the first declared.
    pub(crate) fn matching_partial_spec(&mut self, d: DeclId, targs: &[TArg]) -> Option<(&'a ast::Struct, Env)> {
        let specs = self.struct_partial_specs.get(&d)?.clone();
        let mut found: Vec<(usize, Env)> = Vec::new();
        for (i, (sparams, s, env)) in specs.iter().enumerate() {
            let pattern = s.specialization.as_deref().unwrap_or(&[]);
            if let Some(env) = self.spec_matches(sparams, pattern, env, targs, Some(d)) {
                found.push((i, env));
            }
        }
        if found.len() > 1 {
            // `a` is more specialised than `b` when `b`'s pattern matches `a`'s.
            let more_special = |a: usize, b: usize| {
                let (pa, pb) = (specs[a].1.specialization.as_deref().unwrap_or(&[]), specs[b].1.specialization.as_deref().unwrap_or(&[]));
                pattern_covers(specs[b].0, pb, pa) && !pattern_covers(specs[a].0, pa, pb)
            };
            let ids: Vec<usize> = found.iter().map(|(i, _)| *i).collect();
            if let Some(pos) = ids.iter().position(|&a| ids.iter().all(|&b| a == b || more_special(a, b))) {
                let (i, env) = found.swap_remove(pos);
                return Some((specs[i].1, env));
            }
        }
        let (i, env) = found.into_iter().next()?;
        Some((specs[i].1, env))
    }

    /// The template a specialization of `name` specializes: the latest
    /// visible one of the right kind, else an error saying so.
    pub(crate) fn primary_template(&mut self, name: &ast::Ident, what: &str, is_kind: fn(&DeclKind) -> bool) -> Option<DeclId> {
        let found = self.lookup_global(&name.name).into_iter().rev().find(|&d| is_kind(&self.decls[d].kind));
        if found.is_none() {
            self.error(name.span, format!("`{}` is not a {what} template declared above", name.name));
        }
        found
    }

    /// `template <> R f<Args>(...) {...}`: used whenever `f<Args>` is.
    /// Like C++, it specializes the visible template of that name whose
    /// signature, once its arguments are deduced from the specialization's
    /// parameter types, is the specialization's own (return type included:
    /// of two `enable_if`-constrained overloads only one survives), the
    /// more specialised one if several do.
    pub(crate) fn function_specialization(&mut self, f: &'a ast::Function) {
        let last = f.name.last();
        let Some(latest) = self.primary_template(&last.ident, "function", |k| matches!(k, DeclKind::FunctionTemplate { .. })) else {
            return;
        };
        let explicit = match &last.template_args {
            Some(args) => match self.template_args(args) {
                Some(t) => t,
                None => return,
            },
            None => Vec::new(),
        };
        let Some(own) = self.signature_any_ret(f) else { return };
        let templates: Vec<DeclId> = self.lookup_global(&last.ident.name);
        let found = self.templates_for_signature(&templates, &explicit, &own, is_auto(&f.ret), last.ident.span);
        let Some((d, targs)) = found.into_iter().next() else {
            self.error(
                last.ident.span,
                format!(
                    "no template `{}` declared above has this signature, so this cannot specialize one: give the arguments, e.g. `{}<float>`, and match the template's parameter and return types",
                    last.ident.name, last.ident.name
                ),
            )
            .secondary(self.decls[latest].span, "the latest template of that name");
            return;
        };
        let env = Env { visible: self.decls.len(), ..self.env.clone() };
        let key = self.inst.key(d, &targs);
        self.inst.fn_specs.insert(key, (f, env));
    }

    /// The function templates among `decls` that, with their arguments
    /// deduced from `own`'s parameter types (after `explicit` ones), have
    /// exactly the signature `own` (its return type unless `own_ret_auto`),
    /// with those arguments; the most specialised ones when several do.
    pub(crate) fn templates_for_signature(
        &mut self,
        decls: &[DeclId],
        explicit: &[TArg],
        own: &super::decls::Signature,
        own_ret_auto: bool,
        span: Span,
    ) -> Vec<(DeclId, Vec<TArg>)> {
        let mut found: Vec<(DeclId, Vec<TArg>)> = Vec::new();
        for &d in decls {
            let DeclKind::FunctionTemplate { ast: primary, params } = self.decls[d].kind.clone() else { continue };
            let ret = (!own_ret_auto && !is_auto(&primary.ret)).then_some(&own.ret);
            let Some(targs) = self.deduce_from(params, primary, &own.params, &[], ret, explicit.to_vec()) else { continue };
            let trial = self.trial();
            let sig = self.complete_targs(d, targs, span).and_then(|targs| {
                let sig = self.template_signature(d, &targs)?;
                Some((targs, sig))
            });
            drop(trial);
            let Some((targs, sig)) = sig else { continue };
            let ret_matches = own_ret_auto || is_auto(&primary.ret) || sig.ret == own.ret;
            if sig.params == own.params && ret_matches {
                found.push((d, targs));
            }
        }
        if found.len() > 1 {
            let nargs = own.params.len();
            let ds: Vec<DeclId> = found.iter().map(|x| x.0).collect();
            found.retain(|(d, _)| ds.iter().all(|&e| e == *d || self.more_specialized(*d, e, nargs)));
        }
        found
    }

    /// The signature of function template `d` for `targs` (`None` when a
    /// type does not exist for them, e.g. a failed `enable_if_t`).
    fn template_signature(&mut self, d: DeclId, targs: &[TArg]) -> Option<super::decls::Signature> {
        let DeclKind::FunctionTemplate { ast: f, params } = self.decls[d].kind.clone() else { return None };
        let env = self.template_env(d, params, targs);
        self.elsewhere(env).signature_any_ret(f)
    }

    /// `f`'s signature; an `auto` return type (deduced from the body) is
    /// left as `void`, since only the parameters can tell overloads apart.
    fn signature_any_ret(&mut self, f: &ast::Function) -> Option<super::decls::Signature> {
        if is_auto(&f.ret) {
            let mut g = f.clone();
            let span = f.ret.span;
            let void = ast::PathSegment { ident: ast::Ident { name: Rc::from("void"), span }, template_args: None };
            let path = ast::Path { global: false, segments: vec![void], span };
            g.ret = ast::TypeExpr { kind: ast::TypeExprKind::Named { path, is_const: false, is_volatile: false, addr_space: None }, span };
            self.signature(&g, None)
        } else {
            self.signature(f, None)
        }
    }

    /// The type an alias template names for these arguments.
    pub(crate) fn alias_instance(&mut self, d: DeclId, targs: Vec<TArg>, span: Span) -> Option<Type> {
        let DeclKind::AliasTemplate { ast, params } = self.decls[d].kind.clone() else { return None };
        let targs = self.complete_targs(d, targs, span)?;
        if let Some(t) = self.inst.find(d, &targs).and_then(|k| self.inst.aliases.get(&k)) {
            return Some(t.clone());
        }
        let env = self.template_env(d, params, &targs);
        let t = self.elsewhere(env).with_stack(|c| c.resolve_type(&ast.ty)).map(|q| q.ty);
        if let Some(t) = &t {
            let key = self.inst.key(d, &targs);
            self.inst.aliases.insert(key, t.clone());
        }
        t
    }

    /// `Some(value)` when `path` names a variable template with arguments.
    pub(crate) fn var_template_path(&mut self, path: &ast::Path, span: Span) -> Option<Option<hir::Expr>> {
        let (last, prefix) = path.segments.split_last()?;
        let args = last.template_args.as_ref()?;
        if prefix.iter().any(|s| s.template_args.is_some()) {
            return None;
        }
        let d = if prefix.is_empty() {
            self.lookup_global(&last.ident.name).last().copied()
        } else {
            let scope: Vec<Rc<str>> = prefix.iter().map(|s| s.ident.name.clone()).collect();
            self.lookup_qualified(&scope, &last.ident.name)
        }?;
        if !matches!(self.decls[d].kind, DeclKind::VarTemplate { .. }) {
            return None;
        }
        let Some(targs) = self.template_args(args) else { return Some(None) };
        Some(self.var_instance(d, targs, span))
    }

    /// The value of variable template `d` for `targs`: the most specific
    /// matching specialization's initializer, else the primary's.
    fn var_instance(&mut self, d: DeclId, targs: Vec<TArg>, span: Span) -> Option<hir::Expr> {
        let DeclKind::VarTemplate { ast: primary, params } = self.decls[d].kind.clone() else { return None };
        let targs = self.complete_targs(d, targs, span)?;
        if let Some(h) = self.inst.find(d, &targs).and_then(|k| self.inst.vars.get(&k)) {
            let mut h = h.clone();
            h.span = span;
            return Some(h);
        }
        if !self.may_instantiate(span, "variable template instantiation is nested too deeply") {
            return None;
        }
        if !self.count_instantiation(span, "a variable template") {
            return None;
        }
        let specs = self.var_specs.get(&d).cloned().unwrap_or_default();
        // Explicit (full) specializations first, then partial ones in order.
        let mut order: Vec<usize> = (0..specs.len()).collect();
        order.sort_by_key(|&i| !specs[i].0.is_empty());
        let mut chosen = None;
        for i in order {
            let (sparams, v, env) = &specs[i];
            if let Some(env) = self.spec_matches(sparams, v.specialization.as_deref().unwrap_or(&[]), env, &targs, None) {
                chosen = Some((*v, env));
                break;
            }
        }
        let (v, env) = match chosen {
            Some(c) => c,
            None => (primary, self.template_env(d, params, &targs)),
        };
        let mut there = self.instantiating(env, span, "variable template instantiation is nested too deeply")?;
        let value = there.with_stack(|c| {
            let ty = c.resolve_type(&v.ty)?.ty;
            let Some(init) = &v.init else {
                c.error(v.span, format!("variable template `{}` needs an initializer", v.name.name));
                return None;
            };
            let h = c.initializer(init, &ty, v.span)?;
            Some(c.fold_tree(h))
        });
        drop(there);
        let mut h = value?;
        let key = self.inst.key(d, &targs);
        self.inst.vars.insert(key, h.clone());
        h.span = span;
        Some(h)
    }

    /// If a specialization's argument patterns match `targs`, the
    /// environment binding its parameters.
    /// `primary`: the template whose defaults complete a shorter pattern.
    pub(crate) fn spec_matches(
        &mut self,
        sparams: &[ast::TemplateParam],
        pattern: &[ast::TemplateArg],
        env: &Env,
        targs: &[TArg],
        primary: Option<DeclId>,
    ) -> Option<Env> {
        if pattern.len() > targs.len() || (primary.is_none() && pattern.len() != targs.len()) {
            return None;
        }
        let mut map: Vec<Option<TArg>> = vec![None; sparams.len()];
        for (p, actual) in pattern.iter().zip(targs) {
            match (p, actual) {
                (ast::TemplateArg::Type(te), TArg::Type(t)) if !self.unify(sparams, te, t, &mut map) => return None,
                // A template template parameter of the specialization.
                (ast::TemplateArg::Type(ast::TypeExpr { kind: ast::TypeExprKind::Named { path, .. }, .. }), a @ TArg::Template(_))
                    if path.segments.len() == 1 && path.segments[0].template_args.is_none() =>
                {
                    if let Some(i) = sparams.iter().position(|sp| {
                        sp.name.name == path.segments[0].ident.name && matches!(sp.kind, ast::TemplateParamKind::Template { .. })
                    }) {
                        map[i] = Some(a.clone());
                    }
                }
                (ast::TemplateArg::Expr(ast::Expr { kind: ast::ExprKind::Name(path), .. }), v @ TArg::Value(..))
                    if path.segments.len() == 1 =>
                {
                    if let Some(i) = sparams.iter().position(|sp| sp.name.name == path.segments[0].ident.name) {
                        map[i] = Some(v.clone());
                    }
                }
                _ => {}
            }
        }
        let bound: Option<Vec<TArg>> = map.into_iter().collect();
        let bound = bound?;
        let mut env = env.clone();
        let mut names = (*env.targs).clone();
        for (p, a) in sparams.iter().zip(bound) {
            super::packs::bind_targ(&mut names, &p.name.name, a);
        }
        env.targs = Rc::new(names);
        // Substitute and compare: the pattern must give exactly `targs`.
        let mut there = self.elsewhere(env.clone());
        let trial = there.trial();
        let mut got = there.template_args(pattern);
        if let Some(d) = primary {
            got = got.and_then(|g| there.complete_targs(d, g, Span::default()));
        }
        drop(trial);
        drop(there);
        (got.as_deref() == Some(targs)).then_some(env)
    }
}

/// Does the argument pattern `general` (with template parameters
/// `gparams`) match every argument list the pattern `special` matches?
fn pattern_covers(gparams: &[ast::TemplateParam], general: &[ast::TemplateArg], special: &[ast::TemplateArg]) -> bool {
    general.len() == special.len() && super::ordering::template_args_match(general, special, gparams)
}

/// `auto` as a return type (deduced from the body).
pub(crate) fn is_auto(t: &ast::TypeExpr) -> bool {
    matches!(&t.kind, ast::TypeExprKind::Named { path, .. } if path.plain_name() == "auto")
}

/// What makes two function template declarations the same template: the
/// template parameter list and the return and parameter types, with the
/// template parameters numbered instead of named (`template <class T> f(T)`
/// and `template <class U> f(U x)` declare one template).
fn template_signature(params: &[ast::TemplateParam], f: &ast::Function) -> String {
    let rename = |text: String| -> String {
        let mut out = String::with_capacity(text.len());
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut String| {
            match params.iter().position(|p| *p.name.name == **word) {
                Some(i) => out.push_str(&format!("${i}")),
                None => out.push_str(word),
            }
            word.clear();
        };
        for c in text.chars() {
            if c.is_alphanumeric() || c == '_' {
                word.push(c);
            } else {
                flush(&mut word, &mut out);
                out.push(c);
            }
        }
        flush(&mut word, &mut out);
        out
    };
    let mut key = String::new();
    for p in params {
        key.push_str(match (&p.kind, p.is_pack) {
            (ast::TemplateParamKind::Type { .. }, false) => "type,",
            (ast::TemplateParamKind::Type { .. }, true) => "type...,",
            (ast::TemplateParamKind::Value { .. }, false) => "value,",
            (ast::TemplateParamKind::Value { .. }, true) => "value...,",
            (ast::TemplateParamKind::Template { .. }, false) => "template,",
            (ast::TemplateParamKind::Template { .. }, true) => "template...,",
        });
        if let ast::TemplateParamKind::Template { params: inner, .. } = &p.kind {
            key.push_str(&super::templatetemplate::params_shape(inner));
        }
        if let ast::TemplateParamKind::Value { ty, .. } = &p.kind {
            key.push_str(&rename(crate::pretty::type_to_string(ty)));
        }
    }
    key.push('|');
    key.push_str(&rename(crate::pretty::type_to_string(&f.ret)));
    for p in &f.params {
        key.push('|');
        key.push_str(&rename(crate::pretty::type_to_string(&p.ty)));
        if p.is_pack {
            key.push_str("...");
        }
    }
    key.push_str(if f.is_const_method { "|const" } else { "|" });
    key
}
