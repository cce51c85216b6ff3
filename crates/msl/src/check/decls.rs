//! Program-scope items: functions, structs, enums, constants, namespaces,
//! templates and their instantiation. Struct declarations and their layout
//! are in `structs`.

use super::typeexpr::QualType;
use super::{Checker, DeclId, DeclKind, Env, FnState};
use crate::ast::{self, AddressSpace, ItemKind};
use crate::hir::{self, Binding, ConstValue, FuncId, LocalId};
use crate::source::Span;
use crate::types::{EnumDef, EnumId, Scalar, StructId, Type, TypeTables};
use std::rc::Rc;

/// A function's checked signature.
#[derive(Clone, Debug)]
pub(crate) struct Signature {
    /// Parameter types as declared (references kept as `Type::Reference`).
    pub params: Vec<Type>,
    pub ret: Type,
}

impl<'a> Checker<'a, '_> {
    pub(crate) fn item(&mut self, item: &'a ast::Item) {
        match &item.kind {
            ItemKind::Function(f) => self.function_item(f),
            ItemKind::Struct(s) => {
                if !s.is_forward {
                    self.struct_item(s, None);
                }
            }
            ItemKind::Enum(e) => self.enum_item(e),
            ItemKind::Vars(vars) => {
                for v in vars {
                    self.global_var(v);
                }
            }
            ItemKind::Alias(a) => match &a.fn_params {
                Some(params) => {
                    if let Some(sig) = self.declared_signature(&a.ty, params) {
                        self.add_decl(a.name.name.clone(), DeclKind::FunctionType(sig), a.name.span);
                    }
                }
                None => {
                    if let Some(q) = self.resolve_type(&a.ty) {
                        self.add_decl(a.name.name.clone(), DeclKind::Alias(q.ty), a.name.span);
                    }
                }
            },
            ItemKind::Namespace { name, items } => {
                if let Some(n) = name {
                    self.add_decl(n.name.clone(), DeclKind::Namespace, n.span);
                    self.env.scope.push(n.name.clone());
                }
                // A `using namespace` inside the block ends with it.
                let usings = self.env.usings.clone();
                for i in items {
                    self.item(i);
                }
                self.env.usings = usings;
                if name.is_some() {
                    self.env.scope.pop();
                }
            }
            ItemKind::UsingNamespace(path) => self.using_directive(path),
            ItemKind::Empty => {}
            ItemKind::UsingDecl(path) => self.using_decl(path),
            ItemKind::Template { params, item: inner } => self.template_item(params, inner, item.span),
            ItemKind::ExplicitInstantiation { attrs, ty, name, params } => {
                self.explicit_instantiation(attrs, ty, name, params.as_deref(), item.span)
            }
            ItemKind::StaticAssert { cond, message } => self.static_assert(cond, message.as_deref()),
        }
    }

    /// `using namespace a::b;`: names of the user namespace `a::b` become
    /// visible to unqualified lookup (the standard library's `metal` is
    /// always visible, so naming it changes nothing).
    fn using_directive(&mut self, path: &ast::Path) {
        let names: Vec<Rc<str>> = path.segments.iter().map(|s| s.ident.name.clone()).collect();
        let Some((last, parent)) = names.split_last() else { return };
        let here = self.env.scope.clone();
        // Relative names are looked up from the innermost enclosing namespace out.
        let starts: Vec<usize> = if path.global { vec![0] } else { (0..=here.len()).rev().collect() };
        let target = starts.into_iter().find_map(|depth| {
            let mut full: Vec<Rc<str>> = here[..depth].to_vec();
            full.extend(parent.iter().cloned());
            let exists = self
                .by_name
                .get(last)
                .is_some_and(|ds| ds.iter().any(|&d| matches!(self.decls[d].kind, DeclKind::Namespace) && self.decls[d].scope == full));
            exists.then(|| {
                full.push(last.clone());
                full
            })
        });
        let Some(target) = target else {
            if names.first().is_some_and(|n| &**n == "metal") {
                return;
            }
            self.error(path.span, format!("no namespace named `{}` is declared above this line", names.join("::")));
            return;
        };
        let common: Vec<Rc<str>> = here.iter().zip(&target).take_while(|(a, b)| a == b).map(|(a, _)| a.clone()).collect();
        Rc::make_mut(&mut self.env.usings).push(super::UsingDirective { written_in: here, common, target });
    }

    /// `using ns::name;` makes `name` visible here: re-declare what it names.
    fn using_decl(&mut self, path: &ast::Path) {
        let (last, prefix) = match path.segments.split_last() {
            Some(x) => x,
            None => return,
        };
        let scope: Vec<Rc<str>> = prefix.iter().map(|s| s.ident.name.clone()).collect();
        if scope.first().is_some_and(|s| &**s == "metal") {
            return; // the standard library is always visible
        }
        let Some(d) = self.lookup_qualified(&scope, &last.ident.name) else {
            self.error(path.span, format!("`{}` is not declared above", path.plain_name()));
            return;
        };
        let full_scope = self.decls[d].scope.clone();
        for d in self.lookup_in(&full_scope, &last.ident.name) {
            let kind = self.decls[d].kind.clone();
            let span = self.decls[d].span;
            let copy = self.add_decl(last.ident.name.clone(), kind, span);
            // The declaration still means what it meant where it was
            // written: an alias template's `detail::X<T>` is looked up
            // there, not at the `using`.
            self.decls[copy].env = self.decls[d].env.clone();
        }
    }

    pub(crate) fn static_assert(&mut self, cond: &ast::Expr, message: Option<&str>) {
        // At program scope the condition is checked in a scratch function,
        // where temporaries (objects built by constructors) can live.
        let scratch = self.fs.is_none().then(|| FnState::new(Type::Void, false));
        let saved = scratch.map(|s| self.fs.replace(s));
        let h = self.expr(cond);
        if let Some(saved) = saved {
            self.fs = saved;
        }
        let Some(h) = h else { return };
        match self.const_value(&h) {
            Some(v) if v.is_true() => {}
            Some(_) => {
                self.error(cond.span, format!("static assertion failed{}", message.map(|m| format!(": {m}")).unwrap_or_default()));
            }
            None if calls_a_function(&h) => {
                self.warn(cond.span, "this static_assert was not checked: evaluating constructors and non-`constexpr` calls at compile time is not supported by the simulator yet")
                    .note("the program is compiled as if the assertion held; Metal's compiler checks it");
            }
            None => {
                self.not_constant(cond.span, "static_assert needs a compile-time constant condition", &h);
            }
        }
    }

    fn template_item(&mut self, params: &'a [ast::TemplateParam], inner: &'a ast::Item, span: Span) {
        if let (true, ItemKind::Struct(s)) = (params.is_empty(), &inner.kind) {
            if let Some(args) = &s.specialization {
                let Some(d) = self.primary_template(&s.name, "struct", |k| matches!(k, DeclKind::StructTemplate { .. })) else { return };
                let Some(targs) = self.template_args(args) else { return };
                let Some(targs) = self.complete_targs(d, targs, s.name.span) else { return };
                let env = Env { visible: self.decls.len(), ..self.env.clone() };
                let key = self.inst.key(d, &targs);
                self.inst.struct_specs.insert(key, (s, env));
                return;
            }
        }
        if let (false, ItemKind::Struct(s)) = (params.is_empty(), &inner.kind) {
            if s.specialization.is_some() {
                self.struct_partial_specialization(params, s);
                return;
            }
        }
        match &inner.kind {
            ItemKind::Vars(vs) => {
                for v in vs {
                    self.var_template_item(params, v);
                }
                return;
            }
            ItemKind::Alias(a) if !params.is_empty() => {
                self.add_decl(a.name.name.clone(), DeclKind::AliasTemplate { ast: a, params }, a.name.span);
                return;
            }
            // `template <> R S<float>::f(…) {…}`, `template <class T> R S<T>::f(…) {…}`.
            ItemKind::Function(f) if f.name.segments.len() > 1 && self.member_definition(f, Some(params)) => return,
            ItemKind::Function(f) if params.is_empty() => {
                self.function_specialization(f);
                return;
            }
            _ => {}
        }
        if params.is_empty() {
            self.error(span, "this explicit template specialization (`template <>`) is not supported by the simulator yet")
                .help("write a separate function with its own name for this type");
            return;
        }
        match &inner.kind {
            ItemKind::Function(f) => {
                if self.function_template_redeclared(params, f) {
                    return;
                }
                let name = f.name.last().ident.clone();
                self.add_decl(name.name, DeclKind::FunctionTemplate { ast: f, params }, name.span);
            }
            ItemKind::Struct(s) => {
                self.add_decl(s.name.name.clone(), DeclKind::StructTemplate { ast: s, params }, s.name.span);
            }
            _ => {
                self.error(inner.span, "only function and struct templates are supported");
            }
        }
    }

    fn explicit_instantiation(
        &mut self,
        attrs: &[ast::Attribute],
        ret: &ast::TypeExpr,
        name: &ast::Path,
        params: Option<&[ast::Param]>,
        span: Span,
    ) {
        let seg = name.last();
        let decls = if name.segments.len() == 1 {
            self.lookup_global(&seg.ident.name)
        } else {
            let scope: Vec<Rc<str>> = name.segments[..name.segments.len() - 1].iter().map(|s| s.ident.name.clone()).collect();
            self.lookup_in(&scope, &seg.ident.name)
        };
        let templates: Vec<DeclId> =
            decls.iter().rev().copied().filter(|&d| matches!(self.decls[d].kind, DeclKind::FunctionTemplate { .. })).collect();
        let Some(&last) = templates.first() else {
            self.error(seg.ident.span, format!("`{}` is not a function template declared above", name.plain_name()));
            return;
        };
        let explicit = match &seg.template_args {
            Some(args) => match self.template_args(args) {
                Some(t) => t,
                None => return,
            },
            None => Vec::new(),
        };
        let host = host_name(attrs);
        let is_kernel = attrs.iter().any(|a| &*a.name.name == "kernel");
        // `template void k(float x);` or `template kernel k_t k<float>;` with
        // `k_t` a function type: the template whose signature this is, with
        // its arguments deduced from the parameter types.
        let own = match params {
            Some(params) => match self.declared_signature(ret, params) {
                Some(sig) => Some((sig, None)),
                None => return,
            },
            None => self.function_type_named(ret).map(|(sig, at)| (sig, Some(at))),
        };
        if let Some((own, typedef_at)) = own {
            let found = self.templates_for_signature(&templates, &explicit, &own, false, seg.ident.span);
            let Some((d, targs)) = found.into_iter().next() else {
                let shown: Vec<String> = own.params.iter().map(|t| self.ty_name(t)).collect();
                let mut d = self
                    .error(
                        seg.ident.span,
                        format!(
                            "no template `{}` declared above takes ({}) and returns `{}`, so this cannot instantiate one",
                            name.plain_name(),
                            shown.join(", "),
                            self.ty_name(&own.ret)
                        ),
                    )
                    .secondary(self.decls[last].span, "a template of that name");
                if let Some(at) = typedef_at {
                    d = d.secondary(at, "the function type this instantiation declares");
                }
                drop(d.help("the parameter and return types must be the template's, with its parameters replaced by the arguments"));
                return;
            };
            self.instantiate_function(d, targs, span, host.map(|h| (h, is_kernel)), None);
            return;
        }
        if seg.template_args.is_none() {
            self.error(span, "an explicit instantiation needs template arguments, e.g. `k<float>`, or the function's parameter list");
            return;
        }
        let targs = explicit;
        // Overloaded templates (same name, different template parameter
        // lists): the latest one these arguments fit is instantiated.
        let fitting = templates.iter().find_map(|&d| self.complete_targs_quiet(d, &targs, span).map(|t| (d, t)));
        let (d, targs) = match fitting {
            Some(found) => found,
            None => {
                // None fits: report against the latest template.
                let Some(t) = self.complete_targs(last, targs, span) else { return };
                (last, t)
            }
        };
        self.instantiate_function(d, targs, span, host.map(|h| (h, is_kernel)), None);
    }

    /// Function types are only for explicit instantiations at namespace
    /// scope; inside a struct or a function there is nothing to instantiate.
    pub(crate) fn refuse_function_type(&mut self, a: &ast::TypeAlias) {
        self.error(a.name.span, format!("function type `{}` declared here is not supported by this simulator", a.name.name))
            .help("declare function types at namespace scope, where explicit instantiations can use them");
    }

    // ----- functions -------------------------------------------------------

    pub(super) fn function_item(&mut self, f: &'a ast::Function) {
        if f.name.segments.len() > 1 {
            if !self.member_definition(f, None) {
                self.error(f.name.span, format!("`{}` does not name a member of a struct declared above", f.name.plain_name()))
                    .help("a qualified function name defines a member declared in its struct; declare the struct first");
            }
            return;
        }
        let Some(sig) = self.signature(f, None) else {
            // Still declare the name so later uses don't cascade into errors.
            return;
        };
        let name = f.name.last().ident.clone();
        // A definition after a declaration with the same parameter types.
        let previous = self
            .lookup_in(&self.env.scope.clone(), &name.name)
            .into_iter()
            .find(|&d| matches!(&self.decls[d].kind, DeclKind::Function { params, .. } if *params == sig.params));
        let id = match previous {
            Some(d) => {
                let DeclKind::Function { id, defined, ast: prev_ast, .. } = self.decls[d].kind.clone() else { unreachable!() };
                if f.body.is_some() && defined {
                    self.error(name.span, format!("redefinition of `{}`", name.name)).secondary(self.decls[d].span, "first defined here");
                    return;
                }
                if f.is_kernel || prev_ast.is_kernel {
                    // A kernel may be declared again with the same signature
                    // (a prototype, or a definition after one), naming the
                    // same host name if it names one.
                    let prev_host = host_name(&prev_ast.attrs);
                    let this_host = host_name(&f.attrs);
                    let same_host = match (&prev_host, &this_host) {
                        (Some(a), Some(b)) => a == b,
                        (None, Some(h)) | (Some(h), None) => h.as_str() == &*name.name,
                        (None, None) => true,
                    };
                    if !(f.is_kernel && prev_ast.is_kernel && same_host) {
                        self.error(
                            name.span,
                            format!("kernel functions cannot be overloaded or redeclared: `{}` already exists", name.name),
                        )
                        .secondary(self.decls[d].span, "first declared here")
                        .help(if f.is_kernel && prev_ast.is_kernel {
                            "a kernel's declarations must agree on its `[[host_name]]`; give this kernel a different name"
                        } else {
                            "give this kernel a different name"
                        });
                        return;
                    }
                }
                if f.body.is_some() {
                    if let DeclKind::Function { defined, ast, .. } = &mut self.decls[d].kind {
                        *defined = true;
                        *ast = f;
                    }
                }
                id
            }
            None => {
                if f.is_kernel {
                    let host = host_name(&f.attrs).unwrap_or_else(|| name.name.to_string());
                    if let Some(prev) = self.kernel_names.get(&host).copied() {
                        self.error(name.span, format!("kernel functions cannot be overloaded: there is already a kernel named `{host}`"))
                            .secondary(prev, "the first kernel with this name")
                            .help("give this kernel a different name");
                        return;
                    }
                    self.kernel_names.insert(host, name.span);
                }
                let id = self.new_function_slot();
                self.instance_sigs.insert(id, sig.params.clone());
                // A placeholder so calls before the body is checked can see it.
                self.functions[id.0 as usize] = Some(hir::Function {
                    name: name.name.to_string(),
                    host_name: None,
                    is_kernel: f.is_kernel,
                    params: Vec::new(),
                    ret: self.hir_ret(id, &sig.ret),
                    locals: Vec::new(),
                    body: Vec::new(),
                    span: Span::default(),
                });
                self.add_decl(
                    name.name.clone(),
                    DeclKind::Function { ast: f, id, params: sig.params.clone(), defined: f.body.is_some() },
                    name.span,
                );
                id
            }
        };
        if f.body.is_some() {
            if let Some(waiting) = &mut self.deferred_bodies {
                waiting.push((f, id, sig));
                return;
            }
            let host = if f.is_kernel { Some(host_name(&f.attrs).unwrap_or_else(|| name.name.to_string())) } else { None };
            self.function_body(f, id, &sig, name.name.to_string(), host, None);
        }
    }

    /// The signature a function-type alias (`typedef void (k_t)(…);`)
    /// names, when `te` is one.
    pub(crate) fn function_type_named(&mut self, te: &ast::TypeExpr) -> Option<(Signature, Span)> {
        let ast::TypeExprKind::Named { path, .. } = &te.kind else { return None };
        if path.segments.iter().any(|s| s.template_args.is_some()) {
            return None;
        }
        if path.segments.len() == 1 && self.env.targs.contains_key(&path.segments[0].ident.name) {
            return None;
        }
        let seg = path.last();
        let decls = if path.segments.len() == 1 {
            self.lookup_global(&seg.ident.name)
        } else {
            let scope: Vec<Rc<str>> = path.segments[..path.segments.len() - 1].iter().map(|s| s.ident.name.clone()).collect();
            self.lookup_in(&scope, &seg.ident.name)
        };
        let d = *decls.last()?;
        match &self.decls[d].kind {
            DeclKind::FunctionType(sig) => Some((sig.clone(), self.decls[d].span)),
            _ => None,
        }
    }

    /// The signature written in a declaration without a body (an explicit
    /// instantiation's `void k(const device float* in, uint i)`).
    fn declared_signature(&mut self, ret: &ast::TypeExpr, params: &[ast::Param]) -> Option<Signature> {
        let ret = self.resolve_type(ret)?.ty;
        let mut out = Vec::new();
        for p in params {
            out.push(param_type(self.resolve_param_type(&p.ty)?, &p.ty));
        }
        if out.len() == 1 && out[0] == Type::Void && params[0].name.is_none() {
            out.clear();
        }
        Some(Signature { params: out, ret })
    }

    /// Resolve parameter and return types. `this_struct` is set for methods.
    pub(crate) fn signature(&mut self, f: &ast::Function, _this_struct: Option<StructId>) -> Option<Signature> {
        let mut ok = true;
        let ret = match self.signature_ret(f) {
            Some(t) => t,
            None => {
                ok = false;
                Type::Void
            }
        };
        if f.is_kernel && ret != Type::Void && ok {
            self.error(f.ret.span, format!("a kernel function must return `void`, not `{}`", self.ty_name(&ret)))
                .help("write results into a `device` buffer parameter and declare the kernel `kernel void`");
            ok = false;
        }
        let mut params = Vec::new();
        let fparams = self.expanded_params(f)?;
        for p in fparams.iter() {
            match self.resolve_param_type(&p.ty) {
                Some(q) => params.push(param_type(q, &p.ty)),
                None => ok = false,
            }
        }
        // `void f(void)`
        if params.len() == 1 && params[0] == Type::Void && f.params[0].name.is_none() {
            params.clear();
        }
        ok.then_some(Signature { params, ret })
    }

    /// A function's return type (a `decltype` sees the parameters).
    pub(crate) fn signature_ret(&mut self, f: &ast::Function) -> Option<Type> {
        if super::templates::is_auto(&f.ret) {
            // Deduced from the body's `return`s (see `function_body`); the
            // placeholder is what a use before the body sees.
            Some(Type::Void)
        } else if matches!(f.ret.kind, ast::TypeExprKind::Decltype { .. }) {
            self.trailing_decltype(f)
        } else {
            self.resolve_type(&f.ret).map(|q| q.ty)
        }
    }

    /// `-> decltype(a * b)`: the return type, with the parameters in scope.
    fn trailing_decltype(&mut self, f: &ast::Function) -> Option<Type> {
        let mut ptys = Vec::new();
        let fparams = self.expanded_params(f)?;
        for p in fparams.iter() {
            ptys.push(param_type(self.resolve_param_type(&p.ty)?, &p.ty));
        }
        let mut fs = FnState::new(Type::Void, false);
        fs.packs.extend(self.param_pack_lens(f, &fparams));
        let saved = self.fs.replace(fs);
        for (p, ty) in fparams.iter().zip(&ptys) {
            if let Some(n) = &p.name {
                self.declare_param(&n.name, ty, p);
            }
        }
        let t = self.resolve_type(&f.ret).map(|q| q.ty);
        self.fs = saved;
        t
    }

    /// Check a function body and store the result in `functions[id]`.
    /// `this` is (struct, address space of the object, object is const).
    pub(crate) fn function_body(
        &mut self,
        f: &ast::Function,
        id: FuncId,
        sig: &Signature,
        name: String,
        host_name: Option<String>,
        this: Option<(StructId, AddressSpace, bool)>,
    ) {
        let _body = self.body_diagnostics();
        // Instantiating a template inside a body checks another body, up to
        // MAX_INSTANTIATION_DEPTH deep: grow the stack instead of
        // overflowing it (threads may have small stacks).
        stacker::maybe_grow(256 * 1024, 4 * 1024 * 1024, || self.function_body_checked(f, id, sig, name, host_name, this));
    }

    fn function_body_checked(
        &mut self,
        f: &ast::Function,
        id: FuncId,
        sig: &Signature,
        name: String,
        host_name: Option<String>,
        this: Option<(StructId, AddressSpace, bool)>,
    ) {
        let Some(body) = &f.body else { return };
        if f.is_constexpr {
            self.constexpr_fns.insert(id);
        }
        let mut fs = FnState::new(sig.ret.clone(), f.is_kernel);
        fs.func_name = f.name.segments.last().map(|s| s.ident.name.clone());
        let ret_auto = super::templates::is_auto(&f.ret);
        fs.ret_undeduced = ret_auto;
        let Some(fparams) = self.expanded_params(f) else { return };
        fs.packs.extend(self.param_pack_lens(f, &fparams));
        let mut params = Vec::new();
        if let Some((sid, space, is_const)) = this {
            let local = LocalId(fs.locals.len() as u32);
            fs.locals.push(hir::Local {
                name: "this".into(),
                ty: Type::pointer(Type::Struct(sid), space, is_const || f.is_const_method),
                space: AddressSpace::Thread,
                is_const: true,
                span: f.name.span,
                origin: hir::LocalOrigin::Source,
                is_ref: false,
            });
            fs.this_local = Some(local);
            params.push(hir::Param { local, binding: Binding::Argument });
        }
        let old_fs = self.fs.replace(fs);
        let old_this = self.env.this_struct;
        self.env.this_struct = this.map(|t| t.0);
        let mut bound = Vec::new();
        for (p, ty) in fparams.iter().zip(&sig.params) {
            let binding = if f.is_kernel { self.kernel_binding(p, ty).unwrap_or(Binding::Argument) } else { Binding::Argument };
            if f.is_kernel {
                bound.push((p, binding.clone()));
            }
            let pname: Rc<str> = p.name.as_ref().map(|n| n.name.clone()).unwrap_or_else(|| Rc::from(""));
            let local = self.declare_param(&pname, ty, p);
            params.push(hir::Param { local, binding });
        }
        if f.is_kernel {
            let tys: Vec<&Type> = sig.params.iter().collect();
            self.kernel_param_rules(&bound, &tys);
        }
        let errors_before = self.sink.error_count();
        let scope_depth = self.env.scope.len();
        let stmts = self.block_stmts(body);
        self.env.scope.truncate(scope_depth);
        // A `return` whose expression failed is missing from `stmts`: no
        // second message about it.
        let body_failed = self.sink.error_count() > errors_before;
        let ret = match &self.fs {
            Some(fs) if ret_auto => fs.ret.clone(),
            _ => sig.ret.clone(),
        };
        if ret != Type::Void && !body_failed && !stmt_always_returns(&stmts, &self.tables) {
            self.warn(body.span.after(), format!("`{name}` may reach its end without returning a value"))
                .help("add a `return` at the end of the function");
        }
        let fs = std::mem::replace(&mut self.fs, old_fs).expect("function state");
        if let Some((scope, first)) = &fs.type_scope {
            self.forget_local_aliases(scope, *first);
        }
        self.env.this_struct = old_this;
        // Compile-time calls run `constexpr` bodies; nothing else reads a
        // body during checking.
        let stmts = if self.keep_bodies || f.is_constexpr { stmts } else { Vec::new() };
        self.functions[id.0 as usize] = Some(hir::Function {
            name,
            host_name,
            is_kernel: f.is_kernel,
            params,
            ret: self.hir_ret(id, &ret),
            locals: fs.locals,
            body: stmts,
            span: f.span,
        });
    }

    /// `sig` with an `auto` return type replaced by the one its body deduced.
    pub(crate) fn deduced_signature(&self, f: &ast::Function, id: FuncId, mut sig: Signature) -> Signature {
        if super::templates::is_auto(&f.ret) {
            if let Some(func) = &self.functions[id.0 as usize] {
                sig.ret = func.ret.clone();
            }
        }
        sig
    }

    /// The HIR return type: a function returning a reference returns the
    /// referee's address, and its calls dereference it.
    pub(crate) fn hir_ret(&mut self, id: FuncId, ret: &Type) -> Type {
        match ret {
            Type::Reference { referee, space, is_const } => {
                self.ref_returns.insert(id);
                Type::Pointer { pointee: referee.clone(), space: *space, is_const: *is_const }
            }
            t => t.clone(),
        }
    }

    fn declare_param(&mut self, name: &Rc<str>, ty: &Type, p: &ast::Param) -> LocalId {
        let fs = self.fs.as_mut().expect("in function");
        let local = LocalId(fs.locals.len() as u32);
        let (lty, is_ref) = match ty {
            Type::Reference { referee, space, is_const } => {
                (Type::Pointer { pointee: referee.clone(), space: *space, is_const: *is_const }, true)
            }
            t => (t.clone(), false),
        };
        let is_const = matches!(&p.ty.kind, ast::TypeExprKind::Named { is_const: true, .. });
        let origin = super::origin_of(name);
        fs.locals.push(hir::Local {
            name: name.to_string(),
            ty: lty,
            space: AddressSpace::Thread,
            is_const,
            span: p.span,
            origin,
            is_ref: false,
        });
        if !name.is_empty() {
            fs.scopes.last_mut().expect("scope").push(name.clone(), local);
        }
        if is_ref {
            self.ref_locals_insert(local);
        }
        local
    }

    // ----- enums and globals -------------------------------------------------

    fn enum_item(&mut self, e: &'a ast::Enum) {
        let underlying = match &e.underlying {
            Some(t) => match self.resolve_type(t).map(|q| q.ty) {
                Some(Type::Scalar(s)) if s.is_integer() => s,
                Some(t) => {
                    let n = self.ty_name(&t);
                    self.error(e.span, format!("an enum's underlying type must be an integer type, not `{n}`"));
                    Scalar::Int
                }
                None => Scalar::Int,
            },
            None => Scalar::Int,
        };
        let eid = EnumId(self.tables.enums.len() as u32);
        let name = e.name.as_ref().map(|n| n.name.to_string()).unwrap_or_else(|| "(anonymous enum)".into());
        self.tables.enums.push(EnumDef { name: name.clone(), underlying, scoped: e.scoped, values: Vec::new() });
        if let Some(n) = &e.name {
            self.add_decl(n.name.clone(), DeclKind::Enum(eid), n.span);
        }
        let ty = if e.name.is_some() { Type::Enum(eid) } else { Type::Scalar(underlying) };
        let mut next: i64 = 0;
        for en in &e.enumerators {
            let value = match &en.value {
                Some(v) => match self.const_int(v, "an enumerator value") {
                    Some(v) => v,
                    None => next,
                },
                None => next,
            };
            next = value.wrapping_add(1);
            self.tables.enums[eid.0 as usize].values.push((en.name.name.to_string(), value));
            // Scoped enumerators live in the enum's scope; unscoped ones in
            // both the enum's scope and the enclosing one.
            if let Some(n) = &e.name {
                self.env.scope.push(n.name.clone());
                self.add_decl(en.name.name.clone(), DeclKind::Enumerator { ty: ty.clone(), value }, en.name.span);
                self.env.scope.pop();
            }
            if !e.scoped {
                self.add_decl(en.name.name.clone(), DeclKind::Enumerator { ty: ty.clone(), value }, en.name.span);
            }
        }
    }

    fn global_var(&mut self, v: &'a ast::VarDecl) {
        if self.os_log_global(v) {
            return;
        }
        if let Some(owner) = &v.owner {
            self.static_member_definition(owner, v);
            return;
        }
        let Some(q) = self.resolve_type(&v.ty) else { return };
        let space = q.space;
        if space != Some(AddressSpace::Constant) && !v.is_constexpr {
            let shown = self.ty_name(&q.ty);
            self.error(v.span, format!("program-scope variable `{}` must be declared in the `constant` address space", v.name.name))
                .label("Metal has no mutable global variables")
                .help(format!("write `constant {shown} {} = ...;` (or pass the value as a buffer)", v.name.name));
            return;
        }
        if let Some(attr) = Self::function_constant_attr(v) {
            self.function_constant(v, q.ty, attr);
            return;
        }
        let Some(init) = &v.init else {
            self.error(v.span, format!("program-scope constant `{}` must be initialized", v.name.name)).help(format!(
                "give it a value: `constant {} {} = ...;`",
                self.ty_name(&q.ty),
                v.name.name
            ));
            return;
        };
        let mut ty = q.ty.clone();
        let Some(h) = self.constant_initializer(init, &mut ty, v.span) else { return };
        if !self.is_constant_expr(&h) {
            self.error(v.span, format!("the initializer of program-scope constant `{}` must be a compile-time constant", v.name.name));
            return;
        }
        let gid = hir::GlobalId(self.globals.len() as u32);
        let h = self.fold_tree(h);
        self.globals.push(hir::Global { name: v.name.name.to_string(), ty, init: h, span: v.name.span });
        self.add_decl(v.name.name.clone(), DeclKind::Global(gid), v.name.span);
    }

    /// `constant constexpr T S<…>::x;`: an out-of-class definition of a
    /// static data member that already has its value in the class (C++
    /// allows it; for a `constexpr` member it adds nothing). It must name a
    /// member of that class with the same type.
    fn static_member_definition(&mut self, owner: &ast::Path, v: &ast::VarDecl) {
        let class = ast::TypeExpr {
            kind: ast::TypeExprKind::Named { path: owner.clone(), is_const: false, is_volatile: false, addr_space: None },
            span: owner.span,
        };
        let Some(cq) = self.resolve_type(&class) else { return };
        let Some(q) = self.resolve_type(&v.ty) else { return };
        let member = format!("{}::{}", owner.plain_name(), v.name.name);
        let Type::Struct(sid) = cq.ty else {
            let n = self.ty_name(&cq.ty);
            self.error(owner.span, format!("`{n}` is not a struct, so `{member}` cannot be defined here"));
            return;
        };
        let declared = self.structs[sid.0 as usize].statics.iter().find(|(n, _, _)| **n == *v.name.name).map(|(_, t, _)| t.clone());
        let Some(declared) = declared else {
            let sname = self.tables.struct_def(sid).name.clone();
            self.error(v.name.span, format!("`{sname}` has no static data member `{}` for this definition to define", v.name.name))
                .help(format!("declare it in the struct with its value: `static constexpr constant … {} = …;`", v.name.name));
            return;
        };
        // `T x[]` outside may leave out the length the class gave.
        let same = match (&q.ty, &declared) {
            (Type::Array { elem, len: 0 }, Type::Array { elem: d, .. }) => elem == d,
            (t, d) => t == d,
        };
        if !same {
            let (t, d) = (self.ty_name(&q.ty), self.ty_name(&declared));
            self.error(v.ty.span, format!("this definition of `{member}` has type `{t}`, but the member is declared as `{d}`"))
                .help(format!("give it the type the struct declares (`{d}`), or leave the definition out: the struct defines the member"));
            return;
        }
        if v.init.is_some() {
            self.error(v.span, format!("`{member}` already has its value in the struct; this definition cannot give it another"))
                .help(format!("leave out the initializer: `… {member};`"));
        }
    }

    /// The initializer of a program-scope constant or a static data member.
    /// Outside a function it is checked in a scratch function (a constructor
    /// call needs a temporary), and an object built by a `constexpr`
    /// constructor is evaluated into its field values here.
    pub(crate) fn constant_initializer(&mut self, init: &ast::Init, ty: &mut Type, span: Span) -> Option<hir::Expr> {
        let scratch = self.fs.is_none().then(|| FnState::new(Type::Void, false));
        let saved = scratch.map(|s| self.fs.replace(s));
        let h = self.initializer_fixing_len(init, ty, span);
        if let Some(saved) = saved {
            self.fs = saved;
        }
        let h = h?;
        use hir::ExprKind as H;
        let (H::Comma { lhs, rhs }, Type::Struct(sid)) = (&h.kind, &h.ty) else { return Some(h) };
        let (H::Call { func, args }, H::Local(_)) = (&lhs.kind, &rhs.kind) else { return Some(h) };
        let vals: Vec<Option<ConstValue>> = args.iter().skip(1).map(|a| self.const_value(a)).collect();
        let Some(fields) = super::consteval::construct(self, *func, *sid, &vals) else { return Some(h) };
        let parts = fields
            .into_iter()
            .zip(&self.tables.struct_def(*sid).fields)
            .map(|(v, fd)| hir::Expr { kind: H::Const(v), ty: fd.ty.clone(), span: h.span })
            .collect();
        Some(hir::Expr { kind: H::Aggregate(parts), ty: h.ty.clone(), span: h.span })
    }

    /// Whether an expression can be evaluated without running a thread.
    pub(crate) fn is_constant_expr(&self, e: &hir::Expr) -> bool {
        use hir::ExprKind as K;
        match &e.kind {
            // A function's address is known when the program is linked.
            K::Const(_) | K::Zero | K::Uninit | K::FuncRef(_) => true,
            K::ArrayInit { items, rest } => items.iter().all(|x| self.is_constant_expr(x)) && self.is_constant_expr(rest),
            K::Global(_) => true,
            K::Convert(x) | K::BitCast(x) => self.is_constant_expr(x),
            // `static_cast<thread_scope>(3)`, `static_cast<E>(2)`: a cast to
            // an enum keeps the value.
            K::PtrCast(x) if matches!(e.ty, Type::Enum(_) | Type::BuiltinEnum(_)) => self.is_constant_expr(x),
            K::Unary { operand, .. } => self.is_constant_expr(operand),
            K::Binary { lhs, rhs, .. } | K::Logical { lhs, rhs, .. } => self.is_constant_expr(lhs) && self.is_constant_expr(rhs),
            K::Conditional { cond, then, els } => self.is_constant_expr(cond) && self.is_constant_expr(then) && self.is_constant_expr(els),
            K::Construct(xs) | K::Aggregate(xs) => xs.iter().all(|x| self.is_constant_expr(x)),
            K::Field { base, .. } | K::Swizzle { base, .. } => self.is_constant_expr(base),
            K::Index { base, index } => self.is_constant_expr(base) && self.is_constant_expr(index),
            K::Builtin { args, .. } => args.iter().all(|x| self.is_constant_expr(x)),
            _ => false,
        }
    }

    /// Replace every scalar subexpression that folds to a constant by the
    /// constant (program-scope initializers reach the executor as data).
    pub(crate) fn fold_tree(&self, e: hir::Expr) -> hir::Expr {
        use hir::ExprKind as K;
        if e.ty.is_scalar() || matches!(e.ty, Type::Enum(_) | Type::BuiltinEnum(_)) {
            if let Some(v) = self.const_value(&e) {
                return hir::Expr { kind: K::Const(v), ..e };
            }
        }
        let kind = match e.kind {
            K::Construct(xs) => K::Construct(xs.into_iter().map(|x| self.fold_tree(x)).collect()),
            K::Aggregate(xs) => K::Aggregate(xs.into_iter().map(|x| self.fold_tree(x)).collect()),
            K::Convert(x) => K::Convert(Box::new(self.fold_tree(*x))),
            other => other,
        };
        hir::Expr { kind, ..e }
    }

    /// Fold a scalar constant expression.
    pub(crate) fn const_value(&self, e: &hir::Expr) -> Option<ConstValue> {
        crate::check::fold::fold(self, e)
    }
}

/// The `[[host_name("...")]]` of a declaration.
pub(crate) fn host_name(attrs: &[ast::Attribute]) -> Option<String> {
    attrs.iter().find(|a| &*a.name.name == "host_name").and_then(|a| match a.args.first().map(|e| &e.kind) {
        Some(ast::ExprKind::StrLit(s)) => Some(s.to_string()),
        _ => None,
    })
}

/// Whether a parameter written as `te` takes an array argument whole:
/// `metal::array<T, N>` (an array type here), or an alias template of it,
/// is a class passed by value, where a C array parameter decays.
pub(crate) fn takes_array_whole(te: &ast::TypeExpr) -> bool {
    matches!(&te.kind, ast::TypeExprKind::Named { path, .. } if path.last().template_args.is_some())
}

/// The type of a parameter declared as `te`.
pub(crate) fn param_type(q: QualType, te: &ast::TypeExpr) -> Type {
    match q.ty {
        Type::Array { elem, len } if takes_array_whole(te) => Type::Array { elem, len },
        Type::Array { elem, .. } => {
            // Array parameters decay to pointers (thread space by default).
            Type::Pointer { pointee: elem, space: q.space.unwrap_or(AddressSpace::Thread), is_const: q.is_const }
        }
        t => t,
    }
}

/// Whether control can't fall off the end of these statements.
pub fn stmt_always_returns(stmts: &[hir::Stmt], tables: &TypeTables) -> bool {
    stmts.iter().any(|s| match &s.kind {
        hir::StmtKind::Return(_) => true,
        hir::StmtKind::Block(b) => stmt_always_returns(b, tables),
        hir::StmtKind::If { then, els, .. } => stmt_always_returns(then, tables) && stmt_always_returns(els, tables),
        hir::StmtKind::Loop { cond: None, body, .. } => !contains_break(body),
        hir::StmtKind::Switch { cond, cases } => switch_always_returns(cond, cases, tables),
        _ => false,
    })
}

/// A switch returns on every path when some label takes every value (a
/// `default:`, or cases naming every enumerator of an enum, as clang
/// assumes), no case breaks out, and the last case returns (earlier ones
/// fall through into it).
fn switch_always_returns(cond: &hir::Expr, cases: &[hir::SwitchCase], tables: &TypeTables) -> bool {
    let exhaustive = cases.iter().any(|c| c.is_default)
        || match &cond.ty {
            Type::Enum(id) => {
                let def = tables.enum_def(*id);
                !def.values.is_empty() && def.values.iter().all(|(_, v)| cases.iter().any(|c| c.values.contains(v)))
            }
            _ => false,
        };
    exhaustive && !cases.iter().any(|c| contains_break(&c.body)) && cases.last().is_some_and(|c| stmt_always_returns(&c.body, tables))
}

fn contains_break(stmts: &[hir::Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        hir::StmtKind::Break => true,
        hir::StmtKind::Block(b) => contains_break(b),
        hir::StmtKind::If { then, els, .. } => contains_break(then) || contains_break(els),
        _ => false,
    })
}

/// Does an expression call a function (a constructor or any other)?
fn calls_a_function(e: &hir::Expr) -> bool {
    let mut found = false;
    e.visit(&mut |x| found |= matches!(x.kind, hir::ExprKind::Call { .. }));
    found
}
