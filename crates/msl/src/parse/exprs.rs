//! Expressions: precedence climbing over binary operators, unary, postfix and primary expressions.

use super::*;

impl<'a> Parser<'a> {
    // ----- expressions -----

    pub(super) fn parse_expr(&mut self) -> Expr {
        let start = self.chain;
        let mut lhs = self.parse_assign();
        while self.at(Punct::Comma) && self.grow_chain() {
            self.bump();
            let rhs = self.parse_operand(start, Self::parse_assign);
            let span = lhs.span.to(rhs.span);
            lhs = Expr { kind: ExprKind::Comma { lhs: Box::new(lhs), rhs: Box::new(rhs) }, span };
        }
        lhs
    }

    pub(super) fn parse_assign(&mut self) -> Expr {
        let sp = self.tok(0).span;
        if !self.enter() {
            return error_expr(sp);
        }
        let lhs = self.parse_binary(1);
        let r = if self.at(Punct::Question) {
            self.bump();
            let save = self.no_gt;
            self.no_gt = 0;
            let then = self.parse_expr();
            self.no_gt = save;
            self.expect(Punct::Colon);
            let els = self.parse_assign();
            let span = lhs.span.to(els.span);
            Expr { kind: ExprKind::Conditional { cond: Box::new(lhs), then: Box::new(then), els: Box::new(els) }, span }
        } else if let Some(op) = self.assign_op_here() {
            self.bump();
            let rhs = if self.at(Punct::LBrace) { self.parse_init_list() } else { self.parse_assign() };
            let span = lhs.span.to(rhs.span);
            Expr { kind: ExprKind::Assign { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }, span }
        } else {
            lhs
        };
        self.leave();
        r
    }

    pub(super) fn assign_op_here(&self) -> Option<Option<BinaryOp>> {
        match self.tok(0).kind {
            TokenKind::Punct(p) => {
                if self.no_gt > 0 && p == Punct::ShrEq {
                    return None;
                }
                assign_op_of(p)
            }
            _ => None,
        }
    }

    pub(super) fn binop_here(&self) -> Option<(BinaryOp, u8)> {
        match self.tok(0).kind {
            TokenKind::Punct(p) => {
                if self.no_gt > 0 && matches!(p, Punct::Gt | Punct::Shr | Punct::Ge) {
                    return None;
                }
                binop_of(p)
            }
            _ => None,
        }
    }

    /// Precedence climbing over binary operators of precedence >= `min`.
    pub(super) fn parse_binary(&mut self, min: u8) -> Expr {
        let start = self.chain;
        let mut lhs = self.parse_unary();
        while let Some((op, prec)) = self.binop_here() {
            if prec < min || !self.grow_chain() {
                break;
            }
            self.bump();
            let rhs = self.parse_operand(start, |p| p.parse_binary(prec + 1));
            let span = lhs.span.to(rhs.span);
            lhs = Expr { kind: ExprKind::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }, span };
        }
        lhs
    }

    /// The right operand of a chain's newest node: `chain` tracks the depth
    /// of the tree built so far, and the right operand sits beside the left
    /// one, so it counts from where the chain started (`start`); the node
    /// is as deep as the deeper of its operands, plus one.
    pub(super) fn parse_operand(&mut self, start: u32, parse: impl FnOnce(&mut Self) -> Expr) -> Expr {
        let lhs = self.chain;
        self.chain = start;
        let rhs = parse(self);
        self.chain = lhs.max(self.chain + 1);
        rhs
    }

    pub(super) fn parse_unary(&mut self) -> Expr {
        let sp = self.tok(0).span;
        if !self.enter() {
            return error_expr(sp);
        }
        let r = self.parse_unary_inner();
        self.leave();
        r
    }

    pub(super) fn parse_unary_inner(&mut self) -> Expr {
        let t = self.tok(0).clone();
        let op = match t.kind {
            TokenKind::Punct(Punct::Minus) => Some(UnaryOp::Neg),
            TokenKind::Punct(Punct::Plus) => Some(UnaryOp::Plus),
            TokenKind::Punct(Punct::Bang) => Some(UnaryOp::Not),
            TokenKind::Punct(Punct::Tilde) => Some(UnaryOp::BitNot),
            TokenKind::Punct(Punct::Star) => Some(UnaryOp::Deref),
            TokenKind::Punct(Punct::Amp) => Some(UnaryOp::AddrOf),
            TokenKind::Punct(Punct::PlusPlus) => Some(UnaryOp::PreInc),
            TokenKind::Punct(Punct::MinusMinus) => Some(UnaryOp::PreDec),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            let operand = self.parse_unary();
            let span = t.span.to(operand.span);
            return Expr { kind: ExprKind::Unary { op, operand: Box::new(operand) }, span };
        }
        match t.ident() {
            Some("sizeof") => {
                self.bump();
                // `sizeof...(Ts)`
                if self.eat(Punct::Ellipsis) {
                    let lp = self.tok(0).span;
                    self.expect(Punct::LParen);
                    let name = match self.tok(0).ident() {
                        Some(n) => {
                            let n = Rc::<str>::from(n);
                            Ident { name: n, span: self.bump() }
                        }
                        None => {
                            self.error_here("the name of a parameter pack");
                            return error_expr(t.span);
                        }
                    };
                    self.expect_close(Punct::RParen, lp);
                    return Expr { kind: ExprKind::SizeofPack(name), span: t.span.to(self.prev_span()) };
                }
                if self.at(Punct::LParen) {
                    let lp = self.tok(0).span;
                    let st = self.save();
                    self.bump();
                    if self.at_type_start() {
                        if let Some(ty) = self.attempt(|p| {
                            let ty = p.parse_type();
                            if !p.at(Punct::RParen) {
                                p.tentative_failed = true;
                            }
                            ty
                        }) {
                            self.expect_close(Punct::RParen, lp);
                            return Expr { kind: ExprKind::SizeofType(ty), span: t.span.to(self.prev_span()) };
                        }
                    }
                    self.restore(st);
                }
                let e = self.parse_unary();
                let span = t.span.to(e.span);
                return Expr { kind: ExprKind::SizeofExpr(Box::new(e)), span };
            }
            Some("alignof") => {
                self.bump();
                let lp = self.tok(0).span;
                self.expect(Punct::LParen);
                let ty = self.parse_type();
                self.expect_close(Punct::RParen, lp);
                return Expr { kind: ExprKind::AlignofType(ty), span: t.span.to(self.prev_span()) };
            }
            _ => {}
        }
        // C-style cast `(T)x`.
        if t.is_punct(Punct::LParen) {
            let st = self.save();
            self.bump();
            if self.at_type_start() {
                if let Some(ty) = self.attempt(|p| {
                    let ty = p.parse_type();
                    if !p.at(Punct::RParen) {
                        p.tentative_failed = true;
                    }
                    ty
                }) {
                    self.bump();
                    let operand = self.parse_unary();
                    let span = t.span.to(operand.span);
                    return Expr { kind: ExprKind::Cast { kind: CastKind::CStyle, ty, args: vec![operand], braces: false }, span };
                }
            }
            self.restore(st);
        }
        let e = self.parse_primary();
        self.parse_postfix(e)
    }

    pub(super) fn parse_postfix(&mut self, mut e: Expr) -> Expr {
        loop {
            if self.too_deep {
                return e;
            }
            let t = self.tok(0).clone();
            let grows = matches!(
                t.kind,
                TokenKind::Punct(Punct::LParen | Punct::LBracket | Punct::Dot | Punct::Arrow | Punct::PlusPlus | Punct::MinusMinus)
            );
            if grows && !self.grow_chain() {
                return e;
            }
            match t.kind {
                TokenKind::Punct(Punct::LParen) => {
                    self.bump();
                    let args = self.parse_args(Punct::RParen, t.span);
                    let span = e.span.to(self.prev_span());
                    e = Expr { kind: ExprKind::Call { callee: Box::new(e), args }, span };
                }
                TokenKind::Punct(Punct::LBracket) => {
                    self.bump();
                    let save = self.no_gt;
                    self.no_gt = 0;
                    let index = self.parse_expr();
                    self.no_gt = save;
                    self.expect_close(Punct::RBracket, t.span);
                    let span = e.span.to(self.prev_span());
                    e = Expr { kind: ExprKind::Index { base: Box::new(e), index: Box::new(index) }, span };
                }
                TokenKind::Punct(p @ (Punct::Dot | Punct::Arrow)) => {
                    self.bump();
                    let template = self.eat_kw("template");
                    if self.at_kw("operator") && self.tok(1).ident().is_some() {
                        e = self.parse_conversion_call(e, p == Punct::Arrow);
                        continue;
                    }
                    // `this->operator()(a, b)`: the member named `operator()`.
                    if self.at_kw("operator") {
                        let Some(op) = self.parse_operator_name() else { return e };
                        let name = op.segments.into_iter().next().expect("one segment").ident;
                        let span = e.span.to(self.prev_span());
                        e = Expr { kind: ExprKind::Member { base: Box::new(e), name, arrow: p == Punct::Arrow, targs: None }, span };
                        continue;
                    }
                    let Some(name) = self.tok(0).ident().map(Rc::<str>::from) else {
                        self.error_here("a member name");
                        return e;
                    };
                    let nsp = self.bump();
                    // `x.template f<4>(…)`; without `template`, `x.f<4>(…)`
                    // is a member template call when the arguments parse
                    // and a call follows.
                    let targs = if self.at(Punct::Lt) {
                        if template {
                            Some(self.parse_template_args())
                        } else {
                            self.attempt(|p| {
                                let a = p.parse_template_args();
                                if !p.at(Punct::LParen) {
                                    p.tentative_failed = true;
                                }
                                a
                            })
                        }
                    } else {
                        None
                    };
                    let span = e.span.to(self.prev_span());
                    e = Expr {
                        kind: ExprKind::Member { base: Box::new(e), name: Ident { name, span: nsp }, arrow: p == Punct::Arrow, targs },
                        span,
                    };
                }
                TokenKind::Punct(p @ (Punct::PlusPlus | Punct::MinusMinus)) => {
                    self.bump();
                    let op = if p == Punct::PlusPlus { UnaryOp::PostInc } else { UnaryOp::PostDec };
                    let span = e.span.to(t.span);
                    e = Expr { kind: ExprKind::Unary { op, operand: Box::new(e) }, span };
                }
                _ => return e,
            }
        }
    }

    /// Arguments up to `close` (the opening bracket is already consumed).
    pub(super) fn parse_args(&mut self, close: Punct, open: Span) -> Vec<Expr> {
        let save = self.no_gt;
        self.no_gt = 0;
        let mut args = Vec::new();
        // Elements are side by side, not nested: each counts its chains
        // from the list's start, and the list costs its longest element.
        let chain_start = self.chain;
        let mut chain_max = chain_start;
        if !self.at(close) {
            loop {
                let before = self.pos;
                self.chain = chain_start;
                let e = if close == Punct::RBrace && (self.at(Punct::LBracket) || self.at(Punct::Dot)) {
                    self.parse_designated()
                } else if self.at(Punct::LBrace) {
                    self.parse_init_list()
                } else {
                    self.parse_assign()
                };
                let e = if self.at(Punct::Ellipsis) {
                    let dots = self.bump();
                    let span = e.span.to(dots);
                    Expr { kind: ExprKind::PackExpansion(Box::new(e)), span }
                } else {
                    e
                };
                args.push(e);
                chain_max = chain_max.max(self.chain);
                if self.too_deep || self.pos == before {
                    break;
                }
                if !self.eat(Punct::Comma) {
                    break;
                }
                if close == Punct::RBrace && self.at(close) {
                    break; // trailing comma in braces
                }
            }
        }
        self.chain = chain_max.max(self.chain);
        self.no_gt = save;
        self.expect_close(close, open);
        args
    }

    /// The fold operator at the current token: `Some(None)` for a comma.
    pub(super) fn fold_op_here(&self) -> Option<Option<BinaryOp>> {
        if self.at(Punct::Comma) {
            return Some(None);
        }
        self.binop_here().map(|(op, _)| Some(op))
    }

    /// At `(`: is this a fold expression, `(... op e)` or `(e op ...)`? A
    /// `...` right after `(`, or right after a binary operator at the
    /// parenthesis' own depth, says so.
    pub(super) fn fold_follows(&self) -> bool {
        if self.at_n(1, Punct::Ellipsis) {
            return true;
        }
        let mut depth = 0usize;
        let mut k = 1;
        loop {
            let t = self.tok(k);
            match t.kind {
                TokenKind::Eof => return false,
                TokenKind::Punct(Punct::LParen | Punct::LBracket | Punct::LBrace) => depth += 1,
                TokenKind::Punct(Punct::RParen | Punct::RBracket | Punct::RBrace) => {
                    if depth == 0 {
                        return false;
                    }
                    depth -= 1;
                }
                TokenKind::Punct(Punct::Semi) => return false,
                TokenKind::Punct(Punct::Ellipsis) if depth == 0 => {
                    let prev = &self.tok(k - 1).kind;
                    return matches!(prev, TokenKind::Punct(p) if *p == Punct::Comma || binop_of(*p).is_some());
                }
                _ => {}
            }
            k += 1;
        }
    }

    /// `(... op e)`, `(e op ...)`, `(e op ... op init)`, `(init op ... op e)`.
    pub(super) fn parse_fold(&mut self) -> Expr {
        let open = self.bump();
        let save = self.no_gt;
        self.no_gt = 0;
        let e = if self.at(Punct::Ellipsis) {
            self.bump();
            let Some(op) = self.fold_op_here() else {
                self.error_here("an operator after `...` in a fold expression");
                self.no_gt = save;
                return error_expr(open);
            };
            self.bump();
            let pack = self.parse_unary();
            Expr { kind: ExprKind::Fold { op, pack: Box::new(pack), init: None, left: true }, span: open }
        } else {
            let first = self.parse_unary();
            let op = self.fold_op_here().unwrap_or(None);
            self.bump();
            self.expect(Punct::Ellipsis);
            let init = if self.fold_op_here() == Some(op) && !self.at(Punct::RParen) {
                self.bump();
                Some(Box::new(self.parse_unary()))
            } else {
                None
            };
            Expr { kind: ExprKind::Fold { op, pack: Box::new(first), init, left: false }, span: open }
        };
        self.no_gt = save;
        self.expect_close(Punct::RParen, open);
        Expr { span: open.to(self.prev_span()), ..e }
    }

    /// `[i] = v`, `[a ... b] = v` or `.name = v` inside braces.
    pub(super) fn parse_designated(&mut self) -> Expr {
        let start = self.tok(0).span;
        let designator = if self.eat(Punct::Dot) {
            let Some(name) = self.tok(0).ident().map(Rc::<str>::from) else {
                self.error_here("a field name after `.`");
                return error_expr(start);
            };
            let span = self.bump();
            Designator::Field(Ident { name, span })
        } else {
            let open = self.bump();
            let first = self.parse_assign();
            let d = if self.eat(Punct::Ellipsis) {
                Designator::Range(Box::new(first), Box::new(self.parse_assign()))
            } else {
                Designator::Index(Box::new(first))
            };
            self.expect_close(Punct::RBracket, open);
            d
        };
        self.expect(Punct::Eq);
        let value = if self.at(Punct::LBrace) { self.parse_init_list() } else { self.parse_assign() };
        let span = start.to(self.prev_span());
        Expr { kind: ExprKind::Designated { designator, value: Box::new(value) }, span }
    }

    pub(super) fn parse_init_list(&mut self) -> Expr {
        let open = self.tok(0).span;
        if !self.enter() {
            return error_expr(open);
        }
        self.bump();
        let args = self.parse_args(Punct::RBrace, open);
        self.leave();
        Expr { kind: ExprKind::InitList(args), span: open.to(self.prev_span()) }
    }

    /// `decltype(e)::name` in an expression.
    pub(super) fn parse_decltype_member(&mut self) -> Expr {
        let sp = self.bump();
        let lp = self.tok(0).span;
        self.bump();
        let save = self.no_gt;
        self.no_gt = 0;
        let e = self.parse_expr();
        self.no_gt = save;
        self.expect_close(Punct::RParen, lp);
        let ty = TypeExpr {
            kind: TypeExprKind::Decltype { expr: Box::new(e), is_const: false, addr_space: None },
            span: sp.to(self.prev_span()),
        };
        if !self.expect(Punct::ColonColon) {
            return error_expr(sp);
        }
        let Some(name) = self.tok(0).ident().map(Rc::<str>::from) else {
            self.error_here("a member name after `::`");
            return error_expr(sp);
        };
        let nsp = self.bump();
        Expr { kind: ExprKind::TypeMember { ty, name: Ident { name, span: nsp } }, span: sp.to(nsp) }
    }

    pub(super) fn parse_primary(&mut self) -> Expr {
        let t = self.tok(0).clone();
        let sp = t.span;
        if t.ident() == Some("decltype") && self.at_n(1, Punct::LParen) {
            return self.parse_decltype_member();
        }
        let lit = |kind| Expr { kind, span: sp };
        match &t.kind {
            TokenKind::Int { value, suffix, decimal } => {
                self.bump();
                return lit(ExprKind::IntLit { value: *value, unsigned: suffix.unsigned, long: suffix.long, decimal: *decimal });
            }
            TokenKind::Float { value, suffix } => {
                self.bump();
                return lit(ExprKind::FloatLit { value: *value, suffix: *suffix });
            }
            TokenKind::Char(c) => {
                self.bump();
                return lit(ExprKind::CharLit(*c));
            }
            TokenKind::Str(s) => {
                self.bump();
                let mut s: String = s.to_string();
                // Adjacent string literals concatenate.
                while let TokenKind::Str(more) = &self.tok(0).kind {
                    s.push_str(more);
                    self.bump();
                }
                return Expr { kind: ExprKind::StrLit(Rc::from(s)), span: sp.to(self.prev_span()) };
            }
            TokenKind::Punct(Punct::LParen) => {
                if self.fold_follows() {
                    return self.parse_fold();
                }
                self.bump();
                let save = self.no_gt;
                self.no_gt = 0;
                let mut e = self.parse_expr();
                self.no_gt = save;
                self.expect_close(Punct::RParen, sp);
                e.span = sp.to(self.prev_span());
                return e;
            }
            TokenKind::Punct(Punct::LBrace) => return self.parse_init_list(),
            TokenKind::Punct(Punct::ColonColon) => {}
            TokenKind::Ident(_) => {}
            TokenKind::Punct(Punct::LBracket) => {
                // `[&](float x) { … }`: say what it is rather than "expected an expression".
                let d = self.expected_here("an expression");
                self.report(
                    d.note("this looks like a lambda expression; the Metal Shading Language does not support lambdas")
                        .help("write the lambda's body as a function (a template function if it must take any type)"),
                );
                return error_expr(sp);
            }
            _ => {
                self.error_here("an expression");
                return error_expr(sp);
            }
        }
        let name = t.ident().unwrap_or("");
        match name {
            "true" | "false" => {
                self.bump();
                return lit(ExprKind::BoolLit(name == "true"));
            }
            "nullptr" => {
                self.bump();
                return lit(ExprKind::Null);
            }
            "this" => {
                self.bump();
                return lit(ExprKind::This);
            }
            // `operator>=(b, a)`: an operator function named directly.
            "operator" if self.tok(1).ident().is_none() => {
                if let Some(path) = self.parse_operator_name() {
                    return Expr { kind: ExprKind::Name(path), span: sp.to(self.prev_span()) };
                }
                return error_expr(sp);
            }
            "static_cast" | "reinterpret_cast" | "const_cast" => {
                let kind = match name {
                    "static_cast" => CastKind::Static,
                    "reinterpret_cast" => CastKind::Reinterpret,
                    _ => CastKind::Const,
                };
                self.bump();
                let lt = self.tok(0).span;
                if !self.expect(Punct::Lt) {
                    return error_expr(sp);
                }
                self.no_gt += 1;
                let ty = self.parse_type();
                self.no_gt -= 1;
                self.expect_gt(lt);
                let lp = self.tok(0).span;
                if !self.expect(Punct::LParen) {
                    return error_expr(sp);
                }
                let save = self.no_gt;
                self.no_gt = 0;
                let e = self.parse_expr();
                self.no_gt = save;
                self.expect_close(Punct::RParen, lp);
                return Expr { kind: ExprKind::Cast { kind, ty, args: vec![e], braces: false }, span: sp.to(self.prev_span()) };
            }
            _ => {}
        }
        if let Some(msg) = unsupported_keyword(name) {
            self.report(Diagnostic::error(sp, msg).label("not supported"));
            self.bump();
            return error_expr(sp);
        }
        // Functional cast `T(x)` / `T{x}`.
        if self.at_type_start() {
            let st = self.save();
            if let Some(ty) = self.attempt(|p| p.parse_base_type(&mut None)) {
                if self.at(Punct::LParen) || self.at(Punct::LBrace) {
                    let braces = self.at(Punct::LBrace);
                    let open = self.bump();
                    let close = if braces { Punct::RBrace } else { Punct::RParen };
                    let args = self.parse_args(close, open);
                    return Expr { kind: ExprKind::Cast { kind: CastKind::Functional, ty, args, braces }, span: sp.to(self.prev_span()) };
                }
            }
            self.restore(st);
        }
        if Self::is_reserved(name) && !name.is_empty() {
            self.error_here("an expression");
            return error_expr(sp);
        }
        let path = self.parse_path();
        let span = path.span;
        Expr { kind: ExprKind::Name(path), span }
    }
}
