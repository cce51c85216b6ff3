//! Turning run-time findings into diagnostics (rustc-style text and JSON):
//! the conversions live with the findings (`gpu::Finding`).

use gpu::Finding;
use msl::diag::Diagnostic;
use msl::source::SourceMap;

/// A finding as a diagnostic pointing at the access in the user's source.
pub fn finding_diagnostic(f: &Finding) -> Diagnostic {
    f.to_diagnostic()
}

/// The contract's JSON form of a finding.
pub fn finding_json(sources: &SourceMap, f: &Finding) -> serde_json::Value {
    f.to_json(sources)
}
