//! The C preprocessor of MSL: directives, conditionals, macro expansion.
//!
//! The lexer produces tokens with `line_start` flags; this module walks them,
//! runs directives (`#define`, `#if`, ...) and expands macros with the usual C
//! rules (rescanning, "blue paint" against self-reference, argument
//! pre-expansion, `#` and `##`). Expansion is driven by a stack of token
//! contexts rather than recursion, so the Rust stack depth never depends on
//! the input except through argument pre-expansion and `#if` expressions,
//! which both have explicit caps. Total work and output size are capped too.
//!
//! Spans: a token from the user's file keeps its span. A token produced by a
//! macro gets the span of the (outermost) invocation in the user's text and
//! `macro_def` pointing into the `#define`; tokens that came from a macro
//! argument keep their own span, so errors point at what the user wrote.

use crate::diag::{suggest, Diagnostic, Diagnostics};
use crate::include::{read_header, IncludeRoots, Lookup};
use crate::lex;
use crate::source::{FileId, IncludeEdge, SourceMap, Span};
use crate::token::{IntSuffix, Punct, Token, TokenKind};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::Cell;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Options of one preprocessor run.
#[derive(Clone, Debug)]
pub struct PreprocessOptions {
    /// `-D name=text` definitions: (name, replacement text). The name may
    /// carry a parameter list, like `F(x)`.
    pub defines: Vec<(String, String)>,
    /// Value of `__METAL_VERSION__` (310 for Metal 3.1).
    pub metal_version: u32,
    /// Folder of the main file: `#include "…"` in it looks there first.
    /// `None` for text that has no file (generated or piped sources).
    pub main_dir: Option<PathBuf>,
    /// `-I DIR` roots, searched in order after the including file's folder.
    pub include_dirs: Vec<PathBuf>,
    /// Values of function constants (`[[function_constant(i)]]`), keyed by
    /// name or by index, as text: what `MTLFunctionConstantValues` gives a
    /// pipeline. Read by the checker, not the preprocessor.
    pub function_constants: Vec<(String, String)>,
    /// Headers as text (a replayed capture): when set, `#include` is
    /// answered from these only and the disk is never read.
    pub captured_headers: Option<std::sync::Arc<crate::include::CapturedHeaders>>,
    /// Only the diagnostics and the kernel list are wanted (`lint`): the
    /// checker drops each function's checked body once it is done with it
    /// (a `constexpr` function's stays, for compile-time calls). Files that
    /// instantiate thousands of kernels then need no memory for them.
    pub diagnostics_only: bool,
    /// Debugger probes to place (see `probe.rs`). Read by the checker.
    pub probes: crate::probe::Probes,
}

impl Default for PreprocessOptions {
    fn default() -> Self {
        PreprocessOptions {
            defines: Vec::new(),
            metal_version: 310,
            main_dir: None,
            include_dirs: Vec::new(),
            function_constants: Vec::new(),
            captured_headers: None,
            diagnostics_only: false,
            probes: Default::default(),
        }
    }
}

/// Most tokens one run may output.
const MAX_OUTPUT_TOKENS: usize = 4_000_000;
/// Most tokens all macro expansions together may produce (substituted
/// replacement lists plus macro arguments fed to pre-expansion). Real kernels
/// stay far below this; it bounds time and memory for hostile input.
const MAX_EXPANSION_WORK: usize = 2_000_000;
/// Deepest `#if` nesting accepted.
const MAX_IF_DEPTH: usize = 256;
/// Deepest nesting of macro calls inside macro arguments.
const MAX_ARG_NESTING: usize = 200;
/// Deepest nesting of an `#if` expression (parentheses, unary operators, `?:`).
const MAX_EXPR_DEPTH: usize = 128;
/// Deepest `#include` nesting (clang's default limit).
const MAX_INCLUDE_DEPTH: usize = 200;
/// Most header bytes one run may read, all inclusions together.
const MAX_INCLUDED_BYTES: usize = 64 << 20;
/// Most times one run may enter headers (not counting those skipped by
/// `#pragma once`): real libraries enter a few hundred.
const MAX_HEADER_ENTRIES: usize = 5_000;
/// Most warnings one run reports.
const MAX_WARNINGS: usize = 100;
/// Longest token made by `#` or `##`, in bytes.
const MAX_SYNTH_LEN: usize = 65_536;

type MacroMap = HashMap<Rc<str>, Rc<Macro>>;

/// Headers the Metal compiler provides; `#include` of these produces nothing.
/// The name the built-in declarations are shown under in messages.
const BUILTIN_DECLS_NAME: &str = "<metal_type_traits>";

/// What `<metal_type_traits>` declares as C++ templates (the traits that
/// answer questions about types are built into the checker instead).
const BUILTIN_DECLS: &str = "\
namespace metal {
template <typename T, T v>
struct integral_constant {
  static constexpr constant T value = v;
  using value_type = T;
  constexpr operator value_type() const thread { return value; }
  constexpr value_type operator()() const thread { return value; }
};
template <bool B>
using bool_constant = integral_constant<bool, B>;
using true_type = bool_constant<true>;
using false_type = bool_constant<false>;
}
";

fn is_builtin_header(name: &str) -> bool {
    name.starts_with("metal_") && unsupported_header(name).is_none()
}

/// Apple headers this simulator does not model, with the reason.
fn unsupported_header(name: &str) -> Option<&'static str> {
    if name.starts_with("MetalPerformancePrimitives/") || name == "metal_tensor" || name.starts_with("metal_tensor") {
        Some("Metal 4 tensor operations (macOS 26 SDK) are not simulated")
    } else if name.starts_with("metal_raytracing") {
        Some("ray tracing is not simulated")
    } else {
        None
    }
}

/// How a header is named in messages: relative to the main file's folder
/// when it is inside it, else its full path.
fn display_name(path: &Path, main_dir: Option<&PathBuf>) -> String {
    match main_dir.and_then(|d| path.strip_prefix(d).ok()) {
        Some(rel) => rel.display().to_string(),
        None => path.display().to_string(),
    }
}

/// Feature-test pseudo-macros usable in `#if`; they count as defined.
const HAS_MACROS: &[&str] = &[
    "__has_include",
    "__has_include_next",
    "__has_feature",
    "__has_extension",
    "__has_builtin",
    "__has_attribute",
    "__has_cpp_attribute",
    "__has_declspec_attribute",
];

const DIRECTIVES: &[&str] = &[
    "define", "undef", "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif", "include", "error", "warning", "pragma",
    "line",
];

/// Lex `file` (already in `sources`) and run the preprocessor. Returns the
/// expanded token stream ending in one Eof token.
pub fn preprocess(sources: &mut SourceMap, file: FileId, opts: &PreprocessOptions, diags: &mut Diagnostics) -> Vec<Token> {
    preprocess_with(sources, file, opts, diags, &[]).0
}

/// Like [`preprocess`], then expand each of `extra` (debugger probes' text)
/// with the macros defined at the end of `file`; directives are not run in
/// them.
pub fn preprocess_with(
    sources: &mut SourceMap,
    file: FileId,
    opts: &PreprocessOptions,
    diags: &mut Diagnostics,
    extra: &[FileId],
) -> (Vec<Token>, Vec<Vec<Token>>) {
    // Predefined macros and -D definitions live in a small generated file so
    // that their bodies have real spans and spellings.
    let mut builtin = String::new();
    let _ = writeln!(builtin, "#define __METAL_VERSION__ {}", opts.metal_version);
    builtin.push_str("#define __METAL__ 1\n#define __METAL_MACOS__ 1\n#define __cplusplus 201703L\n#define __clang__ 1\n");
    // Apple's compiler for macOS has had simdgroup_matrix since Metal 2.3;
    // libraries test this macro before using it.
    if opts.metal_version >= 230 {
        builtin.push_str("#define __HAVE_SIMDGROUP_MATRIX__ 1\n");
    }
    // The fast-math flags Metal's headers pass to `__metal_*` intrinsics
    // (fast math is the compiler's default).
    builtin.push_str(
        "#define __METAL_FAST_MATH__ true\n#define __METAL_PRECISE_MATH__ false\n#define __METAL_MAYBE_FAST_MATH__ __METAL_FAST_MATH__\n",
    );
    if opts.metal_version >= 310 {
        builtin.push_str("#define __HAVE_BFLOAT__ 1\n");
    }
    for (name, value) in &opts.defines {
        let clean = |s: &str| s.replace(['\n', '\r'], " ");
        let _ = writeln!(builtin, "#define {} {}", clean(name), clean(value));
    }
    let bid = sources.add("<built-in>", builtin);
    let roots = IncludeRoots::new(opts.main_dir.as_deref(), &opts.include_dirs);
    for dir in &roots.missing {
        diags.push(
            Diagnostic::warning(Span::new(file, 0, 0), format!("include folder `{}` does not exist", dir.display()))
                .code("W0102")
                .help("check the path given with `-I`"),
        );
    }
    let mut file_dirs = HashMap::default();
    if let Some(dir) = opts.main_dir.as_ref().and_then(|d| d.canonicalize().ok()) {
        file_dirs.insert(file, dir);
    }

    let btoks = lex::lex(bid, &sources.file(bid).text, diags);
    let mtoks = lex::lex(file, &sources.file(file).text, diags);
    let mut pp = Pp {
        sources,
        diags,
        main: file,
        macros: MacroMap::default(),
        stack: Vec::new(),
        isolated: false,
        arg_depth: 0,
        reader: Reader::new(btoks),
        conds: Vec::new(),
        active: true,
        work: 0,
        too_large: false,
        nest_error: false,
        if_depth_error: false,
        counter: 0,
        warnings: 0,
        includes: Vec::new(),
        roots,
        file_dirs,
        loaded: HashMap::default(),
        once: HashSet::default(),
        included_bytes: 0,
        header_entries: 0,
        reported_too_deep: false,
        captured: opts.captured_headers.clone(),
    };
    for (name, b) in [("__LINE__", Builtin::Line), ("__FILE__", Builtin::File), ("__COUNTER__", Builtin::Counter)] {
        let name: Rc<str> = Rc::from(name);
        pp.macros.insert(
            name.clone(),
            Rc::new(Macro {
                name,
                kind: MacroKind::Builtin(b),
                params: Vec::new(),
                body: Vec::new(),
                param_at: Vec::new(),
                raw_uses: Vec::new(),
                exp_uses: Vec::new(),
                def_span: Span::new(bid, 0, 0),
                disabled: Cell::new(0),
            }),
        );
    }
    pp.run(false);
    pp.reader = Reader::new(mtoks);
    pp.stack.clear();
    pp.conds.clear();
    pp.active = true;
    let main = pp.run(true);
    let mut more = Vec::with_capacity(extra.len());
    for &x in extra {
        let mut toks = lex::lex(x, &pp.sources.file(x).text, pp.diags);
        // One line of expressions: no token starts a directive.
        toks.iter_mut().for_each(|t| t.line_start = false);
        pp.reader = Reader::new(toks);
        pp.stack.clear();
        pp.conds.clear();
        pp.active = true;
        more.push(pp.run(true));
    }
    (main, more)
}

/// A token inside the preprocessor.
#[derive(Clone, Debug)]
struct PTok {
    tok: Token,
    /// Painted blue: names a macro that must never expand here again.
    noexp: bool,
    /// Spelling for tokens that have no text of their own in any file
    /// (pasted, stringified, `__LINE__`).
    text: Option<Rc<str>>,
}

impl PTok {
    fn new(tok: Token) -> PTok {
        PTok { tok, noexp: false, text: None }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Builtin {
    Line,
    File,
    Counter,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MacroKind {
    Object,
    Function { variadic: bool },
    Builtin(Builtin),
}

#[derive(Debug)]
struct Macro {
    name: Rc<str>,
    kind: MacroKind,
    /// Parameter names; a variadic macro's last one is `__VA_ARGS__` (or the
    /// GNU named form `args...`).
    params: Vec<Rc<str>>,
    /// Replacement list with spans inside the `#define`.
    body: Vec<Token>,
    /// For each body token, the parameter it names.
    param_at: Vec<Option<usize>>,
    /// Per parameter: uses as written (with `#` or `##`) and uses that need
    /// the macro-expanded argument.
    raw_uses: Vec<u32>,
    exp_uses: Vec<u32>,
    /// The macro name in its `#define`.
    def_span: Span,
    /// How many active expansions of this macro are on the context stack.
    disabled: Cell<u32>,
}

impl Macro {
    fn same_definition(&self, other: &Macro) -> bool {
        self.kind == other.kind
            && self.params == other.params
            && self.body.len() == other.body.len()
            && self
                .body
                .iter()
                .zip(&other.body)
                .enumerate()
                .all(|(i, (a, b))| a.kind == b.kind && (i == 0 || a.space_before == b.space_before))
    }
}

/// What one element of a replacement list turns into.
enum Operand {
    One(PTok),
    Many(Vec<PTok>),
}

/// Tokens still to be read from one macro expansion (stored reversed).
struct Ctx {
    toks: Vec<PTok>,
    mac: Option<Rc<Macro>>,
}

/// One open `#if` group.
struct Cond {
    /// `#if ...` directive start, for "unterminated" errors.
    start: Span,
    name: Rc<str>,
    parent_active: bool,
    /// Some branch of this group was (or must be treated as) taken.
    taken: bool,
    seen_else: bool,
}

/// A file whose reading was suspended by an `#include`.
struct IncludeFrame {
    reader: Reader,
    /// Open `#if` groups when the include started; the header must close
    /// the ones it opens.
    conds_len: usize,
}

/// Reads the tokens of one file.
struct Reader {
    toks: Vec<Token>,
    pos: usize,
    peeked: Option<PTok>,
}

impl Reader {
    fn new(toks: Vec<Token>) -> Reader {
        Reader { toks, pos: 0, peeked: None }
    }
}

struct Pp<'s, 'd> {
    sources: &'s mut SourceMap,
    diags: &'d mut Diagnostics,
    main: FileId,
    macros: MacroMap,
    stack: Vec<Ctx>,
    /// Expanding a macro argument or `#if` line: the file is out of reach.
    isolated: bool,
    arg_depth: usize,
    reader: Reader,
    conds: Vec<Cond>,
    active: bool,
    work: usize,
    too_large: bool,
    nest_error: bool,
    if_depth_error: bool,
    counter: u64,
    warnings: usize,
    /// Files suspended by `#include`, outermost first.
    includes: Vec<IncludeFrame>,
    roots: IncludeRoots,
    /// Canonical folder of each file read from disk.
    file_dirs: HashMap<FileId, PathBuf>,
    /// Headers already read, by canonical path.
    loaded: HashMap<PathBuf, FileId>,
    /// Headers that said `#pragma once`.
    once: HashSet<FileId>,
    included_bytes: usize,
    /// Headers entered so far (see `MAX_HEADER_ENTRIES`).
    header_entries: usize,
    /// "#include nested too deeply" was reported (it is reported once).
    reported_too_deep: bool,
    /// Headers given as text (see [`PreprocessOptions::captured_headers`]).
    captured: Option<std::sync::Arc<crate::include::CapturedHeaders>>,
}

fn eof_token(span: Span) -> PTok {
    PTok::new(Token::new(TokenKind::Eof, span))
}

fn int_kind(value: u64) -> TokenKind {
    TokenKind::Int { value, suffix: IntSuffix::default(), decimal: true }
}

impl Pp<'_, '_> {
    /// Record a diagnostic; warnings beyond a cap are dropped so that odd
    /// input cannot flood the output (errors are capped by `Diagnostics`).
    fn emit(&mut self, d: Diagnostic) {
        if !d.is_error() {
            if self.warnings >= MAX_WARNINGS {
                return;
            }
            self.warnings += 1;
        }
        self.diags.push(d);
    }

    fn run(&mut self, keep: bool) -> Vec<Token> {
        let mut out = Vec::with_capacity(if keep { self.reader.toks.len() + self.reader.toks.len() / 4 } else { 0 });
        loop {
            let t = self.expand_next();
            if t.tok.kind == TokenKind::Eof {
                if keep {
                    out.push(t.tok);
                }
                break;
            }
            if !keep {
                continue;
            }
            if out.len() >= MAX_OUTPUT_TOKENS {
                self.report_too_large(t.tok.span);
                let end = self.sources.file(self.main).text.len() as u32;
                out.push(Token::new(TokenKind::Eof, Span::new(self.main, end, end)));
                break;
            }
            let mut tok = t.tok;
            if let TokenKind::BadNumber(b) = &tok.kind {
                self.emit(bad_number(tok.span, &b.raw, &b.problem));
                tok.kind = TokenKind::Int { value: 0, suffix: Default::default(), decimal: true };
            }
            out.push(tok);
        }
        out
    }

    fn report_too_large(&mut self, span: Span) {
        if !self.too_large {
            self.too_large = true;
            self.emit(
                Diagnostic::error(span, "macro expansion too large")
                    .code("E0113")
                    .label("expanding this produces too many tokens")
                    .note(format!("the limit is {MAX_EXPANSION_WORK} tokens of macro expansion and {MAX_OUTPUT_TOKENS} tokens of output"))
                    .help("check for macros that expand to several copies of other macros, nested many times"),
            );
        }
    }

    // ----- reading tokens -------------------------------------------------

    /// Next token before macro expansion: from the innermost unfinished
    /// context, else from the file (running directives on the way).
    fn next_raw(&mut self) -> PTok {
        loop {
            if let Some(ctx) = self.stack.last_mut() {
                if let Some(t) = ctx.toks.pop() {
                    return t;
                }
                if let Some(ctx) = self.stack.pop() {
                    if let Some(m) = ctx.mac {
                        m.disabled.set(m.disabled.get().saturating_sub(1));
                    }
                }
                continue;
            }
            if self.isolated {
                return eof_token(Span::default());
            }
            if let Some(t) = self.reader.peeked.take() {
                return t;
            }
            return self.read_file_token();
        }
    }

    /// Is the next raw token `(`? Does not consume anything.
    fn peek_is_lparen(&mut self) -> bool {
        for ctx in self.stack.iter().rev() {
            if let Some(t) = ctx.toks.last() {
                return t.tok.is_punct(Punct::LParen);
            }
        }
        if self.isolated {
            return false;
        }
        // Every context is used up; popping them now is what reading the
        // next token would do anyway, and it keeps directives met while
        // peeking from seeing stale disabled macros.
        while let Some(ctx) = self.stack.pop() {
            if let Some(m) = ctx.mac {
                m.disabled.set(m.disabled.get().saturating_sub(1));
            }
        }
        if self.reader.peeked.is_none() {
            let t = self.read_file_token();
            self.reader.peeked = Some(t);
        }
        self.reader.peeked.as_ref().is_some_and(|t| t.tok.is_punct(Punct::LParen))
    }

    /// Next token of the file in an active region, running directives.
    fn read_file_token(&mut self) -> PTok {
        loop {
            let at_end = self.reader.toks.get(self.reader.pos).is_none_or(|t| t.kind == TokenKind::Eof);
            if at_end {
                if let Some(frame) = self.includes.pop() {
                    // End of a header: back to the file that included it.
                    self.close_conds(frame.conds_len);
                    self.reader = frame.reader;
                    continue;
                }
                self.close_conds(0);
                return match self.reader.toks.get(self.reader.pos) {
                    Some(t) => PTok::new(t.clone()),
                    None => {
                        let end = self.sources.file(self.main).text.len() as u32;
                        eof_token(Span::new(self.main, end, end))
                    }
                };
            }
            let t = &self.reader.toks[self.reader.pos];
            if t.line_start && t.is_punct(Punct::Hash) {
                let hash = t.clone();
                let start = self.reader.pos + 1;
                let mut end = start;
                while let Some(u) = self.reader.toks.get(end) {
                    if u.line_start || u.kind == TokenKind::Eof {
                        break;
                    }
                    end += 1;
                }
                let line: Vec<Token> = self.reader.toks[start..end].to_vec();
                self.reader.pos = end;
                self.directive(&hash, &line);
                continue;
            }
            let pos = self.reader.pos;
            self.reader.pos += 1;
            if self.active {
                // The reader never looks back, so the token can be moved out.
                let filler = Token::new(TokenKind::Punct(Punct::Semi), t.span);
                return PTok::new(std::mem::replace(&mut self.reader.toks[pos], filler));
            }
        }
    }

    /// Report and drop the `#if` groups opened after the first `from`.
    fn close_conds(&mut self, from: usize) {
        let from = from.min(self.conds.len());
        for c in self.conds.split_off(from) {
            self.emit(
                Diagnostic::error(c.start, format!("unterminated `#{}`: add a matching `#endif`", c.name))
                    .code("E0102")
                    .label("this conditional is never closed")
                    .help("add `#endif` where the conditional block should end"),
            );
        }
        self.active = true;
    }

    // ----- macro expansion -------------------------------------------------

    /// Next fully macro-expanded token.
    fn expand_next(&mut self) -> PTok {
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
    fn expand_isolated(&mut self, toks: Vec<PTok>, span: Span) -> Vec<PTok> {
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
    fn spell(&self, t: &PTok) -> String {
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

    // ----- directives ---------------------------------------------------------

    fn directive(&mut self, hash: &Token, line: &[Token]) {
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

    fn extra_tokens(&mut self, name: &str, rest: &[Token]) {
        if let (Some(a), Some(b)) = (rest.first(), rest.last()) {
            self.emit(
                Diagnostic::warning(a.span.to(b.span), format!("extra tokens at end of `#{name}` directive"))
                    .code("W0103")
                    .label("ignored")
                    .help("remove them, or turn them into a `//` comment"),
            );
        }
    }

    fn is_defined(&self, name: &str) -> bool {
        self.macros.contains_key(name) || HAS_MACROS.contains(&name)
    }

    fn open_cond(&mut self, name: &Rc<str>, dspan: Span, rest: &[Token]) {
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

    fn elif(&mut self, name: &Rc<str>, dspan: Span, rest: &[Token]) {
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

    fn else_(&mut self, dspan: Span) {
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

    fn endif(&mut self, dspan: Span) {
        match self.conds.pop() {
            Some(c) => self.active = c.parent_active,
            None => self.no_if(dspan, "endif"),
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

    fn include(&mut self, name: &str, dspan: Span, rest: &[Token]) {
        let (header, quoted) = match rest.first().map(|t| &t.kind) {
            Some(TokenKind::Punct(Punct::Lt)) => {
                let mut h = String::new();
                let mut closed = false;
                for t in &rest[1..] {
                    if t.is_punct(Punct::Gt) {
                        closed = true;
                        break;
                    }
                    h.push_str(&self.spell(&PTok::new(t.clone())));
                }
                if !closed {
                    self.emit(
                        Diagnostic::error(dspan, format!("missing `>` in `#{name}`")).code("E0105").help("write `#include <metal_stdlib>`"),
                    );
                    return;
                }
                (h, false)
            }
            Some(TokenKind::Str(s)) => (s.to_string(), true),
            _ => {
                self.emit(
                    Diagnostic::error(dspan, format!("`#{name}` needs a header name"))
                        .code("E0105")
                        .help("write `#include <metal_stdlib>` or `#include \"my_header.h\"`"),
                );
                return;
            }
        };
        let span = match (rest.first(), rest.last()) {
            (Some(a), Some(b)) => dspan.to(a.span.to(b.span)),
            _ => dspan,
        };
        let shown = if quoted { format!("\"{header}\"") } else { format!("<{header}>") };
        if !quoted {
            if let Some(why) = unsupported_header(&header) {
                self.emit(
                    Diagnostic::error(span, format!("unsupported header {shown}: {why}"))
                        .code(crate::diag::codes::UNSUPPORTED_HEADER)
                        .label("not supported by this simulator")
                        .note("code that needs it cannot run here; guard it with `#if __has_include(...)` to keep a fallback"),
                );
                return;
            }
            if is_builtin_header(&header) {
                self.builtin_declarations(span);
                return;
            }
        }
        if self.includes.len() >= MAX_INCLUDE_DEPTH {
            // Once is enough: a cycle hits the limit again on every path.
            if std::mem::replace(&mut self.reported_too_deep, true) {
                return;
            }
            self.emit(
                Diagnostic::error(span, format!("#include nested too deeply (more than {MAX_INCLUDE_DEPTH} levels)"))
                    .code("E0105")
                    .label("including this goes too deep")
                    .help("headers that include each other need include guards or `#pragma once`"),
            );
            return;
        }
        if let Some(captured) = self.captured.clone() {
            let from = self.sources.file(dspan.file).name.clone();
            let Some(entry) = captured.find(&from, &header, quoted) else {
                self.emit(
                    Diagnostic::error(span, format!("cannot find header {shown}: the capture holds no such header included from `{from}`"))
                        .code("E0105")
                        .label("not in the capture")
                        .note("a capture replays the headers it recorded; the source or its macros differ from the recorded run"),
                );
                return;
            };
            let key = PathBuf::from(format!("<captured>/{}", entry.name));
            let file = match self.loaded.get(&key) {
                Some(&f) => f,
                None => {
                    let f = self.sources.add_included(entry.name.clone(), entry.text.clone(), span);
                    self.loaded.insert(key, f);
                    f
                }
            };
            self.enter_header(file, header, quoted, dspan.file, span);
            return;
        }
        let including_dir = self.file_dirs.get(&dspan.file).cloned();
        let path = match self.roots.lookup(&header, quoted, including_dir.as_deref()) {
            Lookup::Found(path) => path,
            Lookup::Refused(path) => {
                self.emit(
                    Diagnostic::error(span, format!("refusing to include {shown}: `{}` is outside the allowed folders", path.display()))
                        .code("E0105")
                        .label("outside the source folder and the `-I` roots")
                        .note("headers are read only from the folder of the file being compiled and from `-I` folders")
                        .help("add the header's root folder with `-I DIR`"),
                );
                return;
            }
            Lookup::NotFound(searched) => {
                let mut d = Diagnostic::error(span, format!("cannot find header {shown}")).code("E0105").label("no such header");
                if self.roots.is_empty() {
                    d = d.note("this source has no folder and no `-I` roots were given, so only Metal's built-in headers (`<metal_stdlib>`, ...) exist");
                } else {
                    let list: Vec<String> = searched.iter().map(|p| format!("`{}`", p.display())).collect();
                    d = d.note(if list.is_empty() {
                        "no folder was searched".to_string()
                    } else {
                        format!("searched {}", list.join(", "))
                    });
                }
                self.emit(d.help("give the folder the path is relative to with `-I DIR` (e.g. the library's repository root)"));
                return;
            }
        };
        let file = match self.loaded.get(&path) {
            Some(&f) => f,
            None => {
                let text = match read_header(&path) {
                    Ok(t) if self.included_bytes + t.len() <= MAX_INCLUDED_BYTES => t,
                    Ok(_) => {
                        self.emit(
                            Diagnostic::error(span, format!("cannot include {shown}: headers total more than {MAX_INCLUDED_BYTES} bytes"))
                                .code("E0105"),
                        );
                        return;
                    }
                    Err(e) => {
                        self.emit(Diagnostic::error(span, format!("cannot read header {shown}: {e}")).code("E0105").label("found here"));
                        return;
                    }
                };
                self.included_bytes += text.len();
                let display = display_name(&path, self.file_dirs.get(&self.main));
                let f = self.sources.add_included(display, text, span);
                if let Some(dir) = path.parent() {
                    self.file_dirs.insert(f, dir.to_path_buf());
                }
                self.loaded.insert(path, f);
                f
            }
        };
        self.enter_header(file, header, quoted, dspan.file, span);
    }

    /// Continue reading in `file`, the header `spelled` that `from` includes.
    fn enter_header(&mut self, file: FileId, spelled: String, quoted: bool, from: FileId, span: Span) {
        if self.once.contains(&file) {
            self.sources.record_include(IncludeEdge { from, spelled, quoted, to: file });
            return;
        }
        // Every entry counts: a header that includes itself twice without a
        // guard would otherwise be read 2^200 times before the depth limit.
        self.header_entries += 1;
        if self.header_entries > MAX_HEADER_ENTRIES {
            if self.header_entries == MAX_HEADER_ENTRIES + 1 {
                self.emit(
                    Diagnostic::error(span, format!("headers were included more than {MAX_HEADER_ENTRIES} times in all"))
                        .code("E0105")
                        .label("one inclusion too many")
                        .help("headers that include themselves or each other need include guards or `#pragma once`"),
                );
            }
            return;
        }
        self.sources.record_include(IncludeEdge { from, spelled, quoted, to: file });
        let toks = lex::lex(file, &self.sources.file(file).text, self.diags);
        let reader = std::mem::replace(&mut self.reader, Reader::new(toks));
        self.includes.push(IncludeFrame { reader, conds_len: self.conds.len() });
    }

    /// The part of Metal's headers that is ordinary C++ (`integral_constant`
    /// and friends), read once, the first time a built-in header is
    /// included, as a header file of its own.
    fn builtin_declarations(&mut self, span: Span) {
        let key = PathBuf::from(BUILTIN_DECLS_NAME);
        if self.loaded.contains_key(&key) {
            return;
        }
        let f = self.sources.add_included(BUILTIN_DECLS_NAME, BUILTIN_DECLS, span);
        self.loaded.insert(key, f);
        let toks = lex::lex(f, &self.sources.file(f).text, self.diags);
        let reader = std::mem::replace(&mut self.reader, Reader::new(toks));
        self.includes.push(IncludeFrame { reader, conds_len: self.conds.len() });
    }

    /// `__has_include`: a built-in header, or a file the include search finds.
    fn header_exists(&self, name: &str, quoted: bool, from: FileId) -> bool {
        if !quoted && is_builtin_header(name) {
            return true;
        }
        if !quoted && unsupported_header(name).is_some() {
            return false;
        }
        if let Some(captured) = &self.captured {
            return captured.find(&self.sources.file(from).name, name, quoted).is_some();
        }
        matches!(self.roots.lookup(name, quoted, self.file_dirs.get(&from).map(PathBuf::as_path)), Lookup::Found(_))
    }

    // ----- #if expressions ------------------------------------------------------

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

/// The error for a preprocessing number that is not a valid literal.
fn bad_number(span: Span, raw: &str, problem: &str) -> Diagnostic {
    Diagnostic::error(span, format!("invalid numeric literal `{raw}`: {problem}"))
        .code("E0003")
        .label("cannot read this number")
        .help("a number may only end in a suffix such as `u`, `l`, `f`, `h`; to build a name, start it with a letter (macro arguments like `8bit` are fine when pasted into one)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Severity;

    fn run(src: &str) -> (Vec<Token>, Diagnostics, SourceMap, FileId) {
        let mut sm = SourceMap::new();
        let f = sm.add("test.metal", src);
        let mut d = Diagnostics::new();
        let toks = preprocess(&mut sm, f, &PreprocessOptions::default(), &mut d);
        (toks, d, sm, f)
    }

    fn pp(src: &str) -> (String, Diagnostics) {
        let (toks, d, _, _) = run(src);
        assert_eq!(toks.last().map(|t| &t.kind), Some(&TokenKind::Eof));
        assert_eq!(toks.iter().filter(|t| t.kind == TokenKind::Eof).count(), 1);
        let s: Vec<String> = toks.iter().filter(|t| t.kind != TokenKind::Eof).map(|t| t.kind.to_string()).collect();
        (s.join(" "), d)
    }

    fn ok(src: &str) -> String {
        let (s, d) = pp(src);
        assert!(!d.has_errors(), "unexpected errors for {src:?}: {:#?}", d.items);
        s
    }

    /// `src` preprocessed, without the built-in declarations that the
    /// first `<metal_*>` include brings in front.
    fn ok_user(src: &str) -> String {
        let builtins = ok("#include <metal_stdlib>");
        let all = ok(src);
        assert!(!builtins.is_empty() && all.starts_with(&builtins), "{all}");
        all[builtins.len()..].trim_start().to_string()
    }

    fn errors(d: &Diagnostics) -> Vec<String> {
        d.items.iter().filter(|x| x.severity == Severity::Error).map(|x| x.message.clone()).collect()
    }

    #[test]
    fn object_and_function_macros() {
        assert_eq!(ok("#define N 4\nint a[N];"), "int a [ 4 ] ;");
        assert_eq!(ok("#define ADD(a, b) ((a) + (b))\nADD(1, 2)"), "( ( 1 ) + ( 2 ) )");
        assert_eq!(ok("#define F(x) x\nF"), "F");
        assert_eq!(ok("#define F(x) [x]\nF (1)"), "[ 1 ]");
        assert_eq!(ok("#define E()\nE() E"), "E");
        assert_eq!(ok("#define F(x) x\nF(f(a, b))"), "f ( a , b )");
    }

    #[test]
    fn function_macro_args() {
        assert_eq!(ok("#define F(a, b) a|b\nF((1, 2), [3])"), "( 1 , 2 ) | [ 3 ]");
        let (_, d) = pp("#define F(a, b) a|b\nF((1, 2), [3, 4])");
        assert!(errors(&d)[0].contains("takes 2 arguments, but 3 were given"));
        assert_eq!(ok("#define F(a) <a>\nF(\n1\n+\n2\n)"), "< 1 + 2 >");
        assert_eq!(ok("#define F(a) <a>\nF()"), "< >");
        let (_, d) = pp("#define F(a, b) a\nF(1)");
        assert!(errors(&d)[0].contains("takes 2 arguments"), "{:?}", d.items);
    }

    #[test]
    fn nested_macros() {
        assert_eq!(ok("#define A B + 1\n#define B C * 2\n#define C 3\nA"), "3 * 2 + 1");
        assert_eq!(ok("#define SQ(x) ((x)*(x))\n#define TWO 2\nSQ(SQ(TWO))"), "( ( ( ( 2 ) * ( 2 ) ) ) * ( ( ( 2 ) * ( 2 ) ) ) )");
        // A function-like macro name produced by expansion, called with a
        // `(` from the file.
        assert_eq!(ok("#define F(x) <x>\n#define G F\nG(1)"), "< 1 >");
        // Arguments are expanded before substitution.
        assert_eq!(ok("#define ID(x) x\n#define N 5\nID(N)"), "5");
        // Defined later than used in another macro body: fine.
        assert_eq!(ok("#define A B\n#define B 7\nA"), "7");
    }

    #[test]
    fn stringify_and_paste() {
        assert_eq!(ok("#define S(x) #x\nS(a + b)"), "\"a + b\"");
        assert_eq!(ok("#define S(x) #x\nS(  a   +b  )"), "\"a +b\"");
        assert_eq!(ok("#define S(x) #x\nS(\"q\\n\")"), "\"\\\"q\\\\n\\\"\"");
        assert_eq!(ok("#define S(x) #x\n#define X 42\nS(X)"), "\"X\"");
        assert_eq!(ok("#define S(x) #x\n#define XS(x) S(x)\n#define X 42\nXS(X)"), "\"42\"");
        assert_eq!(ok("#define S(x) #x\nS(1.50f)"), "\"1.50f\"");
        assert_eq!(ok("#define CAT(a, b) a##b\nCAT(foo, bar) CAT(1, 2) CAT(+, =) CAT(, x) CAT(x, ) CAT(,)"), "foobar 12 += x x");
        assert_eq!(ok("#define CAT(a, b) a ## b\n#define foobar 99\nCAT(foo, bar)"), "99");
        assert_eq!(ok("#define CAT(a, b) a##b\n#define X 1\nCAT(X, 2)"), "X2");
        assert_eq!(ok("#define CAT3(a, b, c) a##b##c\nCAT3(x, 1, y)"), "x1y");
        // A preprocessing number that is no literal is a fine argument.
        assert_eq!(ok("#define N(op, s) op##_##s\n#define S(x) #x\nN(load, 8bit) S(16bit)"), "load_8bit \"16bit\"");
        let (_, d) = pp("#define I(x) x\nI(8bit)");
        assert!(errors(&d)[0].contains("invalid numeric literal `8bit`"), "{:?}", d.items);
        assert_eq!(ok("#define H(x) x##.5f\nH(1)"), "1.5f");
        assert_eq!(ok("#define AB a ## b\n#define ab 5\nAB"), "5");
        // Placemarkers: empty arguments around `##`.
        assert_eq!(ok("#define C(a, b, c) x a##b##c y\nC(,,) C(p,,) C(,,q) C(p,,q)"), "x y x p y x q y x pq y");
        assert_eq!(ok("#define P(a, e, f, b) a e##f##b\nP(u,,,v)"), "u v");
        let (s, d) = pp("#define CAT(a, b) a##b\nCAT(+, -)");
        assert!(errors(&d)[0].contains("does not give a valid token"), "{:?}", d.items);
        assert_eq!(s, "+ -");
        let (_, d) = pp("#define CAT(a, b) a##b\nCAT(/, /)");
        assert!(d.has_errors());
        let (_, d) = pp("#define BAD ## x\n");
        assert!(errors(&d)[0].contains("`##`"));
        let (_, d) = pp("#define BAD(x) #y\n");
        assert!(errors(&d)[0].contains("`#` must be followed"));
    }

    #[test]
    fn variadic_macros() {
        assert_eq!(ok("#define V(...) f(__VA_ARGS__)\nV(1, 2, (3, 4))"), "f ( 1 , 2 , ( 3 , 4 ) )");
        assert_eq!(ok("#define V(a, ...) a: __VA_ARGS__\nV(1) V(1, 2, 3)"), "1 : 1 : 2 , 3");
        assert_eq!(ok("#define V(fmt, ...) p(fmt, ## __VA_ARGS__)\nV(x) V(x, 1)"), "p ( x ) p ( x , 1 )");
        assert_eq!(ok("#define V(args...) g(args)\nV(1, 2)"), "g ( 1 , 2 )");
        assert_eq!(ok("#define S(...) #__VA_ARGS__\nS(a, b)"), "\"a, b\"");
        assert_eq!(ok("#define O(f, ...) f(0 __VA_OPT__(,) __VA_ARGS__)\nO(g) O(g, 1, 2)"), "g ( 0 ) g ( 0 , 1 , 2 )");
        assert_eq!(ok("#define O(a, ...) a ## __VA_OPT__(x ## a) z\nO(p) O(p, 1)"), "p z pxp z");
    }

    #[test]
    fn recursion_terminates() {
        assert_eq!(ok("#define A A\nA"), "A");
        assert_eq!(ok("#define A B\n#define B A\nA B"), "A B");
        assert_eq!(ok("#define A 1 + A\nA"), "1 + A");
        assert_eq!(ok("#define f(x) x + f(x)\nf(1)"), "1 + f ( 1 )");
        assert_eq!(ok("#define f(x) g(x)\n#define g(x) f(x)\nf(1)"), "f ( 1 )");
        // The painted name stays unexpanded even when rescanned later.
        assert_eq!(ok("#define foo foo\n#define ID(x) x\nID(foo)"), "foo");
        // Classic C standard example pieces.
        assert_eq!(ok("#define x 3\n#define f(a) f(x * (a))\n#undef x\n#define x 2\n#define g f\nf(y+1)"), "f ( 2 * ( y + 1 ) )");
        assert_eq!(ok("#define x 2\n#define f(a) f(x * (a))\n#define g f\ng(2+(3,4)-0)"), "f ( 2 * ( 2 + ( 3 , 4 ) - 0 ) )");
    }

    #[test]
    fn conditionals() {
        assert_eq!(ok("#if 1\na\n#else\nb\n#endif"), "a");
        assert_eq!(ok("#if 0\na\n#elif 2 > 1\nb\n#else\nc\n#endif"), "b");
        assert_eq!(ok("#if 0\na\n#elif 0\nb\n#else\nc\n#endif"), "c");
        assert_eq!(ok("#define X\n#ifdef X\na\n#endif\n#ifndef X\nb\n#endif"), "a");
        assert_eq!(ok("#if defined(X) || defined Y\na\n#else\nb\n#endif"), "b");
        assert_eq!(ok("#define Y 0\n#if defined(X) || defined Y\na\n#else\nb\n#endif"), "a");
        assert_eq!(ok("#if 0\n#if 1\na\n#else\nb\n#endif\n#else\nc\n#endif"), "c");
        assert_eq!(ok("#if 0\n#bogus directive\n#error no\n#endif\nd"), "d");
        assert_eq!(ok("#if 1 ? 2 : (1/0)\na\n#endif"), "a");
        assert_eq!(ok("#if 0 && (1/0)\na\n#endif\n#if 1 || 1 % 0\nb\n#endif"), "b");
        assert_eq!(ok("#if (2 + 3 * 4 == 14) && (-1 < 0) && !0 && ~0 == -1 && (1 << 4) == 16 && 7 / 2 == 3 && 7 % 4 == 3\na\n#endif"), "a");
        assert_eq!(ok("#if true && !false\na\n#endif"), "a");
        assert_eq!(ok("#if UNKNOWN == 0\na\n#endif"), "a");
        assert_eq!(ok("#if __METAL_VERSION__ >= 310 && defined(__METAL__) && !defined(__METAL_IOS__)\na\n#endif"), "a");
        assert_eq!(ok("#if __has_include(<metal_stdlib>) && !__has_feature(x)\na\n#endif"), "a");
        assert_eq!(ok("#define F(x) (x * 2)\n#if F(3) == 6 && 'a' == 97\na\n#endif"), "a");
        assert_eq!(ok("#if 1\n#elif 1/0\n#endif\nz"), "z");
        let (_, d) = pp("#if 1/0\n#endif");
        assert!(errors(&d)[0].contains("division by zero"), "{:?}", d.items);
        let (_, d) = pp("#if 1 +\n#endif");
        assert!(d.has_errors());
        let (_, d) = pp("#if 1.0\n#endif");
        assert!(d.has_errors());
        let (_, d) = pp("#if\n#endif");
        assert!(d.has_errors());
        let (_, d) = pp("#else\n#endif\n#elif 1");
        assert_eq!(errors(&d).len(), 3, "{:?}", d.items);
        let (_, d) = pp("#if 1\n#else\n#else\n#endif");
        assert!(d.has_errors());
    }

    #[test]
    fn error_warning_pragma_include() {
        let (_, d) = pp("#error \"bad thing\"\n");
        assert_eq!(errors(&d), vec!["\"bad thing\"".to_string()]);
        let (s, d) = pp("#warning careful here\nx");
        assert_eq!(s, "x");
        assert!(!d.has_errors());
        assert_eq!(d.items[0].severity, Severity::Warning);
        assert_eq!(d.items[0].message, "careful here");
        assert_eq!(
            ok("#pragma unroll\n#pragma clang loop unroll(full)\n#pragma METAL internals : enable\n#\n#line 10\nx _Pragma(\"unroll\") y"),
            "x y"
        );
        assert_eq!(
            ok_user("#include <metal_stdlib>\n#include <metal_simdgroup_matrix>\nusing namespace metal;"),
            "using namespace metal ;"
        );
        let (s, d) = pp("#include \"utils.h\"\nx");
        assert_eq!(s, "x");
        let e = &d.items[0];
        assert_eq!(e.message, "cannot find header \"utils.h\"");
        assert!(e.notes[0].contains("only Metal's built-in headers"), "{:?}", e.notes);
        assert!(e.help[0].contains("-I DIR"), "{:?}", e.help);
        let (_, d) = pp("#include <stdio.h>\n");
        assert!(d.has_errors());
        let (_, d) = pp("#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>\n#include <metal_tensor>\n");
        assert_eq!(errors(&d).len(), 2);
        assert!(errors(&d)[0].starts_with("unsupported header <MetalPerformancePrimitives/"), "{:?}", errors(&d));
        assert!(errors(&d)[1].starts_with("unsupported header <metal_tensor>"), "{:?}", errors(&d));
        assert_eq!(ok("#if __has_include(<metal_tensor>)\nbad\n#else\ngood\n#endif"), "good");
        let (_, d) = pp("#defien X 1\n");
        assert!(errors(&d)[0].contains("unknown preprocessor directive"));
        assert!(d.items[0].help[0].contains("#define"));
    }

    /// A folder tree for include tests: `main.metal` includes headers from
    /// its own folder and from a `-I` root.
    /// A temporary folder, removed when the test ends.
    struct Temp(tempfile::TempDir);

    impl std::ops::Deref for Temp {
        type Target = Path;
        fn deref(&self) -> &Path {
            self.0.path()
        }
    }

    fn include_tree(files: &[(&str, &str)]) -> Temp {
        let base = Temp(tempfile::Builder::new().prefix("msl-pp-").tempdir().unwrap());
        for (path, text) in files {
            let p = base.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        base
    }

    fn run_in(base: &Path, src: &str) -> (String, Diagnostics, SourceMap) {
        let mut sm = SourceMap::new();
        let f = sm.add("main.metal", src);
        let mut d = Diagnostics::new();
        let opts = PreprocessOptions { main_dir: Some(base.join("proj")), include_dirs: vec![base.join("lib")], ..Default::default() };
        let toks = preprocess(&mut sm, f, &opts, &mut d);
        let s: Vec<String> = toks.iter().filter(|t| t.kind != TokenKind::Eof).map(|t| t.kind.to_string()).collect();
        (s.join(" "), d, sm)
    }

    #[test]
    fn includes_resolve_relative_then_roots() {
        let base = include_tree(&[
            ("proj/local.h", "#pragma once\n#include \"sub/inner.h\"\nint local;"),
            ("proj/sub/inner.h", "#ifndef INNER\n#define INNER\nint inner = HELLO;\n#endif"),
            ("lib/mylib/api.h", "#include \"detail.h\"\nint api;"),
            ("lib/mylib/detail.h", "int detail;"),
            ("lib/cycle_a.h", "#include <cycle_b.h>\n"),
            ("lib/cycle_b.h", "#include <cycle_a.h>\n"),
            ("lib/twice.h", "#include <twice.h>\n#include <twice.h>\n"),
            ("lib/open_if.h", "#if 1\nint x;\n"),
            ("secret.h", "int secret;"),
        ]);
        let (s, d, _) = run_in(
            &base,
            "#define HELLO 7\n#include \"local.h\"\n#include \"local.h\"\n#include \"sub/inner.h\"\n#include <mylib/api.h>\nint end;",
        );
        assert!(!d.has_errors(), "{:#?}", d.items);
        assert_eq!(s, "int inner = 7 ; int local ; int detail ; int api ; int end ;");
        assert!(
            run_in(&base, "#if __has_include(\"local.h\") && __has_include(<mylib/api.h>) && !__has_include(\"nope.h\")\nyes\n#endif").0
                == "yes"
        );

        // Outside the allowed folders: refused by name, never read.
        let (s, d, _) = run_in(&base, "#include \"../secret.h\"\nx");
        assert_eq!(s, "x");
        assert!(errors(&d)[0].starts_with("refusing to include \"../secret.h\""), "{:?}", errors(&d));

        // A cycle without guards stops at the depth limit with one error.
        let (_, d, _) = run_in(&base, "#include <cycle_a.h>\n");
        assert_eq!(errors(&d), vec![format!("#include nested too deeply (more than {MAX_INCLUDE_DEPTH} levels)")]);

        // A header including itself twice would be entered 2^200 times: the
        // total number of entries is bounded, with one error.
        let (_, d, _) = run_in(&base, "#include <twice.h>\n");
        let errs = errors(&d);
        assert!(errs.contains(&format!("headers were included more than {MAX_HEADER_ENTRIES} times in all")), "{errs:?}");
        assert!(errs.len() <= 2, "{errs:?}");

        // A header must close the `#if` groups it opens; the includer goes on.
        let (s, d, _) = run_in(&base, "#include <open_if.h>\nint after;");
        assert_eq!(s, "int x ; int after ;");
        assert_eq!(errors(&d).len(), 1);
    }

    #[test]
    fn errors_in_headers_name_the_include_chain() {
        let base = include_tree(&[("proj/a.h", "#include \"b.h\"\n"), ("proj/b.h", "\n#error broken header\n")]);
        let (_, d, sm) = run_in(&base, "int x;\n#include \"a.h\"\n");
        let text = crate::diag::render(&sm, &d.items, false);
        assert!(text.contains("b.h:2:1"), "{text}");
        assert!(text.contains("in file included from a.h:1:1"), "{text}");
        assert!(text.contains("in file included from main.metal:2:1"), "{text}");
    }

    #[test]
    fn predefined_macros() {
        assert_eq!(ok("__METAL_VERSION__ __METAL__ __METAL_MACOS__ __cplusplus __METAL_IOS__"), "310 1 1 201703l __METAL_IOS__");
        assert_eq!(ok("a\nb __LINE__\n\n__LINE__"), "a b 2 4");
        assert_eq!(ok("#define L __LINE__\n\nL"), "3");
        assert_eq!(ok("__FILE__"), "\"test.metal\"");
        assert_eq!(ok("__COUNTER__ __COUNTER__"), "0 1");
        assert_eq!(ok("#define S(x) #x\n#define XS(x) S(x)\nXS(__LINE__)"), "\"3\"");
        let mut sm = SourceMap::new();
        let f = sm.add("k.metal", "N F(2) __METAL_VERSION__");
        let mut d = Diagnostics::new();
        let opts = PreprocessOptions {
            defines: vec![("N".into(), "16".into()), ("F(x)".into(), "x+1".into())],
            metal_version: 300,
            ..Default::default()
        };
        let toks = preprocess(&mut sm, f, &opts, &mut d);
        let s: Vec<String> = toks.iter().map(|t| t.kind.to_string()).collect();
        assert_eq!(s.join(" "), "16 2 + 1 300 end of file");
    }

    #[test]
    fn conformance_file() {
        let src = r#"#define TILE 8
#define SQUARE(x) ((x) * (x))
#define STR_CAT(a, b) a##b
#define SCALE 3
#if SCALE > 2
#define FACTOR 2.0f
#else
#define FACTOR 1.0f
#endif
#if defined(HAS_TILE) && (TILE == 8)
#define MODE 1
#elif defined(TILE)
#define MODE 2
#else
#define MODE 3
#endif
#define CLAMP01(x) \
  ((x) < 0.0f ? 0.0f : \
   ((x) > 1.0f ? 1.0f : (x)))
#undef SCALE
#ifdef SCALE
#error "SCALE should be undefined here"
#endif
float STR_CAT(val, ue) = SQUARE(TILE) + CLAMP01(FACTOR) + MODE + __LINE__;
"#;
        let (s, d) = pp(src);
        assert!(d.items.is_empty(), "{:?}", d.items);
        assert_eq!(s, "float value = ( ( 8 ) * ( 8 ) ) + ( ( 2.0f ) < 0.0f ? 0.0f : ( ( 2.0f ) > 1.0f ? 1.0f : ( 2.0f ) ) ) + 2 + 24 ;");
    }

    #[test]
    fn spans_map_to_user_text() {
        let src = "#define SQUARE(x) ((x) * (x))\nfloat r = SQUARE(a + y);\n";
        let (toks, d, sm, _) = run(src);
        assert!(!d.has_errors());
        let ys: Vec<&Token> = toks.iter().filter(|t| t.is_ident("y")).collect();
        assert_eq!(ys.len(), 2);
        for y in &ys {
            assert_eq!(sm.snippet(y.span), "y");
            assert_eq!(y.span.lo as usize, src.rfind('y').unwrap());
            assert_eq!(y.macro_def, None);
        }
        let star = toks.iter().find(|t| t.is_punct(Punct::Star)).unwrap();
        assert_eq!(sm.snippet(star.span), "SQUARE(a + y)");
        assert_eq!(sm.snippet(star.macro_def.unwrap()), "*");
        assert_eq!(sm.line_col(star.macro_def.unwrap()), (1, 24));
        let r = toks.iter().find(|t| t.is_ident("r")).unwrap();
        assert_eq!(sm.snippet(r.span), "r");

        // Nested: tokens from inner macro bodies map to the outermost call.
        let src = "#define ONE 1\n#define INC(x) (x + ONE)\n#define WRAP INC\nint v = WRAP(q);";
        let (toks, _, sm, _) = run(src);
        let one = toks.iter().find(|t| matches!(t.kind, TokenKind::Int { value: 1, .. })).unwrap();
        assert_eq!(sm.snippet(one.span), "WRAP(q)");
        assert_eq!(sm.snippet(one.macro_def.unwrap()), "1");
        let q = toks.iter().find(|t| t.is_ident("q")).unwrap();
        assert_eq!(sm.snippet(q.span), "q");
        let plus = toks.iter().find(|t| t.is_punct(Punct::Plus)).unwrap();
        assert_eq!(sm.snippet(plus.span), "WRAP(q)");

        // Errors point at what the user wrote.
        let (_, d, sm, _) = run("#define F(x) x\nF(1,\n");
        assert_eq!(sm.snippet(d.items[0].span), "F");
        assert!(d.items[0].message.contains("unterminated call"));
        let (_, d, sm, _) = run("\n#if 1\nx\n");
        assert_eq!(sm.snippet(d.items[0].span), "#if");
        assert_eq!(sm.line_col(d.items[0].span), (2, 1));
    }

    #[test]
    fn unterminated_things() {
        let (s, d) = pp("#define F(x) x\na F(1, (2)\nb c");
        assert_eq!(s, "a");
        assert_eq!(errors(&d).len(), 1);
        let (_, d) = pp("#ifdef X\n#if 1\n");
        let e = errors(&d);
        assert_eq!(e.len(), 2);
        assert!(e.iter().any(|m| m.contains("unterminated `#ifdef`: add a matching `#endif`")), "{e:?}");
        let (_, d) = pp("#define F(x\n#define G(x,)\n#define H(x x) 1\n#define\n#define 3 4\n");
        assert_eq!(errors(&d).len(), 5, "{:?}", d.items);
    }

    #[test]
    fn deep_if_nesting_is_an_error_not_a_crash() {
        let mut src = String::new();
        for _ in 0..1000 {
            src.push_str("#if 1\n");
        }
        src.push_str("x\n");
        for _ in 0..1000 {
            src.push_str("#endif\n");
        }
        let (s, d) = pp(&src);
        assert_eq!(s, "x");
        assert!(errors(&d).iter().any(|m| m.contains("nested too deeply")));
        // Unterminated deep nesting: bounded number of diagnostics.
        let (_, d) = pp(&"#if 1\n".repeat(1000));
        assert!(d.has_errors());
        // Deep expressions.
        let (_, d) = pp(&format!("#if {}1{}\n#endif\n", "(".repeat(5000), ")".repeat(5000)));
        assert!(errors(&d)[0].contains("nested too deeply"));
        let (_, d) = pp(&format!("#if {}1\n#endif\n", "-".repeat(5000)));
        assert!(d.has_errors());
        let (_, d) = pp(&format!("#if {}1\n#endif\n", "1 ? ".repeat(5000)));
        assert!(d.has_errors());
    }

    #[test]
    fn exponential_expansion_stops() {
        let mut src = String::from("#define X0 a a\n");
        for i in 1..=40 {
            src.push_str(&format!("#define X{i} X{} X{}\n", i - 1, i - 1));
        }
        src.push_str("X40\n");
        let (toks, d, _, _) = run(&src);
        assert!(errors(&d).iter().any(|m| m.contains("macro expansion too large")), "{:?}", d.items);
        assert_eq!(errors(&d).len(), 1);
        assert!(toks.len() <= MAX_OUTPUT_TOKENS + 1);

        // Same with function-like macros nested in arguments.
        let mut src = String::from("#define D(x) x x\n");
        src.push_str(&"D(".repeat(60));
        src.push('a');
        src.push_str(&")".repeat(60));
        let (_, d) = pp(&src);
        assert!(d.has_errors());

        // Arguments nested very deeply.
        let mut src = String::from("#define F(x) x\n");
        src.push_str(&"F(".repeat(3000));
        src.push('a');
        src.push_str(&")".repeat(3000));
        let (_, d) = pp(&src);
        assert!(errors(&d)[0].contains("nested too deeply"), "{:?}", d.items);

        // Growing pasted and stringified tokens.
        let mut src = String::from("#define P(x) x##x\n#define D(x) P(x)\n#define S(x) #x\n#define T(x) S(x)\n");
        src.push_str(&format!("{}a{}\n", "D(".repeat(40), ")".repeat(40)));
        src.push_str(&format!("{}a{}\n", "T(".repeat(40), ")".repeat(40)));
        let (_, d) = pp(&src);
        assert!(d.has_errors());
    }

    #[test]
    fn garbage_input_finishes() {
        let mut state: u64 = 0x1234_5678_9abc_def0;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let alphabet = b"#()##,.\n\\ \"'abAB_0123<>?:!&|+-*/%defineifelsndfudcluA";
        for round in 0..200 {
            let len = (next() % 400) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    let r = next();
                    if round % 2 == 0 {
                        alphabet[(r % alphabet.len() as u64) as usize]
                    } else {
                        (r & 0xff) as u8
                    }
                })
                .collect();
            let src = String::from_utf8_lossy(&bytes).into_owned();
            let (toks, _, _, _) = run(&src);
            assert_eq!(toks.last().map(|t| &t.kind), Some(&TokenKind::Eof));
        }
        // Structured garbage through the directive machinery.
        for src in [
            "#define F(x) F(x\nF(F(F(",
            "#define A(x) #\n#define B(x, ...) __VA_ARGS__ ## x\nB(1) B(,) B()",
            "#define F(...) __VA_ARGS__\nF(F(F()))",
            "#if defined\n#endif\n#if defined(\n#endif\n#if __has_include(\n#endif",
            "#define CAT(a,b) a##b\nCAT(CAT(1,2),3) CAT(\"a\",\"b\") CAT(.,.)",
            "#define f(x) x\nf(\n#define Y 1\nY)",
            "#endif\n#else\n#elif\n#if 1 ? \n#endif",
        ] {
            let (toks, _, _, _) = run(src);
            assert_eq!(toks.last().map(|t| &t.kind), Some(&TokenKind::Eof));
        }
    }

    #[test]
    fn mlx_style_macros() {
        let src = r#"#include <metal_stdlib>
#define MLX_MTL_CONST static constant constexpr const
#define MLX_MTL_PRAGMA_UNROLL _Pragma("clang loop unroll(full)")
#define NAME(tname, type) k_##tname##_##type
#define instantiate_kernel(name, func, ...) \
  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;
MLX_MTL_CONST int n = 4;
MLX_MTL_PRAGMA_UNROLL
for (;;) {}
int NAME(add, float32);
instantiate_kernel("copy_" #x, copy, float, 4)
"#;
        assert_eq!(
            ok_user(src),
            "static constant constexpr const int n = 4 ; for ( ; ; ) { } int k_add_float32 ; \
             template [ [ host_name ( \"copy_\" # x ) ] ] [ [ kernel ] ] decltype ( copy < float , 4 > ) copy < float , 4 > ;"
        );
        let (toks, _, _, _) = run("a b\n  c");
        assert!(toks[0].line_start && !toks[1].line_start && toks[2].line_start);
        assert!(toks[1].space_before && toks[2].space_before);
    }

    #[test]
    fn floods_stay_bounded() {
        let (_, d) = pp(&"#warning w\n".repeat(1000));
        assert!(d.items.len() <= MAX_WARNINGS);
        // `__LINE__` on one very long line (quadratic rescans would show
        // as a hang here; speed itself is the `lint` benchmark's business).
        let (toks, d, _, _) = run(&"__LINE__ ".repeat(100_000));
        assert!(!d.has_errors());
        assert_eq!(toks.len(), 100_001);
    }

    #[test]
    fn structured_fuzz_finishes() {
        let pieces: &[&str] = &[
            "\n#define ",
            "\n#undef ",
            "\n#if ",
            "\n#ifdef ",
            "\n#elif ",
            "\n#else",
            "\n#endif",
            "\n",
            " ",
            "(",
            ")",
            ",",
            "##",
            "#",
            "...",
            "__VA_ARGS__",
            "A",
            "B",
            "F",
            "G",
            "x",
            "1",
            "0",
            "defined",
            "&&",
            "?",
            ":",
            "/",
            "\"s\"",
            "F(",
            "F(F(",
            "G(F, G)",
            "\n#define F(x) F(x) x x\n",
            "\n#define A A A B\n",
            "\n#define B A F(B)\n",
            "\n#define G(x, ...) #x x##__VA_ARGS__ G\n",
            "_Pragma",
            "__LINE__",
            "1.5",
            "-",
            "<",
            ">",
            "\n#include ",
            "\\\n",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..300 {
            let len = (next() % 120) as usize;
            let src: String = (0..len).map(|_| pieces[(next() % pieces.len() as u64) as usize]).collect();
            let (toks, _, _, _) = run(&src);
            assert_eq!(toks.last().map(|t| &t.kind), Some(&TokenKind::Eof));
        }
    }

    #[test]
    fn large_file_expands_linearly() {
        // Speed is measured by the `lint` benchmark; here: 5,000 macro-heavy
        // lines give tokens in proportion to the lines, not more.
        let mut src = String::from("#include <metal_stdlib>\n#define TILE 16\n#define IDX(r, c) ((r) * TILE + (c))\n");
        for i in 0..5000 {
            src.push_str(&format!("    out[IDX(gid.y, {i})] = in[IDX(gid.x, {i})] * 2.0f + TILE; // line\n"));
        }
        let (toks, d, _, _) = run(&src);
        assert!(!d.has_errors());
        let per_line = toks.len() / 5000;
        assert!((20..=40).contains(&per_line), "{per_line} tokens per line");
    }
}
