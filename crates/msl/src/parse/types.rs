//! Types: type names, qualifiers, declarators, template argument lists.

use super::*;

impl<'a> Parser<'a> {
    // ----- types -----

    /// A path: `a`, `::a::b`, `numeric_limits<float>::max`.
    pub(super) fn parse_path(&mut self) -> Path {
        let start = self.tok(0).span;
        let global = self.eat(Punct::ColonColon);
        let mut segments = Vec::new();
        loop {
            let Some(name) = self.tok(0).ident().map(Rc::<str>::from) else {
                self.error_here("a name");
                break;
            };
            if let Some(msg) = unsupported_keyword(&name) {
                let sp = self.tok(0).span;
                self.report(Diagnostic::error(sp, msg));
                break;
            }
            let sp = self.bump();
            if segments.is_empty() && self.at(Punct::ColonColon) {
                if let Some(target) = self.namespace_aliases.get(&name) {
                    segments.extend(target.iter().cloned().map(|mut s| {
                        s.ident.span = sp;
                        s
                    }));
                    self.bump();
                    continue;
                }
            }
            let template_args = if self.at(Punct::Lt) && (self.is_template(&name) || self.template_args_follow()) {
                Some(self.parse_template_args())
            } else {
                None
            };
            // A built-in type name is never a scope: in `void ::ns::f<T>(…)`
            // (an explicit instantiation of a qualified template) the `::`
            // starts the next name.
            let is_scope = !(template_args.is_none() && is_builtin_type(&name));
            segments.push(PathSegment { ident: Ident { name, span: sp }, template_args });
            if is_scope && self.at(Punct::ColonColon) && (self.tok(1).ident().is_some()) {
                self.bump();
                self.eat_kw("template");
                continue;
            }
            break;
        }
        if segments.is_empty() {
            segments.push(PathSegment { ident: ident("<error>", start), template_args: None });
        }
        Path { global, segments, span: start.to(self.prev_span()) }
    }

    /// `<args>` after a template name; the current token is `<`.
    pub(super) fn parse_template_args(&mut self) -> Vec<TemplateArg> {
        let open = self.bump();
        let mut args = Vec::new();
        // Each level may be read up to three ways (type, base type, name), so
        // deep nesting must stop early to keep parsing fast.
        if self.template_depth >= MAX_TEMPLATE_NESTING {
            self.report(Diagnostic::error(open, format!("template arguments are nested more than {MAX_TEMPLATE_NESTING} deep")));
            return args;
        }
        if !self.enter() {
            return args;
        }
        self.template_depth += 1;
        self.no_gt += 1;
        loop {
            if self.at_gt_like() || self.at_eof() {
                break;
            }
            let before = self.pos;
            // A position where the type reading failed once fails again:
            // remembering it keeps nested `a<b<c<...` linear, not exponential.
            let could_be_type = (self.tok(0).ident().is_some() || self.at(Punct::ColonColon)) && !self.not_a_type_arg.contains(&self.pos);
            let ty = if could_be_type {
                let at = self.pos;
                let t = self.attempt(|p| {
                    let t = p.parse_type();
                    if !(p.at(Punct::Comma) || p.at_gt_like() || p.at(Punct::Ellipsis)) || !p.names_a_type(&t) {
                        p.tentative_failed = true;
                    }
                    t
                });
                if t.is_none() {
                    self.not_a_type_arg.insert(at);
                }
                t
            } else {
                None
            };
            let arg = match ty {
                Some(t) => TemplateArg::Type(t),
                None => TemplateArg::Expr(self.parse_assign()),
            };
            if self.eat(Punct::Ellipsis) {
                args.push(TemplateArg::Pack(Box::new(arg)));
            } else {
                args.push(arg);
            }
            if !self.eat(Punct::Comma) || self.pos == before {
                break;
            }
        }
        self.no_gt -= 1;
        self.template_depth -= 1;
        self.leave();
        self.expect_gt(open);
        args
    }

    /// Is the base of this parsed type a type name (not a value like `N`)?
    pub(super) fn names_a_type(&self, t: &TypeExpr) -> bool {
        match &t.kind {
            TypeExprKind::Named { path, is_const, is_volatile, addr_space } => {
                *is_const || *is_volatile || addr_space.is_some() || self.is_type_name(&path.last().ident.name)
            }
            TypeExprKind::Decltype { .. } => true,
            TypeExprKind::Pointer { .. } | TypeExprKind::Reference { .. } | TypeExprKind::Array { .. } | TypeExprKind::Function { .. } => {
                true
            }
        }
    }

    /// `name<float ...`: a `<` followed by a type name cannot be a comparison.
    pub(super) fn template_args_follow(&mut self) -> bool {
        if !self.at(Punct::Lt) {
            return false;
        }
        let Some(n) = self.tok(1).ident() else {
            return false;
        };
        if !(self.is_type_name(n) || n == "const" || addr_space_of(n).is_some()) {
            return false;
        }
        let st = self.save();
        let args = self.attempt(|p| p.parse_template_args());
        let next_ok = matches!(
            self.tok(0).kind,
            TokenKind::Punct(Punct::LParen | Punct::ColonColon | Punct::LBrace | Punct::RParen | Punct::Semi | Punct::Comma | Punct::Gt)
        );
        self.restore(st);
        matches!(args.as_deref(), Some([TemplateArg::Type(_), ..])) && next_ok
    }

    pub(super) fn at_gt_like(&self) -> bool {
        matches!(self.tok(0).kind, TokenKind::Punct(Punct::Gt | Punct::Shr | Punct::Ge | Punct::ShrEq))
    }

    /// Consume one `>`, splitting `>>`, `>=`, `>>=`.
    pub(super) fn expect_gt(&mut self, open: Span) {
        let t = self.tok(0).clone();
        let rest = match t.kind {
            TokenKind::Punct(Punct::Gt) => {
                self.bump();
                return;
            }
            TokenKind::Punct(Punct::Shr) => Punct::Gt,
            TokenKind::Punct(Punct::Ge) => Punct::Eq,
            TokenKind::Punct(Punct::ShrEq) => Punct::Ge,
            _ => {
                let msg = format!("expected `>`, found {}", self.found());
                self.report(
                    Diagnostic::error(t.span, msg)
                        .label("expected `>` to close the template arguments")
                        .with_secondary(open, "to match this `<`"),
                );
                return;
            }
        };
        let lo = (t.span.lo + 1).min(t.span.hi);
        let mut nt = t.clone();
        nt.kind = TokenKind::Punct(rest);
        nt.span = Span::new(t.span.file, lo, t.span.hi);
        nt.line_start = false;
        nt.space_before = false;
        self.split = Some((self.pos, nt));
    }

    /// A full type without a declarator name: specifiers, base, `*`, `&`,
    /// and an abstract function pointer declarator `(*)(P1, P2)`.
    pub(super) fn parse_type(&mut self) -> TypeExpr {
        let base = self.parse_base_type(&mut None);
        let ty = self.parse_ptr_ops(base);
        if self.at_fn_ptr_declarator(false) {
            return self.parse_fn_ptr_declarator(ty).0;
        }
        ty
    }

    /// At `(*)(` (abstract) or `(*name)(` (`named`): a pointer-to-function
    /// declarator after its return type.
    pub(super) fn at_fn_ptr_declarator(&self, named: bool) -> bool {
        if !(self.at(Punct::LParen) && self.at_n(1, Punct::Star)) {
            return false;
        }
        if named {
            self.tok(2).ident().is_some_and(|n| !Self::is_reserved(n)) && self.at_n(3, Punct::RParen) && self.at_n(4, Punct::LParen)
        } else {
            self.at_n(2, Punct::RParen) && self.at_n(3, Punct::LParen)
        }
    }

    /// `(*name)(P1, P2)` or `(*)(P1, P2)` after return type `ret` (see
    /// `at_fn_ptr_declarator`): the pointer-to-function type and the name.
    pub(super) fn parse_fn_ptr_declarator(&mut self, ret: TypeExpr) -> (TypeExpr, Option<Ident>) {
        let open = self.bump();
        let star = self.bump();
        let name = self.eat_ident();
        self.expect_close(Punct::RParen, open);
        let params = if self.at(Punct::LParen) { self.parse_params() } else { Vec::new() };
        let span = ret.span.to(star).to(self.prev_span());
        let func =
            TypeExpr { kind: TypeExprKind::Function { ret: Box::new(ret), params: params.into_iter().map(|p| p.ty).collect() }, span };
        (TypeExpr { kind: TypeExprKind::Pointer { pointee: Box::new(func), is_const: false }, span }, name)
    }

    /// `*`, `* const`, `&` after a base type.
    pub(super) fn parse_ptr_ops(&mut self, mut ty: TypeExpr) -> TypeExpr {
        loop {
            if self.at(Punct::Star) {
                let sp = self.bump();
                let mut is_const = false;
                loop {
                    if self.eat_kw("const") {
                        is_const = true;
                    } else if self.eat_kw("volatile") || self.eat_kw("__restrict") || self.eat_kw("restrict") {
                    } else {
                        break;
                    }
                }
                let span = ty.span.to(sp).to(self.prev_span());
                ty = TypeExpr { kind: TypeExprKind::Pointer { pointee: Box::new(ty), is_const }, span };
            } else if self.at(Punct::Amp) {
                let sp = self.bump();
                let span = ty.span.to(sp);
                ty = TypeExpr { kind: TypeExprKind::Reference { referee: Box::new(ty) }, span };
            } else if self.at(Punct::AndAnd) {
                let sp = self.tok(0).span;
                self.report(
                    Diagnostic::error(sp, "rvalue references (`&&`) are not supported by this simulator yet")
                        .label("use `&` or pass by value"),
                );
                self.bump();
                let span = ty.span.to(sp);
                ty = TypeExpr { kind: TypeExprKind::Reference { referee: Box::new(ty) }, span };
            } else {
                return ty;
            }
        }
    }

    /// Qualifiers and the base type name. If `specs` is given, storage
    /// specifiers (`static`, `constexpr`, `inline`, `kernel`, attributes) are
    /// accepted too and recorded there.
    pub(super) fn parse_base_type(&mut self, specs: &mut Option<&mut Specs>) -> TypeExpr {
        let start = self.tok(0).span;
        let mut is_const = false;
        let mut is_volatile = false;
        let mut addr: Option<AddressSpace> = None;
        let mut base: Option<TypeExpr> = None;
        let mut decl_is_const_after = false;
        loop {
            let t = self.tok(0).clone();
            if let Some(s) = specs.as_deref_mut() {
                if self.at_attr() {
                    self.parse_attr_list(&mut s.attrs);
                    continue;
                }
                match t.ident() {
                    Some("static") => s.is_static = true,
                    Some("inline" | "__inline" | "METAL_FUNC" | "extern") => s.is_inline |= t.is_ident("inline"),
                    Some("constexpr") => s.is_constexpr = true,
                    Some("typedef") => s.is_typedef = true,
                    Some("kernel" | "vertex" | "fragment") => {
                        if t.is_ident("kernel") {
                            s.is_kernel = true;
                        }
                        s.attrs.push(Attribute { name: ident(t.ident().unwrap_or(""), t.span), args: vec![], span: t.span });
                    }
                    Some("__attribute__") => {
                        self.parse_gnu_attribute(&mut s.attrs);
                        continue;
                    }
                    // `alignas(16) float x;`: kept as an attribute for the layout.
                    Some("alignas") if self.at_n(1, Punct::LParen) => {
                        let sp = self.bump();
                        let lp = self.bump();
                        let args = self.parse_args(Punct::RParen, lp);
                        s.attrs.push(Attribute { name: ident("alignas", sp), args, span: sp.to(self.prev_span()) });
                        continue;
                    }
                    _ => {
                        if let Some(n) = t.ident() {
                            if n == "virtual" {
                                self.report(Diagnostic::error(t.span, "virtual functions are not supported in Metal"));
                                self.bump();
                                continue;
                            }
                        }
                        // fall through to the type part below
                        if self.type_word(&t, &mut is_const, &mut is_volatile, &mut addr, &mut base) {
                            if base.is_some() {
                                decl_is_const_after = true;
                            }
                            continue;
                        }
                        break;
                    }
                }
                self.bump();
                continue;
            }
            if t.is_ident("__attribute__") {
                // (no declaration to hold it: a type's attributes are hints)
                self.parse_gnu_attribute(&mut Vec::new());
                continue;
            }
            if self.type_word(&t, &mut is_const, &mut is_volatile, &mut addr, &mut base) {
                continue;
            }
            break;
        }
        let _ = decl_is_const_after;
        let Some(mut ty) = base else {
            self.error_here("a type");
            return error_type(start);
        };
        let span = start.to(self.prev_span());
        match &mut ty.kind {
            TypeExprKind::Named { is_const: c, is_volatile: v, addr_space: a, .. } => {
                *c |= is_const;
                *v |= is_volatile;
                if addr.is_some() {
                    *a = addr;
                }
            }
            TypeExprKind::Decltype { is_const: c, addr_space: a, .. } => {
                *c |= is_const;
                if addr.is_some() {
                    *a = addr;
                }
            }
            _ => {}
        }
        ty.span = span;
        ty
    }

    /// Consume one qualifier or the base type name if it is next. Returns
    /// whether something was consumed.
    pub(super) fn type_word(
        &mut self,
        t: &Token,
        is_const: &mut bool,
        is_volatile: &mut bool,
        addr: &mut Option<AddressSpace>,
        base: &mut Option<TypeExpr>,
    ) -> bool {
        let Some(name) = t.ident() else {
            if t.is_punct(Punct::ColonColon) && base.is_none() {
                let path = self.parse_path();
                *base = Some(self.named(path));
                return true;
            }
            return false;
        };
        if name == "const" {
            *is_const = true;
        } else if name == "volatile" {
            *is_volatile = true;
        } else if let Some(a) = addr_space_of(name) {
            if base.is_some() && !self.at_n(1, Punct::Star) && !self.at_n(1, Punct::Amp) {
                // `float constant` is odd but harmless; accept.
            }
            *addr = Some(a);
        } else if base.is_some() {
            return false;
        } else if self.at_coherent() {
            // `coherent(device)`, `coherent(system)`: memory coherence of a
            // buffer. The simulator's memory is always coherent.
            self.bump();
            self.skip_balanced();
            return true;
        } else if name == "typename" {
            self.bump();
            let path = self.parse_path();
            *base = Some(self.named(path));
            return true;
        } else if name == "decltype" {
            let sp = self.bump();
            let lp = self.tok(0).span;
            if !self.expect(Punct::LParen) {
                *base = Some(error_type(sp));
                return true;
            }
            let save = self.no_gt;
            self.no_gt = 0;
            let e = self.parse_expr();
            self.no_gt = save;
            self.expect_close(Punct::RParen, lp);
            *base = Some(TypeExpr {
                kind: TypeExprKind::Decltype { expr: Box::new(e), is_const: false, addr_space: None },
                span: sp.to(self.prev_span()),
            });
            return true;
        } else if matches!(name, "struct" | "class" | "enum") && self.tok(1).ident().is_some() {
            // Elaborated type specifier `struct S`.
            self.bump();
            let path = self.parse_path();
            *base = Some(self.named(path));
            return true;
        } else if INT_WORDS.contains(&name) {
            *base = Some(self.parse_int_words());
            return true;
        } else if Self::is_reserved(name) {
            return false;
        } else {
            let path = self.parse_path();
            *base = Some(self.named(path));
            return true;
        }
        self.bump();
        true
    }

    /// At the qualifier `coherent(scope)`.
    pub(super) fn at_coherent(&self) -> bool {
        self.at_kw("coherent") && self.at_n(1, Punct::LParen) && self.tok(2).ident().is_some() && self.at_n(3, Punct::RParen)
    }

    pub(super) fn named(&self, path: Path) -> TypeExpr {
        let span = path.span;
        TypeExpr { kind: TypeExprKind::Named { path, is_const: false, is_volatile: false, addr_space: None }, span }
    }

    /// `unsigned int`, `long long`, `signed char`, ... normalised to one name.
    pub(super) fn parse_int_words(&mut self) -> TypeExpr {
        let start = self.tok(0).span;
        let (mut unsigned, mut long, mut short, mut chr) = (false, 0, false, false);
        let mut any_signed = false;
        while let Some(n) = self.tok(0).ident() {
            match n {
                "unsigned" => unsigned = true,
                "signed" => any_signed = true,
                "long" => long += 1,
                "short" => short = true,
                "char" => chr = true,
                "int" => {}
                _ => break,
            }
            self.bump();
        }
        let _ = any_signed;
        let name = match (unsigned, chr, short, long > 0) {
            (true, true, _, _) => "uchar",
            (false, true, _, _) => "char",
            (true, _, true, _) => "ushort",
            (false, _, true, _) => "short",
            (true, _, _, true) => "ulong",
            (false, _, _, true) => "long",
            (true, _, _, _) => "uint",
            (false, _, _, _) => "int",
        };
        let span = start.to(self.prev_span());
        self.named(simple_path(name, span))
    }

    /// Array dimensions after a declarator name: `[4][8]`, `[]`.
    pub(super) fn parse_array_dims(&mut self, mut ty: TypeExpr) -> TypeExpr {
        let mut dims = Vec::new();
        while self.at(Punct::LBracket) && !self.at_n(1, Punct::LBracket) {
            let lb = self.bump();
            let size = if self.at(Punct::RBracket) {
                None
            } else {
                let save = self.no_gt;
                self.no_gt = 0;
                let e = self.parse_expr();
                self.no_gt = save;
                Some(Box::new(e))
            };
            self.expect_close(Punct::RBracket, lb);
            dims.push((size, lb.to(self.prev_span())));
        }
        for (size, sp) in dims.into_iter().rev() {
            let span = ty.span.to(sp);
            ty = TypeExpr { kind: TypeExprKind::Array { elem: Box::new(ty), size }, span };
        }
        ty
    }

    pub(super) fn new_specs(&self) -> Specs {
        let sp = self.tok(0).span;
        Specs {
            attrs: vec![],
            is_kernel: false,
            is_inline: false,
            is_static: false,
            is_constexpr: false,
            is_typedef: false,
            ty: error_type(sp),
            span: sp,
        }
    }

    pub(super) fn parse_specs(&mut self) -> Specs {
        let mut s = self.new_specs();
        let ty = self.parse_base_type(&mut Some(&mut s));
        s.ty = ty;
        s.span = s.span.to(self.prev_span());
        s
    }
}
