//! Conditional groups (`#if` ... `#endif`) and the evaluation of `#if`
//! expressions.

use super::{bad_number, int_kind, Cond, PTok, Pp, HAS_MACROS, MAX_EXPR_DEPTH, MAX_IF_DEPTH};
use crate::diag::Diagnostic;
use crate::source::Span;
use crate::token::{Punct, Token, TokenKind};
use std::rc::Rc;

impl Pp<'_, '_> {
    fn is_defined(&self, name: &str) -> bool {
        self.macros.contains_key(name) || HAS_MACROS.contains(&name)
    }

    pub(super) fn open_cond(&mut self, name: &Rc<str>, dspan: Span, rest: &[Token]) {
        if self.conds.len() >= MAX_IF_DEPTH && !self.if_depth_error {
            self.if_depth_error = true;
            self.emit(
                Diagnostic::error(dspan, "`#if` nested too deeply")
                    .code("E0114")
                    .label(format!("more than {MAX_IF_DEPTH} nested conditionals"))
                    .help("flatten the conditionals, e.g. with `#elif` or `&&`"),
            );
        }
        let parent_active = self.active;
        let value = parent_active && self.cond_value(name, dspan, rest);
        self.conds.push(Cond { start: dspan, name: name.clone(), parent_active, taken: value || !parent_active, seen_else: false });
        self.active = value;
    }

    /// Value of the condition of `#if`/`#ifdef`/`#ifndef` and the `#elif` forms.
    fn cond_value(&mut self, name: &str, dspan: Span, rest: &[Token]) -> bool {
        match name {
            "if" | "elif" => self.eval_if(dspan, rest),
            _ => {
                let negate = name.ends_with("ndef");
                let Some(id) = rest.first().and_then(|t| t.ident()) else {
                    self.emit(
                        Diagnostic::error(dspan, format!("`#{name}` needs a macro name"))
                            .code("E0111")
                            .label("no macro name here")
                            .help(format!("write `#{name} NAME`")),
                    );
                    return false;
                };
                let d = self.is_defined(id);
                if rest.len() > 1 {
                    self.extra_tokens(name, &rest[1..]);
                }
                d != negate
            }
        }
    }

    fn no_if(&mut self, dspan: Span, name: &str) {
        self.emit(
            Diagnostic::error(dspan, format!("`#{name}` without `#if`"))
                .code("E0103")
                .label("no open `#if` to match")
                .help(format!("remove this `#{name}` or add the `#if` it belongs to")),
        );
    }

    pub(super) fn elif(&mut self, name: &Rc<str>, dspan: Span, rest: &[Token]) {
        let Some(c) = self.conds.last() else {
            self.no_if(dspan, name);
            return;
        };
        if c.seen_else {
            self.emit(
                Diagnostic::error(dspan, format!("`#{name}` after `#else`"))
                    .code("E0103")
                    .label("comes after the `#else` of this conditional")
                    .help("move it before the `#else`"),
            );
            self.active = false;
            return;
        }
        let (parent_active, taken) = (c.parent_active, c.taken);
        let value = parent_active && !taken && self.cond_value(name, dspan, rest);
        if let Some(c) = self.conds.last_mut() {
            c.taken |= value;
        }
        self.active = value;
    }

    pub(super) fn else_(&mut self, dspan: Span) {
        let Some(c) = self.conds.last_mut() else {
            self.no_if(dspan, "else");
            return;
        };
        if c.seen_else {
            self.emit(
                Diagnostic::error(dspan, "second `#else` in one conditional")
                    .code("E0103")
                    .label("this conditional already had an `#else`")
                    .help("remove one of the `#else` lines or add the missing `#endif`"),
            );
            self.active = false;
            return;
        }
        c.seen_else = true;
        self.active = c.parent_active && !c.taken;
        c.taken = true;
    }

    pub(super) fn endif(&mut self, dspan: Span) {
        match self.conds.pop() {
            Some(c) => self.active = c.parent_active,
            None => self.no_if(dspan, "endif"),
        }
    }

    fn eval_if(&mut self, dspan: Span, rest: &[Token]) -> bool {
        if rest.is_empty() {
            self.emit(
                Diagnostic::error(dspan, "`#if` needs a condition")
                    .code("E0111")
                    .label("no expression after this")
                    .help("write a condition such as `#if __METAL_VERSION__ >= 310`"),
            );
            return false;
        }
        let toks: Vec<PTok> = rest.iter().cloned().map(PTok::new).collect();
        let Some(toks) = self.replace_defined(toks) else {
            return false;
        };
        let toks = self.expand_isolated(toks, dspan);
        let Some(toks) = self.replace_defined(toks) else {
            return false;
        };
        let end = rest.last().map(|t| t.span.after()).unwrap_or(dspan);
        let mut ev = Eval { toks: &toks, pos: 0, depth: 0, err: None, end };
        let result = ev.cond(true).and_then(|v| {
            if let Some(t) = ev.toks.get(ev.pos) {
                ev.fail(t.tok.span, format!("unexpected `{}` in `#if` expression", t.tok.kind), "remove it or add the missing operator");
                Err(())
            } else {
                Ok(v)
            }
        });
        match result {
            Ok(v) => v != 0,
            Err(()) => {
                if let Some(d) = ev.err.take() {
                    self.emit(d);
                }
                false
            }
        }
    }

    /// Replace `defined X`, `defined(X)` and `__has_*(...)` by 0 or 1.
    fn replace_defined(&mut self, toks: Vec<PTok>) -> Option<Vec<PTok>> {
        let mut out = Vec::with_capacity(toks.len());
        let mut i = 0;
        while i < toks.len() {
            let t = &toks[i];
            let Some(id) = t.tok.ident() else {
                out.push(t.clone());
                i += 1;
                continue;
            };
            let start = t.tok.span;
            let value;
            if id == "defined" {
                let (name_tok, next) = if toks.get(i + 1).is_some_and(|u| u.tok.is_punct(Punct::LParen)) {
                    match (toks.get(i + 2), toks.get(i + 3)) {
                        (Some(n), Some(r)) if n.tok.ident().is_some() && r.tok.is_punct(Punct::RParen) => (Some(n), i + 4),
                        _ => (None, i),
                    }
                } else {
                    match toks.get(i + 1) {
                        Some(n) if n.tok.ident().is_some() => (Some(n), i + 2),
                        _ => (None, i),
                    }
                };
                let Some(n) = name_tok.and_then(|n| n.tok.ident()) else {
                    self.emit(
                        Diagnostic::error(start, "`defined` needs a macro name")
                            .code("E0111")
                            .label("no macro name after this")
                            .help("write `defined(NAME)` or `defined NAME`"),
                    );
                    return None;
                };
                value = self.is_defined(n);
                i = next;
            } else if HAS_MACROS.contains(&id) {
                if !toks.get(i + 1).is_some_and(|u| u.tok.is_punct(Punct::LParen)) {
                    self.emit(
                        Diagnostic::error(start, format!("`{id}` needs an argument in parentheses"))
                            .code("E0111")
                            .help(format!("write `{id}(...)`")),
                    );
                    return None;
                }
                let mut depth = 0usize;
                let mut j = i + 1;
                let mut inner = String::new();
                let mut quoted = false;
                loop {
                    let Some(u) = toks.get(j) else {
                        self.emit(
                            Diagnostic::error(start, format!("missing `)` after `{id}(`")).code("E0111").help("close the parentheses"),
                        );
                        return None;
                    };
                    j += 1;
                    if u.tok.is_punct(Punct::LParen) {
                        depth += 1;
                        if depth == 1 {
                            continue;
                        }
                    } else if u.tok.is_punct(Punct::RParen) {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    match &u.tok.kind {
                        TokenKind::Str(s) => {
                            quoted = true;
                            inner.push_str(s)
                        }
                        _ => inner.push_str(&self.spell(u)),
                    }
                }
                value = id.starts_with("__has_include") && self.header_exists(inner.trim_matches(['<', '>']), quoted, start.file);
                i = j;
            } else {
                out.push(t.clone());
                i += 1;
                continue;
            }
            let mut tok = Token::new(int_kind(value as u64), start);
            tok.space_before = true;
            out.push(PTok::new(tok));
        }
        Some(out)
    }
}

/// Evaluator of `#if` expressions (after macro expansion): C precedence,
/// i64 arithmetic, short-circuit `&&`, `||` and `?:`.
struct Eval<'a> {
    toks: &'a [PTok],
    pos: usize,
    depth: usize,
    err: Option<Diagnostic>,
    end: Span,
}

impl Eval<'_> {
    fn fail(&mut self, span: Span, msg: String, help: &str) {
        if self.err.is_none() {
            self.err = Some(Diagnostic::error(span, msg).code("E0111").help(help.to_string()));
        }
    }

    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn eat(&mut self, p: Punct) -> bool {
        if self.peek().is_some_and(|t| t.is_punct(p)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn enter(&mut self) -> Result<(), ()> {
        self.depth += 1;
        if self.depth > MAX_EXPR_DEPTH {
            let span = self.peek().map(|t| t.span).unwrap_or(self.end);
            self.fail(span, "`#if` expression nested too deeply".into(), "simplify the expression");
            return Err(());
        }
        Ok(())
    }

    fn cond(&mut self, live: bool) -> Result<i64, ()> {
        self.enter()?;
        let c = self.binary(1, live)?;
        let r = if self.eat(Punct::Question) {
            let a = self.cond(live && c != 0)?;
            if !self.eat(Punct::Colon) {
                let span = self.peek().map(|t| t.span).unwrap_or(self.end);
                self.fail(span, "expected `:` in `?:` of `#if` expression".into(), "write `cond ? a : b`");
                return Err(());
            }
            let b = self.cond(live && c == 0)?;
            if c != 0 {
                a
            } else {
                b
            }
        } else {
            c
        };
        self.depth -= 1;
        Ok(r)
    }

    fn binop(&self) -> Option<(Punct, u8)> {
        let TokenKind::Punct(p) = self.peek()?.kind else {
            return None;
        };
        use Punct::*;
        let prec = match p {
            OrOr => 1,
            AndAnd => 2,
            Pipe => 3,
            Caret => 4,
            Amp => 5,
            EqEq | NotEq => 6,
            Lt | Gt | Le | Ge => 7,
            Shl | Shr => 8,
            Plus | Minus => 9,
            Star | Slash | Percent => 10,
            _ => return None,
        };
        Some((p, prec))
    }

    fn binary(&mut self, min: u8, live: bool) -> Result<i64, ()> {
        let mut lhs = self.unary(live)?;
        while let Some((op, prec)) = self.binop() {
            if prec < min {
                break;
            }
            let op_span = self.peek().map(|t| t.span).unwrap_or(self.end);
            self.pos += 1;
            let rhs = match op {
                Punct::AndAnd => self.binary(prec + 1, live && lhs != 0)?,
                Punct::OrOr => self.binary(prec + 1, live && lhs == 0)?,
                _ => self.binary(prec + 1, live)?,
            };
            lhs = self.apply(op, lhs, rhs, live, op_span)?;
        }
        Ok(lhs)
    }

    fn apply(&mut self, op: Punct, a: i64, b: i64, live: bool, span: Span) -> Result<i64, ()> {
        use Punct::*;
        Ok(match op {
            OrOr => ((a != 0) || (b != 0)) as i64,
            AndAnd => ((a != 0) && (b != 0)) as i64,
            Pipe => a | b,
            Caret => a ^ b,
            Amp => a & b,
            EqEq => (a == b) as i64,
            NotEq => (a != b) as i64,
            Lt => (a < b) as i64,
            Gt => (a > b) as i64,
            Le => (a <= b) as i64,
            Ge => (a >= b) as i64,
            Shl if (0..64).contains(&b) => a.wrapping_shl(b as u32),
            Shl => 0,
            Shr if (0..64).contains(&b) => a.wrapping_shr(b as u32),
            Shr if a < 0 => -1,
            Shr => 0,
            Plus => a.wrapping_add(b),
            Minus => a.wrapping_sub(b),
            Star => a.wrapping_mul(b),
            Slash | Percent => {
                if b == 0 {
                    if live {
                        let what = if op == Slash { "division" } else { "remainder" };
                        self.fail(
                            span,
                            format!("{what} by zero in `#if` expression"),
                            "make sure the divisor cannot be zero, e.g. guard it with `?:`",
                        );
                        if let Some(d) = self.err.as_mut() {
                            d.code = Some("E0112");
                        }
                        return Err(());
                    }
                    0
                } else if op == Slash {
                    a.wrapping_div(b)
                } else {
                    a.wrapping_rem(b)
                }
            }
            _ => 0,
        })
    }

    fn unary(&mut self, live: bool) -> Result<i64, ()> {
        let Some(t) = self.peek() else {
            self.fail(self.end, "expected a value at the end of the `#if` expression".into(), "complete the expression");
            return Err(());
        };
        let op = match t.kind {
            TokenKind::Punct(p @ (Punct::Plus | Punct::Minus | Punct::Bang | Punct::Tilde)) => p,
            _ => return self.primary(live),
        };
        self.pos += 1;
        self.enter()?;
        let v = self.unary(live)?;
        self.depth -= 1;
        Ok(match op {
            Punct::Minus => v.wrapping_neg(),
            Punct::Bang => (v == 0) as i64,
            Punct::Tilde => !v,
            _ => v,
        })
    }

    fn primary(&mut self, live: bool) -> Result<i64, ()> {
        let Some(t) = self.peek().cloned() else {
            self.fail(self.end, "expected a value at the end of the `#if` expression".into(), "complete the expression");
            return Err(());
        };
        self.pos += 1;
        match &t.kind {
            TokenKind::Int { value, .. } => Ok(*value as i64),
            TokenKind::Char(c) => Ok(*c as i64),
            TokenKind::BadNumber(b) => {
                if self.err.is_none() {
                    self.err = Some(bad_number(t.span, &b.raw, &b.problem));
                }
                Err(())
            }
            TokenKind::Ident(name) => {
                if self.peek().is_some_and(|u| u.is_punct(Punct::LParen)) {
                    self.fail(
                        t.span,
                        format!("`{name}` is not a defined function-like macro"),
                        "define the macro before this line, or test it with `defined(NAME)`",
                    );
                    return Err(());
                }
                Ok(match &**name {
                    "true" => 1,
                    _ => 0,
                })
            }
            TokenKind::Punct(Punct::LParen) => {
                let v = self.cond(live)?;
                if !self.eat(Punct::RParen) {
                    let span = self.peek().map(|t| t.span).unwrap_or(self.end);
                    self.fail(span, "expected `)` in `#if` expression".into(), "close the parenthesis");
                    return Err(());
                }
                Ok(v)
            }
            TokenKind::Float { .. } => {
                self.fail(
                    t.span,
                    "floating-point number in `#if` expression".into(),
                    "`#if` works on integers only; compare integers instead",
                );
                Err(())
            }
            other => {
                self.fail(
                    t.span,
                    format!("unexpected `{other}` in `#if` expression"),
                    "`#if` takes an integer expression of numbers, macros and operators",
                );
                Err(())
            }
        }
    }
}
