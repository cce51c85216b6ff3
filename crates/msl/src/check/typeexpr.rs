//! Resolving written types (`const device float*`, `vec<T, 4>`, `Pair<T>`)
//! to semantic types.

use super::{Checker, DeclKind, TArg};
use crate::ast::{self, AddressSpace, TypeExprKind};
use crate::diag::suggest;
use crate::hir::{ConstValue, ExprKind as H};
use crate::types::{builtin_type_name, Scalar, Type};

/// A resolved type with the qualifiers written on it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct QualType {
    pub ty: Type,
    pub is_const: bool,
    pub space: Option<AddressSpace>,
}

/// Type names the Metal standard library defines as templates.
const BUILTIN_TYPE_TEMPLATES: &[&str] = &["vec", "packed_vec", "atomic", "array", "simdgroup_matrix", "matrix", "uniform"];

impl<'a> Checker<'a, '_> {
    pub(crate) fn resolve_type(&mut self, te: &ast::TypeExpr) -> Option<QualType> {
        match &te.kind {
            TypeExprKind::Named { path, is_const, addr_space, .. } => {
                let ty = self.resolve_named_type(path)?;
                Some(QualType { ty, is_const: *is_const, space: *addr_space })
            }
            TypeExprKind::Decltype { expr, is_const, addr_space } => {
                self.unevaluated += 1;
                let e = self.expr(expr);
                self.unevaluated -= 1;
                let e = e?;
                Some(QualType { ty: e.ty, is_const: *is_const, space: *addr_space })
            }
            TypeExprKind::Pointer { pointee, is_const } => {
                if let TypeExprKind::Function { ret, params } = &pointee.kind {
                    let ty = self.fn_ptr_type_expr(ret, params, te.span)?;
                    return Some(QualType { ty, is_const: *is_const, space: None });
                }
                // `F*` with `typedef R (F)(P…);`: a function pointer.
                if let Some((sig, _)) = self.function_type_named(pointee) {
                    let ty = self.pointer_to_function_type(sig, pointee.span)?;
                    return Some(QualType { ty, is_const: *is_const, space: None });
                }
                let inner = self.resolve_type(pointee)?;
                if matches!(inner.ty, Type::FnPtr { .. }) {
                    self.error(te.span, "a pointer to a function pointer is not supported by the simulator")
                        .note(super::fnptr::RUNTIME_NOTE);
                    return None;
                }
                if matches!(inner.ty, Type::Reference { .. }) {
                    self.error(te.span, "pointers to references are not allowed");
                    return None;
                }
                if inner.space.is_none() && self.names_concrete_type(pointee) {
                    self.missing_address_space(te, &inner.ty);
                }
                let ty = Type::Pointer {
                    pointee: Box::new(inner.ty),
                    space: inner.space.unwrap_or(AddressSpace::Thread),
                    is_const: inner.is_const,
                };
                Some(QualType { ty, is_const: *is_const, space: None })
            }
            TypeExprKind::Function { .. } => {
                self.error(te.span, "a function type is only supported as a function pointer: `R (*)(P1, P2)`")
                    .note(super::fnptr::RUNTIME_NOTE);
                None
            }
            TypeExprKind::Reference { referee } => {
                if matches!(referee.kind, TypeExprKind::Function { .. }) {
                    self.error(te.span, "a reference to a function is not supported by the simulator; use a function pointer `R (*f)(P…)`");
                    return None;
                }
                let inner = self.resolve_type(referee)?;
                let ty = Type::Reference {
                    referee: Box::new(inner.ty),
                    space: inner.space.unwrap_or(AddressSpace::Thread),
                    is_const: inner.is_const,
                };
                Some(QualType { ty, is_const: false, space: None })
            }
            TypeExprKind::Array { elem, size } => {
                let inner = self.resolve_type(elem)?;
                let len = match size {
                    None => 0,
                    Some(e) => self.array_len(e)?,
                };
                Some(QualType { ty: Type::Array { elem: Box::new(inner.ty), len }, ..inner })
            }
        }
    }

    /// Whether `te` names a type that cannot carry an address space of its
    /// own: a built-in type or a struct, spelled without one (a template
    /// parameter or an alias might stand for `device float`).
    fn names_concrete_type(&self, te: &ast::TypeExpr) -> bool {
        let TypeExprKind::Named { path, addr_space: None, .. } = &te.kind else { return false };
        let [seg] = &path.segments[..] else { return false };
        let name = &*seg.ident.name;
        if seg.template_args.is_some() || self.env.targs.contains_key(name) {
            return false;
        }
        if name == "void" || crate::types::builtin_type_name(name).is_some() {
            return true;
        }
        let decls = self.lookup_global(name);
        !decls.is_empty() && decls.iter().all(|&d| matches!(self.decls[d].kind, DeclKind::Struct(_)))
    }

    /// Metal has no default address space for pointers: `float* p` is an
    /// error (Apple's compiler: "pointer type must have explicit address
    /// space qualifier").
    fn missing_address_space(&self, te: &ast::TypeExpr, ty: &Type) {
        let shown = self.ty_name(ty);
        self.error(te.span, "a pointer type needs an explicit address space")
            .label(format!("which memory does this `{shown}*` point into?"))
            .note("Metal has no default address space for pointers: `device` and `constant` are buffers, `threadgroup` is shared by a threadgroup, `thread` is the thread's own memory")
            .help(format!("write `thread {shown}*` for a pointer to a local variable, `device {shown}*` for buffer memory"));
    }

    /// Evaluate an array bound: a positive integer constant.
    fn array_len(&mut self, e: &ast::Expr) -> Option<u32> {
        let v = self.const_int(e, "an array size")?;
        // A size from a function constant with no value yet: the pipeline
        // cannot be built until it has one (checked when a kernel is run).
        if v <= 0 && self.mentions_undefined_function_constant(e) {
            return Some(1);
        }
        if v <= 0 {
            self.error(e.span, format!("array size must be positive, but it is {v}"));
            return None;
        }
        if v > (1 << 24) {
            self.error(e.span, format!("array size {v} is too large"))
                .note("threadgroup memory is 32 KiB and thread memory is much smaller");
            return None;
        }
        Some(v as u32)
    }

    /// Check `e` and require an integral constant expression.
    pub(crate) fn const_int(&mut self, e: &ast::Expr, what: &str) -> Option<i64> {
        let h = self.expr(e)?;
        let integral = matches!(h.ty, Type::Enum(_)) || matches!(h.ty, Type::Scalar(s) if s.is_integer() || s == Scalar::Bool);
        if !integral {
            self.error(e.span, format!("{what} must be an integer, but this has type `{}`", self.ty_name(&h.ty)));
            return None;
        }
        match self.const_value(&h) {
            Some(v) => Some(v.as_i64()),
            None => {
                self.not_constant(e.span, format!("{what} must be a compile-time constant"), &h)
                    .help("use a literal, a `constexpr` or `constant` variable, or a template parameter");
                None
            }
        }
    }

    fn resolve_named_type(&mut self, path: &ast::Path) -> Option<Type> {
        let segs = &path.segments;
        // Strip a leading `metal::` (the standard library namespace).
        let (segs, in_metal) = if segs.len() > 1 && &*segs[0].ident.name == "metal" { (&segs[1..], true) } else { (&segs[..], false) };
        if segs.len() == 1 {
            let seg = &segs[0];
            let name = &*seg.ident.name;
            if let Some(args) = &seg.template_args {
                if BUILTIN_TYPE_TEMPLATES.contains(&name) {
                    return self.builtin_type_template(name, args, seg.ident.span);
                }
                if crate::traits::TYPE_TRAITS.contains(&name) && self.lookup_global(name).is_empty() {
                    return self.type_trait(name, args, seg.ident.span);
                }
            } else {
                if !in_metal {
                    if let Some(t) = self.env.targs.get(name) {
                        return match t {
                            TArg::Type(t) => Some(t.clone()),
                            TArg::Value(..) | TArg::Func(..) | TArg::FuncName { .. } => {
                                self.error(seg.ident.span, format!("`{name}` is a template value parameter, not a type"));
                                None
                            }
                            TArg::Template(d) => {
                                let d = *d;
                                // The injected class name inside an instance of the bound template.
                                if let Some(sid) =
                                    self.env.this_struct.filter(|s| self.struct_instance_of.get(s).is_some_and(|(t, _)| *t == d))
                                {
                                    return Some(Type::Struct(sid));
                                }
                                self.error(seg.ident.span, format!("`{name}` is a template template parameter, not a type"))
                                    .label("a class template without its arguments")
                                    .help(format!("give its arguments, e.g. `{name}<float>`"));
                                None
                            }
                            TArg::Pack(_) => {
                                self.error(seg.ident.span, format!("parameter pack `{name}` must be expanded with `...` here"))
                                    .help(format!("write `{name}...` where a list of types is expected"));
                                None
                            }
                        };
                    }
                }
                if let Some(t) = builtin_type_name(name) {
                    return Some(t);
                }
                match name {
                    "double" => {
                        self.error(seg.ident.span, "`double` is not supported in Metal")
                            .label("Metal has no 64-bit floating-point type")
                            .help("use `float`");
                        return None;
                    }
                    "mem_flags" => return Some(Type::BuiltinEnum(crate::types::BuiltinEnum::MemFlags)),
                    "memory_order" => return Some(Type::BuiltinEnum(crate::types::BuiltinEnum::MemoryOrder)),
                    "thread_scope" => return Some(Type::BuiltinEnum(crate::types::BuiltinEnum::ThreadScope)),
                    _ => {}
                }
            }
            if in_metal {
                let decls = self.lookup_in(&[std::rc::Rc::from("metal")], name);
                if !decls.is_empty() {
                    return self.type_from_decls(&decls, seg, path.span);
                }
                self.error(seg.ident.span, format!("no type named `{name}` in namespace `metal`"));
                return None;
            }
            let decls = self.lookup_global(name);
            return self.type_from_decls(&decls, seg, path.span);
        }
        // Qualified: namespace or struct scope.
        let (last, prefix) = segs.split_last()?;
        // `enable_if<c, T>::type`
        if let ([p], "type") = (prefix, &*last.ident.name) {
            let t_name = format!("{}_t", p.ident.name);
            if let (Some(args), true) = (&p.template_args, crate::traits::TYPE_TRAITS.contains(&t_name.as_str())) {
                if self.lookup_global(&p.ident.name).is_empty() {
                    return self.type_trait(&t_name, args, p.ident.span);
                }
            }
        }
        let scope: Vec<std::rc::Rc<str>> = prefix.iter().map(|s| s.ident.name.clone()).collect();
        if prefix.iter().all(|s| s.template_args.is_none()) {
            let decls =
                if path.global { self.lookup_in(&scope, &last.ident.name) } else { self.lookup_qualified_all(&scope, &last.ident.name) };
            if !decls.is_empty() {
                return self.type_from_decls(&decls, last, path.span);
            }
        }
        // `Struct::Alias`
        let prefix_path = ast::Path { global: path.global, segments: prefix.to_vec(), span: path.span };
        if let Some(Type::Struct(sid)) = self.resolve_named_type_quiet(&prefix_path) {
            let info = &self.structs[sid.0 as usize];
            if let Some((_, t)) = info.aliases.iter().find(|(n, _)| **n == *last.ident.name) {
                return Some(t.clone());
            }
            // A nested struct, enum or alias template of `Struct<T>`.
            let decls = self.lookup_member_decls(sid, &last.ident.name);
            if !decls.is_empty() {
                return self.type_from_decls(&decls, last, path.span);
            }
        }
        self.error(last.ident.span, format!("unknown type `{}`", path.plain_name()))
            .code(crate::diag::codes::UNKNOWN_TYPE)
            .subject(path.plain_name());
        None
    }

    /// The type before `::` in `Prefix<Args>::name`, resolved without
    /// reporting, except that a prefix ending in template arguments can
    /// only be a type: its failure (a bad argument) is reported, as `Err`,
    /// instead of leaving the caller to call `name` undeclared.
    pub(crate) fn resolve_type_prefix(&mut self, prefix: &ast::Path) -> Result<Option<Type>, ()> {
        let trial = self.trial();
        let t = self.resolve_named_type(prefix);
        let has_args = prefix.segments.last().is_some_and(|s| s.template_args.is_some());
        if t.is_none() && has_args && trial.reported() {
            trial.commit();
            return Err(());
        }
        Ok(t)
    }

    /// Resolve without reporting (used to probe whether a path is a type).
    pub(crate) fn resolve_named_type_quiet(&mut self, path: &ast::Path) -> Option<Type> {
        let _trial = self.trial();
        self.resolve_named_type(path)
    }

    fn type_from_decls(&mut self, decls: &[usize], seg: &ast::PathSegment, span: crate::source::Span) -> Option<Type> {
        let name = &*seg.ident.name;
        let Some(&d) = decls.last() else {
            let mut candidates: Vec<String> = self
                .decls
                .iter()
                .take(self.env.visible)
                .filter(|d| {
                    matches!(
                        d.kind,
                        DeclKind::Struct(_)
                            | DeclKind::Alias(_)
                            | DeclKind::Enum(_)
                            | DeclKind::StructTemplate { .. }
                            | DeclKind::AliasTemplate { .. }
                    )
                })
                .map(|d| d.name.to_string())
                .collect();
            candidates.extend(
                [
                    "float", "half", "int", "uint", "bool", "short", "ushort", "char", "uchar", "long", "ulong", "bfloat", "float2",
                    "float3", "float4", "half2", "half4", "uint2", "uint3", "int2", "size_t",
                ]
                .iter()
                .map(|s| s.to_string()),
            );
            let mut d = self
                .error(seg.ident.span, format!("unknown type name `{name}`"))
                .label("not a type")
                .code(crate::diag::codes::UNKNOWN_TYPE)
                .subject(name);
            if let Some(s) = suggest(name, candidates.iter().map(|s| s.as_str())) {
                d = d.help(format!("did you mean `{s}`?"));
            }
            drop(d);
            return None;
        };
        match self.decls[d].kind.clone() {
            DeclKind::Struct(id) => {
                if seg.template_args.is_some() {
                    self.error(span, format!("`{name}` is not a template"));
                    return None;
                }
                Some(Type::Struct(id))
            }
            DeclKind::Enum(id) => Some(Type::Enum(id)),
            DeclKind::Alias(t) => Some(t),
            DeclKind::FunctionType(_) => {
                self.error(span, format!("`{name}` is a function type; only an explicit instantiation can be declared with it"))
                    .secondary(self.decls[d].span, "declared here")
                    .help(format!("e.g. `template [[host_name(\"k_f32\")]] kernel {name} k<float>;`"));
                None
            }
            DeclKind::AliasTemplate { .. } => {
                let Some(args) = &seg.template_args else {
                    self.error(span, format!("`{name}` is an alias template: give its arguments, e.g. `{name}<float>`"));
                    return None;
                };
                let targs = self.template_args(args)?;
                self.written_targs = Some((span, args.iter().map(targ_span).collect()));
                self.alias_instance(d, targs, span)
            }
            DeclKind::StructTemplate { .. } => {
                // Inside an instance, the template's own name means that
                // instance (the injected class name).
                if seg.template_args.is_none() {
                    if let Some(sid) = self.env.this_struct.filter(|s| self.struct_instance_of.get(s).is_some_and(|(t, _)| *t == d)) {
                        return Some(Type::Struct(sid));
                    }
                }
                let Some(args) = &seg.template_args else {
                    self.error(span, format!("`{name}` is a template: give its arguments, e.g. `{name}<float>`"));
                    return None;
                };
                let targs = self.template_args(args)?;
                self.written_targs = Some((span, args.iter().map(targ_span).collect()));
                self.instantiate_struct(d, targs, span).map(Type::Struct)
            }
            _ => {
                self.error(seg.ident.span, format!("`{name}` is not a type")).secondary(self.decls[d].span, "declared here");
                None
            }
        }
    }

    /// Evaluate template arguments as written.
    pub(crate) fn template_args(&mut self, args: &[ast::TemplateArg]) -> Option<Vec<TArg>> {
        let args = self.expand_template_args(args)?;
        let mut out = Vec::with_capacity(args.len());
        for a in args.iter() {
            match a {
                ast::TemplateArg::Type(te) => {
                    // A bare name might be a value (an enumerator or constant) the
                    // parser could not tell apart from a type.
                    if let TypeExprKind::Named { path, is_const: false, addr_space: None, .. } = &te.kind {
                        // A class template by its name alone: for a template
                        // template parameter (the injected class name stays a type).
                        if let Some(d) = self.template_named(path) {
                            if self.resolve_named_type_quiet(path).is_none() {
                                out.push(TArg::Template(d));
                                continue;
                            }
                        }
                        // `f<float>`, `ns::f`: a function (template) named
                        // where the parser saw a type; its address.
                        if (path.segments.len() > 1 || path.segments.iter().any(|s| s.template_args.is_some()))
                            && self.function_decls(path).is_some()
                        {
                            let e = ast::Expr { kind: ast::ExprKind::Name(path.clone()), span: te.span };
                            out.push(self.function_targ(&e)??);
                            continue;
                        }
                        if path.segments.len() == 1 && path.segments[0].template_args.is_none() {
                            let name = &path.segments[0].ident.name;
                            if let Some(a @ (TArg::Value(..) | TArg::Func(..))) = self.env.targs.get(name).cloned() {
                                out.push(a);
                                continue;
                            }
                            if self.resolve_named_type_quiet(path).is_none() {
                                let e = ast::Expr { kind: ast::ExprKind::Name(path.clone()), span: te.span };
                                if self.function_decls(path).is_some() {
                                    // A function's name: its address.
                                    out.push(self.function_targ(&e)??);
                                    continue;
                                }
                                let h = self.expr(&e)?;
                                let v = self.const_value(&h);
                                match v {
                                    Some(v) => out.push(TArg::Value(v, h.ty)),
                                    None => {
                                        self.not_constant(te.span, "template argument must be a type or a constant", &h);
                                        return None;
                                    }
                                }
                                continue;
                            }
                        }
                    }
                    let q = self.resolve_type(te)?;
                    out.push(TArg::Type(q.ty));
                }
                ast::TemplateArg::Expr(e) => {
                    if let ast::ExprKind::Name(path) = &e.kind {
                        if let Some(d) = self.template_named(path) {
                            if self.resolve_named_type_quiet(path).is_none() {
                                out.push(TArg::Template(d));
                                continue;
                            }
                        }
                    }
                    if let Some(f) = self.function_targ(e) {
                        out.push(f?);
                        continue;
                    }
                    let h = self.expr(e)?;
                    if let H::FuncRef(f) = h.kind {
                        out.push(TArg::Func(f, h.ty));
                        continue;
                    }
                    match self.const_value(&h) {
                        Some(v) => out.push(TArg::Value(v, h.ty)),
                        None => {
                            self.not_constant(e.span, "template argument must be a compile-time constant", &h);
                            return None;
                        }
                    }
                }
                // Expanded above.
                ast::TemplateArg::Pack(_) => return None,
            }
        }
        Some(out)
    }

    fn builtin_type_template(&mut self, name: &str, args: &[ast::TemplateArg], span: crate::source::Span) -> Option<Type> {
        let targs = self.template_args(args)?;
        let scalar_arg = |c: &mut Self, i: usize| -> Option<Scalar> {
            match targs.get(i) {
                Some(TArg::Type(Type::Scalar(s))) => Some(*s),
                _ => {
                    c.error(span, format!("`{name}` needs a scalar type as argument {}", i + 1));
                    None
                }
            }
        };
        let int_arg = |c: &mut Self, i: usize| -> Option<i64> {
            match targs.get(i) {
                Some(TArg::Value(v, _)) => Some(v.as_i64()),
                _ => {
                    c.error(span, format!("`{name}` needs a constant as argument {}", i + 1));
                    None
                }
            }
        };
        match name {
            "vec" | "packed_vec" => {
                let s = scalar_arg(self, 0)?;
                let n = int_arg(self, 1)?;
                if !(1..=4).contains(&n) {
                    self.error(span, format!("vectors have 2, 3 or 4 components, not {n}"));
                    return None;
                }
                if n == 1 {
                    return Some(Type::Scalar(s));
                }
                Some(Type::Vector { elem: s, len: n as u8, packed: name == "packed_vec" })
            }
            "atomic" => {
                let s = scalar_arg(self, 0)?;
                if !matches!(s, Scalar::Int | Scalar::UInt | Scalar::Float | Scalar::Bool | Scalar::ULong | Scalar::Long) {
                    self.error(span, format!("Metal has no `atomic<{}>`", s.name()))
                        .help("atomics exist for int, uint, float, bool (and ulong min/max)");
                    return None;
                }
                Some(Type::Atomic(s))
            }
            "array" => {
                let elem = match targs.first() {
                    Some(TArg::Type(t)) => t.clone(),
                    _ => {
                        self.error(span, "`array` needs an element type");
                        return None;
                    }
                };
                let n = int_arg(self, 1)?;
                if n <= 0 || n > (1 << 24) {
                    self.error(span, format!("bad array size {n}"));
                    return None;
                }
                Some(Type::Array { elem: Box::new(elem), len: n as u32 })
            }
            // `uniform<T>` (`<metal_uniform>`) promises the compiler that a
            // value is the same in every thread; it behaves as a `T`, which
            // is what it is here (the executor finds uniform values itself).
            "uniform" => match targs.as_slice() {
                [TArg::Type(t @ (Type::Scalar(_) | Type::Vector { .. }))] => Some(t.clone()),
                _ => {
                    self.error(span, "`uniform` takes one scalar or vector type, e.g. `uniform<int>`");
                    None
                }
            },
            // `matrix<T, Cols, Rows>` is `TColsxRows` (`float4x3`).
            "matrix" => {
                let s = scalar_arg(self, 0)?;
                let (c, r) = (int_arg(self, 1)?, int_arg(self, 2)?);
                if !matches!(s, Scalar::Float | Scalar::Half | Scalar::BFloat) || !(2..=4).contains(&c) || !(2..=4).contains(&r) {
                    self.error(span, "matrices have 2 to 4 columns and rows of float, half or bfloat");
                    return None;
                }
                Some(Type::Matrix { elem: s, cols: c as u8, rows: r as u8 })
            }
            "simdgroup_matrix" => {
                let s = scalar_arg(self, 0)?;
                let (r, c) = (int_arg(self, 1)?, int_arg(self, 2)?);
                // Other element types may be named (MLX's fragment traits
                // name `simdgroup_matrix<bool, 8, 8>` and never use it);
                // declaring one is refused (see `local_decl`).
                if r != 8 || c != 8 {
                    self.error(span, "SIMD-group matrices are 8x8 of float, half or bfloat");
                    return None;
                }
                Some(Type::SimdMatrix { elem: s, rows: 8, cols: 8 })
            }
            _ => None,
        }
    }

    /// Render template arguments for instance names: `<float, 3>`.
    pub(crate) fn targs_display(&self, args: &[TArg]) -> String {
        let parts: Vec<String> = args
            .iter()
            .map(|a| match a {
                TArg::Type(t) => self.ty_name(t),
                TArg::Value(ConstValue::Bool(b), _) => b.to_string(),
                TArg::Value(v, _) => match v {
                    ConstValue::Float(f) => f.to_string(),
                    v => v.as_i64().to_string(),
                },
                TArg::Pack(elems) => {
                    let inner = self.targs_display(elems);
                    inner[1..inner.len() - 1].to_string()
                }
                TArg::Func(f, _) => self.functions[f.0 as usize].as_ref().map(|f| f.name.clone()).unwrap_or_default(),
                TArg::FuncName { name, .. } => name.to_string(),
                TArg::Template(d) => self.decls[*d].name.to_string(),
            })
            .filter(|s| !s.is_empty())
            .collect();
        format!("<{}>", parts.join(", "))
    }
}

/// Where a written template argument is.
fn targ_span(a: &ast::TemplateArg) -> crate::source::Span {
    match a {
        ast::TemplateArg::Type(t) => t.span,
        ast::TemplateArg::Expr(e) => e.span,
        ast::TemplateArg::Pack(inner) => targ_span(inner),
    }
}
