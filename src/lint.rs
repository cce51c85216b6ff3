//! `metal-puzzles lint FILE.metal [--json]`: the front end alone.

use crate::{EXIT_BAD_RESULT, EXIT_CANNOT_START, EXIT_OK};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct LintArgs {
    /// The Metal source file to check.
    pub file: PathBuf,
    /// Print one JSON document with the diagnostics and the kernels' names
    /// instead of text (the same as `--format json`).
    #[arg(long)]
    pub json: bool,
    /// Output format: `text` (rustc-style, on stderr), `json`, `github`
    /// (GitHub Actions annotations on the offending lines) or `sarif`
    /// (SARIF 2.1.0 for code scanning), the last three on stdout.
    #[arg(long, value_enum, default_value = "text")]
    pub format: LintFormat,
    #[command(flatten)]
    pub pp: PreprocessArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LintFormat {
    Text,
    Json,
    Github,
    Sarif,
}

/// Preprocessor flags shared by every command that compiles Metal.
#[derive(Args, Clone, Default)]
pub struct PreprocessArgs {
    /// Define a macro, like the compiler's `-D NAME[=VALUE]`.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub define: Vec<String>,
    /// Add a folder to search for `#include "…"` and `#include <…>` (repeatable).
    /// Headers are read only from the source file's folder and these folders.
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Give a function constant (`[[function_constant(i)]]`) its value, by
    /// name or index: `--constant has_bias=true`, `--constant 2=64`.
    #[arg(long = "constant", value_name = "NAME=VALUE", value_parser = parse_constant)]
    pub constant: Vec<(String, String)>,
}

fn parse_constant(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("`{s}` is not NAME=VALUE (e.g. `--constant has_bias=true` or `--constant 0=4`)")),
    }
}

/// Every `--constant` must name a function constant of the program (by
/// name or index): a typo would otherwise go unnoticed.
pub fn check_constants_exist(pp: &PreprocessArgs, program: &msl::hir::Program) -> Result<(), String> {
    let fcs = &program.function_constants;
    for (key, _) in &pp.constant {
        if fcs.iter().any(|c| c.name == *key || key.parse::<u32>() == Ok(c.index)) {
            continue;
        }
        let declared: Vec<String> = fcs.iter().map(|c| format!("{} ({})", c.name, c.index)).collect();
        let list = if declared.is_empty() { "none".to_string() } else { declared.join(", ") };
        return Err(format!("`--constant {key}=…` names no function constant of this source; it declares: {list}"));
    }
    Ok(())
}

pub use session::read_source;

/// Compile options for a source read from `file` (`None`: no file, so
/// includes come from the `-I` folders only).
pub fn compile_options(pp: &PreprocessArgs, file: Option<&std::path::Path>) -> msl::CompileOptions {
    let mut opts = msl::CompileOptions::default();
    for d in &pp.define {
        let (name, value) = d.split_once('=').unwrap_or((d.as_str(), "1"));
        opts.defines.push((name.to_string(), value.to_string()));
    }
    opts.include_dirs = pp.include.clone();
    opts.function_constants = pp.constant.clone();
    opts.main_dir = file.map(|f| match f.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    });
    opts
}

pub fn run(args: &LintArgs) -> u8 {
    let text = match read_source(&args.file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_CANNOT_START;
        }
    };
    let name = args.file.display().to_string();
    // A puzzle's workspace file holds a body; a whole source by that
    // name (it declares its kernel) is linted as any source.
    if let Some(p) = puzzle_file(&args.file).filter(|_| !puzzles::beginner::declares_kernel(&text)) {
        return lint_puzzle(args, p, &name, &text);
    }
    let mut opts = compile_options(&args.pp, Some(&args.file));
    opts.diagnostics_only = true;
    let c = msl::compile(&name, &text, &opts);
    let format = if args.json { LintFormat::Json } else { args.format };
    if matches!(format, LintFormat::Github | LintFormat::Sarif) {
        let problems = session::formats::problems(&c.sources, &c.diagnostics.items, &[]);
        if format == LintFormat::Github {
            print!("{}", session::formats::github(&problems));
        } else {
            println!("{}", session::formats::sarif(&problems, env!("CARGO_PKG_VERSION")));
        }
    } else if format == LintFormat::Json {
        let diags: Vec<serde_json::Value> = c.diagnostics.items.iter().map(|d| session::json::diagnostic(&c.sources, d)).collect();
        let kernels = c.program.as_ref().map(|p| p.kernel_names()).unwrap_or_default();
        println!("{}", serde_json::json!({ "diagnostics": diags, "kernels": kernels }));
    } else {
        eprint!("{}", c.render(crate::color::stderr()));
        let errors = c.diagnostics.error_count();
        if errors > 0 {
            eprintln!("{name}: {errors} error{}", if errors == 1 { "" } else { "s" });
        } else {
            let kernels = c.program.as_ref().map(|p| p.kernel_names()).unwrap_or_default();
            // A library instantiates hundreds: name the first few.
            const SHOWN: usize = 8;
            let mut names = kernels.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
            if kernels.len() > SHOWN {
                names.push_str(&format!(", and {} more (`--json` lists them all)", kernels.len() - SHOWN));
            }
            eprintln!("{name}: ok ({} kernel{}: {names})", kernels.len(), if kernels.len() == 1 { "" } else { "s" });
        }
    }
    if c.has_errors() {
        EXIT_BAD_RESULT
    } else {
        EXIT_OK
    }
}

/// The puzzle whose workspace file `path` is (`01_map.metal`), if any.
fn puzzle_file(path: &std::path::Path) -> Option<&'static puzzles::Puzzle> {
    let name = path.file_name()?.to_str()?;
    puzzles::PUZZLES.iter().find(|p| p.file_name() == name)
}

/// A puzzle file holds a kernel body, not a whole source: it is compiled
/// the way `check` compiles it (inside the kernel MLX generates) and its
/// diagnostics are printed as `lint` prints any.
fn lint_puzzle(args: &LintArgs, p: &'static puzzles::Puzzle, name: &str, text: &str) -> u8 {
    let r = puzzles::check::check_file(p, name, text);
    let errors = r.diagnostics.iter().filter(|d| d.is_error()).count();
    if args.json {
        let diags: Vec<serde_json::Value> = r.diagnostics.iter().map(|d| msl::diag::to_json(&r.diagnostic_sources, d)).collect();
        println!("{}", serde_json::json!({ "diagnostics": diags }));
    } else {
        eprint!("{}", msl::diag::render(&r.diagnostic_sources, &r.diagnostics, crate::color::stderr()));
        eprintln!(
            "note: `{name}` is puzzle {}'s file: it holds a kernel body, so `lint` compiled it the way `check {}` does, inside the kernel MLX generates",
            p.number, p.number
        );
        if errors > 0 {
            eprintln!("{name}: {errors} error{}", if errors == 1 { "" } else { "s" });
        } else {
            eprintln!(
                "{name}: ok (the body of puzzle {}; `{}` runs its tests)",
                p.number,
                crate::book::invocation(&format!("check {}", p.number), std::path::Path::new(puzzles::workspace::DEFAULT_DIR))
            );
        }
    }
    if errors > 0 {
        EXIT_BAD_RESULT
    } else {
        EXIT_OK
    }
}
