//! The parser: a preprocessed token stream to a [`TranslationUnit`].
//!
//! Hand-written recursive descent with precedence climbing for binary
//! operators. It never panics: token access past the end yields `Eof`, every
//! loop consumes a token or exits, and recursion is bounded by a depth
//! counter. Errors are collected; after one error the parser stays quiet
//! until it has resynchronised at a statement or item boundary.

use crate::ast::*;
use crate::diag::{Diagnostic, Diagnostics};
use crate::source::Span;
use crate::token::{Punct, Token, TokenKind};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::rc::Rc;

type NameSet = HashSet<Rc<str>>;

/// Deepest nesting of template argument lists (`a<b<c<...>>>`).
const MAX_TEMPLATE_NESTING: u32 = 10;

/// Nesting limit for expressions, statements and types together.
pub const MAX_DEPTH: u32 = 256;
/// Operators one statement may chain: `a + b + c` is a tree as deep as it is
/// long (and so are `a, b, c`, `x.y.z` and `f()()`), and every later stage
/// walks trees recursively. A separate limit from `MAX_DEPTH` so that a long
/// sum is reported as long, not as nested.
pub const MAX_CHAIN: u32 = 10_000;
const MAX_STRUCT_DEPTH: u32 = 32;

/// Parse a preprocessed token stream (ends with Eof) into a translation unit.
/// Never panics; collects errors and recovers.
pub fn parse(tokens: &[Token], diags: &mut Diagnostics) -> TranslationUnit {
    // GNU's `__extension__` (before an anonymous union, a declaration or an
    // expression) only silences pedantic warnings: it is dropped.
    let kept: Vec<Token>;
    let tokens = if tokens.iter().any(|t| t.is_ident("__extension__")) {
        kept = tokens.iter().filter(|t| !t.is_ident("__extension__")).cloned().collect();
        &kept[..]
    } else {
        tokens
    };
    let mut p = Parser::new(tokens, diags);
    let mut items = Vec::new();
    while !p.at_eof() {
        let before = p.pos;
        if p.at(Punct::RBrace) {
            let t = p.tok(0).span;
            p.report(
                Diagnostic::error(t, "unexpected `}` at file scope: there is no open block to close")
                    .label("this `}` has no matching `{`")
                    .help("remove this `}` or check the braces above"),
            );
            p.bump();
            p.silent = false;
            continue;
        }
        if let Some(item) = p.parse_item() {
            items.push(item);
        }
        if p.silent {
            p.sync_item();
        }
        if p.pos == before {
            p.bump();
        }
    }
    TranslationUnit { items }
}

/// Parse a single expression (for tests and tools). Trailing tokens are an error.
pub fn parse_expression(tokens: &[Token], diags: &mut Diagnostics) -> Expr {
    let mut p = Parser::new(tokens, diags);
    let e = p.parse_expr();
    if !p.at_eof() {
        let t = p.tok(0).clone();
        p.report(Diagnostic::error(t.span, format!("expected end of expression, found `{}`", t.kind)));
    }
    e
}

/// Parse expressions separated by commas (a debugger probe's `i, a[i]`).
pub fn parse_expression_list(tokens: &[Token], diags: &mut Diagnostics) -> Vec<Expr> {
    let mut p = Parser::new(tokens, diags);
    let mut out = Vec::new();
    loop {
        out.push(p.parse_assign());
        if !p.at(Punct::Comma) {
            break;
        }
        p.bump();
    }
    if !p.at_eof() {
        let t = p.tok(0).clone();
        p.report(Diagnostic::error(t.span, format!("expected `,` or the end of the expressions, found `{}`", t.kind)));
    }
    out
}

#[derive(Clone)]
struct State {
    pos: usize,
    split: Option<(usize, Token)>,
    chain: u32,
}

struct Parser<'a> {
    toks: &'a [Token],
    pos: usize,
    /// A replacement for the token at the given position (the second half of
    /// a split `>>`, `>=` or `>>=`).
    split: Option<(usize, Token)>,
    diags: &'a mut Diagnostics,
    eof: Token,
    depth: u32,
    too_deep: bool,
    /// Nodes built on left-leaning chains in the current statement: with
    /// `depth`, a bound on how deep its expression trees are (see
    /// `MAX_CHAIN`). Elements of a list count from where the list started.
    chain: u32,
    /// An error was reported and we have not resynchronised yet.
    silent: bool,
    /// >0 while parsing tentatively: errors make the attempt fail instead.
    tentative: u32,
    tentative_failed: bool,
    /// >0 inside template arguments: `>` closes them instead of comparing.
    no_gt: u32,
    /// Scoped type names; the flag marks template parameter scopes.
    scopes: Vec<(bool, NameSet)>,
    /// Names of templates (user templates and Metal's).
    templates: NameSet,
    /// Nesting of template argument lists being read.
    template_depth: u32,
    /// Token positions where a template argument is known not to be a type.
    not_a_type_arg: HashSet<usize>,
    /// `namespace g = a::b;` → g ↦ [a, b].
    namespace_aliases: HashMap<Rc<str>, Vec<PathSegment>>,
    /// Set while parsing the item after `template <...>`.
    declaring_template: bool,
    /// Anonymous unions and structs read so far (each gets a unique name).
    anonymous_count: u32,
    /// Structs being read, innermost last (bounded by MAX_STRUCT_DEPTH).
    struct_depth: u32,
}

const BUILTIN_TYPE_TEMPLATES: &[&str] =
    &["vec", "packed_vec", "atomic", "array", "numeric_limits", "simdgroup_matrix", "matrix", "uniform"];
const BUILTIN_FN_TEMPLATES: &[&str] = &["as_type", "make_filled_simdgroup_matrix"];

const INT_WORDS: &[&str] = &["unsigned", "signed", "short", "long", "int", "char"];

/// Words that never name a type or a variable.
const RESERVED: &[&str] = &[
    "if",
    "else",
    "for",
    "while",
    "do",
    "switch",
    "case",
    "default",
    "break",
    "continue",
    "return",
    "goto",
    "struct",
    "class",
    "union",
    "enum",
    "typedef",
    "using",
    "namespace",
    "template",
    "typename",
    "sizeof",
    "alignof",
    "static_cast",
    "reinterpret_cast",
    "const_cast",
    "dynamic_cast",
    "true",
    "false",
    "nullptr",
    "this",
    "new",
    "delete",
    "try",
    "catch",
    "throw",
    "virtual",
    "typeid",
    "asm",
    "operator",
    "const",
    "volatile",
    "static",
    "inline",
    "constexpr",
    "extern",
    "kernel",
    "vertex",
    "fragment",
    "decltype",
    "static_assert",
    "public",
    "private",
    "protected",
    "device",
    "constant",
    "threadgroup",
    "thread",
    "threadgroup_imageblock",
    "ray_data",
    "__attribute__",
    "friend",
    "mutable",
    "explicit",
    "register",
];

fn unsupported_keyword(name: &str) -> Option<&'static str> {
    Some(match name {
        "goto" => "`goto` is not supported in Metal",
        "try" | "catch" | "throw" => "exceptions (`try`/`catch`/`throw`) are not supported in Metal",
        "new" | "delete" => "dynamic allocation (`new`/`delete`) is not supported in Metal",
        "virtual" => "virtual functions are not supported in Metal",
        "dynamic_cast" => "`dynamic_cast` is not supported in Metal (no RTTI)",
        "typeid" => "`typeid` is not supported in Metal (no RTTI)",
        "asm" => "inline assembly (`asm`) is not supported in Metal",
        _ => return None,
    })
}

fn addr_space_of(name: &str) -> Option<AddressSpace> {
    Some(match name {
        "device" => AddressSpace::Device,
        "constant" => AddressSpace::Constant,
        "threadgroup" => AddressSpace::Threadgroup,
        "thread" => AddressSpace::Thread,
        "threadgroup_imageblock" | "ray_data" => AddressSpace::Other,
        _ => return None,
    })
}

fn is_builtin_type(name: &str) -> bool {
    name == "double" || crate::types::builtin_type_name(name).is_some()
}

fn binop_of(p: Punct) -> Option<(BinaryOp, u8)> {
    use BinaryOp::*;
    Some(match p {
        Punct::OrOr => (LogOr, 1),
        Punct::AndAnd => (LogAnd, 2),
        Punct::Pipe => (BitOr, 3),
        Punct::Caret => (BitXor, 4),
        Punct::Amp => (BitAnd, 5),
        Punct::EqEq => (Eq, 6),
        Punct::NotEq => (Ne, 6),
        Punct::Lt => (Lt, 7),
        Punct::Gt => (Gt, 7),
        Punct::Le => (Le, 7),
        Punct::Ge => (Ge, 7),
        Punct::Shl => (Shl, 8),
        Punct::Shr => (Shr, 8),
        Punct::Plus => (Add, 9),
        Punct::Minus => (Sub, 9),
        Punct::Star => (Mul, 10),
        Punct::Slash => (Div, 10),
        Punct::Percent => (Rem, 10),
        _ => return None,
    })
}

fn assign_op_of(p: Punct) -> Option<Option<BinaryOp>> {
    use BinaryOp::*;
    Some(match p {
        Punct::Eq => None,
        Punct::PlusEq => Some(Add),
        Punct::MinusEq => Some(Sub),
        Punct::StarEq => Some(Mul),
        Punct::SlashEq => Some(Div),
        Punct::PercentEq => Some(Rem),
        Punct::AmpEq => Some(BitAnd),
        Punct::PipeEq => Some(BitOr),
        Punct::CaretEq => Some(BitXor),
        Punct::ShlEq => Some(Shl),
        Punct::ShrEq => Some(Shr),
        _ => return None,
    })
}

/// Declaration specifiers in front of a declarator.
struct Specs {
    attrs: Vec<Attribute>,
    is_kernel: bool,
    is_inline: bool,
    is_static: bool,
    is_constexpr: bool,
    is_typedef: bool,
    ty: TypeExpr,
    span: Span,
}

fn ident(name: &str, span: Span) -> Ident {
    Ident { name: Rc::from(name), span }
}

fn simple_path(name: &str, span: Span) -> Path {
    Path { global: false, segments: vec![PathSegment { ident: ident(name, span), template_args: None }], span }
}

fn error_expr(span: Span) -> Expr {
    Expr { kind: ExprKind::IntLit { value: 0, unsigned: false, long: false, decimal: true }, span }
}

fn error_type(span: Span) -> TypeExpr {
    TypeExpr { kind: TypeExprKind::Named { path: simple_path("int", span), is_const: false, is_volatile: false, addr_space: None }, span }
}

impl<'a> Parser<'a> {
    fn new(toks: &'a [Token], diags: &'a mut Diagnostics) -> Parser<'a> {
        let end = toks.last().map(|t| t.span.after()).unwrap_or_default();
        let mut templates = NameSet::default();
        for n in BUILTIN_TYPE_TEMPLATES.iter().chain(BUILTIN_FN_TEMPLATES) {
            templates.insert(Rc::from(*n));
        }
        for n in crate::traits::all_names() {
            templates.insert(Rc::from(n.as_str()));
        }
        Parser {
            toks,
            pos: 0,
            split: None,
            diags,
            eof: Token::new(TokenKind::Eof, end),
            depth: 0,
            too_deep: false,
            chain: 0,
            silent: false,
            tentative: 0,
            tentative_failed: false,
            no_gt: 0,
            scopes: vec![(false, NameSet::default())],
            templates,
            namespace_aliases: HashMap::default(),
            not_a_type_arg: HashSet::default(),
            template_depth: 0,
            declaring_template: false,
            anonymous_count: 0,
            struct_depth: 0,
        }
    }

    // ----- token access -----

    fn tok(&self, k: usize) -> &Token {
        if k == 0 {
            if let Some((p, t)) = &self.split {
                if *p == self.pos {
                    return t;
                }
            }
        }
        match self.toks.get(self.pos.saturating_add(k)) {
            Some(t) => t,
            None => &self.eof,
        }
    }

    fn prev_span(&self) -> Span {
        if self.pos == 0 {
            return self.tok(0).span;
        }
        match self.toks.get(self.pos - 1) {
            Some(t) => t.span,
            None => self.eof.span,
        }
    }

    /// Consume the current token; returns its span.
    fn bump(&mut self) -> Span {
        let sp = self.tok(0).span;
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
        self.split = None;
        sp
    }

    fn at_eof(&self) -> bool {
        matches!(self.tok(0).kind, TokenKind::Eof)
    }

    fn at(&self, p: Punct) -> bool {
        self.tok(0).is_punct(p)
    }

    fn at_n(&self, k: usize, p: Punct) -> bool {
        self.tok(k).is_punct(p)
    }

    fn at_kw(&self, kw: &str) -> bool {
        self.tok(0).is_ident(kw)
    }

    fn eat(&mut self, p: Punct) -> bool {
        if self.at(p) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.at_kw(kw) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn save(&self) -> State {
        State { pos: self.pos, split: self.split.clone(), chain: self.chain }
    }

    fn restore(&mut self, s: State) {
        self.pos = s.pos;
        self.split = s.split;
        self.chain = s.chain;
    }

    fn found(&self) -> String {
        match &self.tok(0).kind {
            TokenKind::Eof => "end of file".to_string(),
            k => format!("`{k}`"),
        }
    }

    // ----- errors -----

    fn report(&mut self, d: Diagnostic) {
        if self.tentative > 0 {
            self.tentative_failed = true;
            return;
        }
        if self.silent {
            return;
        }
        self.silent = true;
        self.diags.push(d);
    }

    fn error_here(&mut self, what: &str) {
        let d = self.expected_here(what);
        self.report(d);
    }

    fn expected_here(&self, what: &str) -> Diagnostic {
        let msg = format!("expected {what}, found {}", self.found());
        Diagnostic::error(self.tok(0).span, msg).label(format!("expected {what}"))
    }

    fn expect(&mut self, p: Punct) -> bool {
        if self.eat(p) {
            return true;
        }
        let mut d = self.expected_here(&format!("`{}`", p.as_str()));
        if p == Punct::RBrace {
            d = d.code(crate::diag::codes::EXPECTED_CLOSING_BRACE);
        }
        self.report(d);
        false
    }

    /// Expect the closing bracket matching the one at `open`.
    fn expect_close(&mut self, close: Punct, open: Span) -> bool {
        if self.eat(close) {
            return true;
        }
        let open_s = match close {
            Punct::RParen => "(",
            Punct::RBracket => "[",
            _ => "{",
        };
        let mut d = self.expected_here(&format!("`{}`", close.as_str())).with_secondary(open, format!("to match this `{open_s}`"));
        if close == Punct::RBrace {
            d = d.code(crate::diag::codes::EXPECTED_CLOSING_BRACE);
        }
        self.report(d);
        if close == Punct::RParen && (self.at(Punct::LBrace) || self.at(Punct::Semi)) && self.tentative == 0 {
            // `f(a, b;` / `if (x {`: what follows is fine; keep parsing normally.
            self.silent = false;
        }
        false
    }

    /// A missing `;` is reported at the end of the previous token.
    fn expect_semi(&mut self, after: &str) {
        if self.eat(Punct::Semi) {
            return;
        }
        let sp = self.prev_span().after();
        let d =
            Diagnostic::error(sp, format!("expected `;` after {after}")).label("expected `;` here").help("add `;` at the end of this line");
        let next_line = self.tok(0).line_start || self.at(Punct::RBrace) || self.at_eof();
        if next_line && self.tentative == 0 && !self.silent {
            // The statement itself is complete; carry on with the next line.
            self.diags.push(d);
        } else {
            self.report(d);
        }
    }

    /// Enter one level of nesting; false (after one error) when too deep.
    fn enter(&mut self) -> bool {
        if self.too_deep {
            return false;
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.too_deep = true;
            let sp = self.tok(0).span;
            self.silent = false;
            let t = self.tentative;
            self.tentative = 0;
            self.report(
                Diagnostic::error(sp, "expression nested too deeply")
                    .note(format!("this parser allows at most {MAX_DEPTH} levels of nesting")),
            );
            self.tentative = t;
            // Give up on the rest of the file: jump to the end.
            self.pos = self.toks.len().saturating_sub(1);
            self.split = None;
            self.depth -= 1;
            return false;
        }
        true
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// One more node on a chain (`a + b`, `a, b`, `x.y`, `f()`); false
    /// (after one error, giving up on the file like `enter`) past `MAX_CHAIN`.
    fn grow_chain(&mut self) -> bool {
        if self.too_deep {
            return false;
        }
        self.chain += 1;
        if self.chain <= MAX_CHAIN {
            return true;
        }
        self.too_deep = true;
        let sp = self.tok(0).span;
        self.silent = false;
        let t = self.tentative;
        self.tentative = 0;
        self.report(
            Diagnostic::error(sp, format!("this statement is too long: it chains more than {MAX_CHAIN} operators"))
                .label("the limit is reached here")
                .note("operators, `,`, member accesses and calls in a row count one each; the limit is fixed")
                .help("split the expression: add its terms to a local variable over several statements"),
        );
        self.tentative = t;
        self.pos = self.toks.len().saturating_sub(1);
        self.split = None;
        false
    }

    /// Skip to the end of the current statement: past a `;` or before a `}`
    /// at nesting level zero.
    fn sync_stmt(&mut self) {
        let mut depth = 0usize;
        while !self.at_eof() {
            match self.tok(0).kind {
                TokenKind::Punct(Punct::LParen | Punct::LBracket | Punct::LBrace) => depth += 1,
                TokenKind::Punct(Punct::RParen | Punct::RBracket) => depth = depth.saturating_sub(1),
                TokenKind::Punct(Punct::RBrace) => {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                    if depth == 0 {
                        self.bump();
                        break;
                    }
                }
                TokenKind::Punct(Punct::Semi) if depth == 0 => {
                    self.bump();
                    break;
                }
                _ => {}
            }
            self.bump();
        }
        self.silent = false;
    }

    /// Skip to the start of the next item.
    fn sync_item(&mut self) {
        let mut depth = 0usize;
        while !self.at_eof() {
            if depth == 0 && self.tok(0).line_start && self.starts_item_line() {
                break;
            }
            match self.tok(0).kind {
                TokenKind::Punct(Punct::LParen | Punct::LBracket | Punct::LBrace) => depth += 1,
                TokenKind::Punct(Punct::RParen | Punct::RBracket) => depth = depth.saturating_sub(1),
                TokenKind::Punct(Punct::RBrace) => {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                    if depth == 0 {
                        self.bump();
                        self.eat(Punct::Semi);
                        break;
                    }
                }
                TokenKind::Punct(Punct::Semi) if depth == 0 => {
                    self.bump();
                    break;
                }
                _ => {}
            }
            self.bump();
        }
        self.silent = false;
    }

    fn starts_item_line(&self) -> bool {
        let t = self.tok(0);
        if t.is_punct(Punct::LBracket) && self.at_n(1, Punct::LBracket) {
            return true;
        }
        matches!(
            t.ident(),
            Some(
                "struct"
                    | "class"
                    | "kernel"
                    | "template"
                    | "namespace"
                    | "constant"
                    | "using"
                    | "typedef"
                    | "enum"
                    | "static_assert"
                    | "inline"
                    | "static"
                    | "constexpr"
            )
        )
    }

    /// Run `f` tentatively: on any error the position is restored and `None`
    /// returned.
    fn attempt<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> Option<T> {
        let st = self.save();
        let failed = self.tentative_failed;
        let depth = self.depth;
        self.tentative += 1;
        self.tentative_failed = false;
        let r = f(self);
        self.tentative -= 1;
        let ok = !self.tentative_failed;
        self.tentative_failed = failed;
        if self.too_deep {
            return None;
        }
        if ok {
            Some(r)
        } else {
            self.depth = depth;
            self.restore(st);
            None
        }
    }

    // ----- names and scopes -----

    fn push_scope(&mut self, template: bool) {
        self.scopes.push((template, NameSet::default()));
    }

    fn pop_scope(&mut self) {
        if self.scopes.len() > 1 {
            self.scopes.pop();
        }
    }

    /// Declare a type name in the innermost non-template scope.
    fn declare_type(&mut self, name: &Rc<str>) {
        for (is_tpl, set) in self.scopes.iter_mut().rev() {
            if !*is_tpl {
                set.insert(name.clone());
                return;
            }
        }
    }

    fn declare_template_param(&mut self, name: &Rc<str>) {
        if let Some((_, set)) = self.scopes.last_mut() {
            set.insert(name.clone());
        }
    }

    fn is_user_type(&self, name: &str) -> bool {
        self.scopes.iter().any(|(_, s)| s.contains(name))
    }

    fn is_type_name(&self, name: &str) -> bool {
        is_builtin_type(name)
            || self.is_user_type(name)
            || INT_WORDS.contains(&name)
            || BUILTIN_TYPE_TEMPLATES.contains(&name)
            || name == "auto"
            || crate::traits::TYPE_TRAITS.contains(&name)
    }

    fn is_template(&self, name: &str) -> bool {
        self.templates.contains(name)
    }

    fn is_reserved(name: &str) -> bool {
        // Quick reject: every reserved word starts with a lowercase letter or `_`.
        match name.as_bytes().first() {
            Some(b'a'..=b'z' | b'_') => RESERVED.contains(&name),
            _ => false,
        }
    }

    /// Does a type (possibly with specifiers) start here?
    fn at_type_start(&mut self) -> bool {
        let Some(name) = self.tok(0).ident() else {
            return self.at(Punct::ColonColon) && self.path_names_type();
        };
        if matches!(name, "const" | "volatile" | "typename" | "decltype") || addr_space_of(name).is_some() || self.at_coherent() {
            return true;
        }
        if Self::is_reserved(name) {
            return false;
        }
        if self.at_n(1, Punct::ColonColon) || (self.at_n(1, Punct::Lt) && self.is_template(name)) {
            return self.path_names_type();
        }
        self.is_type_name(name)
    }

    /// Tentatively read a path and tell whether its last segment is a type.
    fn path_names_type(&mut self) -> bool {
        let st = self.save();
        let r = self.attempt(|p| p.parse_path()).map(|path| {
            // `A::B name` can only declare `name` of type `A::B`.
            self.is_type_name(&path.last().ident.name)
                || path.segments.len() > 1 && self.tok(0).ident().is_some_and(|n| !Self::is_reserved(n))
        });
        self.restore(st);
        r.unwrap_or(false)
    }

    // ----- attributes -----

    fn at_attr(&self) -> bool {
        self.at(Punct::LBracket) && self.at_n(1, Punct::LBracket)
    }

    /// `[[a, b(args)]]`, appended to `out`.
    fn parse_attr_list(&mut self, out: &mut Vec<Attribute>) {
        let open = self.tok(0).span;
        self.bump();
        self.bump();
        loop {
            if self.at(Punct::RBracket) || self.at_eof() {
                break;
            }
            let start = self.tok(0).span;
            let Some(mut name) = self.tok(0).ident().map(Rc::<str>::from) else {
                self.error_here("attribute name");
                return;
            };
            let mut nspan = self.bump();
            while self.at(Punct::ColonColon) {
                self.bump();
                if let Some(n) = self.tok(0).ident().map(Rc::<str>::from) {
                    name = n;
                    nspan = self.bump();
                } else {
                    break;
                }
            }
            let mut args = Vec::new();
            if self.at(Punct::LParen) {
                let lp = self.bump();
                args = self.parse_args(Punct::RParen, lp);
            }
            out.push(Attribute { name: Ident { name, span: nspan }, args, span: start.to(self.prev_span()) });
            if !self.eat(Punct::Comma) {
                break;
            }
        }
        if !(self.at(Punct::RBracket) && self.at_n(1, Punct::RBracket)) {
            self.expect_close(Punct::RBracket, open);
            return;
        }
        self.bump();
        self.bump();
    }

    /// `__attribute__((a, b(args)))`, appended to `out` as `[[a, b(args)]]`
    /// would be (`__packed__` spelled `packed`): the layout reads `packed`
    /// and `aligned`, the rest are hints.
    fn parse_gnu_attribute(&mut self, out: &mut Vec<Attribute>) {
        self.bump();
        let open = self.tok(0).span;
        if !(self.at(Punct::LParen) && self.at_n(1, Punct::LParen)) {
            self.error_here("`((` after `__attribute__`");
            return;
        }
        self.bump();
        let inner = self.bump();
        while !self.at(Punct::RParen) && !self.at_eof() {
            let start = self.tok(0).span;
            let Some(name) = self.tok(0).ident().map(|n| Rc::<str>::from(n.trim_start_matches("__").trim_end_matches("__"))) else {
                self.error_here("attribute name");
                self.skip_attribute_rest();
                return;
            };
            let nspan = self.bump();
            let mut args = Vec::new();
            if self.at(Punct::LParen) {
                let lp = self.bump();
                args = self.parse_args(Punct::RParen, lp);
            }
            out.push(Attribute { name: Ident { name, span: nspan }, args, span: start.to(self.prev_span()) });
            if !self.eat(Punct::Comma) {
                break;
            }
        }
        self.expect_close(Punct::RParen, inner);
        self.expect_close(Punct::RParen, open);
    }

    /// After a malformed `__attribute__`: skip to the end of its group.
    fn skip_attribute_rest(&mut self) {
        let mut depth = 2usize;
        while depth > 0 && !self.at_eof() {
            match self.tok(0).kind {
                TokenKind::Punct(Punct::LParen) => depth += 1,
                TokenKind::Punct(Punct::RParen) => depth -= 1,
                _ => {}
            }
            self.bump();
        }
    }

    /// Skip a balanced `(...)`, `[...]` or `{...}` group starting here.
    fn skip_balanced(&mut self) {
        let mut depth = 0usize;
        loop {
            match self.tok(0).kind {
                TokenKind::Eof => return,
                TokenKind::Punct(Punct::LParen | Punct::LBracket | Punct::LBrace) => depth += 1,
                TokenKind::Punct(Punct::RParen | Punct::RBracket | Punct::RBrace) => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        self.bump();
                        return;
                    }
                }
                _ => {}
            }
            self.bump();
        }
    }
}

mod exprs;
mod items;
mod stmts;
mod types;

#[cfg(test)]
mod more_tests;
#[cfg(test)]
pub(crate) mod tests;
