//! Statements and blocks.

use super::*;

impl<'a> Parser<'a> {
    // ----- statements -----

    pub(super) fn parse_block(&mut self) -> Block {
        let open = self.tok(0).span;
        if !self.expect(Punct::LBrace) {
            return Block { stmts: vec![], span: open };
        }
        self.push_scope(false);
        let mut stmts = Vec::new();
        while !self.at(Punct::RBrace) && !self.at_eof() {
            let before = self.pos;
            if let Some(s) = self.parse_stmt() {
                stmts.push(s);
            }
            if self.pos == before {
                self.bump();
            }
        }
        self.pop_scope();
        self.expect_close(Punct::RBrace, open);
        Block { stmts, span: open.to(self.prev_span()) }
    }

    pub(super) fn parse_stmt(&mut self) -> Option<Stmt> {
        let sp = self.tok(0).span;
        if !self.enter() {
            return None;
        }
        // Statements hold no enclosing expression: chains count afresh.
        self.chain = 0;
        let was_silent = self.silent;
        let s = self.parse_stmt_inner();
        if self.silent && !was_silent && !self.too_deep {
            self.sync_stmt();
        }
        self.leave();
        Some(Stmt { kind: s, span: sp.to(self.prev_span()) })
    }

    pub(super) fn sub_stmt(&mut self) -> Box<Stmt> {
        let sp = self.tok(0).span;
        Box::new(self.parse_stmt().unwrap_or(Stmt { kind: StmtKind::Empty, span: sp }))
    }

    pub(super) fn paren_cond(&mut self) -> Expr {
        let lp = self.tok(0).span;
        if !self.expect(Punct::LParen) {
            return error_expr(lp);
        }
        let e = self.parse_expr();
        if !self.expect_close(Punct::RParen, lp) && self.at(Punct::LBrace) && self.tentative == 0 {
            // `if (x > 1 {`: the body is fine; keep parsing normally.
            self.silent = false;
        }
        e
    }

    pub(super) fn parse_stmt_inner(&mut self) -> StmtKind {
        let t = self.tok(0).clone();
        if t.is_punct(Punct::LBrace) {
            return StmtKind::Block(self.parse_block());
        }
        if t.is_punct(Punct::Semi) {
            self.bump();
            return StmtKind::Empty;
        }
        if self.at_attr() {
            // `[[fallthrough]];`, `[[likely]] stmt`, `[[maybe_unused]] int x;`:
            // hints that change nothing the simulator computes.
            let mut attrs = Vec::new();
            while self.at_attr() {
                self.parse_attr_list(&mut attrs);
            }
            return self.parse_stmt_inner();
        }
        let name = t.ident().unwrap_or("");
        match name {
            "if" => {
                self.bump();
                let is_constexpr = self.eat_kw("constexpr");
                let cond = self.paren_cond();
                let then = self.sub_stmt();
                let els = if self.eat_kw("else") { Some(self.sub_stmt()) } else { None };
                return StmtKind::If { cond: Box::new(cond), then, els, is_constexpr };
            }
            "while" => {
                self.bump();
                let cond = self.paren_cond();
                let body = self.sub_stmt();
                return StmtKind::While { cond: Box::new(cond), body };
            }
            "do" => {
                self.bump();
                let body = self.sub_stmt();
                if !self.eat_kw("while") {
                    self.error_here("`while` after the body of `do`");
                    return StmtKind::DoWhile { body, cond: Box::new(error_expr(t.span)) };
                }
                let cond = self.paren_cond();
                self.expect_semi("`do`/`while` statement");
                return StmtKind::DoWhile { body, cond: Box::new(cond) };
            }
            "for" => return self.parse_for(),
            "switch" => {
                self.bump();
                let cond = self.paren_cond();
                let body = self.sub_stmt();
                return StmtKind::Switch { cond: Box::new(cond), body };
            }
            "case" => {
                self.bump();
                let e = self.parse_expr();
                self.expect(Punct::Colon);
                return StmtKind::Case(e);
            }
            "default" if self.at_n(1, Punct::Colon) => {
                self.bump();
                self.bump();
                return StmtKind::Default;
            }
            "break" => {
                self.bump();
                self.expect_semi("`break`");
                return StmtKind::Break;
            }
            "continue" => {
                self.bump();
                self.expect_semi("`continue`");
                return StmtKind::Continue;
            }
            "return" => {
                self.bump();
                let e = if self.at(Punct::Semi) {
                    None
                } else if self.at(Punct::LBrace) {
                    Some(self.parse_init_list())
                } else {
                    Some(self.parse_expr())
                };
                self.expect_semi("return statement");
                return StmtKind::Return(e);
            }
            "static_assert" => {
                let (cond, message) = self.parse_static_assert();
                return StmtKind::StaticAssert { cond, message };
            }
            // `using namespace mlx::steel;` changes nothing lookup needs.
            "using" if self.tok(1).is_ident("namespace") => {
                while !self.at(Punct::Semi) && !self.at_eof() {
                    self.bump();
                }
                self.expect_semi("using directive");
                return StmtKind::Empty;
            }
            "typedef"
                if (self.tok(1).is_ident("struct") || self.tok(1).is_ident("union"))
                    && (self.at_n(2, Punct::LBrace) || self.at_n(3, Punct::LBrace)) =>
            {
                return self.parse_local_type(true);
            }
            "struct" | "class" | "union" | "enum"
                if self.at_n(1, Punct::LBrace)
                    || self.tok(1).ident().is_some_and(|n| !Self::is_reserved(n) && n != "class")
                        && (self.at_n(2, Punct::LBrace) || self.at_n(2, Punct::Colon) && name != "enum") =>
            {
                return self.parse_local_type(false);
            }
            "using" | "typedef" if !(name == "using" && self.tok(1).is_ident("namespace")) => {
                return match self.parse_alias() {
                    Some(a) => StmtKind::Alias(a),
                    None => StmtKind::Empty,
                };
            }
            "struct" | "class" | "enum"
                if self.tok(1).ident().is_some_and(|n| !Self::is_reserved(n))
                    && !self.at_n(2, Punct::LBrace)
                    && !self.at_n(2, Punct::Colon) =>
            {
                let decls = self.parse_var_decl_list(false);
                self.expect_semi("declaration");
                return StmtKind::Decl(decls);
            }
            "struct" | "class" | "union" | "enum" | "namespace" | "template" => {
                self.report(
                    Diagnostic::error(
                        t.span,
                        format!("this `{name}` declaration inside a function is not supported by this simulator yet"),
                    )
                    .help("move the declaration to program scope"),
                );
                return StmtKind::Empty;
            }
            _ => {}
        }
        if let Some(msg) = unsupported_keyword(name) {
            self.report(Diagnostic::error(t.span, msg).label("not supported"));
            return StmtKind::Empty;
        }
        if self.stmt_is_decl() {
            let decls = self.parse_var_decl_list(false);
            self.expect_semi("declaration");
            return StmtKind::Decl(decls);
        }
        let e = self.parse_expr();
        self.expect_semi("expression");
        StmtKind::Expr(e)
    }

    /// Decide whether the statement here is a declaration (tentatively
    /// parsing a type followed by a declarator name).
    pub(super) fn stmt_is_decl(&mut self) -> bool {
        let t = self.tok(0);
        if let Some(n) = t.ident() {
            if matches!(n, "const" | "volatile" | "constexpr" | "static" | "typename" | "__attribute__") || addr_space_of(n).is_some() {
                return true;
            }
            // `Foo x` with an unknown `Foo`: still a declaration.
            if !Self::is_reserved(n) {
                if let Some(n2) = self.tok(1).ident() {
                    if !Self::is_reserved(n2) || addr_space_of(n2).is_some() || n2 == "const" {
                        return true;
                    }
                }
            }
        }
        if !self.at_type_start() {
            return false;
        }
        let st = self.save();
        let ok = self
            .attempt(|p| {
                let ty = p.parse_base_type(&mut None);
                let _ = p.parse_ptr_ops(ty);
                if !p.at_fn_ptr_declarator(true) && p.tok(0).ident().is_none_or(Self::is_reserved) {
                    p.tentative_failed = true;
                }
            })
            .is_some();
        self.restore(st);
        ok
    }

    pub(super) fn parse_for(&mut self) -> StmtKind {
        let kw = self.bump();
        let lp = self.tok(0).span;
        if !self.expect(Punct::LParen) {
            return StmtKind::Empty;
        }
        self.push_scope(false);
        let init = if self.at(Punct::Semi) {
            self.bump();
            None
        } else {
            let sp = self.tok(0).span;
            let kind = if self.stmt_is_decl() {
                let mut d = self.parse_var_decl_list(false);
                if self.at(Punct::Colon) {
                    return self.parse_range_for(lp, d.pop().filter(|v| d.is_empty() && v.init.is_none()));
                }
                StmtKind::Decl(d)
            } else {
                StmtKind::Expr(self.parse_expr())
            };
            self.expect(Punct::Semi);
            Some(Box::new(Stmt { kind, span: sp.to(self.prev_span()) }))
        };
        let cond = if self.at(Punct::Semi) { None } else { Some(self.parse_expr()) };
        self.expect(Punct::Semi);
        let step = if self.at(Punct::RParen) { None } else { Some(self.parse_expr()) };
        self.expect_close(Punct::RParen, lp);
        let body = self.sub_stmt();
        self.pop_scope();
        let _ = kw;
        StmtKind::For { init, cond, step, body }
    }

    /// The rest of `for (decl : range) body` from the `:`; `var` is the
    /// declaration before it when it is a single one without initializer.
    pub(super) fn parse_range_for(&mut self, lp: Span, var: Option<VarDecl>) -> StmtKind {
        let colon = self.bump();
        if var.is_none() {
            self.report(Diagnostic::error(colon, "a range-based `for` declares one variable without a value before the `:`"));
        }
        // A braced list (`std::initializer_list`) is a range too.
        let range = if self.at(Punct::LBrace) { self.parse_init_list() } else { self.parse_expr() };
        let range = Some(range);
        self.expect_close(Punct::RParen, lp);
        let body = self.sub_stmt();
        self.pop_scope();
        match (var, range) {
            (Some(var), Some(range)) => StmtKind::RangeFor { var: Box::new(var), range, body },
            _ => StmtKind::Empty,
        }
    }

    pub(super) fn parse_static_assert(&mut self) -> (Expr, Option<Rc<str>>) {
        let kw = self.bump();
        let lp = self.tok(0).span;
        if !self.expect(Punct::LParen) {
            return (error_expr(kw), None);
        }
        let cond = self.parse_assign();
        let mut message = None;
        if self.eat(Punct::Comma) {
            let mut s = String::new();
            let mut any = false;
            while let TokenKind::Str(m) = &self.tok(0).kind {
                s.push_str(m);
                any = true;
                self.bump();
            }
            if !any {
                self.error_here("a string literal");
            }
            message = Some(Rc::from(s));
        }
        self.expect_close(Punct::RParen, lp);
        self.expect_semi("`static_assert`");
        (cond, message)
    }

    /// `using X = T;` or `typedef T X;` (consumes the `;`).
    /// C's `typedef struct [Tag] { ... } Name;`: the struct, plus an alias
    /// when it has a tag of its own.
    pub(super) fn parse_typedef_struct(&mut self) -> Option<ItemKind> {
        let start = self.bump();
        // The typedef name follows the matching `}`.
        let st = self.save();
        self.bump();
        if self.tok(0).ident().is_some() {
            self.bump();
        }
        self.skip_balanced();
        let name = self.tok(0).ident().map(|n| Ident { name: Rc::from(n), span: self.tok(0).span });
        self.restore(st);
        let Some(name) = name else {
            self.error_here("`struct {` ... `} name;`");
            return None;
        };
        self.declare_type(&name.name);
        let s = self.parse_struct_named(Vec::new(), Some(name.clone()))?;
        self.bump();
        self.expect_semi("typedef");
        if s.name.name == name.name {
            return Some(ItemKind::Struct(s));
        }
        let tag = s.name.clone();
        let path = Path { global: false, segments: vec![PathSegment { ident: tag, template_args: None }], span: name.span };
        let ty = TypeExpr { kind: TypeExprKind::Named { path, is_const: false, is_volatile: false, addr_space: None }, span: name.span };
        let alias = TypeAlias { name: name.clone(), ty, fn_params: None, span: start.to(self.prev_span()) };
        let items = vec![
            Item { kind: ItemKind::Struct(s), span: start.to(self.prev_span()) },
            Item { kind: ItemKind::Alias(alias), span: start.to(self.prev_span()) },
        ];
        Some(ItemKind::Namespace { name: None, items })
    }

    /// `using Name = union { ... };`: the unnamed struct or union takes the
    /// alias's name, as C++ gives it for linkage.
    pub(super) fn parse_using_record(&mut self) -> Option<ItemKind> {
        self.bump(); // using
        let name = Ident { name: self.tok(0).ident().map(Rc::<str>::from)?, span: self.tok(0).span };
        self.bump();
        self.bump(); // =
        self.declare_type(&name.name);
        let s = self.parse_struct_named(Vec::new(), Some(name))?;
        self.expect_semi("alias declaration");
        Some(ItemKind::Struct(s))
    }

    pub(super) fn parse_alias(&mut self) -> Option<TypeAlias> {
        let start = self.tok(0).span;
        if self.eat_kw("using") {
            let Some(name) = self.tok(0).ident().map(Rc::<str>::from) else {
                self.error_here("a name");
                return None;
            };
            let nsp = self.bump();
            self.expect(Punct::Eq);
            let ty = self.parse_type();
            // `using F = void(int);`: a function type.
            let fn_params = if self.at(Punct::LParen) { Some(self.parse_params()) } else { None };
            self.expect_semi("alias declaration");
            self.declare_type(&name);
            return Some(TypeAlias { name: Ident { name, span: nsp }, ty, fn_params, span: start.to(self.prev_span()) });
        }
        self.bump(); // typedef
        let base = self.parse_base_type(&mut None);
        let ty = self.parse_ptr_ops(base);
        if self.at_fn_ptr_declarator(true) {
            let (ty, name) = self.parse_fn_ptr_declarator(ty);
            let name = name?;
            self.expect_semi("typedef");
            self.declare_type(&name.name);
            return Some(TypeAlias { name, ty, fn_params: None, span: start.to(self.prev_span()) });
        }
        // `typedef void (name)(params);`: a function type with its name in
        // parentheses.
        let parenthesized =
            self.at(Punct::LParen) && self.tok(1).ident().is_some() && self.at_n(2, Punct::RParen) && self.at_n(3, Punct::LParen);
        if parenthesized {
            self.bump();
        }
        let Some(name) = self.tok(0).ident().map(Rc::<str>::from) else {
            self.error_here("a name for the typedef");
            return None;
        };
        let nsp = self.bump();
        if parenthesized {
            self.bump();
        }
        // `typedef void name(params);` or the parenthesized form.
        if self.at(Punct::LParen) {
            let fn_params = Some(self.parse_params());
            self.expect_semi("typedef");
            self.declare_type(&name);
            return Some(TypeAlias { name: Ident { name, span: nsp }, ty, fn_params, span: start.to(self.prev_span()) });
        }
        let ty = self.parse_array_dims(ty);
        self.expect_semi("typedef");
        self.declare_type(&name);
        Some(TypeAlias { name: Ident { name, span: nsp }, ty, fn_params: None, span: start.to(self.prev_span()) })
    }

    /// Specifiers and a comma-separated list of declarators with
    /// initialisers (no `;`).
    pub(super) fn parse_var_decl_list(&mut self, _program_scope: bool) -> Vec<VarDecl> {
        let specs = self.parse_specs();
        self.parse_declarators(&specs, None)
    }

    /// Declarators after `specs`; `first` is an already-parsed first
    /// declarator (type with pointer ops, name).
    /// `[[…]]` and `__attribute__((…))` after a declarator's name.
    fn declarator_attrs(&mut self, attrs: &mut Vec<Attribute>) {
        loop {
            if self.at_attr() {
                self.parse_attr_list(attrs);
            } else if self.at_kw("__attribute__") {
                self.parse_gnu_attribute(attrs);
            } else {
                return;
            }
        }
    }

    pub(super) fn parse_declarators(&mut self, specs: &Specs, first: Option<(TypeExpr, Ident)>) -> Vec<VarDecl> {
        let mut out = Vec::new();
        let mut first = first;
        loop {
            let start = self.tok(0).span;
            let (ty, name) = match first.take() {
                Some(f) => f,
                None => {
                    let ty = self.parse_ptr_ops(specs.ty.clone());
                    if self.at_fn_ptr_declarator(true) {
                        let (ty, name) = self.parse_fn_ptr_declarator(ty);
                        let Some(name) = name else { return out };
                        (ty, name)
                    } else {
                        let Some(n) = self.tok(0).ident().map(Rc::<str>::from) else {
                            self.error_here("a variable name");
                            return out;
                        };
                        if Self::is_reserved(&n) {
                            self.error_here("a variable name");
                            return out;
                        }
                        let nsp = self.bump();
                        (ty, Ident { name: n, span: nsp })
                    }
                }
            };
            let mut attrs = specs.attrs.clone();
            self.declarator_attrs(&mut attrs);
            let ty = self.parse_array_dims(ty);
            self.declarator_attrs(&mut attrs);
            let init = self.parse_initializer();
            let span = specs.span.to(start).to(self.prev_span());
            out.push(VarDecl {
                name,
                ty,
                init,
                attrs,
                is_constexpr: specs.is_constexpr,
                is_static: specs.is_static,
                specialization: None,
                owner: None,
                span,
            });
            if self.too_deep || !self.eat(Punct::Comma) {
                break;
            }
        }
        out
    }

    pub(super) fn parse_initializer(&mut self) -> Option<Init> {
        if self.eat(Punct::Eq) {
            let e = if self.at(Punct::LBrace) { self.parse_init_list() } else { self.parse_assign() };
            return Some(Init::Assign(e));
        }
        if self.at(Punct::LParen) || self.at(Punct::LBrace) {
            let braces = self.at(Punct::LBrace);
            let open = self.bump();
            let args = self.parse_args(if braces { Punct::RBrace } else { Punct::RParen }, open);
            let span = open.to(self.prev_span());
            return Some(if braces { Init::Brace(args, span) } else { Init::Paren(args, span) });
        }
        None
    }
}
