//! Names in expressions: locals, members of `this`, globals, enumerators,
//! qualified names and the standard library's named values.

use super::{bx, mk};
use crate::ast;
use crate::check::Checker;
use crate::diag::suggest;
use crate::hir::{self, ConstValue, ExprKind as H};
use crate::source::Span;
use crate::types::{BuiltinEnum, Type};

impl<'a> Checker<'a, '_> {
    fn local_expr(&self, id: hir::LocalId, span: Span) -> hir::Expr {
        let fs = self.fs.as_ref().expect("in function");
        let ty = fs.locals[id.0 as usize].ty.clone();
        let e = mk(H::Local(id), ty.clone(), span);
        if fs.ref_locals.contains(&id) {
            if let Type::Pointer { pointee, .. } = ty {
                return mk(H::Deref(bx(e)), *pointee, span);
            }
        }
        e
    }

    fn find_local(&self, name: &str) -> Option<hir::LocalId> {
        let fs = self.fs.as_ref()?;
        for scope in fs.scopes.iter().rev() {
            if let Some(id) = scope.find(name) {
                return Some(id);
            }
        }
        None
    }

    /// `this->field` for a bare field name inside a member function.
    /// A field of a base class is reached through its base subobject.
    fn this_field(&self, name: &str, span: Span) -> Option<hir::Expr> {
        let sid = self.env.this_struct?;
        let this = self.fs.as_ref()?.this_local?;
        let (path, _) = self.this_member_path(sid, name)?;
        let this_e = self.local_expr(this, span);
        let Type::Pointer { pointee, .. } = &this_e.ty else { return None };
        let obj = mk(H::Deref(bx(this_e.clone())), (**pointee).clone(), span);
        Some(self.subobject(obj, &path))
    }

    pub(super) fn name_expr(&mut self, path: &ast::Path, span: Span) -> Option<hir::Expr> {
        if path.segments.len() == 1 && path.segments[0].template_args.is_none() {
            let name = &*path.segments[0].ident.name;
            if let Some(id) = self.find_local(name) {
                if self.fs.as_ref().is_some_and(|f| f.poisoned.contains(&id)) {
                    return None;
                }
                return Some(self.local_expr(id, span));
            }
            if name == "__func__" {
                return self.func_name_expr(span);
            }
            match self.env.targs.get(name).cloned() {
                Some(crate::check::TArg::Value(v, t)) => return Some(mk(H::Const(v), t, span)),
                Some(crate::check::TArg::Func(f, t)) => return Some(mk(H::FuncRef(f), t, span)),
                Some(crate::check::TArg::Pack(_)) => {
                    self.error(span, format!("parameter pack `{name}` must be expanded with `...` here"));
                    return None;
                }
                _ => {}
            }
            if self.fs.as_ref().is_some_and(|fs| fs.packs.contains_key(name)) {
                self.error(span, format!("function parameter pack `{name}` must be expanded with `...` here"))
                    .help(format!("pass `{name}...` to forward every argument"));
                return None;
            }
            if let Some(e) = self.this_field(name, span) {
                return Some(e);
            }
            if let Some(sid) = self.env.this_struct {
                if let Some(mut h) = self.find_static(sid, name) {
                    h.span = span;
                    return Some(h);
                }
            }
            if let Some(fs) = self.function_decls(path) {
                let explicit = None;
                return self.function_value(&fs, name, explicit, None, span);
            }
            let decls = self.lookup_global(name);
            if let Some(&d) = decls.last() {
                return self.decl_value(d, name, span);
            }
            if let Some(e) = builtin_value(name, span) {
                return Some(e);
            }
            return self.undeclared(name, span);
        }
        // `is_same_v<A, B>` and `is_same<A, B>::value`.
        if let Some(h) = self.value_trait_path(path, span) {
            return h;
        }
        // A variable template: `is_complex_v<T>`.
        if let Some(h) = self.var_template_path(path, span) {
            return h;
        }
        // Qualified names.
        let segs = &path.segments;
        let (segs, in_metal) = if segs.len() > 1 && &*segs[0].ident.name == "metal" { (&segs[1..], true) } else { (&segs[..], false) };
        let (last, prefix) = segs.split_last()?;
        let name = &*last.ident.name;
        if let [ast::PathSegment { ident, template_args: Some(targs) }] = prefix {
            if &*ident.name == "numeric_limits" {
                return self.numeric_limits_constant(targs, &last.ident, span);
            }
        }
        if prefix.len() == 1 && &*prefix[0].ident.name == "mem_flags" {
            return mem_flag(name, span).or_else(|| {
                self.error(last.ident.span, format!("`mem_flags` has no member `{name}`"))
                    .help("use `mem_none`, `mem_device`, `mem_threadgroup` or `mem_texture`");
                None
            });
        }
        if prefix.is_empty() && in_metal {
            if let Some(e) = builtin_value(name, span) {
                return Some(e);
            }
        }
        if let Some(fs) = self.function_decls(path) {
            let explicit = self.written_targs(last)?;
            return self.function_value(&fs, name, explicit, None, span);
        }
        if prefix.iter().all(|s| s.template_args.is_none()) {
            // A program may add its own names to namespace `metal`.
            let metal = in_metal.then(|| std::rc::Rc::<str>::from("metal"));
            let scope: Vec<std::rc::Rc<str>> = metal.into_iter().chain(prefix.iter().map(|s| s.ident.name.clone())).collect();
            if let Some(d) = self.lookup_qualified(&scope, name) {
                return self.decl_value(d, name, span);
            }
        }
        // `Struct::constant` / `Limits<float>::max`
        let prefix_path = ast::Path { global: false, segments: prefix.to_vec(), span: path.span };
        if !prefix.is_empty() {
            if let Some(t @ Type::Struct(_)) = self.resolve_type_prefix(&prefix_path).ok()? {
                return self.static_member(&t, &last.ident, span);
            }
        }
        self.error(last.ident.span, format!("use of undeclared name `{}`", path.plain_name()))
            .code(crate::diag::codes::UNDECLARED_NAME)
            .subject(path.plain_name());
        None
    }

    /// `T::name` for a struct type `T`: its static data member.
    pub(super) fn static_member(&mut self, ty: &Type, name: &ast::Ident, span: Span) -> Option<hir::Expr> {
        let Type::Struct(sid) = ty else {
            let shown = self.ty_name(ty);
            self.error(name.span, format!("`{shown}` is not a struct, so it has no member `{}`", name.name));
            return None;
        };
        if let Some(mut h) = self.find_static(*sid, &name.name) {
            h.span = span;
            return Some(h);
        }
        // `Base::field` inside a member function of a struct derived from it.
        if let Some(this_sid) = self.env.this_struct {
            if (this_sid == *sid || self.is_base_of(*sid, this_sid)) && self.this_member_path(*sid, &name.name).is_some() {
                if let Some(obj) = self.this_as(*sid, span) {
                    return self.member(obj, name, false, span);
                }
            }
        }
        let sname = self.tables.struct_def(*sid).name.clone();
        self.error(name.span, format!("`{sname}` has no static member `{}`", name.name));
        None
    }

    /// Look up `scope::name` relative to the current namespace, innermost first.
    pub(crate) fn lookup_qualified(&self, scope: &[std::rc::Rc<str>], name: &str) -> Option<usize> {
        self.lookup_qualified_all(scope, name).last().copied()
    }

    /// Every declaration `scope::name` names from the current namespace: a
    /// qualified name is looked up in the innermost enclosing namespace
    /// that has it (`detail::X` inside `ns` means `ns::detail::X` first).
    pub(crate) fn lookup_qualified_all(&self, scope: &[std::rc::Rc<str>], name: &str) -> Vec<usize> {
        let cur = self.env.scope.clone();
        for depth in (0..=cur.len()).rev() {
            let mut full: Vec<std::rc::Rc<str>> = cur[..depth].to_vec();
            full.extend(scope.iter().cloned());
            let found = self.lookup_in(&full, name);
            if !found.is_empty() {
                return found;
            }
        }
        Vec::new()
    }

    fn decl_value(&mut self, d: usize, name: &str, span: Span) -> Option<hir::Expr> {
        match self.decls[d].kind.clone() {
            crate::check::DeclKind::Global(gid) => {
                let ty = self.globals[gid.0 as usize].ty.clone();
                Some(mk(H::Global(gid), ty, span))
            }
            crate::check::DeclKind::Constant(mut h) => {
                h.span = span;
                Some(h)
            }
            crate::check::DeclKind::Enumerator { ty, value } => Some(mk(H::Const(ConstValue::Int(value)), ty, span)),
            crate::check::DeclKind::Function { .. } | crate::check::DeclKind::FunctionTemplate { .. } => {
                self.error(span, format!("`{name}` is a function; call it with `{name}(...)`"));
                None
            }
            _ => {
                self.error(span, format!("`{name}` is a type, not a value"))
                    .help(format!("to make a value of this type write `{name}(...)` or `{name}{{...}}`"));
                None
            }
        }
    }

    fn undeclared(&mut self, name: &str, span: Span) -> Option<hir::Expr> {
        let later = self.later_decl(name);
        let mut candidates: Vec<String> = self.visible_names().iter().map(|s| s.to_string()).collect();
        candidates.extend(crate::builtins::names().map(|s| s.to_string()));
        if let Some(sid) = self.env.this_struct {
            candidates.extend(
                self.tables
                    .struct_def(sid)
                    .fields
                    .iter()
                    .filter(|f| !crate::check::inherit::is_hidden_member(&f.name))
                    .map(|f| f.name.clone()),
            );
        }
        let suggestion = suggest(name, candidates.iter().map(|s| s.as_str())).map(|s| s.to_string());
        let mut d = self
            .error(span, format!("use of undeclared identifier `{name}`"))
            .label("not found in this scope")
            .code(crate::diag::codes::UNDECLARED_NAME)
            .subject(name);
        if let Some(later) = later {
            d = d
                .secondary(later, "declared here, after its use")
                .help(format!("move the declaration of `{name}` above this use (or declare it before)"));
        } else if let Some(s) = suggestion {
            d = d.help(format!("did you mean `{s}`?"));
        }
        drop(d);
        None
    }
}

/// `mem_flags::X`
fn mem_flag(name: &str, span: Span) -> Option<hir::Expr> {
    let v = match name {
        "mem_none" => 0,
        "mem_device" => 1,
        "mem_threadgroup" => 2,
        "mem_texture" => 4,
        "mem_threadgroup_imageblock" => 8,
        "mem_object_data" => 16,
        _ => return None,
    };
    Some(mk(H::Const(ConstValue::Int(v)), Type::BuiltinEnum(BuiltinEnum::MemFlags), span))
}

/// Standard-library values: `memory_order_relaxed`, `M_PI_F`, `FLT_MAX`, ...
fn builtin_value(name: &str, span: Span) -> Option<hir::Expr> {
    let order = match name {
        "memory_order_relaxed" => Some(0),
        "memory_order_acquire" => Some(2),
        "memory_order_release" => Some(3),
        "memory_order_acq_rel" => Some(4),
        "memory_order_seq_cst" => Some(5),
        _ => None,
    };
    if let Some(v) = order {
        return Some(mk(H::Const(ConstValue::Int(v)), Type::BuiltinEnum(BuiltinEnum::MemoryOrder), span));
    }
    let scope = match name {
        "thread_scope_thread" => Some(0),
        "thread_scope_simdgroup" => Some(1),
        "thread_scope_threadgroup" => Some(2),
        "thread_scope_device" => Some(3),
        _ => None,
    };
    if let Some(v) = scope {
        return Some(mk(H::Const(ConstValue::Int(v)), Type::BuiltinEnum(BuiltinEnum::ThreadScope), span));
    }
    let (ty, v) = crate::builtins::constant(name)?;
    let cv = match v {
        crate::builtins::ConstValue::Int(i) => ConstValue::Int(i),
        crate::builtins::ConstValue::UInt(u) => ConstValue::UInt(u),
        crate::builtins::ConstValue::Float(f) => ConstValue::Float(f),
    };
    let cv = match &ty {
        Type::Scalar(s) => cv.cast(*s),
        _ => cv,
    };
    Some(mk(H::Const(cv), ty, span))
}
