//! The Metal Shading Language front end: source text to a checked program.
//!
//! Pipeline: [`preprocess`] (macros, conditionals, built-in headers) →
//! [`parse`] (AST with spans) → [`check`] (names, types, overloads,
//! templates) → [`hir::Program`]. Each stage collects
//! [`diag::Diagnostic`]s instead of stopping at the first problem.

pub mod ast;
pub mod builtins;
pub mod check;
pub mod diag;
pub mod hir;
pub mod include;
pub mod lex;
pub mod parse;
pub mod preprocess;
pub mod pretty;
pub mod probe;
pub mod source;
pub mod text;
pub mod token;
pub mod traits;
pub mod types;
pub mod verify;

use diag::Diagnostics;
use source::{FileId, SourceMap};

pub use preprocess::PreprocessOptions as CompileOptions;

/// The result of compiling one source file.
pub struct Compilation {
    pub sources: SourceMap,
    pub file: FileId,
    /// The checked program, when there were no errors.
    pub program: Option<hir::Program>,
    pub diagnostics: Diagnostics,
}

impl Compilation {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.has_errors()
    }

    /// All diagnostics rendered rustc-style.
    pub fn render(&self, color: bool) -> String {
        diag::render(&self.sources, &self.diagnostics.items, color)
    }
}

/// Preprocess, parse and check `text` (shown as `name` in messages).
pub fn compile(name: &str, text: &str, opts: &CompileOptions) -> Compilation {
    let mut sources = SourceMap::new();
    let file = sources.add(name, text);
    compile_file(sources, file, opts)
}

/// Like [`compile`] for a file already in a source map (generated sources
/// keep several files so that messages can point at the user's own text).
pub fn compile_file(mut sources: SourceMap, file: FileId, opts: &CompileOptions) -> Compilation {
    let mut diagnostics = Diagnostics::new();
    // Each probe's expressions are a file of their own, named as the user
    // asked for them, so their messages point at what was typed.
    let probe_files: Vec<FileId> =
        opts.probes.requests.iter().enumerate().map(|(i, r)| sources.add_probe(r.name.clone(), r.text.clone(), i as u32)).collect();
    let (tokens, probe_tokens) = preprocess::preprocess_with(&mut sources, file, opts, &mut diagnostics, &probe_files);
    // Without a header the simulator does not have, parsing would only
    // report what that header declares as missing: the refusal is the answer.
    if diagnostics.items.iter().any(|d| d.code == Some(diag::codes::UNSUPPORTED_HEADER)) {
        diagnostics.sort();
        return Compilation { sources, file, program: None, diagnostics };
    }
    let unit = parse::parse(&tokens, &mut diagnostics);
    drop(tokens);
    let probe_exprs: Vec<Vec<ast::Expr>> = probe_tokens.iter().map(|t| parse::parse_expression_list(t, &mut diagnostics)).collect();
    let plan =
        (!probe_files.is_empty()).then(|| probe::plan(&unit, &sources, file, &opts.probes, &probe_files, probe_exprs, &mut diagnostics));
    // A syntax error leaves holes in the tree; checking it would mostly
    // produce follow-on noise, so stop at the first stage with errors.
    let program = if diagnostics.has_errors() {
        None
    } else {
        check::check_probed(&unit, &opts.function_constants, !opts.diagnostics_only, plan, &mut diagnostics)
    };
    // Debug builds (tests, fuzzing) hold the checker to the HIR's
    // invariants; a broken one is the front end's bug, reported as an
    // error rather than lowered into a program that runs wrong.
    #[cfg(debug_assertions)]
    let program = program.and_then(|p| {
        let broken = verify::verify(&p);
        for v in &broken {
            diagnostics.push(
                diag::Diagnostic::error(v.span, format!("internal error: the checked program breaks an invariant {v}"))
                    .note("this is a bug in the simulator's front end; please report it with this source"),
            );
        }
        broken.is_empty().then_some(p)
    });
    diagnostics.sort();
    Compilation { sources, file, program, diagnostics }
}
