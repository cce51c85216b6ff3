//! Captures on the command line: `--capture FILE` (or `MTL_CAPTURE_ENABLED=1`)
//! on `run`, `mlx` and `check` saves the dispatch; `replay FILE` runs it
//! again and says whether it reproduces; `debug FILE.mpcapture --thread …
//! --print …` watches a thread of it. The format is `crates/capture`'s.

use crate::debug::{placed, render, Request};
use crate::{EXIT_BAD_RESULT, EXIT_OK};
use capture::{Capture, Program, ReplayError, ReplayOptions};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Clone, Default)]
pub struct CaptureArgs {
    /// Save the run as a capture file (sources, arguments, dispatch, outputs,
    /// findings); MTL_CAPTURE_ENABLED=1 does it too, into
    /// ./metal-puzzles-captures/KERNEL-N.mpcapture. Open it with
    /// `metal-puzzles debug FILE`, re-run it with `metal-puzzles replay FILE`.
    #[arg(long, value_name = "FILE")]
    pub capture: Option<PathBuf>,
}

impl CaptureArgs {
    pub fn wanted(&self) -> bool {
        self.capture.is_some() || capture::enabled_by_env()
    }

    fn path(&self, kernel: &str) -> PathBuf {
        self.capture.clone().unwrap_or_else(|| capture::default_path(Path::new(""), kernel))
    }

    /// Before running: refuse a `--capture` path that would overwrite one
    /// of the command's inputs or is not a `.mpcapture` file (a capture
    /// written over `k.metal` would destroy the kernel).
    pub fn check_target(&self, inputs: &[PathBuf]) -> Result<(), String> {
        let Some(path) = &self.capture else { return Ok(()) };
        files::require_extension(path, capture::EXTENSION, "--capture")?;
        files::refuse_overwrite(path, inputs, "--capture")
    }

    /// Write the capture `make` builds, when one was asked for, and say
    /// where it went (on stderr: stdout may be a JSON document). A capture
    /// that cannot be made or written is an error: the command asked for it.
    pub fn save(&self, kernel: &str, make: impl FnOnce() -> Result<Capture, String>) -> Result<(), String> {
        if !self.wanted() {
            return Ok(());
        }
        let path = self.path(kernel);
        match make().and_then(|c| c.write(&path).map(|()| c)) {
            Ok(c) => {
                let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                eprintln!(
                    "capture written to {} ({size} bytes{})",
                    path.display(),
                    if c.left_out.is_empty() { "" } else { "; some outputs kept as checksums only, see `replay`" }
                );
                eprintln!("  open it with `metal-puzzles debug {0} --thread X,Y,Z --print 'LINE: expr'`; re-run it with `metal-puzzles replay {0}`", path.display());
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }
}

/// Whether a debug target names a capture file (by its extension, or by
/// its first bytes for a renamed one).
pub fn is_capture(target: &str) -> bool {
    let p = Path::new(target);
    if p.extension().is_some_and(|e| e == capture::EXTENSION) {
        return true;
    }
    if p.extension().is_some_and(|e| e == "metal") || !p.is_file() {
        return false;
    }
    let mut head = [0u8; 256];
    let n = std::fs::File::open(p).and_then(|mut f| std::io::Read::read(&mut f, &mut head)).unwrap_or(0);
    String::from_utf8_lossy(&head[..n]).contains(capture::FORMAT)
}

#[derive(Args)]
pub struct ReplayArgs {
    /// The capture file (`.mpcapture`).
    pub file: PathBuf,
    /// Replace an argument (MLX: an input) before replaying:
    /// NAME=@x.npy, NAME=VALUE:DTYPE or NAME=GEN(SHAPE):DTYPE, as `run` takes.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// Replay with this source instead of the captured one (a full source,
    /// or an MLX kernel's body); the captured headers are kept.
    #[arg(long, value_name = "FILE")]
    pub source: Option<PathBuf>,
    /// Write the capture's arrays as .npy files into DIR (DIR/inputs/NAME.npy
    /// before the run, DIR/outputs/NAME.npy after) instead of replaying.
    #[arg(long, value_name = "DIR")]
    pub extract: Option<PathBuf>,
}

/// `replay FILE`: run the capture again; exit 0 when outputs and findings
/// are the recorded ones, 1 when they differ.
pub fn replay(args: &ReplayArgs) -> u8 {
    crate::report::exit_code(replay_inner(args), false)
}

fn replay_inner(args: &ReplayArgs) -> Result<u8, String> {
    let mut c = Capture::read(&args.file)?;
    if let Some(dir) = &args.extract {
        if !args.args.is_empty() || args.source.is_some() {
            return Err("--extract writes the capture's arrays as they are: drop --arg and --source".into());
        }
        return extract(&c, &args.file, dir);
    }
    let changes = change(&mut c, args)?;
    let r = match capture::replay(&c, &ReplayOptions::default()) {
        Ok(r) => r,
        Err(e) => return compile_failed(e),
    };
    let cmp = capture::compare(&c, &r);
    // Names, titles and messages come from the file: never let them
    // drive the terminal.
    print!("{}", msl::text::printable(&capture::summary(&args.file.display().to_string(), &c, &r, &cmp)));
    if changes.is_empty() {
        return Ok(if cmp.reproduces() { EXIT_OK } else { EXIT_BAD_RESULT });
    }
    // A changed replay is a new run: differences from the record are the
    // point; its own error findings decide the exit status.
    println!("changed before replaying (so outputs and findings may differ from the record):");
    for ch in &changes {
        println!("  {}", msl::text::printable(ch));
    }
    Ok(if r.report.has_errors() { EXIT_BAD_RESULT } else { EXIT_OK })
}

/// Apply `--arg` and `--source` to the capture; what was changed, in words.
fn change(c: &mut Capture, args: &ReplayArgs) -> Result<Vec<String>, String> {
    let mut said = Vec::new();
    for a in &args.args {
        let (name, spec) = a.split_once('=').ok_or_else(|| format!("--arg `{a}` must look like NAME=VALUE"))?;
        let name = name.trim();
        let array = match session::bind::parse_value_within(name, spec, arrays::MAX_TOTAL_BUFFER_BYTES)? {
            session::bind::Value::Array(x) => x,
            session::bind::Value::Json(_) => {
                return Err(format!("--arg {name}: a replay takes arrays and scalars (NAME=@x.npy, NAME=3:u32), not JSON"))
            }
        };
        let records = match &mut c.program {
            Program::Source { arguments, .. } => arguments,
            Program::Mlx { inputs, .. } => inputs,
        };
        let names: Vec<String> = records.iter().map(|r| r.name.clone()).collect();
        let Some(rec) = records.iter_mut().find(|r| r.name == name) else {
            return Err(format!("--arg {name}: the capture has no argument `{name}`; its arguments are: {}", names.join(", ")));
        };
        let before = format!("{} {:?}", rec.dtype, rec.shape);
        *rec = capture::ArrayRecord::new(name, &array, rec.output, true);
        said.push(format!("argument `{name}`: {before} → {} {:?} from `{}`", rec.dtype, rec.shape, spec.trim()));
    }
    if let Some(path) = &args.source {
        let text = session::read_source(path)?;
        let shown = path.display().to_string();
        match &mut c.program {
            // Keep the captured name: the captured headers are keyed by it.
            Program::Source { main, .. } => main.text = text,
            Program::Mlx { source, source_file, .. } => {
                *source = text.clone();
                *source_file = capture::FileRecord { name: shown.clone(), text, offset: 0 };
            }
        }
        said.push(format!("source: `{shown}` instead of the captured one"));
    }
    Ok(said)
}

/// `replay FILE --extract DIR`: every array of the capture as a `.npy` file.
fn extract(c: &Capture, file: &Path, dir: &Path) -> Result<u8, String> {
    let before = match &c.program {
        Program::Source { arguments, .. } => arguments,
        Program::Mlx { inputs, .. } => inputs,
    };
    let mut written = 0;
    for (sub, records) in [("inputs", before), ("outputs", &c.outputs)] {
        let folder = dir.join(sub);
        for rec in records.iter() {
            let Ok(array) = rec.to_array() else {
                eprintln!("note: `{}` is not stored in the capture (only its checksum): skipped", msl::text::printable(&rec.name));
                continue;
            };
            // Names come from the file: keep them to plain file names.
            let safe: String = rec.name.chars().map(|ch| if ch.is_ascii_alphanumeric() || ch == '_' { ch } else { '_' }).collect();
            let path = folder.join(format!("{safe}.npy"));
            files::refuse_overwrite(&path, &[file.to_path_buf()], "--extract")?;
            std::fs::create_dir_all(&folder).map_err(|e| format!("cannot create `{}`: {e}", folder.display()))?;
            array.write_npy(&path).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
            println!("{}", path.display());
            written += 1;
        }
    }
    eprintln!("{written} arrays written under {} (inputs/ before the run, outputs/ after)", dir.display());
    Ok(EXIT_OK)
}

/// A replay that could not run: compile errors are exit 1, a damaged capture exit 2.
fn compile_failed(e: ReplayError) -> Result<u8, String> {
    match e {
        ReplayError::Compile { sources, diagnostics } => {
            eprint!("{}", msl::diag::render(&sources, &diagnostics, crate::color::stderr()));
            Ok(crate::debug::compile_failure_code(&diagnostics))
        }
        ReplayError::Invalid(m) => Err(m),
    }
}

/// `debug FILE.mpcapture --thread X,Y,Z --print 'LINE: expr'`: the probes
/// placed in the captured source, the capture replayed.
pub fn debug(path: &Path, rest: &[String], req: &Request) -> Result<u8, String> {
    if let Some(extra) = rest.first() {
        return Err(format!(
            "`{extra}`: a capture holds its own arguments and dispatch; give only the file, --thread and --print (and --limit)"
        ));
    }
    let c = Capture::read(path)?;
    let (grid, tg, mode) = match &c.program {
        Program::Source { grid, threadgroup, dispatch, .. } => (*grid, *threadgroup, dispatch.clone()),
        Program::Mlx { grid, threadgroup, .. } => (*grid, *threadgroup, "threads".to_string()),
    };
    let grid_threads = if mode == "threadgroups" { [0, 1, 2].map(|d| grid[d].saturating_mul(tg[d])) } else { grid };
    req.check_thread(grid_threads)?;
    let o = ReplayOptions { probe: req.probe(), stops: req.stops(), probes: req.probe_requests(), nan: req.nan, ..Default::default() };
    let replayed = capture::replay(&c, &o);
    if let Some(sink) = &req.interactive {
        // The interactive debugger: hand the recording over, print nothing.
        let mut out = sink.borrow_mut();
        match &replayed {
            Ok(r) => out.finished(&r.report, &r.sources, req),
            Err(ReplayError::Compile { sources, diagnostics }) => out.failed(sources, diagnostics),
            Err(ReplayError::Invalid(m)) => return Err(m.clone()),
        }
        (out.grid, out.threadgroup) = (grid_threads, tg);
        out.what = msl::text::printable_line(&format!("capture `{}` ({})", path.display(), c.title)).into_owned();
        return Ok(EXIT_OK);
    }
    let r = match replayed {
        Ok(r) => r,
        Err(e) => return compile_failed(e),
    };
    let placed = placed(&req.prints, &r.report.probe_sites, &r.sources);
    let note = format!(" of capture `{}` ({}): grid {}, threadgroup {}", path.display(), c.title, dims(grid), dims(tg));
    print!("{}", msl::text::printable(&render(req, tg, &placed, r.report.probes.as_ref(), &note)));
    let diags: Vec<msl::diag::Diagnostic> = r.report.findings.iter().map(gpu::Finding::to_diagnostic).collect();
    eprint!("{}", msl::diag::render(&r.sources, &diags, crate::color::stderr()));
    Ok(if r.report.has_errors() { EXIT_BAD_RESULT } else { EXIT_OK })
}

fn dims(d: [u32; 3]) -> String {
    format!("{},{},{}", d[0], d[1], d[2])
}
