//! Files in and out, for every command and crate: one implementation.
//!
//! Reading: only regular files (a FIFO would block forever, `/dev/zero`
//! never ends), opened without blocking, read with a byte limit (a file
//! that grows while it is read still stops at the limit). Text must be
//! UTF-8; the first bad byte is reported by line and column.
//!
//! Writing: into a temporary file beside the target, then renamed over it,
//! so an interrupted write never leaves a truncated file and the previous
//! version survives until the new one is complete. A target that is one of
//! the run's inputs is refused before anything is written.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// Largest Metal source or header read (16 MiB).
pub const MAX_SOURCE_BYTES: u64 = 16 << 20;
/// Largest data file read: `.npy`, JSON arguments, captures (1 GiB).
pub const MAX_DATA_BYTES: u64 = 1 << 30;

/// Open `path` for reading if it is a regular file (symbolic links
/// followed); a FIFO, device, socket or directory is an error.
fn open_regular(path: &Path, what: &str) -> Result<fs::File, String> {
    let shown = path.display();
    let meta = fs::metadata(path).map_err(|e| format!("cannot read {what} `{shown}`: {e}"))?;
    if !meta.is_file() {
        return Err(format!("cannot read {what} `{shown}`: it is {}, not a regular file", kind_of(&meta)));
    }
    let mut opts = fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Never block in open() if the path was swapped for a FIFO since.
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let f = opts.open(path).map_err(|e| format!("cannot read {what} `{shown}`: {e}"))?;
    let meta = f.metadata().map_err(|e| format!("cannot read {what} `{shown}`: {e}"))?;
    if !meta.is_file() {
        return Err(format!("cannot read {what} `{shown}`: it is {}, not a regular file", kind_of(&meta)));
    }
    Ok(f)
}

fn kind_of(meta: &fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// The bytes of regular file `path`, at most `limit` of them: a larger
/// file is an error naming the limit. `what` names the file in messages
/// ("the source", "the header", …).
pub fn read_bytes(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>, String> {
    read_bytes_within(path, limit, what, "")
}

/// [`read_bytes`], with `why_limit` (" (…)") saying where the limit comes
/// from when the file is over it.
pub fn read_bytes_within(path: &Path, limit: u64, what: &str, why_limit: &str) -> Result<Vec<u8>, String> {
    let f = open_regular(path, what)?;
    let shown = path.display();
    let too_big = || format!("cannot read {what} `{shown}`: it is larger than the limit of {}{why_limit}", human(limit));
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len > limit {
        return Err(too_big());
    }
    let mut out = Vec::with_capacity(len as usize);
    f.take(limit + 1).read_to_end(&mut out).map_err(|e| format!("cannot read {what} `{shown}`: {e}"))?;
    if out.len() as u64 > limit {
        return Err(too_big());
    }
    Ok(out)
}

/// The text of regular file `path` (see [`read_bytes`]); invalid UTF-8 is
/// an error naming the line and column of the first bad byte.
pub fn read_text(path: &Path, limit: u64, what: &str) -> Result<String, String> {
    let bytes = read_bytes(path, limit, what)?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let (line, col) = line_col(&bytes[..at]);
        format!("{}:{line}:{col}: {what} is not valid UTF-8 (byte 0x{:02x}); save it as UTF-8", path.display(), bytes[at])
    })
}

/// 1-based line and column (in characters) just after valid UTF-8 `before`;
/// `\n`, `\r\n` and a lone `\r` end lines.
fn line_col(before: &[u8]) -> (usize, usize) {
    let text = std::str::from_utf8(before).unwrap_or("");
    let mut line = 1;
    let mut col = 1;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\n' || (c == '\r' && chars.peek() != Some(&'\n')) {
            line += 1;
            col = 1;
        } else if c != '\r' {
            col += 1;
        }
    }
    (line, col)
}

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b => format!("{b} bytes"),
    }
}

/// Whether `a` and `b` name the same existing file (hard links, symbolic
/// links and `..` included).
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (fs::metadata(a), fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

/// An error when writing `target` would replace one of `inputs` (the
/// sources, headers, data files and workspace files the command read).
pub fn refuse_overwrite(target: &Path, inputs: &[PathBuf], flag: &str) -> Result<(), String> {
    match inputs.iter().find(|i| same_file(target, i)) {
        Some(i) => {
            Err(format!("{flag} `{}` would overwrite `{}`, which this command reads; write to another file", target.display(), i.display()))
        }
        None => Ok(()),
    }
}

/// An error unless `target`'s extension is `ext` (case-insensitive): PNG
/// bytes must not land in a `.jpg`, nor a capture in a `.metal`.
pub fn require_extension(target: &Path, ext: &str, flag: &str) -> Result<(), String> {
    if target.extension().is_some_and(|e| e.eq_ignore_ascii_case(ext)) {
        return Ok(());
    }
    let fixed = target.with_extension(ext);
    Err(format!("{flag} writes a .{ext} file: name it `{}` (got `{}`)", fixed.display(), target.display()))
}

/// Write `bytes` to `path` atomically: a temporary file in the same folder,
/// synced, then renamed over `path`. On any error the temporary file is
/// removed and `path` is as it was.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Hold an exclusive lock on `path` (created if missing) until the guard
/// is dropped: read-modify-write of a shared file by concurrent commands.
pub struct Lock {
    _file: fs::File,
}

pub fn lock(path: &Path) -> io::Result<Lock> {
    let file = fs::OpenOptions::new().create(true).truncate(false).write(true).open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        // SAFETY: flock on a file descriptor we own; it blocks until the
        // lock is ours and is released when the file is closed.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(Lock { _file: file })
}

/// Print `text` on stdout; a write error (closed stdout, full disk) is
/// returned, not ignored: the command must not report success with its
/// output lost.
pub fn print_stdout(text: &str) -> Result<(), String> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(|e| format!("cannot write the output: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_regular_files_within_the_limit_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.metal");
        fs::write(&p, "abc").unwrap();
        assert_eq!(read_bytes(&p, 3, "the source").unwrap(), b"abc");
        assert!(read_bytes(&p, 2, "the source").unwrap_err().contains("larger than the limit of 2 bytes"));
        assert!(read_bytes(dir.path(), 10, "the source").unwrap_err().contains("a directory"));
        #[cfg(unix)]
        {
            assert!(read_bytes(Path::new("/dev/zero"), 10, "the source").unwrap_err().contains("a device"));
            let fifo = dir.path().join("f");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            // SAFETY: a valid C string path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            assert!(read_bytes(&fifo, 10, "the source").unwrap_err().contains("FIFO"));
            let link = dir.path().join("zero.metal");
            std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
            assert!(read_bytes(&link, 10, "the source").unwrap_err().contains("a device"));
        }
    }

    #[test]
    fn invalid_utf8_names_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.metal");
        fs::write(&p, b"ab\r\ncd\re\xffz").unwrap();
        let e = read_text(&p, 100, "the source").unwrap_err();
        assert!(e.ends_with("a.metal:3:2: the source is not valid UTF-8 (byte 0xff); save it as UTF-8"), "{e}");
    }

    #[test]
    fn atomic_writes_replace_whole_and_inputs_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.npy");
        fs::write(&p, "old").unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left");
        let input = dir.path().join("k.metal");
        fs::write(&input, "src").unwrap();
        let via_dots = dir.path().join("sub/../k.metal");
        fs::create_dir(dir.path().join("sub")).unwrap();
        let e = refuse_overwrite(&via_dots, std::slice::from_ref(&input), "--capture").unwrap_err();
        assert!(e.contains("would overwrite") && e.contains("k.metal"), "{e}");
        assert!(refuse_overwrite(&p, &[input], "--capture").is_ok());
        assert!(require_extension(Path::new("x.jpg"), "png", "--png").unwrap_err().contains("`x.png`"));
        assert!(require_extension(Path::new("x.PNG"), "png", "--png").is_ok());
    }
}
