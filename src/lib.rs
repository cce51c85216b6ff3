//! `metal-puzzles`: run Metal compute kernels on a simulated Apple GPU.
//! The command line as a library: [`main_with_args`] is what the binary
//! (`src/main.rs`) and the Python package's `metal-puzzles` command and
//! `python -m metal_puzzles` run.

/// `print!`/`println!` for every command: a failed write to stdout (a full
/// disk, `> /dev/full`) is remembered instead of panicking, and
/// [`main_with_args`] turns it into exit status 2 (declared before the
/// modules, so it is the `println!` they see).
macro_rules! print {
    ($($arg:tt)*) => { $crate::stdout_write(format_args!($($arg)*)) };
}
macro_rules! println {
    () => { $crate::stdout_write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::stdout_write(format_args!("{}\n", format_args!($($arg)*))) };
}

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

/// The first error writing to stdout, if any.
static STDOUT_ERROR: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

pub(crate) fn stdout_write(args: std::fmt::Arguments) {
    use std::io::Write;
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        let mut first = STDOUT_ERROR.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert_with(|| e.to_string());
    }
}

/// The binary's entry point: SIGPIPE as other Unix tools have it, a closed
/// stdout refused (`stdout_closed`: fd 1 was not open when the process
/// started, which only the binary can see: Rust's runtime opens
/// `/dev/null` on it before `main`), then the command line.
pub fn main_from_env(stdout_closed: bool) -> ExitCode {
    quiet_on_closed_pipe();
    if stdout_closed {
        eprintln!("error: standard output is closed; give the command somewhere to write (a file, a pipe or the terminal)");
        return ExitCode::from(EXIT_CANNOT_START);
    }
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
    let code = run_command(cli);
    let flushed = std::io::Write::flush(&mut std::io::stdout()).map_err(|e| e.to_string());
    let failed = STDOUT_ERROR.lock().unwrap_or_else(|p| p.into_inner()).take().or(flushed.err());
    if let Some(e) = failed {
        eprintln!("error: cannot write the output: {e}");
        return EXIT_CANNOT_START;
    }
    code
}

fn run_command(cli: Cli) -> u8 {
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
