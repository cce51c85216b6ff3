//! The learner's workspace: one `NN_slug.metal` file per puzzle, backups of
//! reset files in `.backup/`, and progress in `.progress.json`.

use crate::check::CheckResult;
use crate::render::puzzle_score_json;
use crate::{Puzzle, BODY_MARKER, PUZZLES};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

pub const DEFAULT_DIR: &str = "metal-puzzles";
pub const PROGRESS_FILE: &str = ".progress.json";
/// Locked while the progress file is read, changed and written.
pub const PROGRESS_LOCK: &str = ".progress.lock";
pub const BACKUP_DIR: &str = ".backup";

/// Words of `text` wrapped to `width` columns.
pub fn wrap(text: &str, width: usize) -> String {
    comment(text, width).lines().map(|l| format!("{}\n", &l[3..])).collect()
}

/// Words of `text` wrapped to `width` columns, each line prefixed with `// `.
fn comment(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&format!("// {line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&format!("// {line}\n"));
    }
    out
}

/// The untouched workspace file of a puzzle.
pub fn starter_text(p: &Puzzle) -> String {
    let mut s = format!("// Puzzle {}: {}\n//\n", p.number, p.title);
    s.push_str(&comment(p.explanation, 76));
    s.push_str(&format!("//\n// Check with `metal-puzzles check {}`; stuck? `metal-puzzles hint {}`.\n", p.slug, p.slug));
    if !p.header.is_empty() {
        s.push_str("// Above the marker line: the MLX header. Below it: the kernel body.\n");
        s.push_str(p.header);
        s.push_str(BODY_MARKER);
        s.push('\n');
    }
    if !p.stages.is_empty() {
        s.push_str("// Each kernel's body goes under its own marker line; they run in this order.\n");
        for (k, stage) in p.stages.iter().enumerate() {
            s.push_str(&format!("\n{}\n", stage.marker()));
            s.push_str(&comment(&format!("Stage {} ({}): {}.", k + 1, stage.kernel_name, stage.about), 76));
            s.push_str(stage.starter);
            s.push_str("// Write this kernel here.\n");
        }
        return s;
    }
    s.push_str(p.starter);
    s.push_str("\n// Write your solution here.\n");
    s
}

/// Where a puzzle is in the learner's progress. Always true of the file as
/// it is now: a file changed since its last check is [`Status::Edited`]
/// until it is checked again, never a stale verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The file is missing, or its code is still the starter's (comments aside).
    NotStarted,
    /// Changed since its last check (or never checked): nobody knows yet.
    Edited,
    /// Its last check, of exactly this text, did not solve it.
    Unsolved,
    /// Its last check, of exactly this text, solved it.
    Solved,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::NotStarted => "not started",
            Status::Edited => "edited, not checked",
            Status::Unsolved => "unsolved",
            Status::Solved => "solved",
        }
    }
}

/// Why a puzzle file could not be read as text.
#[derive(Debug)]
pub enum FileError {
    /// There is no such file.
    Missing,
    /// The file is not UTF-8: the first bad byte, its 1-based line and
    /// column (in characters).
    NotUtf8 { byte: u8, line: usize, column: usize },
    /// Anything else the system said.
    Io(io::Error),
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::Missing => write!(f, "the file is missing"),
            FileError::NotUtf8 { byte, line, column } => {
                write!(f, "the file is not UTF-8 text: byte 0x{byte:02x} at line {line}, column {column} is not valid UTF-8")
            }
            FileError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl FileError {
    /// What to do about it, given the command that restores missing files.
    pub fn help(&self, init: &str) -> String {
        match self {
            FileError::Missing => format!("`{init}` restores missing starter files"),
            FileError::NotUtf8 { .. } => {
                "save the file as UTF-8 (in most editors: Save with Encoding, or the encoding in the status bar), or retype the characters around that place".into()
            }
            FileError::Io(_) => "check the file's permissions".into(),
        }
    }
}

/// `bytes` as text, or where the first byte that is not UTF-8 is.
pub fn text_of(bytes: Vec<u8>) -> Result<String, FileError> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let before = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        FileError::NotUtf8 { byte: bytes[at], line, column }
    })
}

/// The code of a workspace file: comments and blank lines left out (a
/// starter whose comments were edited is still not started).
fn code_of(text: &str) -> Vec<&str> {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => l[..i].trim(),
            None => l.trim(),
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// Whether `text` holds no code of the learner's: the starter's code, comments aside.
pub fn is_untouched(p: &Puzzle, text: &str) -> bool {
    code_of(text) == code_of(&starter_text(p))
}

/// FNV-1a, 64 bit: a stable fingerprint of a file's text.
pub fn fingerprint(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    format!("{h:016x}")
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// A workspace directory.
#[derive(Clone, Debug)]
pub struct Workspace {
    pub dir: PathBuf,
}

impl Workspace {
    pub fn new(dir: impl Into<PathBuf>) -> Workspace {
        Workspace { dir: dir.into() }
    }

    pub fn path(&self, p: &Puzzle) -> PathBuf {
        self.dir.join(p.file_name())
    }

    /// Every file of the workspace a command might read or the learner
    /// owns: the puzzle files, the progress file and its lock.
    pub fn owned_files(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = PUZZLES.iter().map(|p| self.path(p)).collect();
        out.push(self.dir.join(PROGRESS_FILE));
        out.push(self.dir.join(PROGRESS_LOCK));
        out
    }

    pub fn exists(&self) -> bool {
        self.dir.is_dir()
    }

    /// Create the directory and every missing starter file (existing files
    /// are left alone). Returns the files created.
    pub fn init(&self) -> io::Result<Vec<PathBuf>> {
        fs::create_dir_all(&self.dir)?;
        let mut created = Vec::new();
        for p in PUZZLES.iter() {
            let path = self.path(p);
            match fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    io::Write::write_all(&mut f, starter_text(p).as_bytes())?;
                    created.push(path);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Ok(created)
    }

    /// The text of a puzzle's file ([`FileError`] says why not): a regular
    /// file only (a FIFO or a link to a device would block or never end), at
    /// most `files::MAX_SOURCE_BYTES`.
    pub fn read(&self, p: &Puzzle) -> Result<String, FileError> {
        let path = self.path(p);
        if !path.exists() {
            return Err(FileError::Missing);
        }
        match files::read_bytes(&path, files::MAX_SOURCE_BYTES, "the puzzle file") {
            Ok(bytes) => text_of(bytes),
            Err(e) => Err(FileError::Io(io::Error::other(e))),
        }
    }

    /// Move the learner's file to `.backup/NN_slug.<unix-ts>.metal` and
    /// write the starter in its place. Returns the backup path (if there
    /// was a file to back up).
    pub fn reset(&self, p: &Puzzle) -> io::Result<Option<PathBuf>> {
        let path = self.path(p);
        let mut backup = None;
        // An untouched starter needs no backup (resetting twice must not
        // pile up copies of the starter).
        if self.read(p).is_ok_and(|t| t == starter_text(p)) {
            return Ok(None);
        }
        if path.exists() {
            let dir = self.dir.join(BACKUP_DIR);
            fs::create_dir_all(&dir)?;
            let stem = format!("{:02}_{}", p.number, p.slug);
            let ts = unix_now();
            let mut target = dir.join(format!("{stem}.{ts}.metal"));
            let mut n = 1;
            while target.exists() {
                target = dir.join(format!("{stem}.{ts}-{n}.metal"));
                n += 1;
            }
            fs::rename(&path, &target)?;
            backup = Some(target);
        }
        write_atomic(&path, starter_text(p).as_bytes())?;
        Ok(backup)
    }

    pub fn load_progress(&self) -> serde_json::Value {
        files::read_text(&self.dir.join(PROGRESS_FILE), files::MAX_SOURCE_BYTES, "the progress file")
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .filter(|v| v.is_object())
            .unwrap_or_else(|| serde_json::json!({ "version": 1, "puzzles": {} }))
    }

    /// Record the outcome of checking `text` (written atomically).
    pub fn record(&self, results: &[(&CheckResult, &str)]) -> io::Result<()> {
        // Two `check`s at once must not lose each other's marks: the read,
        // the change and the write happen under one lock.
        let _lock = files::lock(&self.dir.join(PROGRESS_LOCK))?;
        let mut progress = self.load_progress();
        if !progress.get("puzzles").is_some_and(|p| p.is_object()) {
            progress["puzzles"] = serde_json::json!({});
        }
        for (r, text) in results {
            progress["puzzles"][r.puzzle.slug] = serde_json::json!({
                "solved": r.solved(),
                "fingerprint": fingerprint(text),
                "checked_at": unix_now(),
                "score": puzzle_score_json(r.score, r.puzzle.targets),
            });
        }
        let text = serde_json::to_string_pretty(&progress).expect("json") + "\n";
        write_atomic(&self.dir.join(PROGRESS_FILE), text.as_bytes())
    }

    pub fn status(&self, p: &Puzzle, progress: &serde_json::Value) -> Status {
        let Ok(text) = self.read(p) else { return Status::NotStarted };
        let rec = &progress["puzzles"][p.slug];
        let checked = rec["fingerprint"].as_str() == Some(&fingerprint(&text));
        if checked && rec["solved"].as_bool() == Some(true) {
            Status::Solved
        } else if is_untouched(p, &text) {
            Status::NotStarted
        } else if checked {
            Status::Unsolved
        } else {
            Status::Edited
        }
    }

    /// Every puzzle's status, in book order.
    pub fn statuses(&self) -> Vec<Status> {
        let progress = self.load_progress();
        PUZZLES.iter().map(|p| self.status(p, &progress)).collect()
    }
}

/// Write `bytes` to a temporary file next to `path`, then rename it over.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    files::write_atomic(path, bytes)
}
