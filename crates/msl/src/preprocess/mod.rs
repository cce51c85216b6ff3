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
//!
//! This file holds the state and token reading; `directives` runs
//! directives and `#define`, `conditionals` the `#if` groups and their
//! expressions, `expand` macro expansion, `headers` `#include`.

use crate::diag::{Diagnostic, Diagnostics};
use crate::include::IncludeRoots;
use crate::lex;
use crate::source::{FileId, SourceMap, Span};
use crate::token::{IntSuffix, Punct, Token, TokenKind};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::Cell;
use std::fmt::Write as _;
use std::path::PathBuf;
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

mod conditionals;
mod directives;
mod expand;
mod headers;
#[cfg(test)]
mod tests;

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

/// The error for a preprocessing number that is not a valid literal.
fn bad_number(span: Span, raw: &str, problem: &str) -> Diagnostic {
    Diagnostic::error(span, format!("invalid numeric literal `{raw}`: {problem}"))
        .code("E0003")
        .label("cannot read this number")
        .help("a number may only end in a suffix such as `u`, `l`, `f`, `h`; to build a name, start it with a letter (macro arguments like `8bit` are fine when pasted into one)")
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
}
