//! Finding the files `#include` names, with a fixed set of allowed folders.
//!
//! The preprocessor may read only files inside the main file's folder and
//! the `-I` roots. Every candidate is canonicalised (symbolic links and `..`
//! resolved) before that test, so `#include "../../etc/passwd"` or a link
//! pointing out of a root is refused, not read. A future sandboxed front end
//! (a browser playground) relies on this being the only door to the disk.

use std::path::{Path, PathBuf};

/// Largest header read, in bytes; bigger files are refused, not loaded.
pub const MAX_HEADER_BYTES: u64 = 8 << 20;

/// The folders includes may come from.
#[derive(Clone, Debug, Default)]
pub struct IncludeRoots {
    /// Canonical folders: the main file's folder (if it has one) first,
    /// then the `-I` roots in command-line order.
    allowed: Vec<PathBuf>,
    /// Canonical `-I` roots, searched for `"…"` after the including
    /// file's folder, and for `<…>`.
    search: Vec<PathBuf>,
    /// Roots that do not exist or are not folders, for the error message.
    pub missing: Vec<PathBuf>,
}

/// What looking for a header found.
#[derive(Debug)]
pub enum Lookup {
    /// The canonical path of the header.
    Found(PathBuf),
    /// A file exists under that name but outside every allowed folder.
    Refused(PathBuf),
    /// Not found; the folders that were searched, in order.
    NotFound(Vec<PathBuf>),
}

impl IncludeRoots {
    pub fn new(main_dir: Option<&Path>, include_dirs: &[PathBuf]) -> IncludeRoots {
        let mut roots = IncludeRoots::default();
        if let Some(dir) = main_dir {
            if let Ok(c) = dir.canonicalize() {
                roots.allowed.push(c);
            }
        }
        for dir in include_dirs {
            match dir.canonicalize() {
                Ok(c) if c.is_dir() => {
                    roots.allowed.push(c.clone());
                    roots.search.push(c);
                }
                _ => roots.missing.push(dir.clone()),
            }
        }
        roots
    }

    /// Whether any folder is available at all (no file system otherwise).
    pub fn is_empty(&self) -> bool {
        self.allowed.is_empty()
    }

    fn is_allowed(&self, path: &Path) -> bool {
        self.allowed.iter().any(|root| path.starts_with(root))
    }

    /// Look `name` up: for `"…"` first in `including_dir`, then along the
    /// roots; for `<…>` along the roots only.
    pub fn lookup(&self, name: &str, quoted: bool, including_dir: Option<&Path>) -> Lookup {
        let mut searched = Vec::new();
        let mut refused = None;
        let rel = Path::new(name);
        if rel.is_absolute() {
            return match rel.canonicalize() {
                Ok(c) if self.is_allowed(&c) && c.is_file() => Lookup::Found(c),
                Ok(c) => Lookup::Refused(c),
                Err(_) => Lookup::NotFound(Vec::new()),
            };
        }
        let dirs = including_dir.filter(|_| quoted).into_iter().chain(self.search.iter().map(PathBuf::as_path));
        for dir in dirs {
            searched.push(dir.to_path_buf());
            let Ok(c) = dir.join(rel).canonicalize() else { continue };
            if !c.is_file() {
                continue;
            }
            if self.is_allowed(&c) {
                return Lookup::Found(c);
            }
            refused.get_or_insert(c);
        }
        match refused {
            Some(c) => Lookup::Refused(c),
            None => Lookup::NotFound(searched),
        }
    }
}

/// Headers given as text instead of read from disk (a capture replayed):
/// each entry answers one `#include` of one file, exactly as it was
/// resolved when the capture was made.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CapturedHeaders {
    pub entries: Vec<CapturedInclude>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapturedInclude {
    /// Display name of the including file.
    pub from: String,
    /// The header name as written, without `""`/`<>`.
    pub spelled: String,
    pub quoted: bool,
    /// Display name and text of the header.
    pub name: String,
    pub text: String,
}

impl CapturedHeaders {
    pub fn find(&self, from: &str, spelled: &str, quoted: bool) -> Option<&CapturedInclude> {
        self.entries.iter().find(|e| e.from == from && e.spelled == spelled && e.quoted == quoted)
    }
}

/// Read a header found by [`IncludeRoots::lookup`], with a size cap.
pub fn read_header(path: &Path) -> Result<String, String> {
    files::read_text(path, MAX_HEADER_BYTES, "the header")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary folder, removed when the test ends.
    struct Temp(tempfile::TempDir);

    impl std::ops::Deref for Temp {
        type Target = Path;
        fn deref(&self) -> &Path {
            self.0.path()
        }
    }

    fn tree() -> Temp {
        let base = Temp(tempfile::Builder::new().prefix("msl-include-").tempdir().unwrap());
        std::fs::create_dir_all(base.join("proj/sub")).unwrap();
        std::fs::create_dir_all(base.join("lib/mylib")).unwrap();
        std::fs::write(base.join("proj/sub/a.h"), "a").unwrap();
        std::fs::write(base.join("lib/mylib/b.h"), "b").unwrap();
        std::fs::write(base.join("secret.h"), "s").unwrap();
        base
    }

    #[test]
    fn quoted_searches_including_folder_then_roots() {
        let base = tree();
        let roots = IncludeRoots::new(Some(&base.join("proj")), &[base.join("lib")]);
        let proj = base.join("proj").canonicalize().unwrap();
        assert!(matches!(roots.lookup("sub/a.h", true, Some(&proj)), Lookup::Found(p) if p.ends_with("sub/a.h")));
        assert!(matches!(roots.lookup("mylib/b.h", true, Some(&proj)), Lookup::Found(_)));
        assert!(matches!(roots.lookup("mylib/b.h", false, None), Lookup::Found(_)));
        // Angle brackets do not look next to the including file.
        assert!(matches!(roots.lookup("sub/a.h", false, Some(&proj)), Lookup::NotFound(_)));
        assert!(matches!(roots.lookup("nope.h", true, Some(&proj)), Lookup::NotFound(s) if s.len() == 2));
    }

    #[test]
    fn files_outside_the_roots_are_refused() {
        let base = tree();
        let roots = IncludeRoots::new(Some(&base.join("proj")), &[base.join("lib")]);
        let proj = base.join("proj").canonicalize().unwrap();
        assert!(matches!(roots.lookup("../secret.h", true, Some(&proj)), Lookup::Refused(_)));
        let abs = base.join("secret.h").canonicalize().unwrap();
        assert!(matches!(roots.lookup(abs.to_str().unwrap(), true, Some(&proj)), Lookup::Refused(_)));
        let missing = IncludeRoots::new(None, &[base.join("no-such-dir")]);
        assert_eq!(missing.missing.len(), 1);
        assert!(missing.is_empty());
    }
}
