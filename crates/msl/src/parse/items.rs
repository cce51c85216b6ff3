//! Items: functions, structs, enums, templates, aliases, globals, namespaces.

use super::*;

impl<'a> Parser<'a> {
    // ----- items -----

    pub(super) fn parse_item(&mut self) -> Option<Item> {
        let start = self.tok(0).span;
        if !self.enter() {
            return None;
        }
        self.chain = 0;
        let kind = self.parse_item_kind();
        self.leave();
        kind.map(|kind| Item { kind, span: start.to(self.prev_span()) })
    }

    pub(super) fn parse_item_kind(&mut self) -> Option<ItemKind> {
        let t = self.tok(0).clone();
        if t.is_punct(Punct::Semi) {
            self.bump();
            return Some(ItemKind::Empty);
        }
        let name = t.ident().unwrap_or("");
        match name {
            "namespace" => return self.parse_namespace(),
            "extern" if matches!(&self.tok(1).kind, TokenKind::Str(_)) => return self.parse_linkage(),
            "using" if self.tok(1).is_ident("namespace") => {
                self.bump();
                self.bump();
                let p = self.parse_path();
                self.expect_semi("`using namespace`");
                return Some(ItemKind::UsingNamespace(p));
            }
            "using" if !self.at_n(2, Punct::Eq) => {
                self.bump();
                let p = self.parse_path();
                self.expect_semi("using-declaration");
                return Some(ItemKind::UsingDecl(p));
            }
            "typedef"
                if (self.tok(1).is_ident("struct") || self.tok(1).is_ident("union"))
                    && (self.at_n(2, Punct::LBrace) || self.at_n(3, Punct::LBrace)) =>
            {
                return self.parse_typedef_struct();
            }
            "using"
                if self.at_n(2, Punct::Eq)
                    && (self.tok(3).is_ident("struct") || self.tok(3).is_ident("union"))
                    && self.at_n(4, Punct::LBrace) =>
            {
                return self.parse_using_record();
            }
            "using" | "typedef" => return self.parse_alias().map(ItemKind::Alias),
            "template" => return self.parse_template_item(),
            "static_assert" => {
                let (cond, message) = self.parse_static_assert();
                return Some(ItemKind::StaticAssert { cond, message });
            }
            "struct" | "class" | "union"
                if self.tok(1).ident().is_some()
                    && matches!(self.tok(2).kind, TokenKind::Ident(_) | TokenKind::Punct(Punct::Star | Punct::Amp)) => {}
            "struct" | "class" | "union" => {
                let s = self.parse_struct(Vec::new())?;
                return Some(ItemKind::Struct(s));
            }
            "enum" => return self.parse_enum().map(ItemKind::Enum),
            _ => {}
        }
        if let Some(msg) = unsupported_keyword(name) {
            self.report(Diagnostic::error(t.span, msg).label("not supported"));
            return None;
        }
        // Attributes before `struct`.
        if self.at_attr() {
            let st = self.save();
            let mut attrs = Vec::new();
            while self.at_attr() {
                self.parse_attr_list(&mut attrs);
            }
            if self.at_kw("struct") || self.at_kw("class") {
                return self.parse_struct(attrs).map(ItemKind::Struct);
            }
            self.restore(st);
        }
        let specs = self.parse_specs();
        if self.silent {
            return None;
        }
        self.parse_decl_after_specs(specs, None)
    }

    /// After specifiers at program scope: a function or variables.
    pub(super) fn parse_decl_after_specs(&mut self, mut specs: Specs, in_struct: Option<&Rc<str>>) -> Option<ItemKind> {
        let ty = self.parse_ptr_ops(specs.ty.clone());
        // Attributes between the return type and the name.
        while self.at_attr() {
            self.parse_attr_list(&mut specs.attrs);
        }
        if self.at_kw("operator") {
            let name = self.parse_operator_name()?;
            let f = self.parse_function_rest(&specs, ty, name);
            return Some(ItemKind::Function(f));
        }
        if self.tok(0).ident().is_none_or(Self::is_reserved) && !self.at(Punct::ColonColon) {
            if self.at(Punct::Semi) && in_struct.is_none() {
                // `struct S;`-like or a bare type: accept as nothing.
                self.error_here("a name");
                return None;
            }
            self.error_here("a name");
            return None;
        }
        let mut name = self.parse_path();
        // `R S::operator()(…) thread {…}`: an out-of-class operator definition.
        if name.segments.len() > 1 && &*name.last().ident.name == "operator" && name.last().template_args.is_none() {
            let op = name.segments.pop().expect("checked above");
            let op_name = self.parse_operator_symbol(op.ident.span)?;
            name.segments.push(op_name.segments.into_iter().next().expect("one segment"));
            name.span = name.span.to(self.prev_span());
            let f = self.parse_function_rest(&specs, ty, name);
            return Some(ItemKind::Function(f));
        }
        // `T name("text", 1)` declares a variable (`constant os_log log("sub", "cat");`):
        // a parameter list cannot start with a literal.
        let literal_first =
            matches!(self.tok(1).kind, TokenKind::Str(_) | TokenKind::Int { .. } | TokenKind::Float { .. } | TokenKind::Char(_));
        if self.at(Punct::LParen) && !literal_first {
            let f = self.parse_function_rest(&specs, ty, name);
            return Some(ItemKind::Function(f));
        }
        let seg = name.segments.pop().expect("paths have at least one segment");
        let spec_args = seg.template_args.clone();
        let first = (ty, seg.ident);
        let mut vars = self.parse_declarators(&specs, Some(first));
        if let (Some(args), Some(v)) = (spec_args, vars.first_mut()) {
            v.specialization = Some(args);
        }
        if let (false, Some(v)) = (name.segments.is_empty(), vars.first_mut()) {
            v.owner = Some(name);
        }
        self.expect_semi("declaration");
        Some(ItemKind::Vars(vars))
    }

    /// `operator+`, `operator()`, `operator[]`, `operator+=`, ...: the name
    /// of an overloaded operator as one identifier (`operator()`), which is
    /// how the checker looks it up. The current token is `operator`.
    pub(super) fn parse_operator_name(&mut self) -> Option<Path> {
        let start = self.bump();
        self.parse_operator_symbol(start)
    }

    /// The operator after `operator` (already read, at `start`).
    pub(super) fn parse_operator_symbol(&mut self, start: Span) -> Option<Path> {
        let t = self.tok(0).clone();
        let spelled = match &t.kind {
            TokenKind::Punct(Punct::LParen) if self.at_n(1, Punct::RParen) => {
                self.bump();
                "()".to_string()
            }
            TokenKind::Punct(Punct::LBracket) if self.at_n(1, Punct::RBracket) => {
                self.bump();
                "[]".to_string()
            }
            TokenKind::Punct(p) if !matches!(p, Punct::LParen | Punct::LBracket | Punct::LBrace | Punct::RBrace | Punct::Semi) => {
                p.as_str().to_string()
            }
            _ => {
                self.error_here("an operator after `operator` (e.g. `operator+` or `operator()`)");
                return None;
            }
        };
        let end = self.bump();
        Some(simple_path(&format!("operator{spelled}"), start.to(end)))
    }

    /// A conversion operator `operator T() const {...}` inside a struct; its
    /// name is `operator T` with the type spelled out, its return type `T`.
    /// `x.operator T()` / `p->operator T()`: an explicit call of a
    /// conversion function, which means `static_cast<T>(x)`. Current token
    /// is `operator`.
    pub(super) fn parse_conversion_call(&mut self, base: Expr, arrow: bool) -> Expr {
        self.bump();
        let ty = self.parse_type();
        let lp = self.tok(0).span;
        if self.expect(Punct::LParen) {
            self.expect_close(Punct::RParen, lp);
        }
        let span = base.span.to(self.prev_span());
        let object = if arrow { Expr { kind: ExprKind::Unary { op: UnaryOp::Deref, operand: Box::new(base) }, span } } else { base };
        Expr { kind: ExprKind::Cast { kind: CastKind::Static, ty, args: vec![object], braces: false }, span }
    }

    pub(super) fn parse_conversion_operator(&mut self, specs: &Specs) -> Option<Function> {
        let start = self.bump();
        let ty = self.parse_type();
        let name = simple_path(&format!("operator {}", crate::pretty::type_to_string(&ty)), start.to(self.prev_span()));
        if !self.at(Punct::LParen) {
            self.error_here("`(` after the conversion operator's type");
            return None;
        }
        Some(self.parse_function_rest(specs, ty, name))
    }

    /// Parameters, `const`, body or `;`. Current token is `(`.
    pub(super) fn parse_function_rest(&mut self, specs: &Specs, mut ret: TypeExpr, name: Path) -> Function {
        if self.declaring_template {
            self.templates.insert(name.last().ident.name.clone());
        }
        self.declaring_template = false;
        let params = self.parse_params();
        let mut is_const_method = false;
        let mut object_space = None;
        let mut attrs = specs.attrs.clone();
        loop {
            if self.eat_kw("const") {
                is_const_method = true;
            } else if let Some(space @ (AddressSpace::Threadgroup | AddressSpace::Device | AddressSpace::Constant)) =
                self.tok(0).ident().and_then(addr_space_of)
            {
                self.bump();
                object_space = Some(space);
            } else if self.at_attr() {
                self.parse_attr_list(&mut attrs);
            } else if self.at_kw("__attribute__") {
                self.parse_gnu_attribute(&mut attrs);
            } else if self.eat_kw("noexcept") || self.eat_kw("thread") {
            } else if self.at(Punct::Arrow) {
                // `auto f(T a) -> decltype(a * 2)`: the trailing return type.
                self.bump();
                let t = self.parse_type();
                ret = t;
            } else {
                break;
            }
        }
        let is_kernel = specs.is_kernel || attrs.iter().any(|a| &*a.name.name == "kernel");
        let body = if self.at(Punct::LBrace) {
            Some(self.parse_block())
        } else {
            self.expect_semi("function declaration");
            None
        };
        Function {
            attrs,
            is_kernel,
            is_inline: specs.is_inline,
            is_static: specs.is_static,
            is_constexpr: specs.is_constexpr,
            ret,
            name,
            params,
            is_const_method,
            object_space,
            body,
            span: specs.span.to(self.prev_span()),
        }
    }

    pub(super) fn parse_params(&mut self) -> Vec<Param> {
        let open = self.bump();
        let mut params = Vec::new();
        if self.at_kw("void") && self.at_n(1, Punct::RParen) {
            self.bump();
        }
        while !self.at(Punct::RParen) && !self.at_eof() {
            let before = self.pos;
            let start = self.tok(0).span;
            let mut specs = self.new_specs();
            let base = self.parse_base_type(&mut Some(&mut specs));
            let ty = self.parse_ptr_ops(base);
            let is_pack = self.eat(Punct::Ellipsis);
            let mut attrs = specs.attrs;
            // `R (*name)(P1, P2)`: a pointer to a function.
            if self.at_fn_ptr_declarator(true) || self.at_fn_ptr_declarator(false) {
                let (ty, name) = self.parse_fn_ptr_declarator(ty);
                let default = if self.eat(Punct::Eq) { Some(self.parse_assign()) } else { None };
                params.push(Param { ty, is_pack, name, attrs, default, span: start.to(self.prev_span()) });
                if self.silent || !self.eat(Punct::Comma) {
                    break;
                }
                continue;
            }
            // `T (&name)[N]`: a reference to an array.
            if self.at(Punct::LParen) && self.at_n(1, Punct::Amp) && self.tok(2).ident().is_some() && self.at_n(3, Punct::RParen) {
                self.bump();
                let amp = self.bump();
                let n = Rc::<str>::from(self.tok(0).ident().unwrap_or(""));
                let sp = self.bump();
                self.bump();
                let arr = self.parse_array_dims(ty);
                let span = arr.span.to(amp);
                let ty = TypeExpr { kind: TypeExprKind::Reference { referee: Box::new(arr) }, span };
                let default = if self.eat(Punct::Eq) { Some(self.parse_assign()) } else { None };
                params.push(Param {
                    ty,
                    is_pack,
                    name: Some(Ident { name: n, span: sp }),
                    attrs,
                    default,
                    span: start.to(self.prev_span()),
                });
                if self.silent || !self.eat(Punct::Comma) {
                    break;
                }
                continue;
            }
            let name = match self.tok(0).ident() {
                Some(n) if !Self::is_reserved(n) => {
                    let n = Rc::<str>::from(n);
                    let sp = self.bump();
                    Some(Ident { name: n, span: sp })
                }
                _ => None,
            };
            while self.at_attr() {
                self.parse_attr_list(&mut attrs);
            }
            let ty = self.parse_array_dims(ty);
            while self.at_attr() {
                self.parse_attr_list(&mut attrs);
            }
            let default = if self.eat(Punct::Eq) { Some(self.parse_assign()) } else { None };
            params.push(Param { ty, is_pack, name, attrs, default, span: start.to(self.prev_span()) });
            if self.silent || self.pos == before || !self.eat(Punct::Comma) {
                break;
            }
        }
        self.expect_close(Punct::RParen, open);
        params
    }

    pub(super) fn parse_namespace(&mut self) -> Option<ItemKind> {
        self.bump();
        // `namespace g = a::b;`: later paths starting with `g` mean `a::b`.
        if self.tok(0).ident().is_some() && self.at_n(1, Punct::Eq) {
            let alias = Rc::<str>::from(self.tok(0).ident().unwrap_or(""));
            self.bump();
            self.bump();
            let target = self.parse_path();
            self.expect_semi("namespace alias");
            self.namespace_aliases.insert(alias, target.segments);
            return Some(ItemKind::Empty);
        }
        let name = self.eat_ident();
        // `namespace a::b {` is `namespace a { namespace b {`.
        let mut inner = Vec::new();
        while self.at(Punct::ColonColon) && self.tok(1).ident().is_some() {
            self.bump();
            let n = Rc::<str>::from(self.tok(0).ident().unwrap_or(""));
            let sp = self.bump();
            inner.push(Ident { name: n, span: sp });
        }
        let open = self.tok(0).span;
        if !self.expect(Punct::LBrace) {
            return None;
        }
        let mut items = self.parse_items_until_brace();
        self.expect_close(Punct::RBrace, open);
        while let Some(n) = inner.pop() {
            let span = n.span.to(self.prev_span());
            items = vec![Item { kind: ItemKind::Namespace { name: Some(n), items }, span }];
        }
        Some(ItemKind::Namespace { name, items })
    }

    /// `extern "C" decl` and `extern "C" { decls }`: linkage changes nothing
    /// the simulator sees, so the block is a transparent group (as an
    /// unnamed namespace is) and the single declaration is parsed as if the
    /// prefix were absent.
    fn parse_linkage(&mut self) -> Option<ItemKind> {
        self.bump();
        let lang = self.tok(0).clone();
        if !matches!(&lang.kind, TokenKind::Str(l) if matches!(&**l, "C" | "C++")) {
            self.report(
                Diagnostic::error(lang.span, format!("unknown language linkage {}", lang.kind))
                    .label("expected \"C\" or \"C++\"")
                    .help("write `extern \"C\"` or `extern \"C++\"`"),
            );
            return None;
        }
        self.bump();
        if !self.at(Punct::LBrace) {
            return self.parse_item_kind();
        }
        let open = self.bump();
        let items = self.parse_items_until_brace();
        self.expect_close(Punct::RBrace, open);
        Some(ItemKind::Namespace { name: None, items })
    }

    pub(super) fn parse_items_until_brace(&mut self) -> Vec<Item> {
        let mut items = Vec::new();
        while !self.at(Punct::RBrace) && !self.at_eof() {
            let before = self.pos;
            if let Some(it) = self.parse_item() {
                items.push(it);
            }
            if self.silent {
                self.sync_item();
            }
            if self.pos == before {
                self.bump();
            }
        }
        items
    }

    pub(super) fn parse_template_item(&mut self) -> Option<ItemKind> {
        let kw = self.bump();
        if !self.at(Punct::Lt) {
            return self.parse_explicit_instantiation(kw);
        }
        self.push_scope(true);
        let params = self.parse_template_params();
        if self.silent {
            self.pop_scope();
            return None;
        }
        self.declaring_template = true;
        let item = self.parse_item();
        self.declaring_template = false;
        self.pop_scope();
        let item = item?;
        // Alias and variable templates take `<...>` where they are used.
        match &item.kind {
            ItemKind::Alias(a) => {
                self.templates.insert(a.name.name.clone());
            }
            ItemKind::Vars(vs) => {
                for v in vs {
                    self.templates.insert(v.name.name.clone());
                }
            }
            _ => {}
        }
        Some(ItemKind::Template { params, item: Box::new(item) })
    }

    /// The name of template parameter number `index`. Unnamed ones
    /// (`typename = enable_if_t<...>`, `enable_if_t<c, bool> = true`, the
    /// SFINAE idioms) get a hidden name; `None` after reporting a bad one.
    pub(super) fn template_param_name(&mut self, index: usize) -> Option<(Rc<str>, Span)> {
        match self.tok(0).ident().map(Rc::<str>::from) {
            Some(n) => Some((n, self.bump())),
            None if self.at(Punct::Eq) || self.at(Punct::Comma) || self.at_gt_like() => {
                Some((Rc::from(format!("$unnamed{index}").as_str()), self.tok(0).span))
            }
            None => {
                self.error_here("a template parameter name");
                None
            }
        }
    }

    /// `<typename T, int N = 4, typename = ...>` (the current token is `<`);
    /// names are declared in the scope the caller pushed.
    pub(super) fn parse_template_params(&mut self) -> Vec<TemplateParam> {
        let lt = self.bump();
        let mut params = Vec::new();
        self.no_gt += 1;
        while !self.at_gt_like() && !self.at_eof() {
            let before = self.pos;
            let start = self.tok(0).span;
            if self.at_kw("template") {
                self.template_template_param(&mut params);
            } else if self.at_kw("typename") || self.at_kw("class") {
                self.bump();
                let is_pack = self.eat(Punct::Ellipsis);
                let Some((n, nsp)) = self.template_param_name(params.len()) else { break };
                self.declare_template_param(&n);
                let default = if self.eat(Punct::Eq) { Some(self.parse_type()) } else { None };
                params.push(TemplateParam {
                    name: Ident { name: n, span: nsp },
                    is_pack,
                    kind: TemplateParamKind::Type { default },
                    span: start.to(self.prev_span()),
                });
            } else {
                let ty = self.parse_type();
                // `R (*name)(P1, P2)`: a function pointer value parameter.
                let (ty, fn_name) = if self.at_fn_ptr_declarator(true) { self.parse_fn_ptr_declarator(ty) } else { (ty, None) };
                let is_pack = self.eat(Punct::Ellipsis);
                let named = match fn_name {
                    Some(n) => Some((n.name, n.span)),
                    None => self.template_param_name(params.len()),
                };
                let Some((n, nsp)) = named else { break };
                let default = if self.eat(Punct::Eq) { Some(self.parse_assign()) } else { None };
                params.push(TemplateParam {
                    name: Ident { name: n, span: nsp },
                    is_pack,
                    kind: TemplateParamKind::Value { ty, default },
                    span: start.to(self.prev_span()),
                });
            }
            if self.silent || self.pos == before || !self.eat(Punct::Comma) {
                break;
            }
        }
        self.no_gt -= 1;
        self.expect_gt(lt);
        params
    }

    /// `template <typename> class Op = Plus` in a template parameter list
    /// (also `typename` for `class`, `...` for a pack, unnamed). `Op` is
    /// known as a template afterwards, so `Op<T>` parses as a template-id.
    pub(super) fn template_template_param(&mut self, params: &mut Vec<TemplateParam>) {
        let start = self.bump();
        if !self.at(Punct::Lt) {
            self.error_here("`<` to open the template template parameter's own parameter list");
            return;
        }
        if !self.enter() {
            return;
        }
        self.push_scope(true);
        let inner = self.parse_template_params();
        self.pop_scope();
        self.leave();
        if self.silent || self.too_deep {
            return;
        }
        if !(self.eat_kw("class") || self.eat_kw("typename")) {
            self.error_here("`class` or `typename` after a template template parameter's parameter list");
            return;
        }
        let is_pack = self.eat(Punct::Ellipsis);
        let Some((n, nsp)) = self.template_param_name(params.len()) else { return };
        self.templates.insert(n.clone());
        self.declare_template_param(&n);
        let default = if self.eat(Punct::Eq) { Some(self.parse_path()) } else { None };
        params.push(TemplateParam {
            name: Ident { name: n, span: nsp },
            is_pack,
            kind: TemplateParamKind::Template { params: inner, default },
            span: start.to(self.prev_span()),
        });
    }

    /// `template [[attrs]] T name<args>;` / `template void f<int>(int);`
    pub(super) fn parse_explicit_instantiation(&mut self, _kw: Span) -> Option<ItemKind> {
        let mut specs = self.parse_specs();
        let ty = self.parse_ptr_ops(specs.ty.clone());
        while self.at_attr() {
            self.parse_attr_list(&mut specs.attrs);
        }
        // The instantiated name is a template even if we never saw it.
        if let Some(n) = self.tok(0).ident() {
            if self.at_n(1, Punct::Lt) {
                let n = Rc::<str>::from(n);
                self.templates.insert(n);
            }
        }
        let name = self.parse_path();
        let params = if self.at(Punct::LParen) { Some(self.parse_params()) } else { None };
        self.expect_semi("explicit instantiation");
        Some(ItemKind::ExplicitInstantiation { attrs: specs.attrs, ty, name, params })
    }

    pub(super) fn parse_enum(&mut self) -> Option<Enum> {
        let start = self.bump();
        let scoped = self.eat_kw("class") || self.eat_kw("struct");
        let name = match self.tok(0).ident() {
            Some(n) if !Self::is_reserved(n) => {
                let n = Rc::<str>::from(n);
                let sp = self.bump();
                self.declare_type(&n);
                Some(Ident { name: n, span: sp })
            }
            _ => None,
        };
        let underlying = if self.eat(Punct::Colon) { Some(self.parse_type()) } else { None };
        let mut enumerators = Vec::new();
        if self.at(Punct::Semi) {
            self.bump();
            return Some(Enum { name, scoped, underlying, enumerators, span: start.to(self.prev_span()) });
        }
        let open = self.tok(0).span;
        if !self.expect(Punct::LBrace) {
            return None;
        }
        while !self.at(Punct::RBrace) && !self.at_eof() {
            let Some(n) = self.tok(0).ident().map(Rc::<str>::from) else {
                self.error_here("an enumerator name");
                break;
            };
            let nsp = self.bump();
            let value = if self.eat(Punct::Eq) { Some(self.parse_assign()) } else { None };
            enumerators.push(Enumerator { name: Ident { name: n, span: nsp }, value });
            if self.silent || !self.eat(Punct::Comma) {
                break;
            }
        }
        self.expect_close(Punct::RBrace, open);
        self.expect_semi("enum definition");
        Some(Enum { name, scoped, underlying, enumerators, span: start.to(self.prev_span()) })
    }

    /// A struct, union or enum declared in a function body (`typedef` form
    /// when `typedef`). Kept out of `parse_stmt` so its stack frame stays
    /// small for deeply nested statements.
    #[inline(never)]
    pub(super) fn parse_local_type(&mut self, typedef: bool) -> StmtKind {
        let start = self.tok(0).span;
        if !typedef && !self.tok(0).is_ident("enum") && self.at_n(1, Punct::LBrace) {
            return self.parse_local_unnamed_struct();
        }
        let kind = if typedef {
            self.parse_typedef_struct()
        } else if self.tok(0).is_ident("enum") {
            self.parse_enum().map(ItemKind::Enum)
        } else {
            self.parse_struct(Vec::new()).map(ItemKind::Struct)
        };
        match kind {
            Some(kind) => StmtKind::LocalType(Box::new(Item { kind, span: start.to(self.prev_span()) }), Vec::new()),
            None => StmtKind::Empty,
        }
    }

    /// `union { uint i; T t[N]; } val;` in a function body: a type without
    /// a name (given an internal one) and the variables declared with it.
    pub(super) fn parse_local_unnamed_struct(&mut self) -> StmtKind {
        let start = self.tok(0).span;
        let kw = self.tok(0).ident().unwrap_or("struct").to_string();
        self.anonymous_count += 1;
        let tag = Ident { name: Rc::from(format!("(unnamed {kw} #{})", self.anonymous_count)), span: start };
        let Some(s) = self.parse_struct_named(Vec::new(), Some(tag.clone())) else { return StmtKind::Empty };
        let item = Box::new(Item { kind: ItemKind::Struct(s), span: start.to(self.prev_span()) });
        if self.at(Punct::Semi) {
            let sp = self.bump();
            self.report(
                Diagnostic::error(start.to(sp), format!("an anonymous {kw} in a function body is not supported by the simulator yet"))
                    .help(format!("name a variable of it: `{kw} {{ … }} v;` and use `v.member`")),
            );
            return StmtKind::Empty;
        }
        let path = Path { global: false, segments: vec![PathSegment { ident: tag, template_args: None }], span: start };
        let ty = TypeExpr { kind: TypeExprKind::Named { path, is_const: false, is_volatile: false, addr_space: None }, span: start };
        let specs = Specs {
            attrs: Vec::new(),
            is_kernel: false,
            is_inline: false,
            is_static: false,
            is_constexpr: false,
            is_typedef: false,
            ty,
            span: start,
        };
        let vars = self.parse_declarators(&specs, None);
        self.expect_semi("declaration");
        StmtKind::LocalType(item, vars)
    }

    /// The identifier here, if there is one, consumed.
    pub(super) fn eat_ident(&mut self) -> Option<Ident> {
        let n = Rc::<str>::from(self.tok(0).ident()?);
        Some(Ident { name: n, span: self.bump() })
    }

    pub(super) fn parse_struct(&mut self, attrs: Vec<Attribute>) -> Option<Struct> {
        self.parse_struct_named(attrs, None)
    }

    /// `struct Name {...};`, or with `typedef_name`, the struct of `typedef
    /// struct [Tag] {...} Name;` (the caller reads `Name;`).
    pub(super) fn parse_struct_named(&mut self, attrs: Vec<Attribute>, typedef_name: Option<Ident>) -> Option<Struct> {
        // Structs nest (members, anonymous unions, types in method bodies),
        // each level through many parser frames: a limit of their own keeps
        // the stack bounded.
        if self.struct_depth >= MAX_STRUCT_DEPTH {
            let sp = self.tok(0).span;
            self.report(
                Diagnostic::error(sp, "structs nested too deeply")
                    .note(format!("this parser allows at most {MAX_STRUCT_DEPTH} levels of struct nesting")),
            );
            self.pos = self.toks.len().saturating_sub(1);
            self.split = None;
            return None;
        }
        self.struct_depth += 1;
        let s = self.parse_struct_body(attrs, typedef_name);
        self.struct_depth -= 1;
        s
    }

    pub(super) fn parse_struct_body(&mut self, mut attrs: Vec<Attribute>, typedef_name: Option<Ident>) -> Option<Struct> {
        let is_union = self.tok(0).is_ident("union");
        let start = self.bump();
        loop {
            if self.at_attr() {
                self.parse_attr_list(&mut attrs);
            } else if self.at_kw("alignas") && self.at_n(1, Punct::LParen) {
                // The alignment is kept as an attribute for the layout.
                let sp = self.bump();
                let lp = self.bump();
                let args = self.parse_args(Punct::RParen, lp);
                attrs.push(Attribute { name: Ident { name: Rc::from("alignas"), span: sp }, args, span: sp.to(self.prev_span()) });
            } else if self.at_kw("__attribute__") {
                self.parse_gnu_attribute(&mut attrs);
            } else {
                break;
            }
        }
        let (n, nsp) = match (self.tok(0).ident().map(Rc::<str>::from), &typedef_name) {
            (Some(n), _) => (n, self.bump()),
            (None, Some(t)) => (t.name.clone(), t.span),
            (None, None) => {
                self.error_here("a struct name");
                return None;
            }
        };
        let name = Ident { name: n.clone(), span: nsp };
        self.declare_type(&n);
        if self.declaring_template {
            self.templates.insert(n.clone());
            self.declaring_template = false;
        }
        // Explicit specialisation `struct Limits<float>`.
        let specialization = if self.at(Punct::Lt) { Some(self.parse_template_args()) } else { None };
        if self.at(Punct::Semi) {
            self.bump();
            return Some(Struct {
                name,
                is_union,
                members: vec![],
                is_forward: true,
                specialization,
                bases: Vec::new(),
                attrs,
                span: start.to(self.prev_span()),
            });
        }
        let bases = if self.at(Punct::Colon) { self.parse_base_specs()? } else { Vec::new() };
        let open = self.tok(0).span;
        if !self.expect(Punct::LBrace) {
            return None;
        }
        self.push_scope(false);
        let mut members = Vec::new();
        while !self.at(Punct::RBrace) && !self.at_eof() {
            let before = self.pos;
            self.parse_member(&n, &mut members);
            if self.silent {
                self.sync_stmt();
            }
            if self.pos == before {
                self.bump();
            }
        }
        // Nested type names stay known after the struct (`Outer::Inner x;`
        // and uses inside later member definitions).
        let nested: Vec<Rc<str>> = self.scopes.last().map(|(_, set)| set.iter().cloned().collect()).unwrap_or_default();
        self.pop_scope();
        for n in &nested {
            self.declare_type(n);
        }
        self.expect_close(Punct::RBrace, open);
        // `struct S {…} __attribute__((packed));`
        while self.at_kw("__attribute__") {
            self.parse_gnu_attribute(&mut attrs);
        }
        if typedef_name.is_none() {
            self.expect_semi("struct definition");
        }
        Some(Struct { name, is_union, members, is_forward: false, specialization, bases, attrs, span: start.to(self.prev_span()) })
    }

    /// `: public B, private C<T>` after a struct's name. `virtual` bases
    /// are refused as unsupported.
    pub(super) fn parse_base_specs(&mut self) -> Option<Vec<BaseSpec>> {
        self.bump();
        let mut out = Vec::new();
        loop {
            let start = self.tok(0).span;
            let mut access = None;
            loop {
                match self.tok(0).ident() {
                    Some("virtual") => {
                        let sp = self.tok(0).span;
                        self.report(
                            Diagnostic::error(sp, "virtual inheritance is not supported by this simulator")
                                .label("virtual inheritance")
                                .help("inherit without `virtual` (Metal has no virtual functions, so a plain base is enough)"),
                        );
                        return None;
                    }
                    Some(kw @ ("public" | "private" | "protected")) => {
                        access = Some(Ident { name: Rc::from(kw), span: self.tok(0).span });
                        self.bump();
                    }
                    _ => break,
                }
            }
            let ty = self.parse_type();
            if self.silent {
                return None;
            }
            out.push(BaseSpec { ty, access, span: start.to(self.prev_span()) });
            if !self.eat(Punct::Comma) {
                break;
            }
        }
        Some(out)
    }

    /// At `Name<...>(`: a constructor spelled with the struct's template
    /// arguments (`indexed<T>()`).
    pub(super) fn ctor_after_template_args(&mut self) -> bool {
        let st = self.save();
        self.bump();
        let silent = self.attempt(|p| p.parse_template_args()).is_some();
        let r = silent && self.at(Punct::LParen);
        self.restore(st);
        r
    }

    /// A constructor template, if one starts here (else nothing is read):
    /// a function template named `$ctor` whose body runs the member
    /// initializers first. `Some(None)` for one that is not kept (another
    /// address space's).
    pub(super) fn parse_constructor_template(&mut self, sname: &Rc<str>) -> Option<Option<Member>> {
        let st = self.save();
        let start = self.bump();
        self.push_scope(true);
        let params = self.parse_template_params();
        let mut k = 0;
        while matches!(self.tok(k).ident(), Some("constexpr" | "explicit" | "inline" | "METAL_FUNC")) {
            k += 1;
        }
        // `template <class U> operator U() const`: a conversion operator template.
        if !self.silent && self.tok(k).ident() == Some("operator") && self.tok(k + 1).ident().is_some() {
            let mut specs = self.new_specs();
            for _ in 0..k {
                specs.is_constexpr |= self.at_kw("constexpr");
                self.bump();
            }
            let func = self.parse_conversion_operator(&specs);
            self.pop_scope();
            let span = start.to(self.prev_span());
            return Some(func.filter(|f| f.object_space.is_none()).map(|func| {
                let item = Item { kind: ItemKind::Function(func), span };
                Member {
                    kind: MemberKind::Nested(Box::new(Item { kind: ItemKind::Template { params, item: Box::new(item) }, span })),
                    span,
                }
            }));
        }
        if self.silent || !(self.tok(k).ident() == Some(sname.as_ref()) && self.at_n(k + 1, Punct::LParen)) {
            self.pop_scope();
            self.restore(st);
            return None;
        }
        let mut ctor = Vec::new();
        self.parse_member(sname, &mut ctor);
        self.pop_scope();
        let span = start.to(self.prev_span());
        Some(match ctor.pop() {
            // Constructor templates for objects in another address space are
            // not kept (objects are built in thread memory).
            Some(Member { kind: MemberKind::Constructor { func, inits }, .. }) if func.object_space.is_none() => {
                let mut func = with_member_inits(&func, &inits);
                func.name = simple_path("$ctor", func.name.span);
                let item = Item { kind: ItemKind::Function(func), span };
                Some(Member {
                    kind: MemberKind::Nested(Box::new(Item { kind: ItemKind::Template { params, item: Box::new(item) }, span })),
                    span,
                })
            }
            _ => None,
        })
    }

    /// `union { … };` (an anonymous member: its members belong to the
    /// enclosing struct) or `union { … } name;` (a member of an unnamed type).
    pub(super) fn parse_anonymous_member(&mut self, out: &mut Vec<Member>) {
        let start = self.tok(0).span;
        let kw = self.tok(0).ident().unwrap_or("struct").to_string();
        self.anonymous_count += 1;
        let tag = Ident { name: Rc::from(format!("(anonymous {kw} #{})", self.anonymous_count)), span: start };
        let Some(s) = self.parse_struct_named(Vec::new(), Some(tag.clone())) else { return };
        if self.eat(Punct::Semi) {
            out.push(Member { kind: MemberKind::Anonymous(Box::new(s)), span: start.to(self.prev_span()) });
            return;
        }
        out.push(Member {
            kind: MemberKind::Nested(Box::new(Item { kind: ItemKind::Struct(s), span: start.to(self.prev_span()) })),
            span: start,
        });
        // The declarators after `}`: members of the unnamed type.
        loop {
            let Some(n) = self.tok(0).ident().map(Rc::<str>::from) else {
                self.error_here("a member name or `;`");
                return;
            };
            let nsp = self.bump();
            let path = Path { global: false, segments: vec![PathSegment { ident: tag.clone(), template_args: None }], span: nsp };
            let ty = TypeExpr { kind: TypeExprKind::Named { path, is_const: false, is_volatile: false, addr_space: None }, span: nsp };
            let ty = self.parse_array_dims(ty);
            let v = VarDecl {
                name: Ident { name: n, span: nsp },
                ty,
                init: None,
                attrs: Vec::new(),
                is_constexpr: false,
                is_static: false,
                specialization: None,
                owner: None,
                span: nsp,
            };
            out.push(Member { kind: MemberKind::Field(v), span: nsp });
            if !self.eat(Punct::Comma) {
                break;
            }
        }
        self.expect_semi("member declaration");
    }

    pub(super) fn parse_member(&mut self, sname: &Rc<str>, out: &mut Vec<Member>) {
        let start = self.tok(0).span;
        let t = self.tok(0).clone();
        let name = t.ident().unwrap_or("");
        if t.is_punct(Punct::Semi) {
            self.bump();
            return;
        }
        if matches!(name, "public" | "private" | "protected") && self.at_n(1, Punct::Colon) {
            self.bump();
            self.bump();
            return;
        }
        if matches!(name, "using" | "typedef") {
            if let Some(a) = self.parse_alias() {
                out.push(Member { kind: MemberKind::Alias(a), span: start.to(self.prev_span()) });
            }
            return;
        }
        // `template <typename U> S(U x) : v(x) {}`: a constructor template.
        if name == "template" && self.at_n(1, Punct::Lt) {
            if let Some(m) = self.parse_constructor_template(sname) {
                out.extend(m);
                return;
            }
        }
        if matches!(name, "struct" | "union") && self.at_n(1, Punct::LBrace) {
            self.parse_anonymous_member(out);
            return;
        }
        // Nested types and member templates: parsed as items, declared in the
        // struct's scope by the checker. `struct S s;` is still a field.
        if matches!(name, "template" | "struct" | "class" | "enum") {
            match self.parse_item() {
                Some(Item { kind: ItemKind::Vars(vars), .. }) => {
                    for v in vars {
                        let span = v.span;
                        out.push(Member { kind: MemberKind::Field(v), span });
                    }
                }
                Some(Item { kind: ItemKind::Template { item, .. }, .. }) if matches!(&item.kind, ItemKind::Function(f) if f.object_space.is_some()) =>
                    {}
                Some(item) => out.push(Member { kind: MemberKind::Nested(Box::new(item)), span: start.to(self.prev_span()) }),
                None => {}
            }
            return;
        }
        if matches!(name, "union" | "friend") {
            self.report(
                Diagnostic::error(t.span, format!("`{name}` inside a struct is not supported by this simulator yet"))
                    .help("move it to program scope"),
            );
            return;
        }
        if name == "static_assert" {
            let _ = self.parse_static_assert();
            return;
        }
        if t.is_punct(Punct::Tilde) {
            self.report(Diagnostic::error(t.span, "destructors are not supported in Metal"));
            return;
        }
        if let Some(msg) = unsupported_keyword(name) {
            self.report(Diagnostic::error(t.span, msg).label("not supported"));
            return;
        }
        // Constructor: `S(...)` possibly after `explicit`/`constexpr`/`inline`.
        let st = self.save();
        let mut specs = self.new_specs();
        loop {
            if self.at_attr() {
                self.parse_attr_list(&mut specs.attrs);
            } else if self.eat_kw("explicit") || self.eat_kw("METAL_FUNC") {
            } else if self.at_kw("__attribute__") {
                self.parse_gnu_attribute(&mut specs.attrs);
            } else if self.eat_kw("inline") {
                specs.is_inline = true;
            } else if self.eat_kw("constexpr") {
                specs.is_constexpr = true;
            } else {
                break;
            }
        }
        if self.at_kw("operator")
            && !self.at_n(1, Punct::LParen)
            && self.tok(1).kind.to_string().chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        {
            if let Some(func) = self.parse_conversion_operator(&specs) {
                // Objects live in thread memory here: one version is enough.
                if func.object_space.is_none() {
                    out.push(Member { kind: MemberKind::Method(func), span: start.to(self.prev_span()) });
                }
            }
            return;
        }
        if self.at_kw(sname) && (self.at_n(1, Punct::LParen) || self.at_n(1, Punct::Lt) && self.ctor_after_template_args()) {
            let nsp = self.bump();
            if self.at(Punct::Lt) {
                let _ = self.parse_template_args();
            }
            let ret = self.named(simple_path("void", nsp));
            let name = simple_path(sname, nsp);
            let params = self.parse_params();
            // `S() thread`, `S() threadgroup const`: the address space of the
            // object constructed. Objects are built in thread memory here:
            // constructors for `threadgroup`, `device` or `constant` objects
            // are kept (marked) for structs that have no other kind.
            let mut other_space = false;
            let mut object_space = None;
            while let Some(kw) = self.tok(0).ident() {
                match kw {
                    "thread" => {}
                    "threadgroup" | "device" | "constant" => object_space = addr_space_of(kw),
                    "threadgroup_imageblock" | "ray_data" | "object_data" => other_space = true,
                    "const" | "noexcept" => {}
                    _ => break,
                }
                self.bump();
            }
            // `= default` keeps the implicit constructor; `= delete` removes it.
            if self.at(Punct::Eq) && matches!(self.tok(1).ident(), Some("default" | "delete")) {
                let defaulted = self.tok(1).ident() == Some("default");
                self.bump();
                self.bump();
                self.expect_semi("constructor declaration");
                if defaulted && params.is_empty() && !other_space && object_space.is_none() {
                    out.push(Member { kind: MemberKind::DefaultedConstructor, span: start.to(self.prev_span()) });
                }
                return;
            }
            if other_space {
                // Skip its member initializers: `: a(0), b{1}`.
                if self.at(Punct::Colon) {
                    while !self.at(Punct::LBrace) && !self.at(Punct::Semi) && !self.at_eof() {
                        if self.at(Punct::LParen) || self.at(Punct::LBracket) {
                            self.skip_balanced();
                        } else if self.at_n(1, Punct::LBrace) && self.tok(0).ident().is_some() {
                            self.bump();
                            self.skip_balanced();
                        } else {
                            self.bump();
                        }
                    }
                }
                if self.at(Punct::LBrace) {
                    self.parse_block();
                } else {
                    self.expect_semi("constructor declaration");
                }
                return;
            }
            let mut inits = Vec::new();
            if self.eat(Punct::Colon) {
                loop {
                    let Some(mut fname) = self.tok(0).ident().map(Rc::<str>::from) else {
                        self.error_here("a member name");
                        break;
                    };
                    let mut fsp = self.bump();
                    // A base class initializer may be qualified and carry
                    // template arguments (`ns::Base<T>(x)`): the checker
                    // finds the base by its last name.
                    while self.at(Punct::ColonColon) && self.tok(1).ident().is_some() {
                        self.bump();
                        fname = Rc::from(self.tok(0).ident().unwrap_or_default());
                        fsp = self.bump();
                    }
                    if self.at(Punct::Lt) {
                        let _ = self.parse_template_args();
                    }
                    let args = if self.at(Punct::LParen) || self.at(Punct::LBrace) {
                        let braces = self.at(Punct::LBrace);
                        let open = self.bump();
                        self.parse_args(if braces { Punct::RBrace } else { Punct::RParen }, open)
                    } else {
                        self.error_here("`(` or `{`");
                        break;
                    };
                    inits.push((Ident { name: fname, span: fsp }, args));
                    if !self.eat(Punct::Comma) {
                        break;
                    }
                }
            }
            let body = if self.at(Punct::LBrace) {
                Some(self.parse_block())
            } else {
                self.expect_semi("constructor declaration");
                None
            };
            let func = Function {
                attrs: specs.attrs,
                is_kernel: false,
                is_inline: specs.is_inline,
                is_static: false,
                is_constexpr: specs.is_constexpr,
                ret,
                name,
                params,
                is_const_method: false,
                object_space,
                body,
                span: start.to(self.prev_span()),
            };
            out.push(Member { kind: MemberKind::Constructor { func, inits }, span: start.to(self.prev_span()) });
            return;
        }
        self.restore(st);
        let specs = self.parse_specs();
        if self.silent {
            return;
        }
        let is_static_or_constexpr = specs.is_static || specs.is_constexpr;
        match self.parse_decl_after_specs(specs, Some(sname)) {
            Some(ItemKind::Function(f)) if f.object_space.is_none() => {
                out.push(Member { kind: MemberKind::Method(f), span: start.to(self.prev_span()) });
            }
            Some(ItemKind::Vars(vars)) => {
                for v in vars {
                    let span = v.span;
                    // `constant T x = …;` is a constant of the struct, but
                    // `constant T* p;` and `constant T& r;` are members that
                    // point into constant memory.
                    let in_constant = matches!(&v.ty.kind, TypeExprKind::Named { addr_space: Some(AddressSpace::Constant), .. });
                    let kind = if is_static_or_constexpr || in_constant { MemberKind::StaticConst(v) } else { MemberKind::Field(v) };
                    out.push(Member { kind, span });
                }
            }
            _ => {}
        }
    }
}
