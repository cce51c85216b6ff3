//! The command-line contract's JSON (`docs/cli-contract.md` of the design):
//! the one implementation of the run document, its diagnostics and its
//! findings, used by `run --json`, `mlx --json`, `test --json` and the
//! Python package.

use gpu::{Finding, FindingKind};
use msl::diag::Diagnostic;
use msl::source::{SourceMap, Span};
use serde_json::{json, Map, Value};

/// A compile diagnostic: the contract's `severity`, `message`, `line`,
/// `column`, plus `file`, `code`, `notes`, `help` and the text of the line.
pub fn diagnostic(sources: &SourceMap, d: &Diagnostic) -> Value {
    let mut v = msl::diag::to_json(sources, d);
    v["source_line"] = Value::String(source_line(sources, d.span).unwrap_or_default());
    v
}

/// A finding: the contract's `kind`, `severity`, `message`, `line`,
/// `thread`, `threadgroup`, plus `count`, `secondary_line`, `file`,
/// `column`, `notes` and the text of the line (null where the finding has
/// no place in the source, as an invalid dispatch).
pub fn finding(sources: &SourceMap, f: &Finding) -> Value {
    let mut v = f.to_json(sources);
    let placed = f.kind != FindingKind::InvalidDispatch && !sources.files().is_empty();
    if placed {
        let (_, col) = sources.line_col(f.span);
        v["file"] = Value::String(sources.file(f.span.file).name.clone());
        v["column"] = json!(col);
        v["source_line"] = source_line(sources, f.span).map(Value::String).unwrap_or(Value::Null);
    } else {
        v["file"] = Value::Null;
        v["column"] = Value::Null;
        v["source_line"] = Value::Null;
    }
    v["local"] = json!(f.local);
    v["notes"] = json!(f.notes);
    v
}

/// The text of the line a span starts on.
pub fn source_line(sources: &SourceMap, span: Span) -> Option<String> {
    if sources.files().len() <= span.file.0 as usize {
        return None;
    }
    let (line, _) = sources.line_col(span);
    let text = &sources.file(span.file).text;
    Some(text.lines().nth(line.saturating_sub(1) as usize).unwrap_or("").to_string())
}

/// `{"diagnostics": [...], "findings": [...], "outputs": {...}}`.
pub fn run_document(sources: &SourceMap, diagnostics: &[Diagnostic], findings: &[Finding], outputs: Map<String, Value>) -> Value {
    json!({
        "diagnostics": diagnostics.iter().map(|d| diagnostic(sources, d)).collect::<Vec<_>>(),
        "findings": findings.iter().map(|f| finding(sources, f)).collect::<Vec<_>>(),
        "outputs": outputs,
    })
}

/// The document of a run that could not start: empty lists and the `error`.
pub fn error_document(message: &str) -> Value {
    json!({"diagnostics": [], "findings": [], "outputs": {}, "error": message})
}
