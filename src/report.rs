//! Turning run-time findings into diagnostics (rustc-style text and JSON).

use gpu::Finding;
use msl::diag::{Diagnostic, Severity};
use msl::source::SourceMap;

/// A finding as a diagnostic pointing at the access in the user's source.
pub fn finding_diagnostic(f: &Finding) -> Diagnostic {
    let mut d = Diagnostic::new(if f.is_error { Severity::Error } else { Severity::Warning }, f.span, f.message.clone());
    d.code = Some(f.kind.name());
    d.label = format!("thread {} of threadgroup {}", xyz(f.thread), xyz(f.threadgroup));
    if let Some((span, msg)) = &f.secondary {
        d.secondary.push(msl::diag::Label { span: *span, message: msg.clone() });
    }
    if f.count > 1 {
        let more: Vec<String> = f.examples.iter().map(|t| xyz(*t)).collect();
        let also = if more.is_empty() { String::new() } else { format!("; other threads: {}", more.join(", ")) };
        d.notes.push(format!("this happened {} times{also}", f.count));
    }
    for n in &f.notes {
        d.help.push(n.clone());
    }
    d
}

fn xyz(t: [u32; 3]) -> String {
    format!("({}, {}, {})", t[0], t[1], t[2])
}

/// The contract's JSON form of a finding.
pub fn finding_json(sources: &SourceMap, f: &Finding) -> serde_json::Value {
    let line = if f.span == Default::default() && sources.files().is_empty() { 0 } else { sources.line_col(f.span).0 };
    serde_json::json!({
        "kind": f.kind.name(),
        "severity": if f.is_error { "error" } else { "warning" },
        "message": f.message,
        "line": line,
        "thread": f.thread,
        "threadgroup": f.threadgroup,
        "count": f.count,
        "secondary_line": f.secondary.as_ref().map(|(s, _)| sources.line_col(*s).0),
    })
}
