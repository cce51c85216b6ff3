//! Macro expansion: invocations, argument collection, substitution with
//! `#` and `##`, and expansion of token lists in isolation.

use super::{int_kind, Builtin, Ctx, Macro, MacroKind, Operand, PTok, Pp, MAX_ARG_NESTING, MAX_EXPANSION_WORK, MAX_SYNTH_LEN};
use crate::diag::{Diagnostic, Diagnostics};
use crate::lex;
use crate::source::Span;
use crate::token::{Punct, Token, TokenKind};
use std::rc::Rc;

impl Pp<'_, '_> {
    /// Next fully macro-expanded token.
    pub(super) fn expand_next(&mut self) -> PTok {
        loop {
            let mut t = self.next_raw();
            if t.noexp || self.too_large {
                return t;
            }
            let TokenKind::Ident(name) = &t.tok.kind else {
                return t;
            };
            let Some(m) = self.macros.get(name).cloned() else {
                if &**name == "_Pragma" && self.peek_is_lparen() {
                    self.skip_pragma_operator();
                    continue;
                }
                return t;
            };
            if m.disabled.get() > 0 {
                t.noexp = true;
                return t;
            }
            match m.kind {
                MacroKind::Builtin(b) => return self.builtin(b, &t),
                MacroKind::Object => {
                    let toks = self.substitute(&m, &t, t.tok.span, Vec::new());
                    self.push_ctx(toks, m);
                }
                MacroKind::Function { .. } => {
                    if !self.peek_is_lparen() {
                        return t;
                    }
                    let _lparen = self.next_raw();
                    let Some((mut args, close)) = self.collect_args(&m, &t) else {
                        // Unterminated: everything up to the end was eaten;
                        // the next read yields the end of input.
                        continue;
                    };
                    let inv = t.tok.span.to(close);
                    if !self.check_arg_count(&m, &mut args, inv) {
                        continue;
                    }
                    let toks = self.substitute(&m, &t, inv, args);
                    self.push_ctx(toks, m);
                }
            }
        }
    }

    /// `_Pragma("...")`: consumed and ignored, like `#pragma`.
    fn skip_pragma_operator(&mut self) {
        let _lparen = self.next_raw();
        let mut depth = 0usize;
        loop {
            let t = self.next_raw();
            match t.tok.kind {
                TokenKind::Eof => return,
                TokenKind::Punct(Punct::LParen) => depth += 1,
                TokenKind::Punct(Punct::RParen) => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                }
                _ => {}
            }
        }
    }

    fn push_ctx(&mut self, toks: Vec<PTok>, m: Rc<Macro>) {
        if self.too_large || toks.is_empty() {
            return;
        }
        let mut toks = toks;
        toks.reverse();
        m.disabled.set(m.disabled.get().saturating_add(1));
        self.stack.push(Ctx { toks, mac: Some(m) });
    }

    fn builtin(&mut self, b: Builtin, t: &PTok) -> PTok {
        let span = t.tok.span;
        let (kind, text) = match b {
            Builtin::Line => {
                let line = self.sources.file(span.file).line_of(span.lo) as u64;
                (int_kind(line), line.to_string())
            }
            Builtin::Counter => {
                let c = self.counter;
                self.counter += 1;
                (int_kind(c), c.to_string())
            }
            Builtin::File => {
                let name = self.sources.file(span.file).name.clone();
                let text = quote_literal(&name);
                (TokenKind::Str(Rc::from(name.as_str())), text)
            }
        };
        let mut tok = Token::new(kind, span);
        tok.space_before = t.tok.space_before;
        tok.line_start = t.tok.line_start;
        PTok { tok, noexp: false, text: Some(Rc::from(text.as_str())) }
    }

    /// Read the arguments of a call whose `(` was just consumed. Returns the
    /// arguments and the span of the closing `)`, or `None` (after an error)
    /// if the input ends first.
    fn collect_args(&mut self, m: &Macro, name: &PTok) -> Option<(Vec<Vec<PTok>>, Span)> {
        let nparams = m.params.len();
        let variadic = matches!(m.kind, MacroKind::Function { variadic: true });
        let mut args: Vec<Vec<PTok>> = vec![Vec::new()];
        let mut depth = 0usize;
        loop {
            let t = self.next_raw();
            match t.tok.kind {
                TokenKind::Eof => {
                    self.emit(
                        Diagnostic::error(name.tok.span, format!("unterminated call to macro `{}`", m.name))
                            .code("E0109")
                            .label("the argument list of this call is never closed")
                            .help("add the missing `)` to close the macro arguments"),
                    );
                    return None;
                }
                TokenKind::Punct(Punct::LParen) => depth += 1,
                TokenKind::Punct(Punct::RParen) => {
                    if depth == 0 {
                        return Some((args, t.tok.span));
                    }
                    depth -= 1;
                }
                TokenKind::Punct(Punct::Comma) if depth == 0 && !(variadic && args.len() >= nparams) => {
                    args.push(Vec::new());
                    continue;
                }
                _ => {}
            }
            if let Some(last) = args.last_mut() {
                last.push(t);
            }
        }
    }

    fn check_arg_count(&mut self, m: &Macro, args: &mut Vec<Vec<PTok>>, inv: Span) -> bool {
        let n = m.params.len();
        let variadic = matches!(m.kind, MacroKind::Function { variadic: true });
        if n == 0 && args.len() == 1 && args[0].is_empty() {
            args.clear();
            return true;
        }
        if variadic && args.len() + 1 == n {
            args.push(Vec::new());
        }
        if args.len() == n {
            return true;
        }
        let want = if variadic { format!("at least {}", n - 1) } else { n.to_string() };
        let plural = if n == 1 && !variadic { "" } else { "s" };
        self.emit(
            Diagnostic::error(inv, format!("macro `{}` takes {want} argument{plural}, but {} were given", m.name, args.len()))
                .code("E0108")
                .label("wrong number of macro arguments")
                .with_secondary(m.def_span, "macro defined here")
                .help("commas split macro arguments; wrap an argument that contains commas in parentheses"),
        );
        false
    }

    /// Build the replacement of one invocation: parameters substituted,
    /// `#` and `##` applied. `inv` is the invocation's span.
    fn substitute(&mut self, m: &Macro, name: &PTok, inv: Span, mut args: Vec<Vec<PTok>>) -> Vec<PTok> {
        let is_fn = matches!(m.kind, MacroKind::Function { .. });
        let variadic = matches!(m.kind, MacroKind::Function { variadic: true });
        let body = &m.body;
        let mut out: Vec<PTok> = Vec::with_capacity(body.len());
        let mut expanded: Vec<Option<Vec<PTok>>> = Vec::new();
        expanded.resize_with(args.len(), || None);
        // Remaining uses, so that the last use can move instead of copy.
        let mut left: Vec<(u32, u32)> =
            (0..args.len()).map(|p| (m.raw_uses.get(p).copied().unwrap_or(0), m.exp_uses.get(p).copied().unwrap_or(0))).collect();
        let mut pending_paste: Option<Span> = None;
        let mut last_empty = false;
        // `__VA_OPT__(...)`: with variable arguments, its contents are read
        // in place and this is the index of its closing `)` to skip.
        let mut va_opt_close: Option<usize> = None;
        let va_empty = args.last().is_none_or(|a| a.is_empty());
        let mut i = 0;
        while i < body.len() {
            let bt = &body[i];
            if bt.is_punct(Punct::HashHash) {
                pending_paste = Some(bt.span);
                i += 1;
                continue;
            }
            if va_opt_close == Some(i) {
                va_opt_close = None;
                i += 1;
                continue;
            }
            let va_opt = if variadic && va_opt_close.is_none() && bt.is_ident("__VA_OPT__") { va_opt_end(body, i) } else { None };
            if let (Some(close), false) = (va_opt, va_empty) {
                va_opt_close = Some(close);
                i += 2;
                continue;
            }
            let param_here = |k: usize| {
                if is_fn {
                    m.param_at.get(k).copied().flatten().filter(|&p| p < args.len())
                } else {
                    None
                }
            };
            let mut is_va = false;
            let operand: Operand = if is_fn && bt.is_punct(Punct::Hash) && param_here(i + 1).is_some() {
                let p = param_here(i + 1).unwrap_or(0);
                let def = bt.span.to(body[i + 1].span);
                i += 2;
                left[p].0 = left[p].0.saturating_sub(1);
                Operand::One(self.stringify(&args[p], def, inv))
            } else if let Some(p) = param_here(i) {
                is_va = variadic && p + 1 == m.params.len();
                let next_is_paste = body.get(i + 1).is_some_and(|t| t.is_punct(Punct::HashHash));
                i += 1;
                let mut v = if pending_paste.is_some() || next_is_paste {
                    left[p].0 = left[p].0.saturating_sub(1);
                    if left[p].0 == 0 && (left[p].1 == 0 || expanded[p].is_some()) {
                        std::mem::take(&mut args[p])
                    } else {
                        args[p].clone()
                    }
                } else {
                    if expanded[p].is_none() {
                        let input = if left[p].0 == 0 { std::mem::take(&mut args[p]) } else { args[p].clone() };
                        expanded[p] = Some(self.expand_isolated(input, inv));
                    }
                    left[p].1 = left[p].1.saturating_sub(1);
                    if left[p].1 == 0 {
                        expanded[p].take().unwrap_or_default()
                    } else {
                        expanded[p].clone().unwrap_or_default()
                    }
                };
                if let Some(f) = v.first_mut() {
                    f.tok.space_before = bt.space_before;
                }
                Operand::Many(v)
            } else if let Some(close) = va_opt {
                // No variable arguments: `__VA_OPT__(...)` is a placemarker.
                i = close + 1;
                Operand::Many(Vec::new())
            } else {
                i += 1;
                let mut tok = bt.clone();
                tok.span = inv;
                tok.macro_def = Some(bt.span);
                tok.line_start = false;
                Operand::One(PTok::new(tok))
            };
            let n = match &operand {
                Operand::One(_) => 1,
                Operand::Many(v) => v.len(),
            };
            self.work = self.work.saturating_add(n);
            if self.work > MAX_EXPANSION_WORK {
                self.report_too_large(inv);
                return Vec::new();
            }
            if let Some(hash_span) = pending_paste.take() {
                let operand = match operand {
                    Operand::One(t) => vec![t],
                    Operand::Many(v) => v,
                };
                let lhs_is_comma = !last_empty && out.last().is_some_and(|t| t.tok.is_punct(Punct::Comma));
                if is_va && lhs_is_comma {
                    // GNU `, ## __VA_ARGS__`: drop the comma when there are
                    // no variable arguments, otherwise keep both.
                    if operand.is_empty() {
                        out.pop();
                    } else {
                        out.extend(operand);
                    }
                    last_empty = false;
                    continue;
                }
                if operand.is_empty() {
                    // `x ## <empty>` is `x`; two empty sides stay empty.
                } else if last_empty {
                    out.extend(operand);
                    last_empty = false;
                } else {
                    let mut rest = operand.into_iter();
                    let lhs = out.pop();
                    let rhs = rest.next();
                    if let (Some(lhs), Some(rhs)) = (lhs, rhs) {
                        out.extend(self.paste(lhs, rhs, hash_span, inv));
                    }
                    out.extend(rest);
                    last_empty = false;
                    continue;
                }
                continue;
            }
            match operand {
                Operand::One(t) => {
                    last_empty = false;
                    out.push(t);
                }
                Operand::Many(v) => {
                    last_empty = v.is_empty();
                    out.extend(v);
                }
            }
        }
        if let Some(f) = out.first_mut() {
            f.tok.space_before = name.tok.space_before;
            f.tok.line_start = name.tok.line_start;
        }
        out
    }

    /// Fully macro-expand a token list on its own (a macro argument or an
    /// `#if` line), without reading past its end.
    pub(super) fn expand_isolated(&mut self, toks: Vec<PTok>, span: Span) -> Vec<PTok> {
        if toks.is_empty() || self.too_large {
            return toks;
        }
        // Fast path: nothing in the list can expand, so expansion is the identity.
        if !toks.iter().any(|t| !t.noexp && t.tok.ident().is_some_and(|n| n == "_Pragma" || self.macros.contains_key(n))) {
            return toks;
        }
        if self.arg_depth >= MAX_ARG_NESTING {
            if !self.nest_error {
                self.nest_error = true;
                self.emit(
                    Diagnostic::error(span, "macro calls nested too deeply inside macro arguments")
                        .code("E0113")
                        .label(format!("more than {MAX_ARG_NESTING} levels of nested macro arguments"))
                        .help("split the expression into several simpler ones"),
                );
            }
            return toks;
        }
        self.work = self.work.saturating_add(toks.len());
        if self.work > MAX_EXPANSION_WORK {
            self.report_too_large(span);
            return toks;
        }
        let saved_stack = std::mem::take(&mut self.stack);
        let saved_isolated = std::mem::replace(&mut self.isolated, true);
        self.arg_depth += 1;
        let mut rev = toks;
        rev.reverse();
        self.stack.push(Ctx { toks: rev, mac: None });
        let mut out = Vec::new();
        loop {
            let t = self.expand_next();
            if t.tok.kind == TokenKind::Eof {
                break;
            }
            out.push(t);
        }
        while let Some(ctx) = self.stack.pop() {
            if let Some(m) = ctx.mac {
                m.disabled.set(m.disabled.get().saturating_sub(1));
            }
        }
        self.arg_depth -= 1;
        self.isolated = saved_isolated;
        self.stack = saved_stack;
        out
    }

    /// The source spelling of a token.
    pub(super) fn spell(&self, t: &PTok) -> String {
        if let Some(s) = &t.text {
            return s.to_string();
        }
        match &t.tok.kind {
            TokenKind::Ident(s) => s.to_string(),
            TokenKind::Punct(p) => p.as_str().to_string(),
            TokenKind::Eof => String::new(),
            other => {
                let s = self.sources.snippet(t.tok.macro_def.unwrap_or(t.tok.span));
                if s.is_empty() {
                    other.to_string()
                } else {
                    s.to_string()
                }
            }
        }
    }

    /// `#param`: the argument's spelling as a string literal.
    fn stringify(&mut self, arg: &[PTok], def: Span, inv: Span) -> PTok {
        let mut value = String::new();
        let mut lit = String::from("\"");
        for (k, t) in arg.iter().enumerate() {
            if k > 0 && t.tok.space_before {
                value.push(' ');
                lit.push(' ');
            }
            let s = self.spell(t);
            value.push_str(&s);
            if matches!(t.tok.kind, TokenKind::Str(_) | TokenKind::Char(_)) {
                for c in s.chars() {
                    if c == '"' || c == '\\' {
                        lit.push('\\');
                    }
                    lit.push(c);
                }
            } else {
                lit.push_str(&s);
            }
            if lit.len() > MAX_SYNTH_LEN {
                self.emit(
                    Diagnostic::error(inv, "stringified macro argument is too long")
                        .code("E0113")
                        .label(format!("`#` would make a string of more than {MAX_SYNTH_LEN} bytes")),
                );
                value.clear();
                lit = String::from("\"");
                break;
            }
        }
        lit.push('"');
        self.work = self.work.saturating_add(lit.len() / 16);
        let mut tok = Token::new(TokenKind::Str(Rc::from(value.as_str())), inv);
        tok.macro_def = Some(def);
        PTok { tok, noexp: false, text: Some(Rc::from(lit.as_str())) }
    }

    /// `lhs ## rhs`: one token re-lexed from the joined spellings, or both
    /// tokens unchanged (after an error) if that is not exactly one token.
    fn paste(&mut self, lhs: PTok, rhs: PTok, hash_span: Span, inv: Span) -> Vec<PTok> {
        let a = self.spell(&lhs);
        let b = self.spell(&rhs);
        let text = format!("{a}{b}");
        if text.len() > MAX_SYNTH_LEN {
            self.emit(
                Diagnostic::error(inv, "token made by `##` is too long")
                    .code("E0113")
                    .label(format!("`##` would make a token of more than {MAX_SYNTH_LEN} bytes")),
            );
            return vec![lhs];
        }
        self.work = self.work.saturating_add(text.len() / 16);
        let mut d = Diagnostics::new();
        let toks = lex::lex(self.main, &text, &mut d);
        if toks.len() == 2 && !d.has_errors() && toks[1].kind == TokenKind::Eof {
            let mut tok = Token::new(toks[0].kind.clone(), inv);
            tok.macro_def = Some(lhs.tok.macro_def.unwrap_or(hash_span).to(rhs.tok.macro_def.unwrap_or(hash_span)));
            tok.space_before = lhs.tok.space_before;
            return vec![PTok { tok, noexp: false, text: Some(Rc::from(text.as_str())) }];
        }
        self.emit(
            Diagnostic::error(inv, format!("pasting `{a}` and `{b}` does not give a valid token"))
                .code("E0110")
                .label(format!("`##` makes `{text}` here"))
                .with_secondary(hash_span, "`##` used here")
                .help("`##` must form one identifier, number or operator; remove `##` to keep the tokens separate"),
        );
        vec![lhs, rhs]
    }
}

/// Index of the `)` closing `__VA_OPT__(` whose name is at `body[i]`.
fn va_opt_end(body: &[Token], i: usize) -> Option<usize> {
    if !body.get(i + 1)?.is_punct(Punct::LParen) {
        return None;
    }
    let mut depth = 0usize;
    for (k, t) in body.iter().enumerate().skip(i + 1) {
        if t.is_punct(Punct::LParen) {
            depth += 1;
        } else if t.is_punct(Punct::RParen) {
            depth -= 1;
            if depth == 0 {
                return Some(k);
            }
        }
    }
    None
}

/// A C string literal spelling of `s`.
fn quote_literal(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}
