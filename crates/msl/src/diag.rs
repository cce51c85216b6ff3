//! One diagnostic type for everything the tool reports about user code:
//! compile errors, warnings and (later) run-time findings. Rendered
//! rustc-style for people and as JSON for tools.

use crate::source::{SourceMap, Span};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term;
use codespan_reporting::term::termcolor::{Ansi, NoColor};
use serde::Serialize;
use std::ops::Range;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Note,
    Warning,
    Error,
}

/// A secondary location with a short explanation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Stable code such as `E0101`, shown as `error[E0101]`.
    pub code: Option<&'static str>,
    pub message: String,
    pub span: Span,
    /// Text under the primary caret (may be empty).
    pub label: String,
    pub secondary: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Vec<String>,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Error, span, message)
    }

    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Warning, span, message)
    }

    pub fn new(severity: Severity, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity,
            code: None,
            message: message.into(),
            span,
            label: String::new(),
            secondary: Vec::new(),
            notes: Vec::new(),
            help: Vec::new(),
        }
    }

    pub fn code(mut self, code: &'static str) -> Self {
        self.code = Some(code);
        self
    }

    pub fn label(mut self, text: impl Into<String>) -> Self {
        self.label = text.into();
        self
    }

    pub fn with_secondary(mut self, span: Span, text: impl Into<String>) -> Self {
        self.secondary.push(Label { span, message: text.into() });
        self
    }

    pub fn note(mut self, text: impl Into<String>) -> Self {
        self.notes.push(text.into());
        self
    }

    pub fn help(mut self, text: impl Into<String>) -> Self {
        self.help.push(text.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Collected diagnostics of one stage, with a cap so that garbage input
/// cannot produce unbounded output.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    pub items: Vec<Diagnostic>,
    suppressed: usize,
}

/// After this many errors we stop recording more (the first ones matter).
pub const MAX_ERRORS: usize = 50;

impl Diagnostics {
    pub fn new() -> Diagnostics {
        Diagnostics::default()
    }

    pub fn push(&mut self, d: Diagnostic) {
        if d.is_error() && self.error_count() >= MAX_ERRORS {
            self.suppressed += 1;
            return;
        }
        self.items.push(d);
    }

    pub fn extend(&mut self, other: Diagnostics) {
        for d in other.items {
            self.push(d);
        }
        self.suppressed += other.suppressed;
    }

    pub fn error_count(&self) -> usize {
        self.items.iter().filter(|d| d.is_error()).count()
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.is_error()) || self.suppressed > 0
    }

    pub fn suppressed(&self) -> usize {
        self.suppressed
    }

    /// Order by file position (stable for equal positions), as compilers print.
    pub fn sort(&mut self) {
        self.items.sort_by_key(|d| (d.span.file, d.span.lo));
    }
}

/// Adapter so codespan-reporting can read our source map.
struct CsFiles<'a>(&'a SourceMap);

impl<'a> Files<'a> for CsFiles<'a> {
    type FileId = u32;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: u32) -> Result<&'a str, FilesError> {
        Ok(&self.file_of(id)?.name)
    }

    fn source(&'a self, id: u32) -> Result<&'a str, FilesError> {
        Ok(&self.file_of(id)?.text)
    }

    fn line_index(&'a self, id: u32, byte_index: usize) -> Result<usize, FilesError> {
        let f = self.file_of(id)?;
        Ok(f.line_col(byte_index as u32).0 as usize - 1)
    }

    fn line_range(&'a self, id: u32, line_index: usize) -> Result<Range<usize>, FilesError> {
        let f = self.file_of(id)?;
        if line_index >= f.line_count() {
            return Err(FilesError::LineTooLarge { given: line_index, max: f.line_count() - 1 });
        }
        let start = f.line_start(line_index as u32 + 1) as usize;
        let end = if line_index + 1 < f.line_count() { f.line_start(line_index as u32 + 2) as usize } else { f.text.len() };
        Ok(start..end)
    }
}

impl<'a> CsFiles<'a> {
    fn file_of(&self, id: u32) -> Result<&'a crate::source::SourceFile, FilesError> {
        self.0.files().get(id as usize).ok_or(FilesError::FileMissing)
    }
}

fn clamp_span(sources: &SourceMap, span: Span) -> Range<usize> {
    let len = sources.file(span.file).text.len();
    let mut lo = (span.lo as usize).min(len);
    let mut hi = (span.hi as usize).min(len).max(lo);
    let text = &sources.file(span.file).text;
    while lo > 0 && !text.is_char_boundary(lo) {
        lo -= 1;
    }
    while hi < len && !text.is_char_boundary(hi) {
        hi += 1;
    }
    lo..hi
}

fn to_codespan(sources: &SourceMap, d: &Diagnostic) -> cs::Diagnostic<u32> {
    let severity = match d.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
        Severity::Note => cs::Severity::Note,
    };
    let mut labels = vec![cs::Label::primary(d.span.file.0, clamp_span(sources, d.span)).with_message(d.label.clone())];
    for l in &d.secondary {
        labels.push(cs::Label::secondary(l.span.file.0, clamp_span(sources, l.span)).with_message(l.message.clone()));
    }
    let mut notes: Vec<String> = included_from(sources, d.span).into_iter().map(|n| format!("note: {n}")).collect();
    notes.extend(d.notes.iter().map(|n| format!("note: {n}")));
    notes.extend(d.help.iter().map(|h| format!("help: {h}")));
    let mut out = cs::Diagnostic::new(severity).with_message(d.message.clone()).with_labels(labels).with_notes(notes);
    if let Some(code) = d.code {
        out = out.with_code(code);
    }
    out
}

/// "in file included from a.metal:3:1" lines for a span inside a header.
fn included_from(sources: &SourceMap, span: Span) -> Vec<String> {
    sources
        .include_chain(span.file)
        .into_iter()
        .map(|from| {
            let (line, col) = sources.line_col(from);
            format!("in file included from {}:{line}:{col}", sources.file(from.file).name)
        })
        .collect()
}

/// Render diagnostics rustc-style. `color` adds ANSI colours.
pub fn render(sources: &SourceMap, diags: &[Diagnostic], color: bool) -> String {
    let files = CsFiles(sources);
    let config = term::Config::default();
    let mut buf = Vec::new();
    for d in diags {
        let cd = to_codespan(sources, d);
        let res = if color {
            term::emit(&mut Ansi::new(&mut buf), &config, &files, &cd)
        } else {
            term::emit(&mut NoColor::new(&mut buf), &config, &files, &cd)
        };
        if res.is_err() {
            // Fall back to a plain one-line form rather than losing the message.
            let (line, col) = sources.line_col(d.span);
            let name = &sources.file(d.span.file).name;
            buf.extend_from_slice(format!("{:?}: {}\n --> {name}:{line}:{col}\n", d.severity, d.message).as_bytes());
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// The JSON form of the contract: `{"severity", "message", "line", "column"}`
/// plus the file name, code, notes and help for tools that want them.
pub fn to_json(sources: &SourceMap, d: &Diagnostic) -> serde_json::Value {
    let (line, column) = sources.line_col(d.span);
    serde_json::json!({
        "severity": d.severity,
        "message": d.message,
        "file": sources.file(d.span.file).name,
        "line": line,
        "column": column,
        "code": d.code,
        "notes": d.notes,
        "help": d.help,
        "included_from": included_from(sources, d.span),
    })
}

/// Names within `max_distance` edits of `wanted`, best first (for "did you mean").
pub fn suggest<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = match wanted.chars().count() {
        0..=2 => 1,
        3..=5 => 2,
        _ => 3,
    };
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == wanted {
            continue;
        }
        let d = edit_distance(wanted, c);
        if d <= limit && best.is_none_or(|(bd, bc)| d < bd || (d == bd && c < bc)) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance with adjacent transpositions counted as one edit.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > 3 || a.len() > 64 || b.len() > 64 {
        return usize::MAX;
    }
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_near_misses() {
        assert_eq!(suggest("inptu", ["input", "output", "i"]), Some("input"));
        assert_eq!(suggest("flaot", ["float", "half"]), Some("float"));
        assert_eq!(suggest("zzz", ["float", "half"]), None);
    }

    #[test]
    fn renders_rustc_style() {
        let mut sm = SourceMap::new();
        let f = sm.add("k.metal", "int x = y;\n");
        let d = Diagnostic::error(Span::new(f, 8, 9), "use of undeclared identifier `y`")
            .code("E0001")
            .label("not found in this scope")
            .help("did you mean `x`?");
        let text = render(&sm, &[d], false);
        assert!(text.contains("error[E0001]: use of undeclared identifier `y`"), "{text}");
        assert!(text.contains("k.metal:1:9"), "{text}");
        assert!(text.contains("help: did you mean `x`?"), "{text}");
    }
}
