//! `--check nan`: where each NaN or infinity in the outputs was born, as
//! text and as JSON (`gpu::nan` traces it).

use gpu::nan::{NanOutput, NanReport, Step};
use msl::source::{SourceMap, Span};

fn place(sources: &SourceMap, span: Span) -> (String, u32) {
    (sources.file(span.file).name.clone(), sources.line_col(span).0)
}

fn xyz(t: [u32; 3]) -> String {
    format!("({}, {}, {})", t[0], t[1], t[2])
}

fn cells(o: &NanOutput) -> String {
    match o.count {
        1 => String::new(),
        n => format!(" (and {} more from this store)", n - 1),
    }
}

/// The report for people.
pub fn text(r: &NanReport, sources: &SourceMap) -> String {
    if r.outputs.is_empty() {
        return "--check nan: no NaN or infinity reached an output\n".into();
    }
    let mut out = String::from("NaN and infinity in the outputs (--check nan), with where each was born:\n");
    for o in &r.outputs {
        let (file, line) = place(sources, o.span);
        out.push_str(&format!(
            "  {}[{}] = {}{}: stored at {file}:{line} by thread {}\n",
            o.buffer,
            o.index,
            o.value,
            cells(o),
            xyz(o.thread)
        ));
        let chain = o.chain.map(|c| r.chain(c)).unwrap_or_default();
        if chain.is_empty() {
            out.push_str("    no operation of the kernel made it: it came in with an input (or from memory the kernel never wrote)\n");
        }
        for (i, s) in chain.iter().enumerate() {
            let (file, line) = place(sources, s.span);
            let how = if i == 0 { "born at" } else { "then" };
            let what = if i == 0 { s.what.clone() } else { format!("{} at", s.what) };
            if i == 0 {
                out.push_str(&format!("    {how} {file}:{line} in thread {}: {what}\n", xyz(s.thread)));
            } else {
                out.push_str(&format!("    {how} {what} {file}:{line} by thread {}\n", xyz(s.thread)));
            }
        }
    }
    if r.more_outputs > 0 {
        out.push_str(&format!("  … and {} more groups of cells\n", r.more_outputs));
    }
    out
}

fn step_json(sources: &SourceMap, s: &Step) -> serde_json::Value {
    let (file, line) = place(sources, s.span);
    serde_json::json!({"file": file, "line": line, "thread": s.thread, "what": s.what})
}

/// The report as the `"nan"` array of `--json`.
pub fn json(r: &NanReport, sources: &SourceMap) -> serde_json::Value {
    let list: Vec<serde_json::Value> = r
        .outputs
        .iter()
        .map(|o| {
            let (file, line) = place(sources, o.span);
            let chain: Vec<serde_json::Value> =
                o.chain.map(|c| r.chain(c)).unwrap_or_default().into_iter().map(|s| step_json(sources, s)).collect();
            serde_json::json!({
                "buffer": o.buffer, "index": o.index, "value": o.value, "count": o.count,
                "file": file, "line": line, "thread": o.thread,
                "born": chain.first().cloned(),
                "chain": chain,
            })
        })
        .collect();
    serde_json::Value::Array(list)
}
