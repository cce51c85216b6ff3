//! `metal-puzzles test [DIR]`: run the kernel test specs (`*.test.toml`,
//! `metal-tests.toml`) found under DIR; see docs/kernel-tests.md.

use crate::{EXIT_BAD_RESULT, EXIT_CANNOT_START, EXIT_OK};
use clap::{Args, ValueEnum};
use session::spec::{self, Status};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Args)]
pub struct TestArgs {
    /// A folder to search for specs (or one spec file). Default: the current folder.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Output: `text` (one line per test, details of failures), `json` (one
    /// document), `junit` (JUnit XML on stdout) or `github` (annotations for
    /// the failing tests' findings).
    #[arg(long, value_enum, default_value = "text")]
    pub format: TestFormat,
    /// Also write a JUnit XML report to FILE (with any --format).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Run only shard K of N (`--shard 2/4`): tests are dealt round-robin in
    /// the sorted order of spec files, so N jobs split a suite with no state
    /// shared between them.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Run only the tests whose `file::name` contains TEXT.
    #[arg(long, short = 'k', value_name = "TEXT")]
    pub filter: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TestFormat {
    Text,
    Json,
    Junit,
    Github,
}

pub fn run(args: &TestArgs) -> u8 {
    match run_inner(args) {
        Ok(code) => code,
        Err(e) => {
            if args.format == TestFormat::Json {
                println!("{}", serde_json::json!({"tests": [], "error": e}));
            }
            eprintln!("error: {e}");
            EXIT_CANNOT_START
        }
    }
}

fn run_inner(args: &TestArgs) -> Result<u8, String> {
    let shard = args.shard.as_deref().map(spec::parse_shard).transpose()?;
    let files = spec::find_specs(&args.dir)?;
    if files.is_empty() {
        return Err(format!(
            "no kernel test specs under `{}` (files named `*.test.toml` or `metal-tests.toml`; see docs/kernel-tests.md)",
            args.dir.display()
        ));
    }
    let mut tests = Vec::new();
    for f in &files {
        tests.extend(spec::load(f)?);
    }
    let total = tests.len();
    let selected: Vec<spec::Test> = tests
        .into_iter()
        .enumerate()
        .filter(|(i, _)| shard.is_none_or(|s| spec::in_shard(*i, s)))
        .map(|(_, t)| t)
        .filter(|t| args.filter.as_deref().is_none_or(|k| t.id().contains(k)))
        .collect();
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let text = args.format == TestFormat::Text;
    if text {
        let of_shard = shard.map(|(k, n)| format!(" (shard {k}/{n} of {total})")).unwrap_or_default();
        println!("running {} kernel test{}{of_shard}", selected.len(), if selected.len() == 1 { "" } else { "s" });
    }
    let mut runner = spec::Runner::new();
    let mut results = Vec::new();
    for t in &selected {
        let r = runner.run(t);
        if text {
            let (word, paint) = match r.status {
                Status::Passed => ("ok", "32"),
                Status::Failed => ("FAILED", "31"),
                Status::Error => ("ERROR", "31"),
            };
            let word = if color { format!("\x1b[{paint}m{word}\x1b[0m") } else { word.to_string() };
            println!("test {} ... {word} ({:.2} s)", r.id, r.seconds);
        }
        results.push(r);
    }
    let passed = results.iter().filter(|r| r.status == Status::Passed).count();
    let failed = results.len() - passed;
    match args.format {
        TestFormat::Text => {
            for r in results.iter().filter(|r| r.status != Status::Passed) {
                println!("\n---- {} ----", r.id);
                print!("{}", r.details(color));
            }
            let warned: usize =
                results.iter().filter_map(|r| r.outcome.as_ref()).map(|o| o.findings().iter().filter(|f| !f.is_error).count()).sum();
            let note =
                if warned > 0 { format!(" ({warned} warning finding{})", if warned == 1 { "" } else { "s" }) } else { String::new() };
            println!("\n{passed} passed, {failed} failed{note}");
        }
        TestFormat::Json => {
            let list: Vec<serde_json::Value> = results.iter().map(|r| r.to_json()).collect();
            println!("{}", serde_json::json!({"tests": list, "passed": passed, "failed": failed}));
        }
        TestFormat::Junit => print!("{}", junit(&results)),
        TestFormat::Github => {
            for r in results.iter().filter(|r| r.status != Status::Passed) {
                let mut problems = Vec::new();
                if let Some(o) = &r.outcome {
                    problems.extend(session::formats::problems(&o.sources, &o.diagnostics, o.findings()));
                }
                if let Some((sources, diags)) = r.error.as_ref().and_then(|e| e.diagnostics()) {
                    problems.extend(session::formats::problems(sources, diags, &[]));
                }
                problems.retain(|p| p.severity == msl::diag::Severity::Error);
                if problems.is_empty() || r.outcome.as_ref().is_some_and(|o| !o.has_errors()) {
                    // Wrong outputs: annotate the spec file.
                    problems.push(session::formats::Problem {
                        file: r.spec_file.display().to_string(),
                        line: 1,
                        column: 1,
                        severity: msl::diag::Severity::Error,
                        rule: "kernel-test".into(),
                        message: format!("{}: {}", r.name, r.reasons.join("; ")),
                    });
                }
                print!("{}", session::formats::github(&problems));
            }
        }
    }
    if let Some(path) = &args.junit {
        session::formats::write_atomically(path, &junit(&results))?;
    }
    Ok(if failed == 0 { EXIT_OK } else { EXIT_BAD_RESULT })
}

fn junit(results: &[spec::TestResult]) -> String {
    let cases: Vec<session::formats::TestCase> = results.iter().map(spec::TestResult::junit_case).collect();
    session::formats::junit("metal-puzzles test", &cases)
}
