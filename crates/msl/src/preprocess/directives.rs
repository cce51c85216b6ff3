//! Directive dispatch and `#define`.

use super::{Macro, MacroKind, Pp, HAS_MACROS};
use crate::diag::{suggest, Diagnostic};
use crate::source::Span;
use crate::token::{Punct, Token, TokenKind};
use std::cell::Cell;
use std::rc::Rc;

const DIRECTIVES: &[&str] = &[
    "define", "undef", "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif", "include", "error", "warning", "pragma",
    "line",
];

impl Pp<'_, '_> {
    pub(super) fn directive(&mut self, hash: &Token, line: &[Token]) {
        let Some(first) = line.first() else {
            return; // null directive
        };
        let dspan = hash.span.to(first.span);
        let name: Rc<str> = match &first.kind {
            TokenKind::Ident(n) => n.clone(),
            // GNU line marker `# 12 "file"`.
            TokenKind::Int { .. } => return,
            _ => {
                if self.active {
                    self.emit(
                        Diagnostic::error(dspan, format!("expected a directive name after `#`, found `{}`", first.kind))
                            .code("E0101")
                            .label("not a preprocessor directive")
                            .help("directives look like `#define`, `#if`, `#include`; remove the stray `#`"),
                    );
                }
                return;
            }
        };
        let rest = &line[1..];
        match &*name {
            "if" | "ifdef" | "ifndef" => self.open_cond(&name, dspan, rest),
            "elif" | "elifdef" | "elifndef" => self.elif(&name, dspan, rest),
            "else" => {
                self.extra_tokens(&name, rest);
                self.else_(dspan)
            }
            "endif" => {
                self.extra_tokens(&name, rest);
                self.endif(dspan)
            }
            _ if !self.active => {}
            "define" => self.define(dspan, rest),
            "undef" => {
                match rest.first().and_then(|t| t.ident().map(|n| (t, n))) {
                    Some((_, n)) => {
                        self.macros.remove(n);
                    }
                    None => self.emit(Diagnostic::error(dspan, "`#undef` needs a macro name").code("E0106").help("write `#undef NAME`")),
                }
                if rest.len() > 1 {
                    self.extra_tokens(&name, &rest[1..]);
                }
            }
            "include" | "include_next" | "import" => self.include(&name, dspan, rest),
            "error" | "warning" => {
                let text = self.line_text(rest);
                let d = if &*name == "error" {
                    let msg = if text.is_empty() { "#error".to_string() } else { text };
                    Diagnostic::error(dspan, msg).code("E0104").label("`#error` directive")
                } else {
                    let msg = if text.is_empty() { "#warning".to_string() } else { text };
                    Diagnostic::warning(dspan, msg).code("W0101").label("`#warning` directive")
                };
                self.emit(d);
            }
            "pragma" => {
                if rest.first().and_then(|t| t.ident()) == Some("once") {
                    self.once.insert(dspan.file);
                }
            }
            "line" | "ident" | "sccs" => {}
            other => {
                let mut d =
                    Diagnostic::error(dspan, format!("unknown preprocessor directive `#{other}`")).code("E0101").label("not a directive");
                if let Some(s) = suggest(other, DIRECTIVES.iter().copied()) {
                    d = d.help(format!("did you mean `#{s}`?"));
                } else {
                    d = d.help("known directives: #define, #undef, #if, #ifdef, #ifndef, #elif, #else, #endif, #include, #error, #warning, #pragma");
                }
                self.emit(d);
            }
        }
    }

    /// The user's text of a directive's operands.
    fn line_text(&self, rest: &[Token]) -> String {
        match (rest.first(), rest.last()) {
            (Some(a), Some(b)) if a.span.file == b.span.file => self.sources.snippet(a.span.to(b.span)).trim().to_string(),
            _ => String::new(),
        }
    }

    pub(super) fn extra_tokens(&mut self, name: &str, rest: &[Token]) {
        if let (Some(a), Some(b)) = (rest.first(), rest.last()) {
            self.emit(
                Diagnostic::warning(a.span.to(b.span), format!("extra tokens at end of `#{name}` directive"))
                    .code("W0103")
                    .label("ignored")
                    .help("remove them, or turn them into a `//` comment"),
            );
        }
    }

    fn define(&mut self, dspan: Span, rest: &[Token]) {
        let err = |span: Span, msg: &str, help: &str| Diagnostic::error(span, msg.to_string()).code("E0106").help(help.to_string());
        let Some(nt) = rest.first() else {
            self.emit(err(dspan, "`#define` needs a macro name", "write `#define NAME value`"));
            return;
        };
        let Some(name) = nt.ident() else {
            self.emit(err(nt.span, "macro name must be an identifier", "write `#define NAME value`").label("not an identifier"));
            return;
        };
        if name == "defined" || HAS_MACROS.contains(&name) {
            self.emit(err(nt.span, &format!("`{name}` cannot be defined as a macro"), "choose another name").label("reserved"));
            return;
        }
        let mut kind = MacroKind::Object;
        let mut params: Vec<Rc<str>> = Vec::new();
        let mut i = 1;
        if rest.get(1).is_some_and(|t| t.is_punct(Punct::LParen) && !t.space_before) {
            i = 2;
            let mut variadic = false;
            let bad = |span: Span| {
                err(span, "malformed macro parameter list", "write parameters as `NAME(a, b)` or `NAME(a, ...)`")
                    .label("expected a parameter name, `...` or `)`")
            };
            loop {
                let Some(t) = rest.get(i) else {
                    self.diags.push(bad(rest[i - 1].span.after()).label("missing `)`"));
                    return;
                };
                i += 1;
                if t.is_punct(Punct::RParen) && params.is_empty() {
                    break;
                }
                if t.is_punct(Punct::Ellipsis) {
                    params.push(Rc::from("__VA_ARGS__"));
                    variadic = true;
                } else if let Some(p) = t.ident() {
                    if p == "__VA_ARGS__" || params.iter().any(|q| &**q == p) {
                        self.emit(
                            err(t.span, &format!("invalid or duplicate macro parameter `{p}`"), "give each parameter a distinct name")
                                .label("here"),
                        );
                        return;
                    }
                    params.push(Rc::from(p));
                    if rest.get(i).is_some_and(|t| t.is_punct(Punct::Ellipsis)) {
                        variadic = true;
                        i += 1;
                    }
                } else {
                    self.emit(bad(t.span));
                    return;
                }
                match rest.get(i) {
                    Some(t) if t.is_punct(Punct::RParen) => {
                        i += 1;
                        break;
                    }
                    Some(t) if t.is_punct(Punct::Comma) && !variadic => i += 1,
                    Some(t) => {
                        self.emit(bad(t.span));
                        return;
                    }
                    None => {
                        self.diags.push(bad(rest[i - 1].span.after()).label("missing `)`"));
                        return;
                    }
                }
            }
            kind = MacroKind::Function { variadic };
        }
        let body: Vec<Token> = rest[i..].to_vec();
        let param_at: Vec<Option<usize>> = body.iter().map(|t| t.ident().and_then(|n| params.iter().position(|p| &**p == n))).collect();
        // `##` cannot start or end the body; `#` must precede a parameter.
        for (k, t) in body.iter().enumerate() {
            if t.is_punct(Punct::HashHash) && (k == 0 || k + 1 == body.len()) {
                self.emit(
                    Diagnostic::error(t.span, "`##` cannot appear at either end of a macro body")
                        .code("E0106")
                        .label("nothing to paste on this side")
                        .help("put a token on both sides of `##`, or remove it"),
                );
                return;
            }
            if matches!(kind, MacroKind::Function { .. }) && t.is_punct(Punct::Hash) && param_at.get(k + 1).copied().flatten().is_none() {
                self.emit(
                    Diagnostic::error(t.span, "`#` must be followed by a macro parameter name")
                        .code("E0106")
                        .label("`#` turns a parameter into a string")
                        .help("write `#param`, or use `##` to paste tokens"),
                );
                return;
            }
        }
        let mut raw_uses = vec![0u32; params.len()];
        let mut exp_uses = vec![0u32; params.len()];
        for (k, p) in param_at.iter().enumerate() {
            let Some(p) = *p else { continue };
            let before = k.checked_sub(1).and_then(|j| body.get(j));
            let raw = before.is_some_and(|t| t.is_punct(Punct::Hash) || t.is_punct(Punct::HashHash))
                || body.get(k + 1).is_some_and(|t| t.is_punct(Punct::HashHash));
            if raw {
                raw_uses[p] += 1;
            } else {
                exp_uses[p] += 1;
            }
        }
        let name: Rc<str> = Rc::from(name);
        let m = Macro { name: name.clone(), kind, params, body, param_at, raw_uses, exp_uses, def_span: nt.span, disabled: Cell::new(0) };
        if let Some(old) = self.macros.get(&name) {
            if !old.same_definition(&m) {
                self.emit(
                    Diagnostic::warning(nt.span, format!("macro `{name}` redefined"))
                        .code("W0102")
                        .label("new definition")
                        .with_secondary(old.def_span, "previous definition")
                        .help(format!("add `#undef {name}` before redefining it if this is intended")),
                );
            }
        }
        self.macros.insert(name, Rc::new(m));
    }
}
