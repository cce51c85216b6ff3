//! Expressions: typing, implicit conversions, operators, member access,
//! casts and constructors, and constant folding.

use super::Checker;
use crate::ast::{self, AddressSpace, BinaryOp, CastKind, ExprKind as A, UnaryOp as AU};
use crate::diag::suggest;
use crate::hir::{self, BuiltinId, ConstValue, ExprKind as H};
use crate::source::Span;
use crate::token::FloatSuffix;
use crate::types::{implicit_conversion, BuiltinEnum, Scalar, Type};

pub(crate) fn mk(kind: H, ty: Type, span: Span) -> hir::Expr {
    hir::Expr { kind, ty, span }
}

fn bx(e: hir::Expr) -> Box<hir::Expr> {
    Box::new(e)
}

/// Depth limit for the expressions of one body (an instance's body counts
/// afresh, see `Checker::instantiating`): the parser bounds a tree's depth
/// by its nesting plus its chains; rewrites (implicit conversions, folds)
/// add a little.
const MAX_EXPR_DEPTH: u32 = 2 * (crate::parse::MAX_DEPTH + crate::parse::MAX_CHAIN);
/// Depth limit for expressions nested in all the instances being checked,
/// which bounds the memory the (heap-grown) stack may take: two bodies of
/// the deepest kind, or many of ordinary depth.
pub(crate) const MAX_EXPR_FRAMES: u32 = 2 * MAX_EXPR_DEPTH;

impl<'a> Checker<'a, '_> {
    pub(crate) fn expr(&mut self, e: &ast::Expr) -> Option<hir::Expr> {
        self.expr_depth += 1;
        self.expr_frames += 1;
        let r = if self.expr_depth > MAX_EXPR_DEPTH {
            self.error(e.span, "expression is nested too deeply").note(format!("at most {MAX_EXPR_DEPTH} levels"));
            None
        } else if self.expr_frames > MAX_EXPR_FRAMES {
            self.error(e.span, "expression is nested too deeply").note(format!(
                "at most {MAX_EXPR_FRAMES} levels in all, counting the expressions of the template instances being checked around it"
            ));
            None
        } else {
            // Deep trees (long chains) recurse deeply: grow the stack on
            // the heap rather than overflow it.
            stacker::maybe_grow(128 * 1024, 4 * 1024 * 1024, || self.expr_inner(e))
        };
        self.expr_depth -= 1;
        self.expr_frames -= 1;
        // A failure must leave a reason: otherwise the statement would vanish
        // from a program that still compiles.
        if r.is_none() && !self.diags.has_errors() && !self.sink.has_errors() {
            self.error(e.span, "the simulator could not check this expression (no reason was recorded)")
                .note("this is a bug in the simulator's front end; please report it with this source");
        }
        r
    }

    fn expr_inner(&mut self, e: &ast::Expr) -> Option<hir::Expr> {
        let span = e.span;
        match &e.kind {
            A::IntLit { value, unsigned, long, decimal } => Some(int_literal(*value, *unsigned, *long, *decimal, span)),
            A::FloatLit { value, suffix } => {
                let s = match suffix {
                    FloatSuffix::None | FloatSuffix::F => Scalar::Float,
                    FloatSuffix::H => Scalar::Half,
                    FloatSuffix::Bf => Scalar::BFloat,
                };
                Some(mk(H::Const(ConstValue::Float(*value).cast(s)), Type::Scalar(s), span))
            }
            A::BoolLit(b) => Some(mk(H::Const(ConstValue::Bool(*b)), Type::BOOL, span)),
            A::CharLit(c) => Some(mk(H::Const(ConstValue::Int(*c as i64)), Type::Scalar(Scalar::Char), span)),
            A::StrLit(text) => Some(self.string_literal(text, span)),
            A::Null => Some(mk(H::Zero, Type::NullPtr, span)),
            A::This => {
                let Some(l) = self.fs.as_ref().and_then(|f| f.this_local) else {
                    self.error(span, "`this` can only be used inside a member function");
                    return None;
                };
                let ty = self.fs.as_ref()?.locals[l.0 as usize].ty.clone();
                Some(mk(H::Local(l), ty, span))
            }
            A::Name(path) => self.name_expr(path, span),
            A::Unary { op, operand } => self.unary(*op, operand, span),
            A::Binary { op, lhs, rhs } => {
                let l = self.expr(lhs);
                let r = self.expr(rhs);
                let (l, r) = (l?, r?);
                if Self::is_class(&l.ty) || Self::is_class(&r.ty) {
                    return self.binary_on_class(*op, l, r, span);
                }
                self.binary(*op, l, r, span)
            }
            A::Assign { op, lhs, rhs } => self.assign(*op, lhs, rhs, span),
            A::Conditional { cond, then, els } => {
                let c = self.condition(cond);
                let t = self.expr(then);
                let f = self.expr(els);
                self.conditional(c?, t?, f?, span)
            }
            A::Comma { lhs, rhs } => {
                let l = self.expr(lhs);
                let r = self.expr(rhs);
                let r = r?;
                let ty = r.ty.clone();
                Some(mk(H::Comma { lhs: bx(l?), rhs: bx(r) }, ty, span))
            }
            A::Call { callee, args } => self.call(callee, args, span),
            A::Index { base, index } => {
                let b = self.expr(base);
                let i = self.expr(index);
                let (b, i) = (b?, i?);
                if Self::is_class(&b.ty) {
                    return self.overloaded("[]", vec![b, i], span);
                }
                self.index(b, i, span)
            }
            A::Member { base, name, arrow, targs } => {
                let b = self.expr(base)?;
                if targs.is_some() {
                    self.error(span, format!("`{}` with template arguments names a member function template: call it", name.name))
                        .help(format!("write `{}<…>(…)`", name.name));
                    return None;
                }
                self.member(b, name, *arrow, span)
            }
            A::Cast { kind, ty, args, braces } => {
                let q = self.resolve_type(ty)?;
                let args = self.expand_exprs(args)?;
                let args = &*args;
                // `(void)x;` evaluates `x` and discards it (silences "unused").
                if q.ty == Type::Void && args.len() == 1 {
                    return self.expr(&args[0]);
                }
                if let (Type::Reference { referee, space, is_const }, [arg]) = (&q.ty, args) {
                    let h = self.expr(arg)?;
                    return self.cast_to_reference(*kind, h, referee, *space, *is_const, span);
                }
                self.cast(*kind, &q.ty, args, *braces, span)
            }
            A::SizeofType(t) => {
                let q = self.resolve_type(t)?;
                Some(mk(H::Const(ConstValue::UInt(self.tables.size_of(&q.ty))), Type::ULONG, span))
            }
            A::SizeofExpr(x) => {
                let h = self.expr(x)?;
                Some(mk(H::Const(ConstValue::UInt(self.tables.size_of(&h.ty))), Type::ULONG, span))
            }
            A::AlignofType(t) => {
                let q = self.resolve_type(t)?;
                Some(mk(H::Const(ConstValue::UInt(self.tables.align_of(&q.ty))), Type::ULONG, span))
            }
            A::Designated { .. } => {
                self.error(
                    span,
                    "a designated initializer (`[i] = v`, `.field = v`) is only allowed inside braces that initialize an array or struct",
                );
                None
            }
            A::InitList(_) => {
                self.error(span, "a braced list `{...}` needs a known type here")
                    .help("write the type in front of it, e.g. `float2{1, 2}`");
                None
            }
            A::PackExpansion(_) => {
                self.error(
                    span,
                    "a pack expansion `...` can only be used in an argument list, an initializer list or a template argument list",
                );
                None
            }
            A::SizeofPack(name) => self.sizeof_pack(name, span),
            A::TypeMember { ty, name } => {
                let q = self.resolve_type(ty)?;
                self.static_member(&q.ty, name, span)
            }
            A::Fold { op, pack, init, left } => self.fold(*op, pack, init.as_deref(), *left, span),
        }
    }

    // ----- names -------------------------------------------------------------

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

    fn name_expr(&mut self, path: &ast::Path, span: Span) -> Option<hir::Expr> {
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
                Some(super::TArg::Value(v, t)) => return Some(mk(H::Const(v), t, span)),
                Some(super::TArg::Func(f, t)) => return Some(mk(H::FuncRef(f), t, span)),
                Some(super::TArg::Pack(_)) => {
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
    fn static_member(&mut self, ty: &Type, name: &ast::Ident, span: Span) -> Option<hir::Expr> {
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
            super::DeclKind::Global(gid) => {
                let ty = self.globals[gid.0 as usize].ty.clone();
                Some(mk(H::Global(gid), ty, span))
            }
            super::DeclKind::Constant(mut h) => {
                h.span = span;
                Some(h)
            }
            super::DeclKind::Enumerator { ty, value } => Some(mk(H::Const(ConstValue::Int(value)), ty, span)),
            super::DeclKind::Function { .. } | super::DeclKind::FunctionTemplate { .. } => {
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
                self.tables.struct_def(sid).fields.iter().filter(|f| !super::inherit::is_hidden_member(&f.name)).map(|f| f.name.clone()),
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

    // ----- conversions -------------------------------------------------------

    /// Insert a conversion node (no checks).
    pub(crate) fn convert(&self, h: hir::Expr, to: Type) -> hir::Expr {
        if h.ty == to {
            return h;
        }
        let span = h.span;
        match (&h.ty, &to) {
            // Constant-fold literal conversions right away.
            (Type::Scalar(_) | Type::Enum(_), Type::Scalar(s)) if matches!(h.kind, H::Const(_)) => {
                let H::Const(v) = h.kind else { unreachable!() };
                self.warn_undefined_conversion(v, *s, span);
                mk(H::Const(v.cast(*s)), to, span)
            }
            (Type::Array { .. }, Type::Pointer { .. }) => self.decay(h),
            (Type::Pointer { .. } | Type::NullPtr, Type::Pointer { .. }) => {
                if matches!(h.kind, H::Zero) {
                    mk(H::Zero, to, span)
                } else {
                    mk(H::PtrCast(bx(h)), to, span)
                }
            }
            (Type::Enum(_), Type::Enum(_)) | (Type::Scalar(_), Type::Enum(_)) => mk(H::PtrCast(bx(h)), to, span),
            (Type::Vector { elem: a, len: la, .. }, Type::Vector { elem: b, len: lb, .. }) if a == b && la == lb => {
                // packed <-> unpacked: same values.
                mk(H::Convert(bx(h)), to, span)
            }
            _ => mk(H::Convert(bx(h)), to, span),
        }
    }

    /// Array to pointer to its first element.
    pub(crate) fn decay(&self, h: hir::Expr) -> hir::Expr {
        let Type::Array { elem, .. } = h.ty.clone() else { return h };
        let (space, is_const) = if h.is_place() { self.place_info(&h) } else { (AddressSpace::Thread, true) };
        let span = h.span;
        let zero = mk(H::Const(ConstValue::Int(0)), Type::INT, span);
        let first = mk(H::Index { base: bx(h), index: bx(zero) }, (*elem).clone(), span);
        mk(H::AddrOf(bx(first)), Type::Pointer { pointee: elem, space, is_const }, span)
    }

    /// Implicitly convert `h` to `to`, or report why not.
    pub(crate) fn coerce(&mut self, h: hir::Expr, to: &Type, what: &str) -> Option<hir::Expr> {
        if h.ty == *to {
            return Some(h);
        }
        if let (Type::Enum(a), Type::Scalar(_)) = (&h.ty, to) {
            if self.tables.enum_def(*a).scoped {
                let n = self.ty_name(&h.ty);
                self.error(
                    h.span,
                    format!("{what} has scoped enum type `{n}`, which does not convert implicitly to `{}`", self.ty_name(to)),
                )
                .help(format!("convert it explicitly: `static_cast<{}>(...)`", self.ty_name(to)));
                return None;
            }
        }
        if let (Type::Scalar(_), Type::Enum(_)) = (&h.ty, to) {
            let n = self.ty_name(to);
            self.error(h.span, format!("an integer does not convert implicitly to the enum `{n}`"))
                .help(format!("use `static_cast<{n}>(...)`"));
            return None;
        }
        let from = match &h.ty {
            Type::Array { elem, .. } if to.is_pointer() => {
                let (space, is_const) = if h.is_place() { self.place_info(&h) } else { (AddressSpace::Thread, false) };
                Type::Pointer { pointee: elem.clone(), space, is_const }
            }
            t => t.clone(),
        };
        if implicit_conversion(&from, to).is_some() {
            return Some(self.convert(h, to.clone()));
        }
        if let Some(b) = self.convert_to_base(&h, to) {
            return Some(b);
        }
        if matches!(h.ty, Type::Struct(_)) || matches!(to, Type::Struct(_)) {
            if let Some(c) = self.user_conversion(h.clone(), to) {
                return Some(c);
            }
            // A conversion operator to another scalar, then a standard
            // conversion (`half s = mask;` through `operator bool()`).
            if to.is_scalar() {
                let trial = self.trial();
                if let Some(c) = self.conversion_to_scalar(h.clone()) {
                    if implicit_conversion(&c.ty, to).is_some() {
                        trial.commit();
                        return Some(self.convert(c, to.clone()));
                    }
                }
                drop(trial);
            }
        }
        let (fname, tname) = (self.ty_name(&h.ty), self.ty_name(to));
        let mut d = self.error(h.span, format!("cannot convert {what} from `{fname}` to `{tname}`")).label(format!("this is `{fname}`"));
        match (&from, to) {
            (Type::Vector { len: a, .. }, Type::Vector { len: b, .. }) if a != b => {
                d = d.help(format!("the vectors have different lengths ({a} and {b}); pick components with a swizzle like `.xyz` or build one with `{tname}(...)`"));
            }
            (Type::Vector { .. }, Type::Vector { .. }) => {
                d = d.help(format!("vectors of different element types need an explicit conversion: `{tname}(...)`"));
            }
            (Type::Vector { .. }, Type::Scalar(_)) => {
                d = d.help("a vector does not convert to a scalar; pick one component (e.g. `.x`) or reduce it (e.g. `dot`, `length`)");
            }
            (Type::Pointer { space: a, .. }, Type::Pointer { space: b, .. }) if a != b => {
                d = d.note(format!(
                    "pointers cannot change address space: this points to `{}` memory, not `{}` memory",
                    a.keyword(),
                    b.keyword()
                ));
            }
            (Type::Pointer { is_const: true, .. }, Type::Pointer { is_const: false, .. }) => {
                d = d.help("this would drop `const`; declare the target `const` too");
            }
            _ => {}
        }
        drop(d);
        None
    }

    /// Check `e` against an expected type (braced lists allowed).
    pub(crate) fn coerce_ast(&mut self, e: &ast::Expr, to: &Type, what: &str) -> Option<hir::Expr> {
        if let A::InitList(items) = &e.kind {
            return self.list_init(items, to, e.span);
        }
        if let Some(h) = self.coerce_function_name(e, to) {
            return h;
        }
        let h = self.expr(e)?;
        self.coerce(h, to, what)
    }

    /// `(space, is_const)` of a place.
    pub(crate) fn place_info(&self, h: &hir::Expr) -> (AddressSpace, bool) {
        match &h.kind {
            H::Local(id) => {
                let l = &self.fs.as_ref().expect("in function").locals[id.0 as usize];
                (l.space, l.is_const)
            }
            H::Global(_) => (AddressSpace::Constant, true),
            H::Deref(p) => match &p.ty {
                Type::Pointer { space, is_const, .. } => (*space, *is_const || *space == AddressSpace::Constant),
                _ => (AddressSpace::Thread, false),
            },
            H::Index { base, .. } | H::Field { base, .. } | H::Swizzle { base, .. } => self.place_info(base),
            H::Assign { place, .. } | H::CompoundAssign { place, .. } | H::IncDec { place, .. } => self.place_info(place),
            _ => (AddressSpace::Thread, true),
        }
    }

    // ----- operators -----------------------------------------------------------

    fn unary(&mut self, op: AU, operand: &ast::Expr, span: Span) -> Option<hir::Expr> {
        let mut x = self.expr(operand)?;
        // `&f` is `f`'s address, as is `f`; `*op` names the function again.
        if matches!(x.ty, Type::FnPtr { .. }) && (op == AU::Deref || op == AU::AddrOf && matches!(x.kind, H::FuncRef(_))) {
            x.span = span;
            return Some(x);
        }
        // Without a fitting overload, `-x`, `+x`, `~x` apply to `x`'s
        // conversion to a scalar, as C++'s built-in candidates do.
        let builtin_sym = match op {
            AU::Neg => Some("-"),
            AU::Plus => Some("+"),
            AU::BitNot => Some("~"),
            _ => None,
        };
        if let Some(sym) = builtin_sym.filter(|_| Self::is_class(&x.ty)) {
            let args = [x];
            let converted = if self.user_operator_fits(sym, &args) { None } else { self.operands_as_scalars(&args) };
            let [orig] = args;
            x = converted.and_then(|v| v.into_iter().next()).unwrap_or(orig);
        }
        if Self::is_class(&x.ty) {
            match op {
                AU::Neg => return self.overloaded("-", vec![x], span),
                AU::Plus => return self.overloaded("+", vec![x], span),
                // Without an `operator!`, `!x` converts `x` to `bool`
                // (through `operator bool`), as C++ does.
                AU::Not if !self.declares_operator(&x.ty, "operator!") => {}
                AU::Not => return self.overloaded("!", vec![x], span),
                AU::BitNot => return self.overloaded("~", vec![x], span),
                AU::PreInc | AU::PreDec => return self.overloaded_incdec(x, op == AU::PreInc, false, span),
                AU::PostInc | AU::PostDec => return self.overloaded_incdec(x, op == AU::PostInc, true, span),
                AU::Deref => return self.overloaded("*", vec![x], span),
                AU::AddrOf => {}
            }
        }
        match op {
            AU::Plus | AU::Neg => {
                let x = self.arith_operand(x, if op == AU::Neg { "-" } else { "+" })?;
                if op == AU::Plus {
                    return Some(x);
                }
                let ty = x.ty.clone();
                if let Some(v) = self.const_value(&x) {
                    if let Some(s) = ty.elem_scalar().filter(|_| ty.is_scalar()) {
                        if let Some(nv) = self.fold_negation(v, s, span) {
                            return Some(mk(H::Const(nv), ty, span));
                        }
                    }
                }
                Some(mk(H::Unary { op: hir::UnaryOp::Neg, operand: bx(x) }, ty, span))
            }
            AU::Not => {
                if let Type::Vector { len, .. } = x.ty {
                    let bty = Type::vector(Scalar::Bool, len);
                    let x = self.convert(x, bty.clone());
                    return Some(mk(H::Unary { op: hir::UnaryOp::Not, operand: bx(x) }, bty, span));
                }
                let x = self.bool_condition(x, "the operand of `!`")?;
                Some(mk(H::Unary { op: hir::UnaryOp::Not, operand: bx(x) }, Type::BOOL, span))
            }
            AU::BitNot => {
                let x = self.arith_operand(x, "~")?;
                if !x.ty.elem_scalar().is_some_and(|s| s.is_integer()) {
                    let n = self.ty_name(&x.ty);
                    self.error(span, format!("`~` needs an integer operand, not `{n}`"));
                    return None;
                }
                let ty = x.ty.clone();
                Some(mk(H::Unary { op: hir::UnaryOp::BitNot, operand: bx(x) }, ty, span))
            }
            AU::Deref => {
                let x = if matches!(x.ty, Type::Array { .. }) { self.decay(x) } else { x };
                match x.ty.clone() {
                    Type::Pointer { pointee, .. } => {
                        if *pointee == Type::Void {
                            self.error(span, "cannot dereference a `void*`; cast it to a typed pointer first");
                            return None;
                        }
                        Some(mk(H::Deref(bx(x)), *pointee, span))
                    }
                    t => {
                        let n = self.ty_name(&t);
                        self.error(span, format!("cannot dereference a value of type `{n}`: it is not a pointer"));
                        None
                    }
                }
            }
            AU::AddrOf => {
                if !x.is_place() {
                    self.error(span, "cannot take the address of a temporary value").help("store it in a variable first");
                    return None;
                }
                if let H::Swizzle { .. } = x.kind {
                    self.error(span, "cannot take the address of a vector swizzle");
                    return None;
                }
                let (space, is_const) = self.place_info(&x);
                let ty = Type::Pointer { pointee: Box::new(x.ty.clone()), space, is_const };
                // `&*p` is `p`.
                if let H::Deref(p) = x.kind {
                    if p.ty == ty {
                        return Some(*p);
                    }
                    let inner = mk(H::Deref(p), ty_pointee(&ty).clone(), span);
                    return Some(mk(H::AddrOf(bx(inner)), ty, span));
                }
                Some(mk(H::AddrOf(bx(x)), ty, span))
            }
            AU::PreInc | AU::PreDec | AU::PostInc | AU::PostDec => {
                let what = if matches!(op, AU::PreInc | AU::PostInc) { "++" } else { "--" };
                self.check_assignable(&x, span, what)?;
                match &x.ty {
                    Type::Scalar(s) if *s != Scalar::Bool => {}
                    Type::Vector { .. } | Type::Pointer { .. } => {}
                    t => {
                        let n = self.ty_name(t);
                        self.error(span, format!("`{what}` cannot be applied to a value of type `{n}`"));
                        return None;
                    }
                }
                let ty = x.ty.clone();
                Some(mk(
                    H::IncDec {
                        place: bx(x),
                        increment: matches!(op, AU::PreInc | AU::PostInc),
                        prefix: matches!(op, AU::PreInc | AU::PreDec),
                    },
                    ty,
                    span,
                ))
            }
        }
    }

    /// Require a scalar or vector operand (enums promote to their integer).
    fn arith_operand(&mut self, x: hir::Expr, op: &str) -> Option<hir::Expr> {
        match &x.ty {
            Type::Scalar(s) => {
                let p = s.promoted();
                Some(self.convert(x, Type::Scalar(p)))
            }
            Type::Vector { .. } => Some(x),
            Type::Enum(id) if !self.tables.enum_def(*id).scoped => {
                let s = self.tables.enum_def(*id).underlying.promoted();
                Some(self.convert(x, Type::Scalar(s)))
            }
            t => {
                let n = self.ty_name(t);
                self.error(x.span, format!("`{op}` cannot be applied to a value of type `{n}`"));
                None
            }
        }
    }

    /// The common operand type of a binary arithmetic operator.
    fn operand_type(&mut self, op: &str, l: &Type, r: &Type, span: Span) -> Option<Type> {
        match (l, r) {
            (Type::Scalar(a), Type::Scalar(b)) => Some(Type::Scalar(Scalar::common(*a, *b))),
            (Type::Vector { elem, len, .. }, Type::Scalar(_)) | (Type::Scalar(_), Type::Vector { elem, len, .. }) => {
                Some(Type::vector(*elem, *len))
            }
            (Type::Vector { elem: a, len: la, .. }, Type::Vector { elem: b, len: lb, .. }) if a == b && la == lb => {
                Some(Type::vector(*a, *la))
            }
            (Type::Matrix { .. }, _) | (_, Type::Matrix { .. }) => {
                self.error(span, "matrix arithmetic is not supported by the simulator yet");
                None
            }
            _ => {
                let (ln, rn) = (self.ty_name(l), self.ty_name(r));
                let mut d = self.error(span, format!("invalid operands to `{op}`: `{ln}` and `{rn}`"));
                if l.is_vector() && r.is_vector() {
                    d = d.help("both vectors must have the same element type and length; convert one explicitly");
                }
                drop(d);
                None
            }
        }
    }

    pub(crate) fn binary(&mut self, op: BinaryOp, l: hir::Expr, r: hir::Expr, span: Span) -> Option<hir::Expr> {
        use BinaryOp::*;
        if matches!(op, LogAnd | LogOr) {
            let l = self.bool_condition(l, &format!("the left operand of `{}`", op.as_str()))?;
            let r = self.bool_condition(r, &format!("the right operand of `{}`", op.as_str()))?;
            return Some(mk(H::Logical { and: op == LogAnd, lhs: bx(l), rhs: bx(r) }, Type::BOOL, span));
        }
        let l = if matches!(l.ty, Type::Array { .. }) { self.decay(l) } else { l };
        let r = if matches!(r.ty, Type::Array { .. }) { self.decay(r) } else { r };
        if matches!(l.ty, Type::FnPtr { .. }) || matches!(r.ty, Type::FnPtr { .. }) {
            return self.fn_ptr_compare(op, l, r, span);
        }
        // Pointers.
        if l.ty.is_pointer() || r.ty.is_pointer() || l.ty == Type::NullPtr || r.ty == Type::NullPtr {
            return self.pointer_binary(op, l, r, span);
        }
        // mem_flags combine with | and &.
        if let (Type::BuiltinEnum(a), Type::BuiltinEnum(b)) = (&l.ty, &r.ty) {
            if a == b && matches!(op, BitOr | BitAnd) && *a == BuiltinEnum::MemFlags {
                let ty = l.ty.clone();
                return Some(mk(H::Binary { op, lhs: bx(l), rhs: bx(r) }, ty, span));
            }
        }
        // Scoped enums: only compare with the same enum.
        if let (Type::Enum(a), Type::Enum(b)) = (&l.ty, &r.ty) {
            if a == b && op.is_comparison() {
                let s = self.tables.enum_def(*a).underlying;
                let (l, r) = (self.convert(l, Type::Scalar(s)), self.convert(r, Type::Scalar(s)));
                return Some(mk(H::Binary { op, lhs: bx(l), rhs: bx(r) }, Type::BOOL, span));
            }
        }
        for x in [&l, &r] {
            if let Type::Enum(id) = &x.ty {
                if self.tables.enum_def(*id).scoped {
                    let n = self.ty_name(&x.ty);
                    self.error(x.span, format!("`{}` cannot be applied to scoped enum `{n}`", op.as_str()))
                        .help("convert it with `static_cast<int>(...)` first");
                    return None;
                }
            }
        }
        if matches!(l.ty, Type::Matrix { .. }) || matches!(r.ty, Type::Matrix { .. }) {
            return self.matrix_binary(op, l, r, span);
        }
        if op == Mul && matches!(l.ty, Type::SimdMatrix { .. }) && matches!(r.ty, Type::SimdMatrix { .. }) {
            return self.simdgroup_product(l, r, span);
        }
        let l = self.arith_operand_keep(l, op.as_str())?;
        let r = self.arith_operand_keep(r, op.as_str())?;
        let mut oty = self.operand_type(op.as_str(), &l.ty, &r.ty, span)?;
        let elem = oty.elem_scalar().unwrap_or(Scalar::Int);
        match op {
            Rem if elem.is_float() => {
                self.error(span, "`%` needs integer operands; these are floating-point")
                    .label(format!("`{}` and `{}`", self.ty_name(&l.ty), self.ty_name(&r.ty)))
                    .help("use `fmod(a, b)` for the floating-point remainder");
                return None;
            }
            BitAnd | BitOr | BitXor | Shl | Shr if elem.is_float() => {
                self.error(
                    span,
                    format!("`{}` needs integer operands, not `{}` and `{}`", op.as_str(), self.ty_name(&l.ty), self.ty_name(&r.ty)),
                )
                .help("to work on the bits of a float, reinterpret it first: `as_type<uint>(x)`");
                return None;
            }
            Shl | Shr => {
                // The result has the (promoted) type of the left operand.
                oty = match (&l.ty, &r.ty) {
                    (Type::Scalar(a), _) if r.ty.is_scalar() => Type::Scalar(a.promoted()),
                    _ => oty,
                };
            }
            _ => {}
        }
        let (l, r) = (self.convert(l, oty.clone()), self.convert(r, oty.clone()));
        let ty = if op.is_comparison() {
            match &oty {
                Type::Vector { len, .. } => Type::vector(Scalar::Bool, *len),
                _ => Type::BOOL,
            }
        } else {
            oty
        };
        if !elem.is_float() {
            self.warn_undefined(op, &l, &r, span);
        }
        Some(mk(H::Binary { op, lhs: bx(l), rhs: bx(r) }, ty, span))
    }

    /// Like `arith_operand` but without promoting (the operator decides).
    fn arith_operand_keep(&mut self, x: hir::Expr, op: &str) -> Option<hir::Expr> {
        match &x.ty {
            Type::Scalar(_) | Type::Vector { .. } | Type::Matrix { .. } => Some(x),
            Type::Enum(id) => {
                let s = self.tables.enum_def(*id).underlying;
                Some(self.convert(x, Type::Scalar(s)))
            }
            t => {
                let n = self.ty_name(t);
                self.error(x.span, format!("`{op}` cannot be applied to a value of type `{n}`"));
                None
            }
        }
    }

    fn pointer_binary(&mut self, op: BinaryOp, l: hir::Expr, r: hir::Expr, span: Span) -> Option<hir::Expr> {
        use BinaryOp::*;
        let is_int = |t: &Type| matches!(t, Type::Scalar(s) if s.is_integer() || *s == Scalar::Bool) || matches!(t, Type::Enum(_));
        match op {
            Add | Sub if l.ty.is_pointer() && is_int(&r.ty) => {
                let ty = l.ty.clone();
                Some(mk(H::PtrOffset { ptr: bx(l), offset: bx(r), negate: op == Sub }, ty, span))
            }
            Add if r.ty.is_pointer() && is_int(&l.ty) => {
                let ty = r.ty.clone();
                Some(mk(H::PtrOffset { ptr: bx(r), offset: bx(l), negate: false }, ty, span))
            }
            Sub if l.ty.is_pointer() && r.ty.is_pointer() => {
                if ty_pointee(&l.ty) != ty_pointee(&r.ty) {
                    self.error(span, "cannot subtract pointers to different types");
                    return None;
                }
                Some(mk(H::PtrDiff { lhs: bx(l), rhs: bx(r) }, Type::Scalar(Scalar::Long), span))
            }
            Eq | Ne | Lt | Gt | Le | Ge => {
                let (l, r) = match (&l.ty, &r.ty) {
                    (Type::NullPtr, t @ Type::Pointer { .. }) => {
                        let t = t.clone();
                        (mk(H::Zero, t, l.span), r)
                    }
                    (t @ Type::Pointer { .. }, Type::NullPtr) => {
                        let t = t.clone();
                        (l, mk(H::Zero, t, r.span))
                    }
                    _ => (l, r),
                };
                if !(l.ty.is_pointer() && r.ty.is_pointer()) {
                    self.error(span, format!("cannot compare `{}` with `{}`", self.ty_name(&l.ty), self.ty_name(&r.ty)));
                    return None;
                }
                Some(mk(H::PtrCompare { op, lhs: bx(l), rhs: bx(r) }, Type::BOOL, span))
            }
            _ => {
                self.error(span, format!("invalid operands to `{}`: `{}` and `{}`", op.as_str(), self.ty_name(&l.ty), self.ty_name(&r.ty)))
                    .note("pointers support `+`/`-` with an integer, `-` with another pointer, and comparisons");
                None
            }
        }
    }

    /// Report if `x` cannot be written; `Some(())` if it can.
    pub(crate) fn check_assignable(&mut self, x: &hir::Expr, span: Span, what: &str) -> Option<()> {
        if !x.is_place() {
            self.error(span, format!("the left side of `{what}` is not something that can be assigned to"))
                .help("assign to a variable, an array element, a field or a dereferenced pointer");
            return None;
        }
        if let H::Swizzle { comps, .. } = &x.kind {
            let mut seen = [false; 4];
            for &c in comps {
                if seen[c as usize & 3] {
                    self.error(x.span, "cannot assign to a swizzle that repeats a component")
                        .help("each component may appear only once on the left of `=` (e.g. `.xy`, not `.xx`)");
                    return None;
                }
                seen[c as usize & 3] = true;
            }
        }
        if matches!(x.ty, Type::Array { .. }) {
            self.error(span, "arrays cannot be assigned as a whole").help("copy them element by element in a loop");
            return None;
        }
        let (space, is_const) = self.place_info(x);
        if space == AddressSpace::Constant {
            self.error(x.span, "cannot write to `constant` memory: it is read-only")
                .label("this is in the `constant` address space")
                .help("declare the buffer `device` (not `constant`) if the kernel must write it");
            return None;
        }
        if is_const {
            let mut d = self.error(x.span, "cannot assign to a `const` value");
            if let Some(name) = base_local_name(self, x) {
                if matches!(x.kind, H::Local(_)) {
                    d = d
                        .label(format!("`{name}` is declared `const`"))
                        .help(format!("remove `const` from the declaration of `{name}` if it must change"));
                } else {
                    d = d
                        .label("this is reached through a pointer to `const`")
                        .help(format!("declare `{name}` without `const` (e.g. `device float*`) if the kernel must write through it"));
                }
            }
            drop(d);
            return None;
        }
        Some(())
    }

    fn assign(&mut self, op: Option<BinaryOp>, lhs: &ast::Expr, rhs: &ast::Expr, span: Span) -> Option<hir::Expr> {
        let l = self.expr(lhs);
        let sym = op.map(|o| format!("{}=", o.as_str())).unwrap_or_else(|| "=".into());
        let mut l = l?;
        if let (Some(op), true) = (op, Self::is_class(&l.ty)) {
            let r = self.expr(rhs)?;
            return self.overloaded(&format!("{}=", op.as_str()), vec![l, r], span);
        }
        if op.is_none() && self.has_member_operator(&l.ty, "operator=") {
            let r = self.expr(rhs)?;
            return self.overloaded("=", vec![l, r], span);
        }
        // A constructor's member initializer of an array member (`T v[N] =
        // {…};` or `: v{…}`), which with_member_inits spells `this->v = {…}`:
        // initialization, not the array assignment C++ forbids.
        let member_init = matches!(&lhs.kind, A::Member { base, arrow: true, .. } if matches!(base.kind, A::This));
        // A reference member named in a constructor's member initializer
        // list is bound there (with_member_inits gives `this` the member
        // name's span; `this->r = x` written in a body assigns through).
        if let (None, A::Member { base, name, .. }, H::Deref(slot)) = (op, &lhs.kind, &l.kind) {
            if let (true, H::Field { base: obj, field }) = (member_init && base.span == name.span, &slot.kind) {
                if let Type::Struct(sid) = obj.ty {
                    if self.is_ref_field(sid, *field as usize) {
                        let slot = (**slot).clone();
                        let v = self.bind_ref_field(sid, *field as usize, rhs)?;
                        return Some(mk(H::Assign { place: bx(slot.clone()), value: bx(v) }, slot.ty, span));
                    }
                }
            }
        }
        if op.is_none() && member_init && matches!(l.ty, Type::Array { .. }) && matches!(rhs.kind, A::InitList(_)) {
            let ty = l.ty.clone();
            let v = self.coerce_ast(rhs, &ty, "the initializer")?;
            return Some(mk(H::Assign { place: bx(l), value: bx(v) }, ty, span));
        }
        self.check_assignable(&l, lhs.span, &sym)?;
        let ty = l.ty.clone();
        match op {
            None => {
                let v = self.coerce_ast(rhs, &ty, "the assigned value")?;
                Some(mk(H::Assign { place: bx(l), value: bx(v) }, ty, span))
            }
            Some(op) => {
                let mut r = self.expr(rhs)?;
                // `p += Int<1>{}`: a free `operator+=` if one fits, else the
                // struct's conversion to a scalar.
                if Self::is_class(&r.ty) {
                    let args = vec![l, r];
                    if self.user_operator_fits(&sym, &args) {
                        return self.overloaded(&sym, args, span);
                    }
                    let converted = self.operands_as_scalars(&args);
                    let [l0, r0] = <[hir::Expr; 2]>::try_from(converted.unwrap_or(args)).ok()?;
                    l = l0;
                    r = r0;
                }
                if ty.is_pointer() && matches!(op, BinaryOp::Add | BinaryOp::Sub) {
                    let probe = mk(H::Zero, ty.clone(), l.span);
                    self.pointer_binary(op, probe, r.clone(), span)?;
                    return Some(mk(H::CompoundAssign { op, place: bx(l), value: bx(r), op_ty: ty.clone() }, ty, span));
                }
                // Type-check `l op r` as an ordinary binary expression.
                let probe = mk(H::Zero, ty.clone(), l.span);
                let b = self.binary(op, probe, r, span)?;
                if let H::Builtin { id: BuiltinId::MatrixMultiply, mut args, .. } = b.kind {
                    // `v *= m`, `m *= m2`: the product's type must be the place's.
                    if b.ty != ty {
                        self.error(span, format!("cannot assign a `{}` result to `{}`", self.ty_name(&b.ty), self.ty_name(&ty)));
                        return None;
                    }
                    let r = args.pop()?;
                    return self.matrix_compound_product(l, r, span);
                }
                let H::Binary { rhs: value, lhs: lconv, .. } = b.kind else { return None };
                let op_ty = lconv.ty.clone();
                if b.ty.vector_len() != ty.vector_len() && !ty.is_vector() {
                    self.error(span, format!("cannot assign a `{}` result to `{}`", self.ty_name(&b.ty), self.ty_name(&ty)));
                    return None;
                }
                Some(mk(H::CompoundAssign { op, place: bx(l), value, op_ty }, ty, span))
            }
        }
    }

    fn conditional(&mut self, c: hir::Expr, t: hir::Expr, f: hir::Expr, span: Span) -> Option<hir::Expr> {
        if matches!(t.ty, Type::FnPtr { .. }) || matches!(f.ty, Type::FnPtr { .. }) {
            // A condition known now chooses the function now (so the
            // call stays direct); otherwise the pointer is a run-time value.
            if let (Some(v), true) = (super::fold::fold(self, &c), t.ty == f.ty) {
                return Some(if v.is_true() { t } else { f });
            }
            let (t, f) = super::fnptr::meet_null(t, f);
            if t.ty != f.ty {
                let (a, b) = (self.ty_name(&t.ty), self.ty_name(&f.ty));
                self.error(span, format!("the two branches of `?:` are different function pointer types `{a}` and `{b}`"));
                return None;
            }
            let ty = t.ty.clone();
            return Some(mk(H::Conditional { cond: bx(c), then: bx(t), els: bx(f) }, ty, span));
        }
        // Arrays of different types (or an array against `nullptr`) meet
        // as pointers to their first elements.
        let (t, f) = if t.ty != f.ty && (matches!(t.ty, Type::Array { .. }) || matches!(f.ty, Type::Array { .. })) {
            (self.decay(t), self.decay(f))
        } else {
            (t, f)
        };
        let ty = if t.ty == f.ty {
            t.ty.clone()
        } else {
            match (&t.ty, &f.ty) {
                (Type::Scalar(_) | Type::Vector { .. }, Type::Scalar(_) | Type::Vector { .. }) => {
                    self.operand_type("?:", &t.ty, &f.ty, span)?
                }
                (Type::Pointer { .. }, Type::NullPtr) => t.ty.clone(),
                (Type::NullPtr, Type::Pointer { .. }) => f.ty.clone(),
                (Type::Enum(_), Type::Scalar(_)) | (Type::Scalar(_), Type::Enum(_)) => Type::INT,
                _ => {
                    self.error(
                        span,
                        format!("the two branches of `?:` have incompatible types `{}` and `{}`", self.ty_name(&t.ty), self.ty_name(&f.ty)),
                    );
                    return None;
                }
            }
        };
        let (t, f) = (self.convert(t, ty.clone()), self.convert(f, ty.clone()));
        Some(mk(H::Conditional { cond: bx(c), then: bx(t), els: bx(f) }, ty, span))
    }

    // ----- indexing and members --------------------------------------------------

    fn index(&mut self, b: hir::Expr, i: hir::Expr, span: Span) -> Option<hir::Expr> {
        let index_ok = matches!(&i.ty, Type::Scalar(s) if s.is_integer() || *s == Scalar::Bool)
            || matches!(&i.ty, Type::Enum(id) if !self.tables.enum_def(*id).scoped);
        if !index_ok {
            // `ptr[i]` with the operands swapped (`i[ptr]`) is legal C but nobody writes it.
            let n = self.ty_name(&i.ty);
            self.error(i.span, format!("an index must be an integer, not `{n}`")).help("convert it, e.g. `uint(x)`");
            return None;
        }
        match b.ty.clone() {
            Type::Array { elem, .. } => Some(mk(H::Index { base: bx(b), index: bx(i) }, *elem, span)),
            Type::Pointer { pointee, .. } => {
                let pty = b.ty.clone();
                let p = mk(H::PtrOffset { ptr: bx(b), offset: bx(i), negate: false }, pty, span);
                Some(mk(H::Deref(bx(p)), *pointee, span))
            }
            Type::Vector { elem, .. } => Some(mk(H::Index { base: bx(b), index: bx(i) }, Type::Scalar(elem), span)),
            Type::Matrix { elem, rows, .. } => Some(mk(H::Index { base: bx(b), index: bx(i) }, Type::vector(elem, rows), span)),
            t => {
                let n = self.ty_name(&t);
                self.error(b.span, format!("cannot index a value of type `{n}`")).label("not an array, pointer or vector");
                None
            }
        }
    }

    pub(crate) fn member(&mut self, b: hir::Expr, name: &ast::Ident, arrow: bool, span: Span) -> Option<hir::Expr> {
        let b = if arrow {
            match b.ty.clone() {
                Type::Pointer { pointee, .. } => {
                    let s = b.span;
                    mk(H::Deref(bx(b)), *pointee, s)
                }
                t => {
                    let n = self.ty_name(&t);
                    self.error(span, format!("`->` needs a pointer, but this is a `{n}`")).help("use `.` for a value");
                    return None;
                }
            }
        } else {
            if b.ty.is_pointer() {
                self.error(span, "this is a pointer: use `->` to reach its members").help(format!("write `->{}`", name.name));
                return None;
            }
            b
        };
        match b.ty.clone() {
            Type::Struct(sid) => {
                let def = self.tables.struct_def(sid);
                if let Some(idx) = def.fields.iter().position(|f| *f.name == *name.name) {
                    return Some(self.field_expr(b, sid, idx, span));
                }
                if let Some((_, _, h)) = self.structs[sid.0 as usize].statics.iter().find(|(n, _, _)| **n == *name.name) {
                    let mut h = h.clone();
                    h.span = span;
                    return Some(h);
                }
                if let Some(found) = self.member_in_bases(b.clone(), sid, name, span) {
                    return found;
                }
                let def = self.tables.struct_def(sid);
                let sname = def.name.clone();
                let mut names = self.visible_field_names(sid);
                names.extend(self.structs[sid.0 as usize].methods.iter().map(|(f, _)| f.name.last().ident.name.to_string()));
                let has_method = self.structs[sid.0 as usize].methods.iter().any(|(f, _)| *f.name.last().ident.name == *name.name);
                let mut d = if has_method {
                    self.error(name.span, format!("`{}` is a member function of `{sname}`: call it with `{}()`", name.name, name.name))
                } else {
                    self.error(name.span, format!("no member named `{}` in `{sname}`", name.name)).label("unknown member")
                };
                if !has_method {
                    if let Some(s) = suggest(&name.name, names.iter().map(|s| s.as_str())) {
                        d = d.help(format!("did you mean `{s}`?"));
                    } else if !names.is_empty() {
                        d = d.note(format!("`{sname}` has: {}", names.join(", ")));
                    }
                }
                drop(d);
                None
            }
            Type::Vector { elem, len, .. } => {
                let comps = self.swizzle(&name.name, len, name.span)?;
                let ty = Type::vector(elem, comps.len() as u8);
                Some(mk(H::Swizzle { base: bx(b), comps }, ty, span))
            }
            Type::Scalar(_) => {
                let n = self.ty_name(&b.ty);
                self.error(name.span, format!("`{n}` is a scalar and has no member `{}`", name.name));
                None
            }
            t => {
                let n = self.ty_name(&t);
                self.error(name.span, format!("`{n}` has no member `{}`", name.name));
                None
            }
        }
    }

    /// Parse a swizzle like `xzy` / `rgba` for a vector of `len` components.
    fn swizzle(&mut self, s: &str, len: u8, span: Span) -> Option<Vec<u8>> {
        const XYZW: &str = "xyzw";
        const RGBA: &str = "rgba";
        if s.is_empty() || s.len() > 4 {
            self.error(span, format!("invalid vector component selection `.{s}`"))
                .note("a swizzle names 1 to 4 of the components x, y, z, w (or r, g, b, a)");
            return None;
        }
        let mut comps = Vec::with_capacity(s.len());
        let mut set: Option<&str> = None;
        for ch in s.chars() {
            let (which, idx) = match (XYZW.find(ch), RGBA.find(ch)) {
                (Some(i), _) => (XYZW, i),
                (_, Some(i)) => (RGBA, i),
                _ => {
                    self.error(span, format!("`{ch}` is not a vector component in `.{s}`")).help("components are x, y, z, w or r, g, b, a");
                    return None;
                }
            };
            if let Some(prev) = set {
                if prev != which {
                    self.error(span, format!("the swizzle `.{s}` mixes the `xyzw` and `rgba` component names"))
                        .help("use one set of names, e.g. `.xy` or `.rg`");
                    return None;
                }
            }
            set = Some(which);
            if idx as u8 >= len {
                self.error(span, format!("component `{ch}` is out of range for a vector of {len} components")).help(format!(
                    "a {len}-component vector has {}",
                    &which[..len as usize].chars().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")
                ));
                return None;
            }
            comps.push(idx as u8);
        }
        Some(comps)
    }

    // ----- casts and construction ----------------------------------------------

    fn cast(&mut self, kind: CastKind, ty: &Type, args: &[ast::Expr], braces: bool, span: Span) -> Option<hir::Expr> {
        if kind == CastKind::Functional {
            if braces {
                return self.list_init(args, ty, span);
            }
            return self.construct(ty, args, span, true);
        }
        let [arg] = args else {
            self.error(span, "a cast takes exactly one value");
            return None;
        };
        let h = self.expr(arg)?;
        self.explicit_convert(kind, h, ty, span)
    }

    /// `reinterpret_cast<thread T&>(x)` (or `static_cast`, C-style): the
    /// object `x` names, seen as a `T` — the same place, another type.
    fn cast_to_reference(
        &mut self,
        kind: CastKind,
        h: hir::Expr,
        referee: &Type,
        space: AddressSpace,
        is_const: bool,
        span: Span,
    ) -> Option<hir::Expr> {
        let t = self.ty_name(&Type::Reference { referee: Box::new(referee.clone()), space, is_const });
        if !h.is_place() {
            self.error(
                h.span,
                format!("a cast to the reference `{t}` needs an object (a variable, element or member), not a temporary value"),
            );
            return None;
        }
        let (from_space, from_const) = self.place_info(&h);
        if from_space != space {
            self.error(span, format!("cannot cast an object in `{}` memory to the reference `{t}`", from_space.keyword()))
                .note("Metal references never change address space");
            return None;
        }
        // `constant` memory is read-only, so no cast into it drops `const`.
        if from_const && !is_const && space != AddressSpace::Constant && kind != CastKind::Const && kind != CastKind::CStyle {
            self.error(span, format!("this cast to `{t}` drops `const`")).help("cast to a `const` reference, or use `const_cast`");
            return None;
        }
        if h.ty == *referee {
            return Some(hir::Expr { span, ..h });
        }
        if matches!(kind, CastKind::Static | CastKind::Const | CastKind::Functional) {
            let from = self.ty_name(&h.ty);
            self.error(span, format!("`static_cast` cannot view a `{from}` as `{t}`"))
                .help("use `reinterpret_cast` to reinterpret the object's memory");
            return None;
        }
        let from = Type::Pointer { pointee: Box::new(h.ty.clone()), space, is_const: from_const };
        let to = Type::Pointer { pointee: Box::new(referee.clone()), space, is_const: is_const || from_const };
        let addr = mk(H::AddrOf(bx(h)), from, span);
        Some(mk(H::Deref(bx(mk(H::PtrCast(bx(addr)), to, span))), referee.clone(), span))
    }

    /// `half4x4(m)` for a `float4x4` `m` (or a cast): column by column. The
    /// matrix must be an object (a variable, element or `*p`), read once
    /// per column, so nothing is evaluated twice.
    fn matrix_convert(&mut self, h: hir::Expr, ty: &Type, span: Span) -> Option<hir::Expr> {
        let Type::Matrix { elem, cols, rows } = *ty else { return None };
        if !h.is_place() {
            self.error(
                h.span,
                format!("converting this `{}` value to `{}` needs it in a variable first", self.ty_name(&h.ty), self.ty_name(ty)),
            )
            .help("store the matrix in a local, then convert the local");
            return None;
        }
        let Type::Matrix { elem: from, .. } = h.ty else { return None };
        let col_from = Type::vector(from, rows);
        let col_ty = Type::vector(elem, rows);
        let parts = (0..cols)
            .map(|k| {
                let index = mk(H::Const(ConstValue::Int(k as i64)), Type::Scalar(Scalar::Int), span);
                let col = mk(H::Index { base: bx(h.clone()), index: bx(index) }, col_from.clone(), span);
                self.convert(col, col_ty.clone())
            })
            .collect();
        Some(mk(H::Construct(parts), ty.clone(), span))
    }

    /// An explicit conversion (`static_cast`, C-style, `T(x)`).
    fn explicit_convert(&mut self, kind: CastKind, h: hir::Expr, ty: &Type, span: Span) -> Option<hir::Expr> {
        let h = if matches!(h.ty, Type::Array { .. }) && ty.is_pointer() { self.decay(h) } else { h };
        if h.ty == *ty {
            return Some(hir::Expr { span, ..h });
        }
        // To or from a class: its constructors and conversion operators.
        if (Self::is_class(&h.ty) || Self::is_class(ty)) && h.ty != *ty {
            if let Some(c) = self.user_conversion(h.clone(), ty) {
                return Some(hir::Expr { span, ..c });
            }
            // `float(mask)` with only `operator bool()`: the user-defined
            // conversion, then the standard one.
            if ty.is_scalar() {
                if let Some(c) = self.conversion_to_scalar(h.clone()) {
                    return self.explicit_convert(kind, c, ty, span);
                }
            }
        }
        if let (Type::Matrix { cols: a, rows: b, .. }, Type::Matrix { cols: c, rows: d, .. }) = (&h.ty, ty) {
            if (a, b) == (c, d) {
                return self.matrix_convert(h, ty, span);
            }
        }
        let ok = match (&h.ty, ty) {
            (Type::Scalar(_) | Type::Enum(_), Type::Scalar(_) | Type::Enum(_)) => true,
            (Type::Scalar(_), Type::Vector { .. }) => true,
            (Type::Vector { len: a, .. }, Type::Vector { len: b, .. }) => a == b,
            (Type::Pointer { space: a, .. }, Type::Pointer { space: b, .. }) => {
                if a != b {
                    self.error(
                        span,
                        format!("cannot cast a pointer to `{}` memory into a pointer to `{}` memory", a.keyword(), b.keyword()),
                    )
                    .note("Metal pointers never change address space");
                    return None;
                }
                if kind == CastKind::Static
                    && ty_pointee(&h.ty) != ty_pointee(ty)
                    && *ty_pointee(ty) != Type::Void
                    && *ty_pointee(&h.ty) != Type::Void
                {
                    self.error(span, "`static_cast` cannot change what a pointer points to")
                        .help("use `reinterpret_cast` or a C-style cast to reinterpret the memory");
                    return None;
                }
                true
            }
            (Type::NullPtr, Type::Pointer { .. }) => true,
            // A pointer's simulated address is its bits: every allocation
            // starts on a 2^40-byte boundary, so alignment tests on the
            // address see the offset's alignment, and the integer converts
            // back to the same pointer.
            (Type::Pointer { .. }, Type::Scalar(s)) | (Type::Scalar(s), Type::Pointer { .. })
                if s.is_integer() && s.size() == 8 && matches!(kind, CastKind::Reinterpret | CastKind::CStyle | CastKind::Functional) =>
            {
                true
            }
            (Type::Pointer { .. }, Type::Scalar(s)) | (Type::Scalar(s), Type::Pointer { .. }) if s.is_integer() => {
                let t = self.ty_name(ty);
                let mut d = self.error(span, format!("cannot convert `{}` to `{t}`", self.ty_name(&h.ty)));
                d = if s.size() == 8 {
                    d.help("pointers and 64-bit integers convert only with `reinterpret_cast` or a C-style cast")
                } else {
                    d.help("a pointer is 64 bits wide: convert it to `ulong` (or `long`)")
                };
                drop(d);
                return None;
            }
            (Type::Struct(a), Type::Struct(b)) => a == b,
            (Type::BuiltinEnum(a), Type::BuiltinEnum(b)) => a == b,
            (Type::Scalar(_), Type::BuiltinEnum(_)) => true,
            _ => false,
        };
        if !ok {
            let (f, t) = (self.ty_name(&h.ty), self.ty_name(ty));
            let mut d = self.error(span, format!("cannot convert `{f}` to `{t}`"));
            if let (Type::Vector { len: a, .. }, Type::Vector { len: b, .. }) = (&h.ty, ty) {
                d = d.help(format!("the lengths differ ({a} vs {b}); select components with a swizzle first"));
            } else if h.ty.is_vector() && ty.is_scalar() {
                d = d.help("select one component, e.g. `.x`");
            } else if h.ty.elem_scalar().is_some() && ty.elem_scalar().is_some() {
                d = d.help(format!("to reinterpret the bits use `as_type<{t}>(...)` (the sizes must match)"));
            }
            drop(d);
            return None;
        }
        let mut out = match (&h.ty, ty) {
            (Type::Pointer { .. } | Type::NullPtr, Type::Pointer { .. }) => self.convert(h, ty.clone()),
            (Type::Enum(_), Type::Enum(_))
            | (Type::Scalar(_), Type::Enum(_))
            | (Type::Scalar(_), Type::BuiltinEnum(_))
            | (Type::Pointer { .. }, Type::Scalar(_))
            | (Type::Scalar(_), Type::Pointer { .. }) => mk(H::PtrCast(bx(h)), ty.clone(), span),
            _ => self.convert(h, ty.clone()),
        };
        out.span = span;
        Some(out)
    }

    /// `T(args)`: conversion, vector/matrix constructor, struct constructor.
    pub(crate) fn construct(&mut self, ty: &Type, args: &[ast::Expr], span: Span, _functional: bool) -> Option<hir::Expr> {
        if args.is_empty() {
            if let Type::Struct(sid) = ty {
                if self.has_constructors(*sid) && !self.structs[sid.0 as usize].defaulted_ctor {
                    return self.ctor_call(*sid, Vec::new(), span);
                }
            }
            return Some(self.value_init(ty, span));
        }
        match ty {
            Type::Vector { elem, len, .. } => {
                let mut parts = Vec::new();
                for a in args {
                    parts.push(self.expr(a)?);
                }
                self.vector_construct(*elem, *len, ty, parts, span)
            }
            // `simdgroup_matrix<T, 8, 8>(d)`: a diagonal matrix of d.
            Type::SimdMatrix { elem, .. } if args.len() == 1 => {
                let x = self.expr(&args[0])?;
                if !x.ty.is_scalar() {
                    return self.explicit_convert(CastKind::Functional, x, ty, span);
                }
                let x = self.coerce(x, &Type::Scalar(*elem), "the diagonal value")?;
                let param_types = vec![Type::Scalar(*elem)];
                Some(mk(H::Builtin { id: BuiltinId::SimdgroupDiagonal, fast: false, args: vec![x], param_types }, ty.clone(), span))
            }
            Type::Matrix { elem, cols, rows } => {
                let mut parts = Vec::new();
                for a in args {
                    parts.push(self.expr(a)?);
                }
                let col_ty = Type::vector(*elem, *rows);
                if parts.len() == *cols as usize && parts.iter().all(|p| p.ty.vector_len() == Some(*rows) && p.ty.is_vector()) {
                    let parts = parts.into_iter().map(|p| self.convert(p, col_ty.clone())).collect();
                    return Some(mk(H::Construct(parts), ty.clone(), span));
                }
                if parts.len() == (*cols as usize) * (*rows as usize) && parts.iter().all(|p| p.ty.is_scalar()) {
                    let parts = parts.into_iter().map(|p| self.convert(p, Type::Scalar(*elem))).collect();
                    return Some(mk(H::Construct(parts), ty.clone(), span));
                }
                if parts.len() == 1 && parts[0].ty.is_scalar() {
                    return self.matrix_diagonal(parts.pop()?, ty, span);
                }
                if parts.len() == 1 && parts[0].ty == *ty {
                    return parts.pop();
                }
                if parts.len() == 1 && matches!(parts[0].ty, Type::Matrix { cols: c, rows: r, .. } if c == *cols && r == *rows) {
                    return self.matrix_convert(parts.pop()?, ty, span);
                }
                self.error(span, format!("cannot build a `{}` from these values", self.ty_name(ty))).help(format!(
                    "give {cols} column vectors of {rows} components, {} scalars, or one scalar for the diagonal",
                    cols * rows
                ));
                None
            }
            Type::Struct(sid) if self.has_constructors(*sid) => {
                let mut hs = Vec::new();
                for a in args {
                    hs.push(self.expr(a)?);
                }
                self.ctor_call(*sid, hs, span)
            }
            _ => {
                if args.len() != 1 {
                    let n = self.ty_name(ty);
                    if let Type::Struct(_) = ty {
                        self.error(span, format!("`{n}` has no constructor taking {} arguments", args.len()))
                            .help(format!("initialize it with braces: `{n}{{...}}`"));
                    } else {
                        self.error(span, format!("`{n}(...)` takes one value"));
                    }
                    return None;
                }
                let h = self.expr(&args[0])?;
                self.explicit_convert(CastKind::Functional, h, ty, span)
            }
        }
    }

    fn vector_construct(&mut self, elem: Scalar, len: u8, ty: &Type, parts: Vec<hir::Expr>, span: Span) -> Option<hir::Expr> {
        if parts.len() == 1 {
            let p = parts.into_iter().next()?;
            return match &p.ty {
                Type::Scalar(_) => Some(hir::Expr { span, ..self.convert(p, ty.clone()) }),
                Type::Vector { len: l, .. } if *l == len => Some(hir::Expr { span, ..self.convert(p, ty.clone()) }),
                t => {
                    let (tn, n) = (self.ty_name(t), self.ty_name(ty));
                    let mut d = self.error(span, format!("cannot build a `{n}` from a `{tn}`"));
                    if let Type::Vector { len: l, .. } = t {
                        if *l > len {
                            d = d.help(format!("select {len} components with a swizzle, e.g. `.{}`", &"xyzw"[..len as usize]));
                        } else {
                            d = d.help(format!("add the missing components: `{n}(v, ...)`"));
                        }
                    }
                    drop(d);
                    None
                }
            };
        }
        let mut count = 0u32;
        let mut out = Vec::with_capacity(parts.len());
        for p in parts {
            match p.ty.clone() {
                Type::Scalar(_) => {
                    count += 1;
                    out.push(self.convert(p, Type::Scalar(elem)));
                }
                Type::Vector { len: l, .. } => {
                    count += l as u32;
                    out.push(self.convert(p, Type::vector(elem, l)));
                }
                t => {
                    let n = self.ty_name(&t);
                    self.error(p.span, format!("a `{n}` cannot be a component of a vector"));
                    return None;
                }
            }
        }
        if count != len as u32 {
            let n = self.ty_name(ty);
            self.error(span, format!("`{n}` needs {len} components, but {count} were given"));
            return None;
        }
        Some(mk(H::Construct(out), ty.clone(), span))
    }

    /// Braced initialization of `ty` (with C++'s narrowing rules).
    pub(crate) fn list_init(&mut self, items: &[ast::Expr], ty: &Type, span: Span) -> Option<hir::Expr> {
        let items = self.expand_exprs(items)?;
        let items = &*items;
        if let Some(d) = items.iter().find(|i| matches!(i.kind, A::Designated { .. })) {
            return match (ty, &d.kind) {
                (Type::Array { elem, len }, _) => self.designated_array(items, elem, *len, ty, span),
                (Type::Struct(_), A::Designated { designator: ast::Designator::Field(_), .. }) => {
                    self.error(d.span, "designated initializers of struct fields (`.name = v`) are not supported by this simulator yet")
                        .help("list the values in field order instead");
                    None
                }
                _ => {
                    let n = self.ty_name(ty);
                    self.error(d.span, format!("a `{n}` cannot be initialized with a designator; `[i] = v` initializes array elements"));
                    None
                }
            };
        }
        match ty {
            Type::Array { elem, len } => {
                if items.len() > *len as usize {
                    self.error(span, format!("too many initializers: the array has {len} elements but {} values were given", items.len()));
                    return None;
                }
                let mut out = Vec::with_capacity(items.len());
                for it in items {
                    out.push(self.list_item(it, elem)?);
                }
                // Elements without a value are value-initialized: S's
                // default member initializers apply to each.
                if out.len() < *len as usize && self.needs_member_init(elem) {
                    let rest = Box::new(self.value_init(elem, span));
                    return Some(mk(H::ArrayInit { items: out, rest }, ty.clone(), span));
                }
                Some(mk(H::Aggregate(out), ty.clone(), span))
            }
            Type::Struct(sid) if self.has_constructors(*sid) => {
                let mut hs = Vec::new();
                for it in items {
                    hs.push(self.expr(it)?);
                }
                self.ctor_call(*sid, hs, span)
            }
            Type::Struct(sid) => {
                let def = self.tables.struct_def(*sid);
                // Braces initialize a union's first member.
                let n = if def.is_union { def.fields.len().min(1) } else { def.fields.len() };
                let fields: Vec<Type> = def.fields[..n].iter().map(|f| f.ty.clone()).collect();
                // `S s = {other_s}` copies.
                if items.len() == 1 && !matches!(items[0].kind, A::InitList(_)) {
                    let h = self.expr(&items[0])?;
                    if h.ty == *ty {
                        return Some(h);
                    }
                    if self.is_ref_field(*sid, 0) {
                        return self.struct_list_rest(ty, &fields, Vec::new(), items, span);
                    }
                    // Otherwise it is the first field's value, converted
                    // like any other (an array decays for a pointer field).
                    let h = match fields.first() {
                        Some(f) => {
                            if h.ty.is_scalar() {
                                self.check_narrowing(&h, f);
                            }
                            self.coerce(h, f, "the initializer")?
                        }
                        None => h,
                    };
                    return self.struct_list_rest(ty, &fields, vec![h], &items[1..], span);
                }
                self.struct_list_rest(ty, &fields, Vec::new(), items, span)
            }
            Type::Vector { elem, len, .. } => {
                let mut parts = Vec::new();
                for it in items {
                    let h = self.expr(it)?;
                    if h.ty.is_scalar() {
                        self.check_narrowing(&h, &Type::Scalar(*elem));
                    }
                    parts.push(h);
                }
                if let [h] = &parts[..] {
                    if h.ty.is_vector() {
                        return self.coerce(parts.remove(0), ty, "the initializer");
                    }
                    if !h.ty.is_scalar() {
                        return Some(self.convert(parts.remove(0), ty.clone()));
                    }
                }
                // Braces may leave out trailing components, which are zero
                // (`uint4 k = {a, b, c};`, `float4 v = {1}` is (1, 0, 0, 0)),
                // as for any aggregate; `float4(1)` is the one that splats.
                let given: u32 = parts.iter().map(|p| if let Type::Vector { len, .. } = p.ty { len as u32 } else { 1 }).sum();
                for _ in given..*len as u32 {
                    parts.push(mk(H::Zero, Type::Scalar(*elem), span));
                }
                self.vector_construct(*elem, *len, ty, parts, span)
            }
            _ => match items {
                [] => Some(mk(H::Zero, ty.clone(), span)),
                [one] => {
                    let h = self.expr(one)?;
                    self.check_narrowing(&h, ty);
                    self.coerce(h, ty, "the initializer")
                }
                _ => {
                    let n = self.ty_name(ty);
                    self.error(span, format!("a `{n}` is initialized with one value, not {}", items.len()));
                    None
                }
            },
        }
    }

    /// `{[2] = a, b, [4 ... 7] = c}` for an array: each designator moves the
    /// position (a range fills every element from its first to its last
    /// index), plain values go to the next position, the rest are zero.
    fn designated_array(&mut self, items: &[ast::Expr], elem: &Type, len: u32, ty: &Type, span: Span) -> Option<hir::Expr> {
        /// Past this, a designated array initializer would build a huge HIR.
        const MAX_DESIGNATED: u32 = 1 << 16;
        if len > MAX_DESIGNATED {
            self.error(
                span,
                format!("designated initializers of arrays over {MAX_DESIGNATED} elements are not supported by this simulator yet"),
            );
            return None;
        }
        let mut slots: Vec<Option<hir::Expr>> = vec![None; len as usize];
        let mut next = 0i64;
        for it in items {
            let (first, last, value) = match &it.kind {
                A::Designated { designator: ast::Designator::Index(i), value } => {
                    let k = self.designator_index(i)?;
                    (k, k, &**value)
                }
                A::Designated { designator: ast::Designator::Range(a, b), value } => {
                    let (a, b) = (self.designator_index(a)?, self.designator_index(b)?);
                    if b < a {
                        self.error(it.span, format!("the range `[{a} ... {b}]` is empty: its last index is below its first"));
                        return None;
                    }
                    (a, b, &**value)
                }
                A::Designated { designator: ast::Designator::Field(f), .. } => {
                    self.error(f.span, format!("`.{}` names a struct field, but this initializes an array", f.name));
                    return None;
                }
                _ => (next, next, it),
            };
            if first < 0 || last >= len as i64 {
                self.error(
                    it.span,
                    format!("index {} is outside the array, which has {len} elements", if first < 0 { first } else { last }),
                );
                return None;
            }
            let h = self.list_item(value, elem)?;
            for k in first..=last {
                slots[k as usize] = Some(h.clone());
            }
            next = last + 1;
        }
        let out = slots.into_iter().map(|s| s.unwrap_or_else(|| mk(H::Zero, elem.clone(), span))).collect();
        Some(mk(H::Aggregate(out), ty.clone(), span))
    }

    /// A designator's index: an integer constant expression.
    fn designator_index(&mut self, e: &ast::Expr) -> Option<i64> {
        let h = self.expr(e)?;
        match self.const_value(&h) {
            Some(v) if h.ty.elem_scalar().is_some_and(|s| s.is_integer()) => Some(v.as_i64()),
            _ => {
                self.error(e.span, "an array designator needs a whole-number constant (e.g. `[3]` or `[0 ... N - 1]`)");
                None
            }
        }
    }

    fn struct_list_rest(
        &mut self,
        ty: &Type,
        fields: &[Type],
        mut out: Vec<hir::Expr>,
        items: &[ast::Expr],
        span: Span,
    ) -> Option<hir::Expr> {
        if out.len() + items.len() > fields.len() {
            let n = self.ty_name(ty);
            self.error(
                span,
                format!("too many initializers: `{n}` has {} fields but {} values were given", fields.len(), out.len() + items.len()),
            );
            return None;
        }
        let sid = match ty {
            Type::Struct(sid) => Some(*sid),
            _ => None,
        };
        for it in items {
            let idx = out.len();
            if let Some(sid) = sid.filter(|&s| self.is_ref_field(s, idx)) {
                out.push(self.bind_ref_field(sid, idx, it)?);
                continue;
            }
            let fty = fields[idx].clone();
            out.push(self.list_item(it, &fty)?);
        }
        if let Some(sid) = sid {
            if self.check_refs_bound(sid, out.len(), span).is_some() {
                return None;
            }
            let rest = self.member_values_after(sid, out.len(), span);
            out.extend(rest);
        }
        Some(mk(H::Aggregate(out), ty.clone(), span))
    }

    fn list_item(&mut self, it: &ast::Expr, ty: &Type) -> Option<hir::Expr> {
        if let A::InitList(sub) = &it.kind {
            return self.list_init(sub, ty, it.span);
        }
        let h = self.expr(it)?;
        if h.ty.is_scalar() {
            self.check_narrowing(&h, ty);
        }
        self.coerce(h, ty, "the initializer")
    }

    /// Report a narrowing conversion inside braces (an error in C++11).
    fn check_narrowing(&mut self, h: &hir::Expr, to: &Type) {
        let (Type::Scalar(from), Type::Scalar(to_s)) = (&h.ty, to.elem_scalar().map(Type::Scalar).unwrap_or(Type::Void)) else { return };
        let (from, to_s) = (*from, to_s);
        if from == to_s || to_s == Scalar::Bool && from == Scalar::Bool {
            return;
        }
        let constant = self.const_value(h);
        let narrowing = if from.is_float() && to_s.is_integer() {
            true
        } else if from.is_float() && to_s.is_float() {
            to_s.size() < from.size() && constant.is_none()
        } else if !from.is_float() && to_s.is_float() {
            match constant {
                Some(v) => (v.as_f64() as f32 as f64) != v.as_f64(),
                None => true,
            }
        } else {
            // integer to integer
            match constant {
                Some(v) => v.cast(to_s).as_i64() != v.as_i64() || (matches!(v, ConstValue::Int(x) if x < 0) && !to_s.is_signed()),
                None => {
                    to_s.size() < from.size()
                        || (from.is_signed() != to_s.is_signed() && to_s.size() <= from.size())
                        || (from.is_signed() && !to_s.is_signed())
                }
            }
        };
        if narrowing {
            let (f, t) = (from.name(), to_s.name());
            self.error(h.span, format!("narrowing conversion from `{f}` to `{t}` inside braces"))
                .label(format!("this `{f}` may not fit in a `{t}`"))
                .help(format!("convert explicitly with `{t}(...)` or `static_cast<{t}>(...)`, or use `=` instead of braces"));
        }
    }

    /// Call a struct constructor on a fresh temporary; the value is the temporary.
    pub(crate) fn ctor_call(&mut self, sid: crate::types::StructId, args: Vec<hir::Expr>, span: Span) -> Option<hir::Expr> {
        let n = self.structs[sid.0 as usize].ctors.len();
        let mut sigs = Vec::new();
        for i in 0..n {
            if let Some((id, sig)) = self.ctor_instance(sid, i, span) {
                sigs.push((id, sig.params));
            }
        }
        let sname = self.tables.struct_def(sid).name.clone();
        let (func, args) = self.pick_constructor(sid, &sname, sigs, args, span)?;
        let ty = Type::Struct(sid);
        let tmp = self.temp_local(ty.clone(), span)?;
        let place = mk(H::Local(tmp), ty.clone(), span);
        let this = mk(H::AddrOf(bx(place.clone())), Type::pointer(ty.clone(), AddressSpace::Thread, false), span);
        let mut all = vec![this];
        all.extend(args);
        let call = mk(H::Call { func, args: all }, Type::Void, span);
        Some(mk(H::Comma { lhs: bx(call), rhs: bx(place) }, ty, span))
    }

    /// Whether a struct declares constructors (or constructor templates).
    pub(crate) fn has_constructors(&self, sid: crate::types::StructId) -> bool {
        !self.structs[sid.0 as usize].ctors.is_empty() || !self.lookup_member_decls(sid, super::calls::CTOR_TEMPLATE).is_empty()
    }

    /// A string literal: in Metal an array of `constant char` ending in a
    /// zero byte, which decays to `constant char*` (`os_log` objects and
    /// helpers taking `constant char*` receive these). Each distinct text is
    /// one program-scope constant.
    /// `__func__`: the enclosing function's name as a string literal, as in
    /// C++ (PyTorch's error-reporting macros pass it on).
    fn func_name_expr(&mut self, span: Span) -> Option<hir::Expr> {
        let Some(name) = self.fs.as_ref().and_then(|f| f.func_name.clone()) else {
            self.error(span, "`__func__` is only valid inside a function body");
            return None;
        };
        Some(self.string_literal(&name, span))
    }

    pub(crate) fn string_literal(&mut self, text: &std::rc::Rc<str>, span: Span) -> hir::Expr {
        let len = text.len() as u32 + 1;
        let ty = Type::Array { elem: Box::new(Type::Scalar(Scalar::Char)), len };
        let gid = match self.string_globals.get(text) {
            Some(&g) => g,
            None => {
                let elems = text
                    .bytes()
                    .chain(std::iter::once(0))
                    .map(|b| mk(H::Const(ConstValue::Int(b as i8 as i64)), Type::Scalar(Scalar::Char), span))
                    .collect();
                let gid = hir::GlobalId(self.globals.len() as u32);
                self.globals.push(hir::Global {
                    name: format!("string literal {:?}", &**text),
                    ty: ty.clone(),
                    init: mk(H::Aggregate(elems), ty.clone(), span),
                    span,
                });
                self.string_globals.insert(text.clone(), gid);
                gid
            }
        };
        mk(H::Global(gid), ty, span)
    }

    /// A call of `callee` is being made: a static member function of a
    /// template instance gets its body now (see `lazy_bodies`).
    pub(crate) fn use_function(&mut self, callee: hir::FuncId) {
        if let Some(((f, id, sig), env)) = self.lazy_bodies.remove(&callee) {
            self.elsewhere(env).function_body(f, id, &sig, f.name.last().ident.name.to_string(), None, None);
        }
    }
}

fn ty_pointee(t: &Type) -> &Type {
    match t {
        Type::Pointer { pointee, .. } => pointee,
        _ => panic!("not a pointer"),
    }
}

fn base_local_name(c: &Checker, e: &hir::Expr) -> Option<String> {
    match &e.kind {
        H::Local(id) => c.fs.as_ref().map(|f| f.locals[id.0 as usize].name.clone()),
        H::Deref(p) => base_local_name(c, p),
        H::PtrOffset { ptr, .. } => base_local_name(c, ptr),
        H::Index { base, .. } | H::Field { base, .. } | H::Swizzle { base, .. } => base_local_name(c, base),
        _ => None,
    }
}

fn int_literal(value: u64, unsigned: bool, long: bool, decimal: bool, span: Span) -> hir::Expr {
    // C++ [lex.icon]: the first type that can represent the value.
    let s = match (unsigned, long) {
        (false, false) => {
            if value <= i32::MAX as u64 {
                Scalar::Int
            } else if !decimal && value <= u32::MAX as u64 {
                Scalar::UInt
            } else if value <= i64::MAX as u64 {
                Scalar::Long
            } else {
                Scalar::ULong
            }
        }
        (true, false) => {
            if value <= u32::MAX as u64 {
                Scalar::UInt
            } else {
                Scalar::ULong
            }
        }
        (false, true) => {
            if value <= i64::MAX as u64 {
                Scalar::Long
            } else {
                Scalar::ULong
            }
        }
        (true, true) => Scalar::ULong,
    };
    let v = if s.is_signed() { ConstValue::Int(value as i64) } else { ConstValue::UInt(value) };
    mk(H::Const(v), Type::Scalar(s), span)
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
