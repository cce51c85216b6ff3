//! One diagnostic type for everything the tool reports about user code:
//! compile errors, warnings and (later) run-time findings. Rendered
//! rustc-style for people and as JSON for tools.

use crate::source::{SourceMap, Span};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term;
use codespan_reporting::term::termcolor::{Ansi, NoColor};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::HashMap;
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

/// The codes tools recognise a diagnostic by (its message may be reworded;
/// its code stays).
pub mod codes {
    /// `#include` of a header the simulator does not have (Metal 4 tensors).
    pub const UNSUPPORTED_HEADER: &str = "E0107";
    /// A name that is not declared (variable, function, other name); the
    /// name is the diagnostic's `subject`.
    pub const UNDECLARED_NAME: &str = "E0201";
    /// A type name that is not declared; the name is the `subject`.
    pub const UNKNOWN_TYPE: &str = "E0202";
    /// A `}` was expected (a block, struct or initializer list not closed).
    pub const EXPECTED_CLOSING_BRACE: &str = "E0301";
    /// A debugger probe names a line without a statement, or a file the
    /// kernel does not read (a mistake in the request, not the kernel).
    pub const PROBE_PLACE: &str = "E0901";
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
    /// The name the diagnostic is about, for tools (see `codes`).
    pub subject: Option<String>,
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
            subject: None,
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

    pub fn subject(mut self, name: impl Into<String>) -> Self {
        self.subject = Some(name.into());
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

/// What codespan sees of the files one diagnostic points into: only the
/// lines its labels start or end on, each clipped to a window around the
/// labels (a 100 KB line is never printed whole) and with its control
/// characters escaped; line and column numbers stay the real ones.
struct View<'s> {
    sources: &'s SourceMap,
    files: HashMap<u32, ViewFile>,
}

struct ViewFile {
    name: String,
    text: String,
    lines: Vec<ViewLine>,
}

struct ViewLine {
    /// 0-based line in the real file.
    real_line: usize,
    /// Where the line is in the view's text (its newline excluded).
    start: usize,
    end: usize,
    /// (view offset, real offset) at each character shown, then the end.
    map: Vec<(usize, usize)>,
}

/// Lines longer than this many characters are clipped to a window of
/// `SNIPPET_WIDTH` around the first label on them, `SNIPPET_LEAD` before it.
const SNIPPET_MAX_LINE: usize = 200;
const SNIPPET_WIDTH: usize = 120;
const SNIPPET_LEAD: usize = 40;

impl<'s> View<'s> {
    fn new(sources: &'s SourceMap, spans: &[Span]) -> View<'s> {
        let mut points: HashMap<(u32, usize), Vec<usize>> = HashMap::new();
        for sp in spans {
            let Some(f) = sources.files().get(sp.file.0 as usize) else { continue };
            let r = clamp_span(sources, *sp);
            for at in [r.start, r.end] {
                let line = f.line_of(at as u32) as usize - 1;
                points.entry((sp.file.0, line)).or_default().push(at);
            }
        }
        let mut labelled: Vec<(u32, usize)> = points.keys().copied().collect();
        labelled.sort_unstable();
        // codespan shows the line between two labelled lines, or `·` for a
        // longer gap, by their indices: keep the one line between, or put
        // two empty lines in the gap.
        let mut keys: Vec<(u32, usize, bool)> = Vec::new();
        for (i, &(file, line)) in labelled.iter().enumerate() {
            if let Some(&(pf, pl)) = i.checked_sub(1).map(|j| &labelled[j]) {
                if pf == file && line == pl + 2 {
                    keys.push((file, pl + 1, false));
                } else if pf == file && line > pl + 2 {
                    keys.push((file, pl + 1, true));
                    keys.push((file, line - 1, true));
                }
            }
            keys.push((file, line, false));
        }
        let mut files: HashMap<u32, ViewFile> = HashMap::new();
        for (file, line, filler) in keys {
            let f = &sources.files()[file as usize];
            let vf = files.entry(file).or_insert_with(|| ViewFile { name: f.name.clone(), text: String::new(), lines: Vec::new() });
            if !vf.text.is_empty() || !vf.lines.is_empty() {
                vf.text.push('\n');
            }
            let ls = f.line_start(line as u32 + 1) as usize;
            let mut le = f.line_start(line as u32 + 2) as usize;
            if line + 1 >= f.line_count() {
                le = f.text.len();
            }
            let full = if filler { "" } else { f.text[ls..le].trim_end_matches(['\n', '\r']) };
            let le = ls + full.len();
            let first = points.get(&(file, line)).and_then(|p| p.iter().copied().min()).unwrap_or(ls).clamp(ls, le);
            let (mut lo, mut hi) = (ls, le);
            if full.chars().count() > SNIPPET_MAX_LINE {
                lo = back_chars(&f.text, first, SNIPPET_LEAD).max(ls);
                hi = fwd_chars(&f.text, lo, SNIPPET_WIDTH).min(le);
            }
            let start = vf.text.len();
            let mut map = Vec::new();
            if lo > ls {
                vf.text.push('…');
            }
            for (i, c) in f.text[lo..hi].char_indices() {
                map.push((vf.text.len(), lo + i));
                let mut buf = [0u8; 4];
                vf.text.push_str(&crate::text::printable_line(c.encode_utf8(&mut buf)));
            }
            map.push((vf.text.len(), hi));
            if hi < le {
                vf.text.push('…');
            }
            vf.lines.push(ViewLine { real_line: line, start, end: vf.text.len(), map });
        }
        View { sources, files }
    }

    /// Where real offset `at` of `file` is shown (clamped into its window).
    fn offset(&self, file: u32, at: usize) -> usize {
        let Some(vf) = self.files.get(&file) else { return 0 };
        let line = self.sources.files()[file as usize].line_of(at as u32) as usize - 1;
        let Some(vl) = vf.lines.iter().find(|l| l.real_line == line) else { return 0 };
        match vl.map.binary_search_by_key(&at, |&(_, r)| r) {
            Ok(i) => vl.map[i].0,
            Err(0) => vl.map[0].0,
            Err(i) => vl.map[i - 1].0,
        }
    }

    fn range(&self, span: Span) -> Range<usize> {
        let r = clamp_span(self.sources, span);
        let lo = self.offset(span.file.0, r.start);
        lo..self.offset(span.file.0, r.end).max(lo)
    }
}

/// The offset `n` characters before `at` in `text` (or its start).
fn back_chars(text: &str, at: usize, n: usize) -> usize {
    text[..at].char_indices().rev().nth(n.saturating_sub(1)).map(|(i, _)| i).unwrap_or(0)
}

/// The offset `n` characters after `at` in `text` (or its end).
fn fwd_chars(text: &str, at: usize, n: usize) -> usize {
    text[at..].char_indices().nth(n).map(|(i, _)| at + i).unwrap_or(text.len())
}

impl<'a> Files<'a> for View<'_> {
    type FileId = u32;
    type Name = Cow<'a, str>;
    type Source = &'a str;

    fn name(&'a self, id: u32) -> Result<Cow<'a, str>, FilesError> {
        Ok(crate::text::printable_line(&self.file(id)?.name))
    }

    fn source(&'a self, id: u32) -> Result<&'a str, FilesError> {
        Ok(&self.file(id)?.text)
    }

    fn line_index(&'a self, id: u32, byte_index: usize) -> Result<usize, FilesError> {
        let f = self.file(id)?;
        Ok(f.lines.iter().rposition(|l| l.start <= byte_index).unwrap_or(0))
    }

    fn line_range(&'a self, id: u32, line_index: usize) -> Result<Range<usize>, FilesError> {
        let f = self.file(id)?;
        let l = f.lines.get(line_index).ok_or(FilesError::LineTooLarge { given: line_index, max: f.lines.len().saturating_sub(1) })?;
        let end = if line_index + 1 < f.lines.len() { l.end + 1 } else { l.end };
        Ok(l.start..end)
    }

    fn line_number(&'a self, id: u32, line_index: usize) -> Result<usize, FilesError> {
        Ok(self.file(id)?.lines.get(line_index).map_or(line_index, |l| l.real_line) + 1)
    }

    fn column_number(&'a self, id: u32, line_index: usize, byte_index: usize) -> Result<usize, FilesError> {
        let f = self.file(id)?;
        let Some(l) = f.lines.get(line_index) else { return Ok(1) };
        let real = match l.map.binary_search_by_key(&byte_index, |&(v, _)| v) {
            Ok(i) => l.map[i].1,
            Err(0) => l.map[0].1,
            Err(i) => l.map[i - 1].1,
        };
        Ok(self.sources.files().get(id as usize).map_or(1, |src| src.line_col(real as u32).1 as usize))
    }
}

impl View<'_> {
    fn file(&self, id: u32) -> Result<&ViewFile, FilesError> {
        self.files.get(&id).ok_or(FilesError::FileMissing)
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

fn to_codespan(view: &View, d: &Diagnostic) -> cs::Diagnostic<u32> {
    let severity = match d.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
        Severity::Note => cs::Severity::Note,
    };
    let p = |s: &str| crate::text::printable(s).into_owned();
    let mut labels = vec![cs::Label::primary(d.span.file.0, view.range(d.span)).with_message(p(&d.label))];
    for l in &d.secondary {
        labels.push(cs::Label::secondary(l.span.file.0, view.range(l.span)).with_message(p(&l.message)));
    }
    let mut notes: Vec<String> = included_from(view.sources, d.span).into_iter().map(|n| format!("note: {}", p(&n))).collect();
    notes.extend(d.notes.iter().map(|n| format!("note: {}", p(n))));
    notes.extend(d.help.iter().map(|h| format!("help: {}", p(h))));
    let mut out = cs::Diagnostic::new(severity).with_message(p(&d.message)).with_labels(labels).with_notes(notes);
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
    let config = term::Config::default();
    let mut buf = Vec::new();
    for d in diags {
        let spans: Vec<Span> = std::iter::once(d.span).chain(d.secondary.iter().map(|l| l.span)).collect();
        let view = View::new(sources, &spans);
        let cd = to_codespan(&view, d);
        let res = if color {
            term::emit(&mut Ansi::new(&mut buf), &config, &view, &cd)
        } else {
            term::emit(&mut NoColor::new(&mut buf), &config, &view, &cd)
        };
        if res.is_err() {
            // Fall back to a plain one-line form rather than losing the message.
            let (line, col) = sources.line_col(d.span);
            let name = crate::text::printable_line(&sources.file(d.span.file).name);
            let msg = crate::text::printable(&d.message);
            buf.extend_from_slice(format!("{:?}: {msg}\n --> {name}:{line}:{col}\n", d.severity).as_bytes());
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

    #[test]
    fn long_lines_are_clipped_around_the_column_and_controls_escaped() {
        let mut sources = SourceMap::new();
        let line = format!("{}\x1b]0;t\x07{}", "a + ".repeat(20_000), " + b".repeat(20_000));
        let f = sources.add("long.metal", format!("first\n{line}\nlast\n"));
        let at = 6 + 80_000;
        let d = Diagnostic::error(Span::new(f, at as u32, at as u32 + 1), "bad \x1b[2J");
        let text = render(&sources, &[d], false);
        assert!(text.lines().all(|l| l.chars().count() < 200), "{text}");
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text}");
        assert!(text.contains("long.metal:2:80001"), "{text}");
        assert!(text.contains("bad \\x1b[2J") && text.contains("\\x1b]0;t\\x07"), "{text}");
        // The caret sits under the escaped character.
        let lines: Vec<&str> = text.lines().collect();
        let src = lines.iter().position(|l| l.contains("]0;t")).unwrap();
        let chars_before = |l: &str, i: usize| l[..i].chars().count();
        let col = chars_before(lines[src], lines[src].find("\\x1b").unwrap());
        let caret = chars_before(lines[src + 1], lines[src + 1].find('^').unwrap());
        assert_eq!(caret, col, "{text}");
    }
}
