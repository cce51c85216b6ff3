//! Source files and byte spans into them.
//!
//! Every token, AST node and diagnostic carries a [`Span`]: a file and a byte
//! range in that file's text as the user wrote it. Macro expansion keeps spans
//! pointing at user text (see `preprocess`), so line/column numbers are always
//! the ones the user sees in their editor.

use std::fmt;

/// Index of a file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// A byte range `lo..hi` in one file.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    pub file: FileId,
    pub lo: u32,
    pub hi: u32,
}

impl Span {
    pub fn new(file: FileId, lo: u32, hi: u32) -> Span {
        Span { file, lo, hi: hi.max(lo) }
    }

    /// The smallest span covering both (same file assumed; otherwise `self`).
    pub fn to(self, other: Span) -> Span {
        if self.file != other.file {
            return self;
        }
        Span::new(self.file, self.lo.min(other.lo), self.hi.max(other.hi))
    }

    /// An empty span just after this one (where a missing token belongs).
    pub fn after(self) -> Span {
        Span::new(self.file, self.hi, self.hi)
    }

    pub fn is_empty(self) -> bool {
        self.lo == self.hi
    }
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}..{}", self.file.0, self.lo, self.hi)
    }
}

/// One source file: its display name, text and line start offsets.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    /// The `#include` directive that brought this file in, if any.
    pub included_from: Option<Span>,
    /// The text of debugger probe request N (`msl::probe`), not a file.
    pub probe: Option<u32>,
    line_starts: Vec<u32>,
}

impl SourceFile {
    /// A file's text as the front end reads it: a UTF-8 byte-order mark is
    /// dropped, and a lone carriage return (old Mac line endings) ends a
    /// line like `\n` does: it becomes `\n`, byte for byte, so every offset
    /// still points at the same character. `\r\n` stays as it is.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let mut text = text.into();
        if text.starts_with('\u{feff}') {
            text.drain(..'\u{feff}'.len_utf8());
        }
        if text.contains('\r') {
            let mut bytes = std::mem::take(&mut text).into_bytes();
            for i in 0..bytes.len() {
                if bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n') {
                    bytes[i] = b'\n';
                }
            }
            // Only ASCII bytes were replaced by ASCII bytes.
            text = String::from_utf8(bytes).unwrap_or_default();
        }
        let mut line_starts = vec![0u32];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        SourceFile { name: name.into(), text, included_from: None, probe: None, line_starts }
    }

    /// 1-based line and column (column counted in characters) of a byte offset.
    pub fn line_col(&self, offset: u32) -> (u32, u32) {
        let offset = offset.min(self.text.len() as u32);
        let line = match self.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        let start = self.line_starts[line] as usize;
        let mut end = offset as usize;
        while end > start && !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let col = self.text[start..end].chars().count() as u32 + 1;
        (line as u32 + 1, col)
    }

    /// 1-based line of a byte offset (cheaper than `line_col`: no column).
    pub fn line_of(&self, offset: u32) -> u32 {
        let offset = offset.min(self.text.len() as u32);
        match self.line_starts.binary_search(&offset) {
            Ok(l) => l as u32 + 1,
            Err(l) => l as u32,
        }
    }

    /// Byte offset where the 1-based `line` starts (clamped to the file).
    pub fn line_start(&self, line: u32) -> u32 {
        let idx = (line.max(1) - 1) as usize;
        *self.line_starts.get(idx).unwrap_or(&(self.text.len() as u32))
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }
}

/// All files of one compilation (the user's file, generated MLX text, ...).
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
    includes: Vec<IncludeEdge>,
}

/// One `#include` the preprocessor resolved: which file asked for which
/// header name and the file it got (what a capture needs to rebuild the
/// compilation without the disk).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IncludeEdge {
    pub from: FileId,
    /// The header name as written, without `""`/`<>`.
    pub spelled: String,
    pub quoted: bool,
    pub to: FileId,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        self.files.push(SourceFile::new(name, text));
        FileId(self.files.len() as u32 - 1)
    }

    /// Add the text of debugger probe request `request`.
    pub fn add_probe(&mut self, name: impl Into<String>, text: impl Into<String>, request: u32) -> FileId {
        let id = self.add(name, text);
        self.files[id.0 as usize].probe = Some(request);
        id
    }

    /// Add a header brought in by the `#include` at `from`.
    pub fn add_included(&mut self, name: impl Into<String>, text: impl Into<String>, from: Span) -> FileId {
        let id = self.add(name, text);
        self.files[id.0 as usize].included_from = Some(from);
        id
    }

    /// Note that the `#include` of `spelled` in `from` resolved to `to`.
    pub fn record_include(&mut self, edge: IncludeEdge) {
        if !self.includes.contains(&edge) {
            self.includes.push(edge);
        }
    }

    /// Every `#include` resolved to a file, in the order first met.
    pub fn includes(&self) -> &[IncludeEdge] {
        &self.includes
    }

    /// The "included from" chain of a file, innermost first.
    pub fn include_chain(&self, file: FileId) -> Vec<Span> {
        let mut chain = Vec::new();
        let mut at = file;
        while let Some(from) = self.files.get(at.0 as usize).and_then(|f| f.included_from) {
            if chain.len() >= 256 || from.file == at {
                break;
            }
            chain.push(from);
            at = from.file;
        }
        chain
    }

    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }

    /// The text a span covers.
    pub fn snippet(&self, span: Span) -> &str {
        let text = &self.file(span.file).text;
        let lo = (span.lo as usize).min(text.len());
        let hi = (span.hi as usize).min(text.len()).max(lo);
        text.get(lo..hi).unwrap_or("")
    }

    /// 1-based (line, column) of the start of a span.
    pub fn line_col(&self, span: Span) -> (u32, u32) {
        self.file(span.file).line_col(span.lo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        let f = SourceFile::new("a.metal", "ab\ncd\n\né");
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(1), (1, 2));
        assert_eq!(f.line_col(3), (2, 1));
        assert_eq!(f.line_col(6), (3, 1));
        assert_eq!(f.line_col(7), (4, 1));
        assert_eq!(f.line_col(100), (4, 2));
        assert_eq!(f.line_start(2), 3);
        assert_eq!(f.line_of(0), 1);
        assert_eq!(f.line_of(3), 2);
        assert_eq!(f.line_of(5), 2);
        assert_eq!(f.line_of(100), 4);
    }

    #[test]
    fn lone_carriage_returns_end_lines_and_a_bom_is_dropped() {
        let f = SourceFile::new("a.metal", "\u{feff}a\rbc\r\nd\re");
        assert_eq!(f.text, "a\nbc\r\nd\ne");
        assert_eq!(f.line_count(), 4);
        assert_eq!(f.line_col(2), (2, 1));
        assert_eq!(f.line_col(6), (3, 1));
        assert_eq!(f.line_col(8), (4, 1));
    }
}
