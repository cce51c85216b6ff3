//! Statements, local declarations and initializers.

use super::Checker;
use crate::ast::{self, AddressSpace, StmtKind};
use crate::hir::{self, ExprKind, LocalId};
use crate::source::Span;
use crate::types::{Scalar, Type};
use std::rc::Rc;

impl<'a> Checker<'a, '_> {
    pub(crate) fn block_stmts(&mut self, b: &ast::Block) -> Vec<hir::Stmt> {
        self.push_scope();
        let mut out = Vec::with_capacity(b.stmts.len());
        let mut prev = None;
        for s in &b.stmts {
            self.probe_prev = prev;
            self.stmt(s, &mut out);
            prev = Some(s.span);
        }
        self.pop_scope();
        out
    }

    /// `return x;` in a function returning `space T&`: return x's address.
    fn return_reference(&mut self, v: &ast::Expr, referee: &Type, space: AddressSpace, is_const: bool) -> Option<hir::Expr> {
        let h = self.expr(v)?;
        let h = if h.is_place() { self.upcast(h, referee).unwrap_or_else(|h| h) } else { h };
        let want = self.ty_name(&Type::Reference { referee: Box::new(referee.clone()), space, is_const });
        if !h.is_place() || h.ty != *referee {
            let have = self.ty_name(&h.ty);
            self.error(v.span, format!("cannot return a `{want}` to this `{have}` value: it is not a variable"))
                .help("a reference return must name memory that outlives the call (a field, a parameter reference, a buffer element)");
            return None;
        }
        let (s, c) = self.place_info(&h);
        if s != space || (c && !is_const) {
            let what = if s != space { format!("it is in `{}` memory", s.keyword()) } else { "it is const".to_string() };
            self.error(v.span, format!("cannot return this value as `{want}`: {what}"))
                .help("make the return type's address space and constness match the value returned");
            return None;
        }
        let span = h.span;
        Some(hir::Expr {
            kind: ExprKind::AddrOf(Box::new(h)),
            ty: Type::Pointer { pointee: Box::new(referee.clone()), space, is_const },
            span,
        })
    }

    /// `for (uint s = 4; s >= 0; s /= 2)`: an unsigned value is never
    /// negative, so the loop cannot end by its condition.
    fn warn_always_true_loop(&self, c: &hir::Expr) {
        use crate::ast::BinaryOp::{Ge, Le};
        let ExprKind::Binary { op, lhs, rhs } = &c.kind else { return };
        let unsigned = |e: &hir::Expr| matches!(e.ty, Type::Scalar(s) if s.is_integer() && !s.is_signed());
        let zero = |e: &hir::Expr| matches!(strip_convert(e).kind, ExprKind::Const(v) if v.as_i64() == 0);
        let always = match op {
            Ge => unsigned(strip_convert(lhs)) && zero(rhs),
            Le => zero(lhs) && unsigned(strip_convert(rhs)),
            _ => false,
        };
        if always {
            self.warn(c.span, "this loop condition is always true: an unsigned value is never below 0")
                .help("the loop can only end with `break` or `return`; use a signed counter (`int s`) or test `s > 0`");
        }
    }

    pub(super) fn push_scope(&mut self) {
        if let Some(fs) = self.fs.as_mut() {
            fs.scopes.push(Default::default());
        }
    }

    pub(super) fn pop_scope(&mut self) {
        if let Some(fs) = self.fs.as_mut() {
            fs.scopes.pop();
        }
    }

    /// A statement in its own scope (the body of an `if`, a loop...).
    fn scoped_stmt(&mut self, s: &ast::Stmt) -> Vec<hir::Stmt> {
        self.push_scope();
        let mut out = Vec::new();
        self.stmt(s, &mut out);
        self.pop_scope();
        out
    }

    pub(super) fn stmt(&mut self, s: &ast::Stmt, out: &mut Vec<hir::Stmt>) {
        // Statements nest as deep as the parser allows (256 levels), each
        // level several frames: the stack grows on the heap as needed.
        stacker::maybe_grow(256 * 1024, 4 * 1024 * 1024, || self.stmt_here(s, out))
    }

    fn stmt_here(&mut self, s: &ast::Stmt, out: &mut Vec<hir::Stmt>) {
        let span = s.span;
        let push = |out: &mut Vec<hir::Stmt>, kind| out.push(hir::Stmt { kind, span });
        if self.probes.is_some() {
            self.probes_before(s, out);
        }
        match &s.kind {
            StmtKind::Decl(vars) => {
                for v in vars {
                    if let Some(st) = self.local_decl(v) {
                        out.push(st);
                    }
                }
            }
            StmtKind::Expr(e) => {
                if let Some(h) = self.expr(e) {
                    push(out, hir::StmtKind::Expr(h));
                }
            }
            StmtKind::Block(b) => {
                let mut stmts = Vec::new();
                if self.probes.is_some() {
                    // A loop body's probes run first in each pass.
                    self.probes_at_block_top(span, &mut stmts);
                }
                stmts.extend(self.block_stmts(b));
                push(out, hir::StmtKind::Block(stmts));
            }
            StmtKind::If { cond, then, els, is_constexpr: true } => {
                // Only the selected branch exists in this instance.
                let Some(c) = self.condition(cond) else { return };
                let Some(v) = self.const_value(&c) else {
                    self.not_constant(cond.span, "the condition of `if constexpr` must be a compile-time constant", &c);
                    return;
                };
                let taken = if v.is_true() { Some(then) } else { els.as_ref() };
                if let Some(t) = taken {
                    let stmts = self.scoped_stmt(t);
                    push(out, hir::StmtKind::Block(stmts));
                }
            }
            StmtKind::If { cond, then, els, .. } => {
                let c = self.condition(cond);
                let t = self.scoped_stmt(then);
                let e = els.as_ref().map(|e| self.scoped_stmt(e)).unwrap_or_default();
                if let Some(c) = c {
                    push(out, hir::StmtKind::If { cond: c, then: t, els: e });
                }
            }
            StmtKind::For { init, cond, step, body } => {
                self.push_scope();
                let mut block = Vec::new();
                if let Some(i) = init {
                    self.stmt(i, &mut block);
                }
                let c = cond.as_ref().and_then(|c| self.condition(c));
                if let Some(c) = &c {
                    self.warn_always_true_loop(c);
                }
                let st = step.as_ref().and_then(|e| self.expr(e));
                let b = self.loop_body(body);
                self.pop_scope();
                block.push(hir::Stmt { kind: hir::StmtKind::Loop { cond: c, body: b, step: st, check_first: true }, span });
                push(out, hir::StmtKind::Block(block));
            }
            StmtKind::RangeFor { var, range, body } => self.range_for(var, range, body, span, out),
            StmtKind::While { cond, body } => {
                let c = self.condition(cond);
                if let Some(c) = &c {
                    self.warn_always_true_loop(c);
                }
                let b = self.loop_body(body);
                push(out, hir::StmtKind::Loop { cond: c, body: b, step: None, check_first: true });
            }
            StmtKind::DoWhile { body, cond } => {
                let b = self.loop_body(body);
                let c = self.condition(cond);
                push(out, hir::StmtKind::Loop { cond: c, body: b, step: None, check_first: false });
            }
            StmtKind::Switch { cond, body } => {
                if let Some(st) = self.switch(cond, body, span) {
                    out.push(st);
                }
            }
            StmtKind::Case(_) | StmtKind::Default => {
                self.error(span, "`case` and `default` labels can only appear inside a `switch`");
            }
            StmtKind::Break => {
                let fs = self.fs.as_ref().expect("in function");
                if fs.loop_depth == 0 && fs.switch_depth == 0 {
                    self.error(span, "`break` outside of a loop or `switch`")
                        .help("`break` leaves the innermost `for`, `while`, `do` or `switch`; use `return` to leave the function");
                } else {
                    push(out, hir::StmtKind::Break);
                }
            }
            StmtKind::Continue => {
                if self.fs.as_ref().expect("in function").loop_depth == 0 {
                    self.error(span, "`continue` outside of a loop");
                } else {
                    push(out, hir::StmtKind::Continue);
                }
            }
            // The first `return` of an `auto` function fixes its return type.
            StmtKind::Return(value) if self.fs.as_ref().is_some_and(|f| f.ret_undeduced) => {
                let h = match value {
                    Some(v) if matches!(v.kind, ast::ExprKind::InitList(_)) => {
                        self.error(v.span, "an `auto` return type cannot be deduced from a braced list")
                            .help("name the type: `return T{…};`, or declare the return type");
                        return;
                    }
                    Some(v) => match self.expr(v) {
                        Some(h) => Some(self.decay(h)),
                        None => return,
                    },
                    None => None,
                };
                let fs = self.fs.as_mut().expect("in function");
                fs.ret = h.as_ref().map_or(Type::Void, |h| h.ty.clone());
                fs.ret_undeduced = false;
                push(out, hir::StmtKind::Return(h));
            }
            StmtKind::Return(value) => {
                let ret = self.fs.as_ref().expect("in function").ret.clone();
                match (value, &ret) {
                    (None, Type::Void) => push(out, hir::StmtKind::Return(None)),
                    (None, t) => {
                        let n = self.ty_name(t);
                        self.error(span, format!("this function returns `{n}`, so `return` needs a value"))
                            .help(format!("write `return <value of type {n}>;`"));
                    }
                    (Some(v), Type::Void) => {
                        // `return f();` with a void f is allowed in C++.
                        if let Some(h) = self.expr(v) {
                            if h.ty == Type::Void {
                                push(out, hir::StmtKind::Expr(h));
                                push(out, hir::StmtKind::Return(None));
                            } else {
                                let kernel = self.fs.as_ref().is_some_and(|f| f.is_kernel);
                                let mut d = self.error(v.span, "a `void` function cannot return a value");
                                if kernel {
                                    d = d.help("kernels return results by writing to `device` buffers");
                                }
                                drop(d);
                            }
                        }
                    }
                    (Some(v), Type::Reference { referee, space, is_const }) => {
                        let (referee, space, is_const) = ((**referee).clone(), *space, *is_const);
                        if let Some(h) = self.return_reference(v, &referee, space, is_const) {
                            push(out, hir::StmtKind::Return(Some(h)));
                        }
                    }
                    (Some(v), t) => {
                        let t = t.clone();
                        if let Some(h) = self.coerce_ast(v, &t, "the return value") {
                            push(out, hir::StmtKind::Return(Some(h)));
                        }
                    }
                }
            }
            StmtKind::Alias(a) if a.fn_params.is_some() => self.refuse_function_type(a),
            StmtKind::Alias(a) => {
                if let Some(q) = self.resolve_type(&a.ty) {
                    // Visible to the rest of the function, in its own scope
                    // so it does not leak into the enclosing namespace.
                    self.enter_type_scope();
                    self.add_decl(a.name.name.clone(), super::DeclKind::Alias(q.ty), a.name.span);
                }
            }
            StmtKind::LocalType(item, vars) => {
                self.local_type(item);
                for v in vars {
                    if let Some(st) = self.local_decl(v) {
                        out.push(st);
                    }
                }
            }
            StmtKind::StaticAssert { cond, message } => self.static_assert(cond, message.as_deref()),
            StmtKind::Empty => {}
        }
    }

    /// A struct, union or enum declared in a function body. It is declared
    /// in a scope of the function's own (entered at its first local type and
    /// left with the body), so it neither leaks to program scope nor clashes
    /// with the same declaration in another instance of a function template.
    fn local_type(&mut self, item: &ast::Item) {
        // Declarations keep references into the parsed unit: find this one
        // there (a constructor's body is checked from a rewritten copy).
        let Some(item) = self.unit_local_type(item.span) else {
            self.error(
                item.span,
                "this declaration inside a function is not supported by this simulator yet (it was not found in the source)",
            )
            .help("move the declaration to program scope");
            return;
        };
        self.enter_type_scope();
        self.item(item);
    }

    /// Enter the body's own scope for the types and aliases it declares
    /// (once per body; left when the body ends).
    fn enter_type_scope(&mut self) {
        let first_decl = self.decls.len();
        let fs = self.fs.as_mut().expect("in function");
        if fs.type_scope.is_none() {
            self.temp_count += 1;
            let name: Rc<str> = Rc::from(format!("$fn{}", self.temp_count));
            fs.type_scope = Some((name.clone(), first_decl));
            self.env.scope.push(name);
        }
    }

    pub(super) fn loop_body(&mut self, body: &ast::Stmt) -> Vec<hir::Stmt> {
        self.fs.as_mut().expect("in function").loop_depth += 1;
        let b = self.scoped_stmt(body);
        self.fs.as_mut().expect("in function").loop_depth -= 1;
        b
    }

    /// A condition: scalar converted to `bool` (pointers compare with null).
    pub(crate) fn condition(&mut self, e: &ast::Expr) -> Option<hir::Expr> {
        let h = self.expr(e)?;
        self.bool_condition(h, "a condition")
    }

    pub(crate) fn bool_condition(&mut self, h: hir::Expr, what: &str) -> Option<hir::Expr> {
        match &h.ty {
            Type::Scalar(Scalar::Bool) => Some(h),
            Type::Scalar(_) | Type::Enum(_) => Some(self.convert(h, Type::BOOL)),
            Type::Pointer { .. } => {
                let span = h.span;
                let null = hir::Expr { kind: ExprKind::Zero, ty: h.ty.clone(), span };
                Some(hir::Expr {
                    kind: ExprKind::PtrCompare { op: ast::BinaryOp::Ne, lhs: Box::new(h), rhs: Box::new(null) },
                    ty: Type::BOOL,
                    span,
                })
            }
            Type::Vector { len, .. } => {
                let n = self.ty_name(&h.ty);
                self.error(h.span, format!("{what} must be a single `bool`, but this is a `{n}`"))
                    .help(format!("use `all(...)` or `any(...)` to reduce a vector of {len} conditions"));
                None
            }
            Type::Struct(_) => {
                // Contextual conversion to `bool`: the struct's `operator bool`.
                let span = h.span;
                let n = self.ty_name(&h.ty);
                match self.user_conversion(h, &Type::BOOL) {
                    Some(b) => Some(b),
                    None => {
                        self.error(span, format!("{what} must be a `bool`, but this has type `{n}`"))
                            .help(format!("give `{n}` an `operator bool()` or compare one of its members"));
                        None
                    }
                }
            }
            t => {
                let n = self.ty_name(t);
                self.error(h.span, format!("{what} must be a `bool`, but this has type `{n}`"));
                None
            }
        }
    }

    fn switch(&mut self, cond: &ast::Expr, body: &ast::Stmt, span: Span) -> Option<hir::Stmt> {
        let c = self.expr(cond)?;
        let c = match &c.ty {
            Type::Scalar(s) if s.is_integer() || *s == Scalar::Bool => c,
            Type::Enum(_) => c,
            t => {
                let n = self.ty_name(t);
                self.error(cond.span, format!("`switch` needs an integer or enum value, not `{n}`"));
                return None;
            }
        };
        let stmts: &[ast::Stmt] = match &body.kind {
            StmtKind::Block(b) => &b.stmts,
            _ => std::slice::from_ref(body),
        };
        self.fs.as_mut().expect("in function").switch_depth += 1;
        self.push_scope();
        let mut cases: Vec<hir::SwitchCase> = Vec::new();
        let mut seen: Vec<(i64, Span)> = Vec::new();
        let mut has_default = false;
        for s in stmts {
            match &s.kind {
                StmtKind::Case(e) => {
                    let Some(h) = self.expr(e) else { continue };
                    let Some(v) = self.const_value(&h) else {
                        self.not_constant(e.span, "a `case` value must be a compile-time constant", &h);
                        continue;
                    };
                    let v = v.as_i64();
                    if let Some((_, prev)) = seen.iter().find(|(x, _)| *x == v) {
                        let prev = *prev;
                        self.error(e.span, format!("duplicate `case {v}`")).secondary(prev, "first used here");
                        continue;
                    }
                    seen.push((v, e.span));
                    match cases.last_mut() {
                        // Adjacent labels share one body.
                        Some(last) if last.body.is_empty() => last.values.push(v),
                        _ => cases.push(hir::SwitchCase { values: vec![v], is_default: false, body: Vec::new() }),
                    }
                }
                StmtKind::Default => {
                    if has_default {
                        self.error(s.span, "more than one `default` label in this `switch`");
                    }
                    has_default = true;
                    match cases.last_mut() {
                        Some(last) if last.body.is_empty() => last.is_default = true,
                        _ => cases.push(hir::SwitchCase { values: Vec::new(), is_default: true, body: Vec::new() }),
                    }
                }
                _ => {
                    let mut out = Vec::new();
                    self.stmt(s, &mut out);
                    match cases.last_mut() {
                        Some(last) => last.body.extend(out),
                        None => {
                            if !out.is_empty() {
                                self.warn(s.span, "this statement is before any `case` label and never runs");
                            }
                        }
                    }
                }
            }
        }
        self.pop_scope();
        self.fs.as_mut().expect("in function").switch_depth -= 1;
        Some(hir::Stmt { kind: hir::StmtKind::Switch { cond: c, cases }, span })
    }

    // ----- locals ----------------------------------------------------------

    /// The type of `auto x = e;` (also `const auto&`, `auto*`, `device
    /// auto&`): `auto` stands for `e`'s type; a reference without an address
    /// space takes the one `e` lives in.
    fn auto_type(&mut self, v: &ast::VarDecl) -> Option<super::typeexpr::QualType> {
        let init = match &v.init {
            Some(ast::Init::Assign(e)) if !matches!(e.kind, ast::ExprKind::InitList(_)) => e,
            Some(ast::Init::Paren(es, _) | ast::Init::Brace(es, _)) if es.len() == 1 => &es[0],
            _ => {
                self.error(v.span, format!("`auto` needs an initializer to take its type from: `auto {} = value;`", v.name.name));
                return None;
            }
        };
        let trial = self.trial();
        let h = self.expr(init);
        drop(trial);
        let h = match h {
            Some(h) => h,
            None => {
                // Report the initializer's own errors once.
                self.expr(init);
                return None;
            }
        };
        let (place_space, place_const) = if h.is_place() { self.place_info(&h) } else { (AddressSpace::Thread, false) };
        let mut pointer_space = None;
        let deduced = match (&h.ty, &v.ty.kind) {
            (Type::Array { elem, .. }, ast::TypeExprKind::Named { .. }) => {
                Type::Pointer { pointee: elem.clone(), space: place_space, is_const: false }
            }
            (Type::Pointer { pointee, space, .. }, ast::TypeExprKind::Pointer { .. }) => {
                pointer_space = Some(*space);
                (**pointee).clone()
            }
            (t, _) => t.clone(),
        };
        let mut env = self.env.clone();
        let mut targs = (*env.targs).clone();
        targs.insert(Rc::from("auto"), super::TArg::Type(deduced));
        env.targs = Rc::new(targs);
        let q = self.with_env(env).resolve_type(&v.ty);
        let mut q = q?;
        match (&mut q.ty, &v.ty.kind) {
            (Type::Reference { space, .. }, ast::TypeExprKind::Reference { referee: inner })
            | (Type::Pointer { space, .. }, ast::TypeExprKind::Pointer { pointee: inner, .. })
                if matches!(&inner.kind, ast::TypeExprKind::Named { addr_space: None, .. }) =>
            {
                *space = pointer_space.unwrap_or(place_space);
            }
            _ => {}
        }
        // `auto&` keeps the referent's constness, as C++ deduces `const T`
        // from a const lvalue (`constant auto& s = params.sizes;`).
        if let Type::Reference { is_const, space, .. } = &mut q.ty {
            *is_const |= place_const || *space == AddressSpace::Constant;
        }
        Some(q)
    }

    /// Declare a local whose declaration failed, so that its uses don't
    /// cascade into errors.
    fn declare_poisoned(&mut self, name: &ast::Ident) {
        if let Some(id) = self.declare_local(name, Type::Void, AddressSpace::Thread, false) {
            self.fs.as_mut().expect("in function").poisoned.insert(id);
        }
    }

    fn local_decl(&mut self, v: &ast::VarDecl) -> Option<hir::Stmt> {
        let q = if mentions_auto(&v.ty) { self.auto_type(v) } else { self.resolve_type(&v.ty) };
        let Some(q) = q else {
            self.declare_poisoned(&v.name);
            return None;
        };
        let is_const = q.is_const || v.is_constexpr;
        let space = match q.space {
            None | Some(AddressSpace::Thread) => AddressSpace::Thread,
            Some(AddressSpace::Threadgroup) => AddressSpace::Threadgroup,
            Some(AddressSpace::Constant) if v.init.is_some() => AddressSpace::Thread,
            Some(s) => {
                let n = self.ty_name(&q.ty);
                self.error(v.span, format!("a local variable cannot be declared in the `{}` address space", s.keyword()))
                    .label(format!("`{}` memory is only reachable through buffer pointers", s.keyword()))
                    .help(format!(
                        "declare `{n} {}` without `{}` (it then lives in thread memory), or make it a pointer: `{} {n}* p = ...`",
                        v.name.name,
                        s.keyword(),
                        s.keyword()
                    ));
                return None;
            }
        };
        let mut ty = q.ty.clone();
        if ty == Type::Void {
            self.error(v.span, "a variable cannot have type `void`");
            return None;
        }
        // Naming `simdgroup_matrix<bool, 8, 8>` (in a typedef) is fine; an
        // object of it is not (Metal only has float, half and bfloat ones).
        let mut inner = &ty;
        while let Type::Array { elem, .. } = inner {
            inner = elem;
        }
        if let Type::SimdMatrix { elem, .. } = inner {
            if !matches!(elem, crate::types::Scalar::Float | crate::types::Scalar::Half | crate::types::Scalar::BFloat) {
                self.error(v.ty.span, "SIMD-group matrices are 8x8 of float, half or bfloat");
                return None;
            }
        }
        let init = match (&v.init, space) {
            (Some(_), AddressSpace::Threadgroup) => {
                self.threadgroup_init_warning(v.span, "initializer");
                None
            }
            (Some(init), _) => {
                if let Type::Reference { referee, space: rs, is_const: rc } = &ty {
                    let target = Type::Pointer { pointee: referee.clone(), space: *rs, is_const: *rc };
                    let h = self.reference_init(init, referee, *rs, *rc, v.span)?;
                    ty = target;
                    Some(h)
                } else {
                    match self.initializer_fixing_len(init, &mut ty, v.span) {
                        Some(h) => Some(h),
                        None => {
                            // Keep the name declared so later uses don't cascade.
                            self.declare_local(&v.name, ty, space, is_const);
                            return None;
                        }
                    }
                }
            }
            (None, _) => {
                if is_const && space == AddressSpace::Thread {
                    self.error(v.span, format!("`{}` is declared `const` but has no value", v.name.name))
                        .help("give it a value where it is declared");
                    return None;
                }
                if matches!(ty, Type::Reference { .. }) {
                    self.error(v.span, "a reference must be initialized");
                    return None;
                }
                if let Some(sid) = self.has_ref_member(&ty).filter(|&s| !self.has_constructors(s)) {
                    self.check_refs_bound(sid, 0, v.span);
                    self.declare_poisoned(&v.name);
                    return None;
                }
                if matches!(ty, Type::Array { len: 0, .. }) {
                    self.error(v.span, "an array without a size needs an initializer list to count its elements");
                    return None;
                }
                // `S s;` runs S's default constructor when it declares one,
                // and its default member initializers (also for arrays of S).
                if self.needs_member_init(&ty) {
                    if space == AddressSpace::Threadgroup {
                        self.threadgroup_init_warning(v.span, "default member initialization");
                        None
                    } else {
                        Some(self.default_init(&ty.clone(), v.span)?)
                    }
                } else {
                    None
                }
            }
        };
        if space == AddressSpace::Threadgroup {
            let fs = self.fs.as_ref().expect("in function");
            let _ = fs;
            if matches!(ty, Type::Pointer { .. }) {
                // `threadgroup float* p` is a thread-space pointer to threadgroup memory;
                // the parser puts the space on the pointee, so this is rare.
            }
        }
        let is_ref = matches!(&v.ty.kind, ast::TypeExprKind::Reference { .. });
        let constant = match (&init, is_const, is_ref) {
            (Some(h), true, false) if ty.is_scalar() => self.const_value(h).map(|v| (v, crate::check::fold::fold_known(self, h).is_none())),
            _ => None,
        };
        let id = self.declare_local(&v.name, ty, space, is_const)?;
        if let Some((c, stand_in)) = constant {
            let fs = self.fs.as_mut().expect("in function");
            fs.const_locals.insert(id, c);
            if stand_in {
                fs.stand_in_locals.insert(id);
            }
        }
        if is_ref {
            self.ref_locals_insert(id);
        }
        Some(hir::Stmt { kind: hir::StmtKind::Local { local: id, init }, span: v.span })
    }

    /// A threadgroup variable is one object for the whole threadgroup.
    /// Metal's compiler accepts an initializer on it (MLX's layer_norm has
    /// `threadgroup float buf[32] = {0};`), but gives it no meaning: the
    /// specification says nothing of which thread would run it, or when, and
    /// on Apple GPUs such an initializer does not fill the memory (WebKit's
    /// WGSL compiler had to add explicit stores for this reason). So it is not
    /// applied here either, and reads before a write are reported.
    fn threadgroup_init_warning(&self, span: Span, what: &str) {
        self.warn(span, format!("the {what} of a threadgroup variable is not applied: Metal does not initialize threadgroup memory"))
            .note("the memory starts uninitialized, on a GPU as here; reading it before a thread writes it is reported")
            .help("have the threads write it (e.g. each thread one element), then call `threadgroup_barrier(mem_flags::mem_threadgroup)`");
    }

    /// Add a local to the current scope, rejecting redefinitions.
    pub(crate) fn declare_local(&mut self, name: &ast::Ident, ty: Type, space: AddressSpace, is_const: bool) -> Option<LocalId> {
        let fs = self.fs.as_mut().expect("in function");
        if let Some(prev) = fs.scopes.last().expect("scope").find(&name.name) {
            let prev_span = fs.locals[prev.0 as usize].span;
            self.error(name.span, format!("redefinition of `{}` in the same scope", name.name))
                .secondary(prev_span, "previously declared here")
                .help("use a different name, or assign to the existing variable without repeating its type");
            return None;
        }
        let id = LocalId(fs.locals.len() as u32);
        let origin = super::origin_of(&name.name);
        fs.locals.push(hir::Local { name: name.name.to_string(), ty, space, is_const, span: name.span, origin, is_ref: false });
        fs.scopes.last_mut().expect("scope").push(name.name.clone(), id);
        Some(id)
    }

    /// A hidden local for temporaries (constructor results, rvalue `this`).
    pub(crate) fn temp_local(&mut self, ty: Type, span: Span) -> Option<LocalId> {
        self.temp_count += 1;
        if self.fs.is_none() && self.unevaluated > 0 {
            // Inside `decltype(…)` at program scope only the type matters:
            // the expression is never lowered, so no storage is needed.
            return Some(LocalId(0));
        }
        let Some(fs) = self.fs.as_mut() else {
            self.error(
                span,
                "this needs a temporary object, and at program scope (outside any function) the simulator cannot create one yet",
            )
            .help("move the expression into a function, or build the value without a constructor call");
            return None;
        };
        let id = LocalId(fs.locals.len() as u32);
        fs.locals.push(hir::Local {
            name: format!("$tmp{}", self.temp_count),
            ty,
            space: AddressSpace::Thread,
            is_const: false,
            span,
            origin: hir::LocalOrigin::Compiler,
            is_ref: false,
        });
        Some(id)
    }

    fn reference_init(&mut self, init: &ast::Init, referee: &Type, space: AddressSpace, is_const: bool, span: Span) -> Option<hir::Expr> {
        let ast::Init::Assign(e) = init else {
            self.error(span, "initialize a reference with `= variable`");
            return None;
        };
        self.bind_reference(e, referee, space, is_const)
    }

    /// Initializer for a variable of type `ty`; fills in the length of `T x[]`.
    pub(crate) fn initializer_fixing_len(&mut self, init: &ast::Init, ty: &mut Type, span: Span) -> Option<hir::Expr> {
        if let (Type::Array { elem, len: 0 }, Some(items)) = (&*ty, init_items(init)) {
            // Pack expansions (`{first, T(rest)...}`) count their elements.
            let elem = elem.clone();
            let n = self.expand_exprs(items)?.len();
            *ty = Type::Array { elem, len: n.max(1) as u32 };
        }
        let t = ty.clone();
        self.initializer(init, &t, span)
    }

    pub(crate) fn initializer(&mut self, init: &ast::Init, ty: &Type, span: Span) -> Option<hir::Expr> {
        match init {
            ast::Init::Assign(e) => self.coerce_ast(e, ty, "the initializer"),
            ast::Init::Brace(items, bspan) => self.list_init(items, ty, *bspan),
            ast::Init::Paren(args, pspan) => {
                let _ = span;
                self.construct(ty, args, *pspan, false)
            }
        }
    }
}

fn init_items(init: &ast::Init) -> Option<&[ast::Expr]> {
    match init {
        ast::Init::Brace(items, _) => Some(items),
        ast::Init::Assign(ast::Expr { kind: ast::ExprKind::InitList(items), .. }) => Some(items),
        _ => None,
    }
}

/// Whether a declared type is (built on) `auto`.
fn mentions_auto(t: &ast::TypeExpr) -> bool {
    match &t.kind {
        ast::TypeExprKind::Named { path, .. } => path.segments.len() == 1 && &*path.segments[0].ident.name == "auto",
        ast::TypeExprKind::Reference { referee } => mentions_auto(referee),
        ast::TypeExprKind::Pointer { pointee, .. } => mentions_auto(pointee),
        _ => false,
    }
}

/// The expression under implicit conversions.
fn strip_convert(e: &hir::Expr) -> &hir::Expr {
    match &e.kind {
        ExprKind::Convert(x) => strip_convert(x),
        _ => e,
    }
}
