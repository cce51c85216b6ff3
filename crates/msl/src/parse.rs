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

    /// `__attribute__((...))`: skipped.
    fn skip_gnu_attribute(&mut self) {
        self.bump();
        if !self.at(Punct::LParen) {
            self.error_here("`(` after `__attribute__`");
            return;
        }
        self.skip_balanced();
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

    // ----- types -----

    /// A path: `a`, `::a::b`, `numeric_limits<float>::max`.
    fn parse_path(&mut self) -> Path {
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
    fn parse_template_args(&mut self) -> Vec<TemplateArg> {
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
    fn names_a_type(&self, t: &TypeExpr) -> bool {
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
    fn template_args_follow(&mut self) -> bool {
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

    fn at_gt_like(&self) -> bool {
        matches!(self.tok(0).kind, TokenKind::Punct(Punct::Gt | Punct::Shr | Punct::Ge | Punct::ShrEq))
    }

    /// Consume one `>`, splitting `>>`, `>=`, `>>=`.
    fn expect_gt(&mut self, open: Span) {
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
    fn parse_type(&mut self) -> TypeExpr {
        let base = self.parse_base_type(&mut None);
        let ty = self.parse_ptr_ops(base);
        if self.at_fn_ptr_declarator(false) {
            return self.parse_fn_ptr_declarator(ty).0;
        }
        ty
    }

    /// At `(*)(` (abstract) or `(*name)(` (`named`): a pointer-to-function
    /// declarator after its return type.
    fn at_fn_ptr_declarator(&self, named: bool) -> bool {
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
    fn parse_fn_ptr_declarator(&mut self, ret: TypeExpr) -> (TypeExpr, Option<Ident>) {
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
    fn parse_ptr_ops(&mut self, mut ty: TypeExpr) -> TypeExpr {
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
    fn parse_base_type(&mut self, specs: &mut Option<&mut Specs>) -> TypeExpr {
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
                        self.skip_gnu_attribute();
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
                self.skip_gnu_attribute();
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
    fn type_word(
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
    fn at_coherent(&self) -> bool {
        self.at_kw("coherent") && self.at_n(1, Punct::LParen) && self.tok(2).ident().is_some() && self.at_n(3, Punct::RParen)
    }

    fn named(&self, path: Path) -> TypeExpr {
        let span = path.span;
        TypeExpr { kind: TypeExprKind::Named { path, is_const: false, is_volatile: false, addr_space: None }, span }
    }

    /// `unsigned int`, `long long`, `signed char`, ... normalised to one name.
    fn parse_int_words(&mut self) -> TypeExpr {
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
    fn parse_array_dims(&mut self, mut ty: TypeExpr) -> TypeExpr {
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

    fn new_specs(&self) -> Specs {
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

    fn parse_specs(&mut self) -> Specs {
        let mut s = self.new_specs();
        let ty = self.parse_base_type(&mut Some(&mut s));
        s.ty = ty;
        s.span = s.span.to(self.prev_span());
        s
    }

    // ----- expressions -----

    fn parse_expr(&mut self) -> Expr {
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

    fn parse_assign(&mut self) -> Expr {
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

    fn assign_op_here(&self) -> Option<Option<BinaryOp>> {
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

    fn binop_here(&self) -> Option<(BinaryOp, u8)> {
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
    fn parse_binary(&mut self, min: u8) -> Expr {
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
    fn parse_operand(&mut self, start: u32, parse: impl FnOnce(&mut Self) -> Expr) -> Expr {
        let lhs = self.chain;
        self.chain = start;
        let rhs = parse(self);
        self.chain = lhs.max(self.chain + 1);
        rhs
    }

    fn parse_unary(&mut self) -> Expr {
        let sp = self.tok(0).span;
        if !self.enter() {
            return error_expr(sp);
        }
        let r = self.parse_unary_inner();
        self.leave();
        r
    }

    fn parse_unary_inner(&mut self) -> Expr {
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

    fn parse_postfix(&mut self, mut e: Expr) -> Expr {
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
    fn parse_args(&mut self, close: Punct, open: Span) -> Vec<Expr> {
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
    fn fold_op_here(&self) -> Option<Option<BinaryOp>> {
        if self.at(Punct::Comma) {
            return Some(None);
        }
        self.binop_here().map(|(op, _)| Some(op))
    }

    /// At `(`: is this a fold expression, `(... op e)` or `(e op ...)`? A
    /// `...` right after `(`, or right after a binary operator at the
    /// parenthesis' own depth, says so.
    fn fold_follows(&self) -> bool {
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
    fn parse_fold(&mut self) -> Expr {
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
    fn parse_designated(&mut self) -> Expr {
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

    fn parse_init_list(&mut self) -> Expr {
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
    fn parse_decltype_member(&mut self) -> Expr {
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

    fn parse_primary(&mut self) -> Expr {
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

    // ----- statements -----

    fn parse_block(&mut self) -> Block {
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

    fn parse_stmt(&mut self) -> Option<Stmt> {
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

    fn sub_stmt(&mut self) -> Box<Stmt> {
        let sp = self.tok(0).span;
        Box::new(self.parse_stmt().unwrap_or(Stmt { kind: StmtKind::Empty, span: sp }))
    }

    fn paren_cond(&mut self) -> Expr {
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

    fn parse_stmt_inner(&mut self) -> StmtKind {
        let t = self.tok(0).clone();
        if t.is_punct(Punct::LBrace) {
            return StmtKind::Block(self.parse_block());
        }
        if t.is_punct(Punct::Semi) {
            self.bump();
            return StmtKind::Empty;
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
    fn stmt_is_decl(&mut self) -> bool {
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

    fn parse_for(&mut self) -> StmtKind {
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
    fn parse_range_for(&mut self, lp: Span, var: Option<VarDecl>) -> StmtKind {
        let colon = self.bump();
        if var.is_none() {
            self.report(Diagnostic::error(colon, "a range-based `for` declares one variable without a value before the `:`"));
        }
        let braced = self.at(Punct::LBrace);
        if braced {
            let sp = self.tok(0).span;
            self.report(
                Diagnostic::error(
                    sp,
                    "a range-based `for` over a braced list (`std::initializer_list`) is not supported by this simulator yet",
                )
                .help("iterate over a named array: `constexpr int xs[] = {…}; for (auto x : xs)`"),
            );
            self.skip_balanced();
        }
        let range = if braced { None } else { Some(self.parse_expr()) };
        self.expect_close(Punct::RParen, lp);
        let body = self.sub_stmt();
        self.pop_scope();
        match (var, range) {
            (Some(var), Some(range)) => StmtKind::RangeFor { var: Box::new(var), range, body },
            _ => StmtKind::Empty,
        }
    }

    fn parse_static_assert(&mut self) -> (Expr, Option<Rc<str>>) {
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
    fn parse_typedef_struct(&mut self) -> Option<ItemKind> {
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
    fn parse_using_record(&mut self) -> Option<ItemKind> {
        self.bump(); // using
        let name = Ident { name: self.tok(0).ident().map(Rc::<str>::from)?, span: self.tok(0).span };
        self.bump();
        self.bump(); // =
        self.declare_type(&name.name);
        let s = self.parse_struct_named(Vec::new(), Some(name))?;
        self.expect_semi("alias declaration");
        Some(ItemKind::Struct(s))
    }

    fn parse_alias(&mut self) -> Option<TypeAlias> {
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
    fn parse_var_decl_list(&mut self, _program_scope: bool) -> Vec<VarDecl> {
        let specs = self.parse_specs();
        self.parse_declarators(&specs, None)
    }

    /// Declarators after `specs`; `first` is an already-parsed first
    /// declarator (type with pointer ops, name).
    fn parse_declarators(&mut self, specs: &Specs, first: Option<(TypeExpr, Ident)>) -> Vec<VarDecl> {
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
            while self.at_attr() {
                self.parse_attr_list(&mut attrs);
            }
            let ty = self.parse_array_dims(ty);
            while self.at_attr() {
                self.parse_attr_list(&mut attrs);
            }
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

    fn parse_initializer(&mut self) -> Option<Init> {
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

    // ----- items -----

    fn parse_item(&mut self) -> Option<Item> {
        let start = self.tok(0).span;
        if !self.enter() {
            return None;
        }
        self.chain = 0;
        let kind = self.parse_item_kind();
        self.leave();
        kind.map(|kind| Item { kind, span: start.to(self.prev_span()) })
    }

    fn parse_item_kind(&mut self) -> Option<ItemKind> {
        let t = self.tok(0).clone();
        if t.is_punct(Punct::Semi) {
            self.bump();
            return Some(ItemKind::Empty);
        }
        let name = t.ident().unwrap_or("");
        match name {
            "namespace" => return self.parse_namespace(),
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
    fn parse_decl_after_specs(&mut self, mut specs: Specs, in_struct: Option<&Rc<str>>) -> Option<ItemKind> {
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
    fn parse_operator_name(&mut self) -> Option<Path> {
        let start = self.bump();
        self.parse_operator_symbol(start)
    }

    /// The operator after `operator` (already read, at `start`).
    fn parse_operator_symbol(&mut self, start: Span) -> Option<Path> {
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
    fn parse_conversion_call(&mut self, base: Expr, arrow: bool) -> Expr {
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

    fn parse_conversion_operator(&mut self, specs: &Specs) -> Option<Function> {
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
    fn parse_function_rest(&mut self, specs: &Specs, mut ret: TypeExpr, name: Path) -> Function {
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
                self.skip_gnu_attribute();
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

    fn parse_params(&mut self) -> Vec<Param> {
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

    fn parse_namespace(&mut self) -> Option<ItemKind> {
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

    fn parse_items_until_brace(&mut self) -> Vec<Item> {
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

    fn parse_template_item(&mut self) -> Option<ItemKind> {
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
    fn template_param_name(&mut self, index: usize) -> Option<(Rc<str>, Span)> {
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
    fn parse_template_params(&mut self) -> Vec<TemplateParam> {
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
    fn template_template_param(&mut self, params: &mut Vec<TemplateParam>) {
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
    fn parse_explicit_instantiation(&mut self, _kw: Span) -> Option<ItemKind> {
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

    fn parse_enum(&mut self) -> Option<Enum> {
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
    fn parse_local_type(&mut self, typedef: bool) -> StmtKind {
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
    fn parse_local_unnamed_struct(&mut self) -> StmtKind {
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
    fn eat_ident(&mut self) -> Option<Ident> {
        let n = Rc::<str>::from(self.tok(0).ident()?);
        Some(Ident { name: n, span: self.bump() })
    }

    fn parse_struct(&mut self, attrs: Vec<Attribute>) -> Option<Struct> {
        self.parse_struct_named(attrs, None)
    }

    /// `struct Name {...};`, or with `typedef_name`, the struct of `typedef
    /// struct [Tag] {...} Name;` (the caller reads `Name;`).
    fn parse_struct_named(&mut self, attrs: Vec<Attribute>, typedef_name: Option<Ident>) -> Option<Struct> {
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

    fn parse_struct_body(&mut self, mut attrs: Vec<Attribute>, typedef_name: Option<Ident>) -> Option<Struct> {
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
        if typedef_name.is_none() {
            self.expect_semi("struct definition");
        }
        Some(Struct { name, is_union, members, is_forward: false, specialization, bases, attrs, span: start.to(self.prev_span()) })
    }

    /// `: public B, private C<T>` after a struct's name. `virtual` bases
    /// are refused as unsupported.
    fn parse_base_specs(&mut self) -> Option<Vec<BaseSpec>> {
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
    fn ctor_after_template_args(&mut self) -> bool {
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
    fn parse_constructor_template(&mut self, sname: &Rc<str>) -> Option<Option<Member>> {
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
    fn parse_anonymous_member(&mut self, out: &mut Vec<Member>) {
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

    fn parse_member(&mut self, sname: &Rc<str>, out: &mut Vec<Member>) {
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
                self.skip_gnu_attribute();
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::lex;
    use crate::pretty::{self, erase_expr_spans, erase_unit_spans};
    use crate::source::{FileId, SourceFile};

    /// Lex and drop preprocessor directive lines (what the preprocessor does
    /// for `#include <metal_stdlib>` and friends).
    pub(crate) fn tokens(src: &str) -> Vec<Token> {
        let mut d = Diagnostics::new();
        let toks = lex::lex(FileId(0), src, &mut d);
        let mut out = Vec::new();
        let mut in_directive = false;
        for t in toks {
            if t.line_start {
                in_directive = t.is_punct(Punct::Hash);
            }
            if !in_directive || t.kind == TokenKind::Eof {
                out.push(t);
            }
        }
        out
    }

    pub(crate) fn parse_src(src: &str) -> (TranslationUnit, Diagnostics) {
        let mut d = Diagnostics::new();
        let u = parse(&tokens(src), &mut d);
        (u, d)
    }

    fn ok(src: &str) -> TranslationUnit {
        let (u, d) = parse_src(src);
        assert!(d.items.is_empty(), "unexpected errors for:\n{src}\n{:#?}", d.items);
        u
    }

    fn expr_of(src: &str) -> Expr {
        let mut d = Diagnostics::new();
        let e = parse_expression(&tokens(src), &mut d);
        assert!(d.items.is_empty(), "errors for {src}: {:#?}", d.items);
        e
    }

    fn show(src: &str) -> String {
        pretty::expr_to_string(&expr_of(src))
    }

    /// Line (1-based) of the first error.
    fn first_error_line(src: &str) -> (u32, String) {
        let (_, d) = parse_src(src);
        let e = d.items.first().unwrap_or_else(|| panic!("expected an error for:\n{src}"));
        let f = SourceFile::new("t.metal", src);
        (f.line_col(e.span.lo).0, e.message.clone())
    }

    fn body_stmts(u: &TranslationUnit) -> &[Stmt] {
        for it in &u.items {
            if let ItemKind::Function(f) = &it.kind {
                if let Some(b) = &f.body {
                    return &b.stmts;
                }
            }
        }
        panic!("no function body");
    }

    fn func(u: &TranslationUnit, i: usize) -> &Function {
        match &u.items[i].kind {
            ItemKind::Function(f) => f,
            ItemKind::Template { item, .. } => match &item.kind {
                ItemKind::Function(f) => f,
                k => panic!("not a function: {k:?}"),
            },
            k => panic!("not a function: {k:?}"),
        }
    }

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(show("a + b * c"), "(a + (b * c))");
        assert_eq!(show("a - b - c"), "((a - b) - c)");
        assert_eq!(show("a = b = c"), "(a = (b = c))");
        assert_eq!(show("a += b -= c"), "(a += (b -= c))");
        assert_eq!(
            show("a || b && c | d ^ e & f == g < h << i + j * k"),
            "(a || (b && (c | (d ^ (e & (f == (g < (h << (i + (j * k))))))))))"
        );
        assert_eq!(show("a ? b : c ? d : e"), "(a ? b : (c ? d : e))");
        assert_eq!(show("a, b = c"), "(a, (b = c))");
        assert_eq!(show("-a++"), "(-(a++))");
        assert_eq!(show("!~*&x"), "(!(~(*(&x))))");
        assert_eq!(show("++i + i--"), "((++i) + (i--))");
        assert_eq!(show("a < b > c"), "((a < b) > c)");
        assert_eq!(show("x >> 2 >= y"), "((x >> 2) >= y)");
        assert_eq!(show("p->q.r[3](1, 2)"), "p->q.r[3](1, 2)");
    }

    #[test]
    fn casts_and_templates() {
        assert_eq!(show("(float)x * 2"), "(((float)x) * 2)");
        assert_eq!(show("(const device uint*)f"), "((const device uint*)f)");
        assert_eq!(show("(a) * b"), "(a * b)");
        assert_eq!(show("static_cast<int>(x)"), "static_cast<int >(x)");
        assert_eq!(show("reinterpret_cast<device float*>(p)"), "reinterpret_cast<device float* >(p)");
        assert_eq!(show("float4(a, b)"), "float4(a, b)");
        assert_eq!(show("uint2{1, 2}"), "uint2{1, 2}");
        assert_eq!(show("as_type<uint>(x)"), "as_type<uint >(x)");
        assert_eq!(show("make_filled_simdgroup_matrix<float, 8, 8>(0.0f)"), "make_filled_simdgroup_matrix<float, 8, 8 >(0.0f)");
        assert_eq!(show("metal::numeric_limits<float>::max()"), "metal::numeric_limits<float >::max()");
        assert_eq!(show("metal::fast::exp(x)"), "metal::fast::exp(x)");
        assert_eq!(show("vec<float, 4>(1)"), "vec<float, 4 >(1)");
        assert_eq!(show("sizeof(float4)"), "sizeof(float4)");
        assert_eq!(show("sizeof x"), "sizeof(x)");
        assert_eq!(show("sizeof(x)"), "sizeof(x)");
        assert_eq!(show("alignof(float3)"), "alignof(float3)");
        assert_eq!(show("true && !false || nullptr == this"), "((true && (!false)) || (nullptr == this))");
        assert_eq!(show("metal::float4(1)"), "metal::float4(1)");
        // Nested template arguments close with a split `>>`.
        let e = expr_of("vec<vec<float, 2>, 2>(0)");
        assert!(matches!(e.kind, ExprKind::Cast { kind: CastKind::Functional, .. }));
        let e = expr_of("as_type<vec<float,2>>(x)");
        assert!(matches!(e.kind, ExprKind::Call { .. }));
        // Not a template: plain less-than.
        assert_eq!(show("foo<bar>(x)"), "((foo < bar) > x)");
        assert_eq!(show("'a' + \"s\\n\""), "('a' + \"s\\n\")");
    }

    #[test]
    fn literals() {
        let e = expr_of("0x1Fu");
        assert_eq!(e.kind, ExprKind::IntLit { value: 31, unsigned: true, long: false, decimal: false });
        let e = expr_of("2.5f");
        assert_eq!(e.kind, ExprKind::FloatLit { value: 2.5, suffix: crate::token::FloatSuffix::F });
        assert!(matches!(expr_of("{1, 2}").kind, ExprKind::InitList(ref v) if v.len() == 2));
    }

    #[test]
    fn functions_and_attributes() {
        let u = ok("#include <metal_stdlib>\nusing namespace metal;\n\
            kernel void k(device float* out [[buffer(0)]], uint id [[thread_position_in_grid]]) { out[id] = 1.0f; }\n\
            [[kernel]] void k2(const device float4* in [[buffer(1)]]) {}\n\
            [[max_total_threads_per_threadgroup(1024)]] kernel void k3() {}\n\
            inline float f(float);\n\
            static constexpr float g(float x) { return x; }\n\
            __attribute__((always_inline)) float h(float x, int) { return x; }\n\
            float v(void) { return 0; }\n");
        assert!(matches!(u.items[0].kind, ItemKind::UsingNamespace(_)));
        let k = func(&u, 1);
        assert!(k.is_kernel);
        assert_eq!(k.params.len(), 2);
        assert_eq!(&*k.params[0].attrs[0].name.name, "buffer");
        assert_eq!(&*k.params[1].attrs[0].name.name, "thread_position_in_grid");
        assert!(func(&u, 2).is_kernel);
        let k3 = func(&u, 3);
        assert!(k3.is_kernel);
        assert_eq!(&*k3.attrs[0].name.name, "max_total_threads_per_threadgroup");
        assert!(func(&u, 4).is_inline && func(&u, 4).body.is_none());
        assert!(func(&u, 5).is_static && func(&u, 5).is_constexpr);
        assert_eq!(func(&u, 6).params.len(), 2);
        assert!(func(&u, 7).params.is_empty());
    }

    #[test]
    fn types_in_any_order() {
        let u = ok("void f(const device float* a, device const float* b, float const* c, \
            device float* const d, thread const float& e, volatile device atomic_int* g, \
            unsigned int h, unsigned i, signed char j, long long k, unsigned long l, short int m, \
            float arr[4], metal::float4 n, constant Params& p, threadgroup float* t);");
        let f = func(&u, 0);
        let s: Vec<String> = f.params.iter().map(|p| pretty::type_to_string(&p.ty)).collect();
        assert_eq!(
            s,
            [
                "const device float*",
                "const device float*",
                "const float*",
                "device float* const",
                "const thread float&",
                "volatile device atomic_int*",
                "uint",
                "uint",
                "char",
                "long",
                "ulong",
                "short",
                "float[4]",
                "metal::float4",
                "constant Params&",
                "threadgroup float*",
            ]
        );
    }

    #[test]
    fn declarations() {
        let u = ok("kernel void k(device float* o) {\n\
            float a = 1, *p = &a, b[4];\n\
            int k{a};\n\
            float4 c(1, 2, 3, 4);\n\
            constexpr float kk = 2;\n\
            threadgroup float tile[32][33];\n\
            static constexpr int N = 4;\n\
            using T = float;\n\
            typedef int I;\n\
            T x = 1; I y = 2;\n\
            float(x) * 2;\n\
            float4(1) + 2;\n\
            Foo unknown;\n\
            const float z = 0;\n\
            a * b;\n\
        }");
        let st = body_stmts(&u);
        let StmtKind::Decl(v) = &st[0].kind else { panic!() };
        assert_eq!(v.len(), 3);
        assert_eq!(pretty::type_to_string(&v[1].ty), "float*");
        assert_eq!(pretty::type_to_string(&v[2].ty), "float[4]");
        let StmtKind::Decl(v) = &st[1].kind else { panic!() };
        assert!(matches!(v[0].init, Some(Init::Brace(..))));
        let StmtKind::Decl(v) = &st[2].kind else { panic!() };
        assert!(matches!(v[0].init, Some(Init::Paren(ref a, _)) if a.len() == 4));
        let StmtKind::Decl(v) = &st[3].kind else { panic!() };
        assert!(v[0].is_constexpr);
        let StmtKind::Decl(v) = &st[4].kind else { panic!() };
        assert_eq!(pretty::declarator_to_string(&v[0].ty, "tile"), "threadgroup float tile[32][33]");
        let StmtKind::Decl(v) = &st[5].kind else { panic!() };
        assert!(v[0].is_static && v[0].is_constexpr);
        assert!(matches!(st[6].kind, StmtKind::Alias(_)));
        assert!(matches!(st[7].kind, StmtKind::Alias(_)));
        assert!(matches!(st[8].kind, StmtKind::Decl(_)));
        assert!(matches!(st[10].kind, StmtKind::Expr(_)));
        assert!(matches!(st[11].kind, StmtKind::Expr(_)));
        assert!(matches!(st[12].kind, StmtKind::Decl(_)));
        assert!(matches!(st[13].kind, StmtKind::Decl(_)));
        assert!(matches!(st[14].kind, StmtKind::Expr(_)));
    }

    #[test]
    fn control_flow() {
        let u = ok("void f(int n) {\n\
            if (n) n = 1; else { n = 2; }\n\
            for (uint i = 0, j = 1; i < 4; ++i, j++) {}\n\
            for (n = 0; ; ) break;\n\
            for (;;) { continue; }\n\
            while (n < 3) n++;\n\
            do { n--; } while (n > 0);\n\
            switch (n) { case 1: n = 2; break; case 2 + 1: default: break; }\n\
            return;\n\
            ;\n\
            static_assert(sizeof(int) == 4, \"int\");\n\
        }");
        let st = body_stmts(&u);
        assert!(matches!(st[0].kind, StmtKind::If { els: Some(_), .. }));
        let StmtKind::For { init: Some(init), .. } = &st[1].kind else { panic!() };
        assert!(matches!(&init.kind, StmtKind::Decl(v) if v.len() == 2));
        assert!(matches!(st[2].kind, StmtKind::For { init: Some(_), cond: None, step: None, .. }));
        assert!(matches!(st[4].kind, StmtKind::While { .. }));
        assert!(matches!(st[5].kind, StmtKind::DoWhile { .. }));
        let StmtKind::Switch { body, .. } = &st[6].kind else { panic!() };
        let StmtKind::Block(b) = &body.kind else { panic!() };
        assert!(matches!(b.stmts[0].kind, StmtKind::Case(_)));
        assert!(b.stmts.iter().any(|s| matches!(s.kind, StmtKind::Default)));
        assert!(matches!(st[7].kind, StmtKind::Return(None)));
        assert!(matches!(st[8].kind, StmtKind::Empty));
        assert!(matches!(st[9].kind, StmtKind::StaticAssert { message: Some(_), .. }));
    }

    #[test]
    fn structs_enums_aliases_namespaces() {
        let u = ok("struct S { float2 pos; float m[4]; float2 advance(float dt) const { return pos * dt; } \
            S(float a) : m{a} {} static constexpr int K = 4; using T = float; T t; };\n\
            class C { public: float x; private: int y; };\n\
            struct [[attr]] F;\n\
            enum Color { RED, GREEN = 5, };\n\
            enum class Op : uint { Add = 0, Sub };\n\
            typedef float real;\n\
            using vec2 = float2;\n\
            namespace a { namespace b { constant int Z = 1; } }\n\
            namespace { float helper(real x) { return x; } }\n\
            using metal::fast::exp;\n\
            constant float k = 1.0f;\n\
            constant constexpr int N = 4;\n\
            constant uint LUT[4] = {1u, 2u, 3u, 4u};\n\
            constant S P = {0.25f, 3u};\n\
            constexpr constant int X = 1;\n\
            float scale = 2.0f;\n\
            static_assert(N == 4, \"n\");\n\
            ;\n\
            Color c = RED;\n\
            Op o = Op::Add;\n");
        let ItemKind::Struct(s) = &u.items[0].kind else { panic!() };
        assert_eq!(s.members.len(), 7);
        assert!(matches!(s.members[2].kind, MemberKind::Method(ref f) if f.is_const_method));
        assert!(matches!(s.members[3].kind, MemberKind::Constructor { ref inits, .. } if inits.len() == 1));
        assert!(matches!(s.members[4].kind, MemberKind::StaticConst(_)));
        assert!(matches!(s.members[5].kind, MemberKind::Alias(_)));
        let ItemKind::Struct(c) = &u.items[1].kind else { panic!() };
        assert_eq!(c.members.len(), 2);
        assert!(matches!(u.items[2].kind, ItemKind::Struct(Struct { is_forward: true, .. })));
        let ItemKind::Enum(e) = &u.items[3].kind else { panic!() };
        assert_eq!(e.enumerators.len(), 2);
        let ItemKind::Enum(e) = &u.items[4].kind else { panic!() };
        assert!(e.scoped && e.underlying.is_some());
        assert!(matches!(u.items[5].kind, ItemKind::Alias(_)));
        assert!(matches!(u.items[6].kind, ItemKind::Alias(_)));
        assert!(matches!(u.items[7].kind, ItemKind::Namespace { .. }));
        assert!(matches!(u.items[8].kind, ItemKind::Namespace { name: None, .. }));
        assert!(matches!(u.items[9].kind, ItemKind::UsingDecl(_)));
        let ItemKind::Vars(v) = &u.items[10].kind else { panic!() };
        assert_eq!(pretty::type_to_string(&v[0].ty), "constant float");
        let ItemKind::Vars(v) = &u.items[11].kind else { panic!() };
        assert!(v[0].is_constexpr);
        let ItemKind::Vars(v) = &u.items[14].kind else { panic!() };
        assert!(v[0].is_constexpr);
        assert!(matches!(u.items[15].kind, ItemKind::Vars(_)));
        assert!(matches!(u.items[16].kind, ItemKind::StaticAssert { .. }));
        assert!(matches!(u.items[17].kind, ItemKind::Empty));
    }

    #[test]
    fn templates() {
        let u = ok("template <typename T, int N = 4, class U> T power(T x) { return x; }\n\
            template <typename T> struct Pair { T a; T b; T sum() const { return a + b; } };\n\
            template <typename T> struct Limits;\n\
            template <> struct Limits<float> { static constexpr float max = 1.0f; };\n\
            template <> float power<float, 2, int>(float x) { return x * x; }\n\
            template void power<int, 3, int>(int);\n\
            template <typename T> T Limits_max() { return Limits<T>::max; }\n\
            kernel void k(device float* o) {\n\
                Pair<float> p = {o[0], 1.0f};\n\
                Pair<Pair<float>> q;\n\
                o[1] = power<float, 3>(o[0]) + p.sum() + q.a.a;\n\
                o[2] = Pair<float>{1, 2}.sum();\n\
            }\n");
        let ItemKind::Template { params, .. } = &u.items[0].kind else { panic!() };
        assert_eq!(params.len(), 3);
        assert!(matches!(params[1].kind, TemplateParamKind::Value { default: Some(_), .. }));
        let ItemKind::Template { params, .. } = &u.items[3].kind else { panic!() };
        assert!(params.is_empty());
        assert!(matches!(u.items[5].kind, ItemKind::ExplicitInstantiation { .. }));
        let st = body_stmts(&u);
        assert!(matches!(st[0].kind, StmtKind::Decl(_)));
        assert!(matches!(st[1].kind, StmtKind::Decl(_)));
    }

    #[test]
    fn error_missing_semicolon_is_on_its_line() {
        let src = "kernel void k(device float* o) {\n    float a = 1\n    o[0] = a;\n}\n";
        let (line, msg) = first_error_line(src);
        assert_eq!(line, 2, "{msg}");
        assert!(msg.contains("expected `;`"), "{msg}");
        let (_, d) = parse_src(src);
        assert_eq!(d.items.len(), 1, "{:#?}", d.items);
        let src = "kernel void k(device float* o) {\n    o[0] = 1\n\n\n}\n";
        assert_eq!(first_error_line(src).0, 2);
        let src = "constant float k = 1.0f\nkernel void k() {}\n";
        assert_eq!(first_error_line(src).0, 1);
    }

    #[test]
    fn error_missing_paren() {
        let src = "kernel void k(device float* o) {\n    o[0] = (1 + 2;\n}\n";
        let (_, d) = parse_src(src);
        let e = &d.items[0];
        assert!(e.message.contains("expected `)`"), "{}", e.message);
        assert_eq!(e.secondary.len(), 1);
        assert_eq!(e.secondary[0].span.lo, src.find('(').map(|_| src.find("(1").unwrap() as u32).unwrap());
        assert_eq!(first_error_line(src).0, 2);
        let src = "kernel void k(device float* o) {\n    if (o[0] > 1 {\n        o[0] = 2;\n    }\n}\n";
        assert_eq!(first_error_line(src).0, 2);
        let (_, d) = parse_src(src);
        assert_eq!(d.items.len(), 1, "{:#?}", d.items);
    }

    #[test]
    fn error_extra_brace() {
        let src = "kernel void k(device float* o) {\n    o[0] = 1;\n}\n}\nkernel void j() {}\n";
        let (line, msg) = first_error_line(src);
        assert_eq!(line, 4);
        assert!(msg.contains("unexpected `}` at file scope"), "{msg}");
        let (u, d) = parse_src(src);
        assert_eq!(d.items.len(), 1);
        assert_eq!(u.items.len(), 2);
    }

    #[test]
    fn unsupported_keywords() {
        for (src, kw) in [
            ("void f() {\n  goto end;\n}", "goto"),
            ("void f() {\n  try { } catch (...) {}\n}", "try"),
            ("void f() {\n  throw 1;\n}", "throw"),
            ("void f() {\n  int* p = new int;\n}", "new"),
            ("void f(int* p) {\n  delete p;\n}", "delete"),
            ("struct S {\n  virtual void f();\n};", "virtual"),
            ("void f(int* p) {\n  int* q = dynamic_cast<int*>(p);\n}", "dynamic_cast"),
            ("void f(int p) {\n  typeid(p);\n}", "typeid"),
            ("void f() {\n  asm(\"nop\");\n}", "asm"),
        ] {
            let (_, d) = parse_src(src);
            let e = d.items.first().unwrap_or_else(|| panic!("no error for {src}"));
            let at = &src[e.span.lo as usize..e.span.hi as usize];
            assert_eq!(at, kw, "{src}: {}", e.message);
            assert!(e.message.contains("not supported"), "{}", e.message);
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let h = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(|| {
                let mut src = String::from("kernel void k() { int x = ");
                src.push_str(&"(".repeat(1_000_000));
                src.push_str("1;\n}\n");
                let (_, d) = parse_src(&src);
                assert!(d.items.iter().any(|e| e.message.contains("nested too deeply")));
                assert!(d.items.len() < 5, "{:#?}", d.items);
                let mut src = String::from("void f() {");
                src.push_str(&"{ if (1) ".repeat(100_000));
                src.push_str(&"-!~".repeat(100_000));
                let (_, d) = parse_src(&src);
                assert!(d.has_errors());
                let src = "(".repeat(200_000);
                let (_, d) = parse_src(&src);
                assert!(d.has_errors());
                let src = "namespace a { ".repeat(100_000);
                let (_, d) = parse_src(&src);
                assert!(d.items.iter().any(|e| e.message.contains("nested too deeply")));
                let src = "namespace a { struct S { void f() { ".repeat(100_000);
                let (_, d) = parse_src(&src);
                assert!(d.has_errors());
                let src = "float x = {{{{".repeat(100_000);
                let (_, d) = parse_src(&src);
                assert!(d.has_errors());
                let src = "template <".repeat(100_000);
                let (_, d) = parse_src(&src);
                assert!(d.has_errors());
                let src = "vec<".repeat(100_000);
                let mut dd = Diagnostics::new();
                let _ = parse_expression(&tokens(&src), &mut dd);
                assert!(dd.has_errors());
            })
            .unwrap();
        h.join().unwrap();
    }

    #[test]
    fn garbage_never_panics() {
        let pieces = [
            "(",
            ")",
            "{",
            "}",
            "[",
            "]",
            "[[",
            "]]",
            ";",
            ",",
            "<",
            ">",
            ">>",
            "::",
            "template",
            "struct",
            "kernel",
            "void",
            "float",
            "x",
            "1",
            "2.0f",
            "=",
            "+",
            "*",
            "&",
            "const",
            "device",
            "enum",
            "class",
            "using",
            "namespace",
            "typedef",
            "if",
            "else",
            "for",
            "while",
            "do",
            "switch",
            "case",
            "default",
            ":",
            "?",
            "return",
            "vec",
            "as_type",
            "static_cast",
            "sizeof",
            "\"s\"",
            "'c'",
            "...",
            "->",
            ".",
            "~",
            "!",
            "typename",
            "decltype",
            "operator",
            "goto",
            "#",
            "static_assert",
            "__attribute__",
            "++",
            "--",
        ];
        let mut seed: u64 = 0x1234_5678_9abc_def0;
        for _ in 0..300 {
            let mut src = String::new();
            let n = (seed % 200) as usize;
            for _ in 0..n {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                src.push_str(pieces[(seed % pieces.len() as u64) as usize]);
                src.push(if seed >> 61 == 0 { '\n' } else { ' ' });
            }
            let (_, d) = parse_src(&src);
            assert!(d.items.len() <= crate::diag::MAX_ERRORS + 1);
        }
        // Empty token stream and one without Eof.
        let mut d = Diagnostics::new();
        let _ = parse(&[], &mut d);
        let toks = tokens("kernel void k(");
        let _ = parse(&toks[..toks.len() - 1], &mut d);
    }

    // ----- real kernels -----

    pub(crate) const KERNELS: &[&str] = &[
        r#"#include <metal_stdlib>
using namespace metal;
template <typename T>
[[kernel]] void custom_kernel_myexp_float(
  const device T* inp [[buffer(0)]],
  device T* out [[buffer(1)]],
  uint3 thread_position_in_grid [[thread_position_in_grid]]) {
  uint elem = thread_position_in_grid.x;
  T tmp = inp[elem];
  out[elem] = metal::exp(tmp);
}
template [[host_name("custom_kernel_myexp_float")]] [[kernel]] decltype(custom_kernel_myexp_float<float>) custom_kernel_myexp_float<float>;
"#,
        r#"#include <metal_stdlib>
using namespace metal;
#define TILE 16
kernel void matmul(device const float* A [[buffer(0)]],
                   device const float* B [[buffer(1)]],
                   device float* C [[buffer(2)]],
                   constant uint& N [[buffer(3)]],
                   uint2 gid [[thread_position_in_grid]],
                   uint2 lid [[thread_position_in_threadgroup]]) {
    threadgroup float As[16][16];
    threadgroup float Bs[16][16];
    float acc = 0.0f;
    for (uint t = 0; t < N / 16; ++t) {
        As[lid.y][lid.x] = A[gid.y * N + t * 16 + lid.x];
        Bs[lid.y][lid.x] = B[(t * 16 + lid.y) * N + gid.x];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint k = 0; k < 16; k++) {
            acc += As[lid.y][k] * Bs[k][lid.x];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (gid.x < N && gid.y < N) {
        C[gid.y * N + gid.x] = acc;
    }
}
"#,
        r#"#include <metal_stdlib>
using namespace metal;
kernel void histogram(device const float* v [[buffer(0)]],
                      device float* o [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    uint k = uint(v[i] * 4.0f) & 3u;
    atomic_fetch_add_explicit((device atomic_float*)&o[k], v[i], memory_order_relaxed);
}
"#,
        r#"#include <metal_stdlib>
using namespace metal;
struct Body {
    float2 pos;
    float2 vel;
    float2 advance(float dt) const { return pos + vel * dt; }
};
template <typename T> struct Pair { T a; T b; T sum() const { return a + b; } };
kernel void step(device Body* bodies [[buffer(0)]], device float* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
    Body b = bodies[i];
    float v = b.advance(0.5f).x;
    Pair<float> p = {v, 1.0f};
    bodies[i] = Body{b.advance(0.1f), b.vel};
    out[i] = p.sum();
}
"#,
        r#"#include <metal_stdlib>
using namespace metal;
enum class Op : uint { Add = 0, Mul = 1, Max = 2 };
constant float3 AXIS = float3(0.0f, 0.0f, 1.0f);
kernel void apply(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                  constant Op& op [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    float r = 0.0f;
    switch (op) {
        case Op::Add: r = x[i] + AXIS.z; break;
        case Op::Mul: r = x[i] * 2.0f; break;
        default: break;
    }
    float2 v = as_type<float2>(as_type<uint2>(float2(r, r))).y;
    y[i] = v.x;
    if (i == 0) {
        y[i] = metal::numeric_limits<float>::max();
    }
}
"#,
        r#"#include <metal_stdlib>
using namespace metal;
constant uint LUT[4] = {1u, 2u, 3u, 4u};
struct Params { float scale; uint n; };
constant Params P = {0.25f, 3u};
template <typename T, int N = 4>
METAL_FUNC T power(T x) {
    T r = T(1);
    for (int i = 0, j = 0; i < N; ++i, j--) r *= x;
    return r;
}
kernel void misc(device float4* out [[buffer(0)]], threadgroup float* scratch [[threadgroup(0)]],
                 uint tid [[thread_index_in_threadgroup]], uint gid [[thread_position_in_grid]]) {
    float a = 1, *p = &a, b[4] = {0};
    int k{int(a)};
    scratch[tid] = power<float, 3>(a) + float(LUT[gid & 3]) * P.scale;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float4 c = float4(scratch[0], *p, b[1], (float)sizeof(float4));
    out[gid] = gid < 4 ? c : -c;
    do { k >>= 1; } while (k > 0);
    simdgroup_float8x8 m = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    (void)m;
}
"#,
    ];

    #[test]
    fn real_kernels_parse_cleanly() {
        for k in KERNELS {
            let k = k.replace("METAL_FUNC", "inline");
            let u = ok(&k);
            assert!(!u.items.is_empty());
        }
        let u = ok(KERNELS[0]);
        assert!(matches!(u.items.last().map(|i| &i.kind), Some(ItemKind::ExplicitInstantiation { .. })));
    }

    fn erased(src: &str) -> TranslationUnit {
        let mut u = ok(src);
        erase_unit_spans(&mut u);
        u
    }

    #[test]
    fn print_reparse_is_a_fixed_point() {
        for k in KERNELS {
            let k = k.replace("METAL_FUNC", "inline");
            let u1 = erased(&k);
            let s1 = pretty::unit_to_string(&u1);
            let u2 = erased(&s1);
            let s2 = pretty::unit_to_string(&u2);
            if std::env::var_os("MSL_SHOW_PRETTY").is_some() {
                eprintln!("{s1}");
            }
            assert_eq!(s1, s2);
            assert_eq!(u1, u2, "AST changed after printing:\n{s1}");
        }
    }

    #[test]
    fn template_template_parameters() {
        let src = "template <typename T> struct Plus { T v; };\n\
            namespace ops { template <typename T> struct Max { T v; }; }\n\
            template <template <typename> class Op, template <class...> typename Many, typename T,\n\
                template <typename, int> class = Plus, template <typename> class D = ops::Max>\n\
            struct Acc { Op<T> a; typename Many<T, T>::type b; D<T> c; };\n\
            template <template <typename> class... Ps> struct L {};\n";
        let u = ok(src);
        let ItemKind::Template { params, .. } = &u.items[2].kind else { panic!() };
        assert_eq!(params.len(), 5);
        let TemplateParamKind::Template { params: inner, default: None } = &params[0].kind else { panic!("{:?}", params[0]) };
        assert_eq!((&*params[0].name.name, inner.len()), ("Op", 1));
        let TemplateParamKind::Template { params: inner, .. } = &params[1].kind else { panic!() };
        assert!(inner[0].is_pack);
        let TemplateParamKind::Template { params: inner, default: Some(d) } = &params[3].kind else { panic!() };
        assert!(matches!(inner[1].kind, TemplateParamKind::Value { .. }));
        assert_eq!(d.plain_name(), "Plus");
        let TemplateParamKind::Template { default: Some(d), .. } = &params[4].kind else { panic!() };
        assert_eq!(d.plain_name(), "ops::Max");
        let ItemKind::Template { params, .. } = &u.items[3].kind else { panic!() };
        assert!(params[0].is_pack && matches!(params[0].kind, TemplateParamKind::Template { .. }));
        // Printing and reading again gives the same tree.
        let u1 = erased(src);
        let s1 = pretty::unit_to_string(&u1);
        assert_eq!(u1, erased(&s1), "{s1}");
        // Errors, not crashes, for broken forms.
        for bad in ["template <template class P> struct S {};", "template <template <typename> P> struct S {};"] {
            let (_, d) = parse_src(bad);
            assert!(d.has_errors(), "{bad}");
        }
    }

    #[test]
    fn print_reparse_other_constructs() {
        let src = "struct S { float2 pos; float m[4]; float2 advance(float dt) const { return pos * dt; } \
            S(float a) : m{a} {} static constexpr int K = 4; using T = float; T t; };\n\
            enum class Op : uint { Add = 0, Sub };\n\
            namespace a { constant int Z = 1; }\n\
            typedef float real;\n\
            template <typename T, int N = 4> struct Arr { T v[N]; };\n\
            void f(const device float* a, device float* const d, thread const float& e, int n = 3) {\n\
                float x = 1, *p = &x, b[4][2];\n\
                int k{1}; float4 c(1, 2, 3, 4);\n\
                if (n) { n = 1; } else n = 2;\n\
                for (uint i = 0; i < 4; ++i) continue;\n\
                while (n) n--;\n\
                switch (n) { case 1: break; default: break; }\n\
                static_assert(true, \"x\\\"y\");\n\
                Arr<float, 2> arr;\n\
            }\n";
        let u1 = erased(src);
        let s1 = pretty::unit_to_string(&u1);
        let u2 = erased(&s1);
        assert_eq!(u1, u2, "{s1}");
    }

    #[test]
    fn function_pointer_declarators_round_trip() {
        let src = "template <typename T> using BinOp = T (*)(T, T);\n\
            typedef float* (*Getter)(device float*, int);\n\
            template <typename T, BinOp<T> op, float (*f)(float)> T g(T a) { return op(a, a); }\n\
            float h(float x, float (*op)(float, float), float (*)(int)) {\n\
                float (*p)(float) = &sq, (*q)(float) = sq;\n\
                return op(x, (*p)(x));\n\
            }\n";
        let u1 = erased(src);
        let s1 = pretty::unit_to_string(&u1);
        let u2 = erased(&s1);
        assert_eq!(u1, u2, "{s1}");
        assert!(s1.contains("float (*op)(float, float)") && s1.contains("T (*)(T, T)"), "{s1}");
    }

    #[test]
    fn large_file_parses() {
        let mut src = String::new();
        for i in 0..1000 {
            src.push_str(&format!(
                "kernel void k{i}(device float* o [[buffer(0)]], uint id [[thread_position_in_grid]]) {{\n  float a = o[id] * 2.0f + {i};\n  if (a > 1) {{ o[id] = a; }}\n}}\n"
            ));
        }
        let toks = tokens(&src);
        let mut d = Diagnostics::new();
        let u = parse(&toks, &mut d);
        assert!(d.items.is_empty());
        assert_eq!(u.items.len(), 1000);
    }

    // ----- property tests -----

    use proptest::prelude::*;

    fn sp() -> Span {
        Span::default()
    }

    fn name_expr(n: &str) -> Expr {
        Expr { kind: ExprKind::Name(simple_path(n, sp())), span: sp() }
    }

    fn named_ty(n: &str, is_const: bool, addr: Option<AddressSpace>) -> TypeExpr {
        TypeExpr { kind: TypeExprKind::Named { path: simple_path(n, sp()), is_const, is_volatile: false, addr_space: addr }, span: sp() }
    }

    fn arb_type() -> impl Strategy<Value = TypeExpr> {
        let names = prop::sample::select(vec!["float", "int", "uint", "half", "float4", "uint2", "bool", "ulong"]);
        let addr = prop::option::of(prop::sample::select(vec![
            AddressSpace::Device,
            AddressSpace::Constant,
            AddressSpace::Threadgroup,
            AddressSpace::Thread,
        ]));
        (names, any::<bool>(), addr, 0..3usize, any::<bool>()).prop_map(|(n, c, a, ptrs, pc)| {
            let mut t = named_ty(n, c, if ptrs > 0 { a } else { None });
            for _ in 0..ptrs {
                t = TypeExpr { kind: TypeExprKind::Pointer { pointee: Box::new(t), is_const: pc }, span: sp() };
            }
            t
        })
    }

    fn arb_leaf() -> impl Strategy<Value = Expr> {
        prop_oneof![
            prop::sample::select(vec!["a", "b", "x1", "idx", "out"]).prop_map(name_expr),
            (any::<u32>(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(v, u, l, d)| {
                Expr { kind: ExprKind::IntLit { value: v as u64, unsigned: u, long: l, decimal: d }, span: sp() }
            }),
            (
                0.0f64..1e6,
                prop::sample::select(vec![crate::token::FloatSuffix::None, crate::token::FloatSuffix::F, crate::token::FloatSuffix::H])
            )
                .prop_map(|(v, s)| {
                    // The lexer gives a literal a value of its own type.
                    // (half stays below its largest finite value, 65504).
                    let (kind, v) = if s == crate::token::FloatSuffix::H {
                        (gpu_math::FloatKind::F16, v % 65504.0)
                    } else {
                        (gpu_math::FloatKind::F32, v)
                    };
                    Expr { kind: ExprKind::FloatLit { value: gpu_math::round_f64_to(kind, v) as f64, suffix: s }, span: sp() }
                }),
            any::<bool>().prop_map(|b| Expr { kind: ExprKind::BoolLit(b), span: sp() }),
            (32u32..127).prop_map(|c| Expr { kind: ExprKind::CharLit(c), span: sp() }),
            "[a-z \"\\\\]{0,6}".prop_map(|s| Expr { kind: ExprKind::StrLit(Rc::from(s.as_str())), span: sp() }),
            Just(Expr { kind: ExprKind::Null, span: sp() }),
        ]
    }

    fn arb_expr() -> impl Strategy<Value = Expr> {
        arb_leaf().prop_recursive(6, 64, 4, |inner| {
            let b = |k| Box::new(k);
            prop_oneof![
                (
                    prop::sample::select(vec![
                        UnaryOp::Neg,
                        UnaryOp::Plus,
                        UnaryOp::Not,
                        UnaryOp::BitNot,
                        UnaryOp::Deref,
                        UnaryOp::AddrOf,
                        UnaryOp::PreInc,
                        UnaryOp::PreDec,
                        UnaryOp::PostInc,
                        UnaryOp::PostDec
                    ]),
                    inner.clone()
                )
                    .prop_map(move |(op, e)| Expr { kind: ExprKind::Unary { op, operand: b(e) }, span: sp() }),
                (
                    prop::sample::select(vec![
                        BinaryOp::Add,
                        BinaryOp::Sub,
                        BinaryOp::Mul,
                        BinaryOp::Div,
                        BinaryOp::Rem,
                        BinaryOp::Shl,
                        BinaryOp::Shr,
                        BinaryOp::BitAnd,
                        BinaryOp::BitOr,
                        BinaryOp::BitXor,
                        BinaryOp::LogAnd,
                        BinaryOp::LogOr,
                        BinaryOp::Eq,
                        BinaryOp::Ne,
                        BinaryOp::Lt,
                        BinaryOp::Gt,
                        BinaryOp::Le,
                        BinaryOp::Ge
                    ]),
                    inner.clone(),
                    inner.clone()
                )
                    .prop_map(|(op, l, r)| Expr { kind: ExprKind::Binary { op, lhs: Box::new(l), rhs: Box::new(r) }, span: sp() }),
                (
                    prop::option::of(prop::sample::select(vec![BinaryOp::Add, BinaryOp::Shr, BinaryOp::BitXor])),
                    inner.clone(),
                    inner.clone()
                )
                    .prop_map(|(op, l, r)| Expr { kind: ExprKind::Assign { op, lhs: Box::new(l), rhs: Box::new(r) }, span: sp() }),
                (inner.clone(), inner.clone(), inner.clone()).prop_map(|(c, t, e)| Expr {
                    kind: ExprKind::Conditional { cond: Box::new(c), then: Box::new(t), els: Box::new(e) },
                    span: sp()
                }),
                (inner.clone(), inner.clone())
                    .prop_map(|(l, r)| Expr { kind: ExprKind::Comma { lhs: Box::new(l), rhs: Box::new(r) }, span: sp() }),
                (prop::sample::select(vec!["f", "metal::exp", "max"]), prop::collection::vec(inner.clone(), 0..3)).prop_map(|(f, args)| {
                    let segs: Vec<PathSegment> =
                        f.split("::").map(|s| PathSegment { ident: ident(s, sp()), template_args: None }).collect();
                    let callee = Expr { kind: ExprKind::Name(Path { global: false, segments: segs, span: sp() }), span: sp() };
                    Expr { kind: ExprKind::Call { callee: Box::new(callee), args }, span: sp() }
                }),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, i)| Expr { kind: ExprKind::Index { base: Box::new(a), index: Box::new(i) }, span: sp() }),
                (inner.clone(), prop::sample::select(vec!["x", "xy", "len"]), any::<bool>()).prop_map(|(e, n, arrow)| {
                    Expr { kind: ExprKind::Member { base: Box::new(e), name: ident(n, sp()), arrow, targs: None }, span: sp() }
                }),
                (arb_type(), inner.clone()).prop_map(|(t, e)| Expr {
                    kind: ExprKind::Cast { kind: CastKind::CStyle, ty: t, args: vec![e], braces: false },
                    span: sp()
                }),
                (arb_type(), inner.clone(), prop::sample::select(vec![CastKind::Static, CastKind::Reinterpret, CastKind::Const]))
                    .prop_map(|(t, e, k)| Expr { kind: ExprKind::Cast { kind: k, ty: t, args: vec![e], braces: false }, span: sp() }),
                (prop::sample::select(vec!["float", "float4", "uint2", "half"]), prop::collection::vec(inner.clone(), 0..3), any::<bool>())
                    .prop_map(|(t, args, braces)| Expr {
                        kind: ExprKind::Cast { kind: CastKind::Functional, ty: named_ty(t, false, None), args, braces },
                        span: sp()
                    }),
                (inner.clone(), prop::sample::select(vec!["float", "uint2"])).prop_map(|(e, t)| {
                    let callee = Expr {
                        kind: ExprKind::Name(Path {
                            global: false,
                            segments: vec![PathSegment {
                                ident: ident("as_type", sp()),
                                template_args: Some(vec![TemplateArg::Type(named_ty(t, false, None))]),
                            }],
                            span: sp(),
                        }),
                        span: sp(),
                    };
                    Expr { kind: ExprKind::Call { callee: Box::new(callee), args: vec![e] }, span: sp() }
                }),
                arb_type().prop_map(|t| Expr { kind: ExprKind::SizeofType(t), span: sp() }),
                inner.clone().prop_map(|e| Expr { kind: ExprKind::SizeofExpr(Box::new(e)), span: sp() }),
                prop::collection::vec(inner, 0..3).prop_map(|v| Expr { kind: ExprKind::InitList(v), span: sp() }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn mutated_kernels_never_panic(
            k in 0..KERNELS.len(),
            edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..12, prop::sample::select(vec![
                "", "(", ")", "{", "}", "[[", "]]", ";", "<", ">>", "template", "struct", ",", "::", "const", "*",
            ])), 1..6),
        ) {
            let mut src = KERNELS[k].to_string();
            for (at, del, ins) in edits {
                let mut i = at.index(src.len() + 1);
                while !src.is_char_boundary(i) {
                    i -= 1;
                }
                let mut j = (i + del).min(src.len());
                while !src.is_char_boundary(j) {
                    j -= 1;
                }
                src.replace_range(i..j, ins);
            }
            let (_, d) = parse_src(&src);
            prop_assert!(d.items.len() <= crate::diag::MAX_ERRORS + 1);
        }

        #[test]
        fn printed_expressions_reparse_to_the_same_tree(e in arb_expr()) {
            let text = pretty::expr_to_string(&e);
            let mut d = Diagnostics::new();
            let mut back = parse_expression(&tokens(&text), &mut d);
            prop_assert!(d.items.is_empty(), "{text}: {:?}", d.items);
            erase_expr_spans(&mut back);
            prop_assert_eq!(back, e, "{}", text);
        }

        #[test]
        fn printed_statements_reparse(e in arb_expr(), t in arb_type(), e2 in arb_expr(), n in 0usize..4) {
            let decl_ty = match n {
                0 => t.clone(),
                _ => TypeExpr {
                    kind: TypeExprKind::Array { elem: Box::new(t.clone()), size: Some(Box::new(e2.clone())) },
                    span: sp(),
                },
            };
            let var = VarDecl {
                name: ident("v", sp()),
                ty: decl_ty,
                init: Some(match n { 2 => Init::Brace(vec![e.clone()], sp()), 3 => Init::Paren(vec![e.clone()], sp()), _ => Init::Assign(e.clone()) }),
                attrs: vec![],
                is_constexpr: n == 1,
                is_static: false,
                specialization: None,
                owner: None,
                span: sp(),
            };
            let stmts = vec![
                Stmt { kind: StmtKind::Decl(vec![var.clone()]), span: sp() },
                Stmt { kind: StmtKind::Expr(e.clone()), span: sp() },
                Stmt {
                    kind: StmtKind::If {
                        cond: Box::new(e2.clone()),
                        then: Box::new(Stmt { kind: StmtKind::Return(Some(e.clone())), span: sp() }),
                        els: Some(Box::new(Stmt { kind: StmtKind::Block(Block { stmts: vec![], span: sp() }), span: sp() })),
                        is_constexpr: false,
                    },
                    span: sp(),
                },
                Stmt {
                    kind: StmtKind::For {
                        init: Some(Box::new(Stmt { kind: StmtKind::Decl(vec![var.clone()]), span: sp() })),
                        cond: Some(e2.clone()),
                        step: None,
                        body: Box::new(Stmt { kind: StmtKind::Break, span: sp() }),
                    },
                    span: sp(),
                },
            ];
            let f = Function {
                attrs: vec![],
                is_kernel: false,
                is_inline: false,
                is_static: false,
                is_constexpr: false,
                ret: named_ty("void", false, None),
                name: simple_path("f", sp()),
                params: vec![Param {
                    ty: t.clone(),
                    is_pack: false,
                    name: Some(ident("p", sp())),
                    attrs: vec![],
                    default: None,
                    span: sp(),
                }],
                is_const_method: false,
                object_space: None,
                body: Some(Block { stmts, span: sp() }),
                span: sp(),
            };
            let unit = TranslationUnit { items: vec![
                Item { kind: ItemKind::Vars(vec![VarDecl { is_constexpr: false, ..var }]), span: sp() },
                Item { kind: ItemKind::Function(f), span: sp() },
            ] };
            let text = pretty::unit_to_string(&unit);
            let (mut back, d) = parse_src(&text);
            prop_assert!(d.items.is_empty(), "{text}: {:?}", d.items);
            erase_unit_spans(&mut back);
            prop_assert_eq!(back, unit, "{}", text);
        }
    }
}

#[cfg(test)]
mod more_tests {
    use super::tests::parse_src;
    use crate::ast::ItemKind;
    use crate::pretty;

    fn stmt_text(body: &str) -> String {
        let (u, d) = parse_src(&format!("void f() {{\n{body}\n}}\n"));
        assert!(d.items.is_empty(), "{body}: {:#?}", d.items);
        pretty::unit_to_string(&u)
    }

    #[test]
    fn unknown_templates_with_type_arguments() {
        let t = stmt_text("x = k<float>(1); y = a < float(b) && c > d; z = q<int>::v;");
        assert!(t.contains("x = k<float >(1);"), "{t}");
        assert!(t.contains("y = ((a < float(b)) && (c > d));"), "{t}");
        assert!(t.contains("z = q<int >::v;"), "{t}");
        let (u, d) = parse_src("template void f<int>(int);\ntemplate [[host_name(\"k\")]] [[kernel]] decltype(k<float>) k<float>;\n");
        assert!(d.items.is_empty(), "{:#?}", d.items);
        assert_eq!(u.items.len(), 2);
    }

    #[test]
    fn recovery_gives_one_error_per_mistake() {
        let src = "kernel void k(device float* o) {\n  if (o[0] > 1 {\n    o[0] = 2;\n  }\n  o[1] = 3;\n  float a = ;\n  o[2] = a;\n}\nkernel void j() { int x = 1 }\n";
        let (u, d) = parse_src(src);
        assert_eq!(d.items.len(), 3, "{:#?}", d.items);
        assert_eq!(u.items.len(), 2);
        let src = "kernel void k(device float* o [[buffer(0)]] {\n  o[0] = f(1, 2;\n  o[1] = 2;\n}\nfloat g() { return 1; }\n";
        let (u, d) = parse_src(src);
        assert_eq!(d.items.len(), 2, "{:#?}", d.items);
        assert_eq!(u.items.len(), 2);
        let (u, d) = parse_src("namespace a::b { constant int Z = 1; }");
        assert!(d.items.is_empty(), "{:#?}", d.items);
        assert_eq!(pretty::unit_to_string(&u), "namespace a {\n    namespace b {\n        constant int Z = 1;\n    }\n}\n");
        let (u, d) = parse_src("struct S { float x; };\nstruct S make();\nconstant struct S* none = nullptr;\nstruct S s;\n");
        assert!(d.items.is_empty(), "{:#?}", d.items);
        assert!(matches!(u.items[1].kind, ItemKind::Function(_)));
        assert!(matches!(u.items[3].kind, ItemKind::Vars(_)));
        let (_, d) = parse_src("void f(struct S* p, enum E e) { struct S* q = p; }");
        assert!(d.items.is_empty(), "{:#?}", d.items);
    }
}
