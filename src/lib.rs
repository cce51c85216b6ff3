//! `metal-puzzles`: run Metal compute kernels on a simulated Apple GPU.
//! The command line as a library: [`main_with_args`] is what the binary
//! (`src/main.rs`) and the Python package's `metal-puzzles` command and
//! `python -m metal_puzzles` run.

mod book;
mod captures;
mod color;
mod debug;
mod debug_model;
mod debug_tui;
mod lint;
mod logs;
mod mlx_cmd;
mod profile;
mod report;
mod run;
mod test_cmd;
mod watch;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Exit statuses of every sub-command (docs/exit-codes.md).
pub use session::{EXIT_BAD_RESULT, EXIT_CANNOT_START, EXIT_OK};

#[derive(Parser)]
#[command(
    name = "metal-puzzles",
    version,
    about = "Run Apple Metal (MSL) compute kernels on a simulated GPU, anywhere.",
    after_help = "Without a command: open the Metal Puzzles book in ./metal-puzzles (created on first run). In a terminal it is a live screen that re-checks on every save; otherwise it prints your progress and exits."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// The puzzle workspace the book opens (without a command).
    #[arg(long, value_name = "DIR")]
    dir: Option<std::path::PathBuf>,
    /// When to print in colour (auto: on a terminal, unless NO_COLOR is set).
    #[arg(long, global = true, value_enum, default_value = "auto", value_name = "WHEN")]
    color: color::ColorChoice,
}

#[derive(Subcommand)]
enum Command {
    /// Preprocess, parse and type-check a Metal source file.
    Lint(lint::LintArgs),
    /// Run one kernel of a Metal source file on the simulated GPU.
    Run(run::RunArgs),
    /// Run an MLX custom kernel (`mx.fast.metal_kernel`) from its body.
    Mlx(mlx_cmd::MlxArgs),
    /// Create the puzzle workspace (one starter file per puzzle).
    Init(book::InitArgs),
    /// Check puzzle solutions in the workspace.
    Check(book::CheckArgs),
    /// Show your progress through the puzzles.
    List(book::DirArgs),
    /// Explain a puzzle and give hints.
    Hint(book::HintArgs),
    /// Restore a puzzle's starter file (your version is backed up first).
    Reset(book::PuzzleArgs),
    /// Draw which thread read and wrote which cell (terminal, SVG, PNG).
    Show(book::ShowArgs),
    /// Step through one thread interactively, or print expressions each time it reaches a line (--print).
    Debug(debug::DebugArgs),
    /// Run a capture file again and say whether it reproduces its outputs and findings.
    Replay(captures::ReplayArgs),
    /// Run the kernel test specs (`*.test.toml`) under a folder, every one under the sanitizer.
    Test(test_cmd::TestArgs),
}

/// Rust ignores SIGPIPE, so printing into a closed pipe (`show 14 | head -1`)
/// would panic; restore the default so we stop quietly, like other Unix tools.
fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any other thread exists;
    // SIG_DFL is a valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// How messages name the command (`metal-puzzles`, `python -m
/// metal_puzzles`), when the caller knows better than the process's own name.
pub static PROGRAM: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The binary's entry point: SIGPIPE as other Unix tools have it, then the command line.
pub fn main_from_env() -> ExitCode {
    quiet_on_closed_pipe();
    ExitCode::from(main_with_args(std::env::args_os()))
}

/// Parse `args` (the program name first) and run the command; the exit status.
pub fn main_with_args<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_CANNOT_START } else { EXIT_OK };
        }
    };
    color::set(cli.color);
    match cli.command {
        Some(Command::Lint(args)) => lint::run(&args),
        Some(Command::Run(args)) => run::run(&args),
        Some(Command::Mlx(args)) => mlx_cmd::run(&args),
        Some(Command::Init(args)) => book::init(&args),
        Some(Command::Check(args)) => book::check(&args),
        Some(Command::List(args)) => book::list(&args),
        Some(Command::Hint(args)) => book::hint(&args),
        Some(Command::Reset(args)) => book::reset(&args),
        Some(Command::Show(args)) => book::show(&args),
        Some(Command::Debug(args)) => debug::run(&args),
        Some(Command::Replay(args)) => captures::replay(&args),
        Some(Command::Test(args)) => test_cmd::run(&args),
        None => book::default_command(cli.dir),
    }
}
