//! Output formats CI systems read: GitHub Actions workflow annotations,
//! SARIF 2.1.0 (code scanning) and JUnit XML (test reports).

use gpu::{Finding, FindingKind};
use msl::diag::{Diagnostic, Severity};
use msl::source::SourceMap;
use serde_json::{json, Value};

/// One problem at a place in a file: a compile diagnostic or a finding.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// The file as the user named it (empty when the problem has no place).
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub severity: Severity,
    /// A stable rule id: the finding kind (`out-of-bounds`…), the
    /// diagnostic's code, or `compile-error`/`compile-warning`.
    pub rule: String,
    /// One line saying what is wrong (notes and help appended).
    pub message: String,
}

impl Problem {
    pub fn from_diagnostic(sources: &SourceMap, d: &Diagnostic) -> Problem {
        let (file, line, column) = place(sources, d.span);
        let rule = d.code.map(str::to_string).unwrap_or_else(|| {
            match d.severity {
                Severity::Error => "compile-error",
                Severity::Warning => "compile-warning",
                Severity::Note => "compile-note",
            }
            .to_string()
        });
        let mut message = d.message.clone();
        for n in d.notes.iter().map(|n| format!("note: {n}")).chain(d.help.iter().map(|h| format!("help: {h}"))) {
            message.push('\n');
            message.push_str(&n);
        }
        Problem { file, line, column, severity: d.severity, rule, message }
    }

    pub fn from_finding(sources: &SourceMap, f: &Finding) -> Problem {
        let d = f.to_diagnostic();
        let mut p = Problem::from_diagnostic(sources, &d);
        if f.kind == FindingKind::InvalidDispatch {
            (p.file, p.line, p.column) = (String::new(), 0, 0);
        }
        let thread = gpu::findings::thread_name(f.thread, f.local, f.threadgroup);
        p.message = format!("{} ({thread})", d.message);
        for n in d.notes.iter().map(|n| format!("note: {n}")).chain(d.help.iter().map(|h| format!("help: {h}"))) {
            p.message.push('\n');
            p.message.push_str(&n);
        }
        p
    }
}

fn place(sources: &SourceMap, span: msl::source::Span) -> (String, u32, u32) {
    if sources.files().len() <= span.file.0 as usize {
        return (String::new(), 0, 0);
    }
    let (line, column) = sources.line_col(span);
    (sources.file(span.file).name.clone(), line, column)
}

/// Every compile diagnostic and finding as problems.
pub fn problems(sources: &SourceMap, diagnostics: &[Diagnostic], findings: &[Finding]) -> Vec<Problem> {
    let mut out: Vec<Problem> = diagnostics.iter().map(|d| Problem::from_diagnostic(sources, d)).collect();
    out.extend(findings.iter().map(|f| Problem::from_finding(sources, f)));
    out
}

/// GitHub Actions workflow commands (`::error file=…,line=…,col=…,title=…::message`),
/// one per line: the runner shows each on the offending line of the diff.
pub fn github(problems: &[Problem]) -> String {
    let mut out = String::new();
    for p in problems {
        let level = match p.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "notice",
        };
        let mut props = Vec::new();
        if !p.file.is_empty() {
            props.push(format!("file={}", escape_property(&p.file)));
            props.push(format!("line={}", p.line));
            props.push(format!("col={}", p.column));
        }
        props.push(format!("title={}", escape_property(&format!("metal-puzzles: {}", p.rule))));
        out.push_str(&format!("::{level} {}::{}\n", props.join(","), escape_data(&p.message)));
    }
    out
}

/// A workflow command's message: `%`, CR and LF are escaped.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A workflow command's property value: also `:` and `,`.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// A SARIF 2.1.0 log with one run: a rule per kind of problem seen, a
/// result per problem with its physical location.
pub fn sarif(problems: &[Problem], tool_version: &str) -> Value {
    let mut rules: Vec<&str> = problems.iter().map(|p| p.rule.as_str()).collect();
    rules.sort_unstable();
    rules.dedup();
    let rule_json: Vec<Value> = rules
        .iter()
        .map(|r| {
            json!({
                "id": r,
                "name": rule_name(r),
                "shortDescription": {"text": rule_description(r)},
                "helpUri": "https://developer.apple.com/metal/Metal-Shading-Language-Specification.pdf",
            })
        })
        .collect();
    let results: Vec<Value> = problems
        .iter()
        .map(|p| {
            let level = match p.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Note => "note",
            };
            let mut r = json!({
                "ruleId": p.rule,
                "ruleIndex": rules.iter().position(|r| *r == p.rule).unwrap_or(0),
                "level": level,
                "message": {"text": p.message},
            });
            if !p.file.is_empty() {
                r["locations"] = json!([{
                    "physicalLocation": {
                        "artifactLocation": {"uri": file_uri(&p.file)},
                        "region": {"startLine": p.line.max(1), "startColumn": p.column.max(1)},
                    }
                }]);
            }
            r
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "metal-puzzles",
                "version": tool_version,
                "informationUri": "https://github.com/",
                "rules": rule_json,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

/// A relative path as a URI reference (forward slashes, spaces and `%` escaped).
fn file_uri(path: &str) -> String {
    let p = path.replace('\\', "/");
    let p = p.strip_prefix("./").unwrap_or(&p);
    p.replace('%', "%25").replace(' ', "%20")
}

fn rule_name(rule: &str) -> String {
    rule.split(['-', '_'])
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
        })
        .collect()
}

fn rule_description(rule: &str) -> &'static str {
    match rule {
        "out-of-bounds" => "A memory access outside its buffer or array.",
        "data-race" => "Two threads access the same memory without ordering, at least one of them writing.",
        "barrier-divergence" => "Not every thread of a threadgroup reaches the same barrier.",
        "uninitialized-read" => "A read of memory no thread has written.",
        "runaway-kernel" => "A threadgroup ran past the instruction budget (a loop that does not end).",
        "division-by-zero" => "An integer division or remainder by zero.",
        "misaligned-access" => "A memory access at an address not aligned for its type.",
        "invalid-dispatch" => "A dispatch Metal would refuse.",
        "compile-warning" => "A compile warning.",
        "compile-note" => "A compile note.",
        _ => "A Metal compile error.",
    }
}

/// One JUnit test case.
#[derive(Clone, Debug, Default)]
pub struct TestCase {
    pub name: String,
    /// The group it belongs to (a file, a spec).
    pub classname: String,
    pub seconds: f64,
    /// `(message, details)` when it failed.
    pub failure: Option<(String, String)>,
    /// Why it was skipped.
    pub skipped: Option<String>,
    /// What it printed (warnings...).
    pub output: String,
}

/// A JUnit XML report: one `<testsuite>` named `suite` holding `cases`.
pub fn junit(suite: &str, cases: &[TestCase]) -> String {
    let failures = cases.iter().filter(|c| c.failure.is_some()).count();
    let skipped = cases.iter().filter(|c| c.skipped.is_some()).count();
    let time: f64 = cases.iter().map(|c| c.seconds).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{time:.3}\">\n",
        xml(suite),
        cases.len()
    ));
    out.push_str(&format!(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{time:.3}\">\n",
        xml(suite),
        cases.len()
    ));
    for c in cases {
        out.push_str(&format!("    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\"", xml(&c.name), xml(&c.classname), c.seconds));
        if c.failure.is_none() && c.skipped.is_none() && c.output.is_empty() {
            out.push_str("/>\n");
            continue;
        }
        out.push_str(">\n");
        if let Some((message, details)) = &c.failure {
            out.push_str(&format!("      <failure message=\"{}\">{}</failure>\n", xml(message), xml(details)));
        }
        if let Some(why) = &c.skipped {
            out.push_str(&format!("      <skipped message=\"{}\"/>\n", xml(why)));
        }
        if !c.output.is_empty() {
            out.push_str(&format!("      <system-out>{}</system-out>\n", xml(&c.output)));
        }
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// Text for XML attributes and elements; characters XML 1.0 cannot hold
/// (control characters other than tab and newlines) become `?`.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// Write `text` to `path` atomically (a temporary file beside it, then a
/// rename), so a reader never sees half a report.
pub fn write_atomically(path: &std::path::Path, text: &str) -> Result<(), String> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    files::write_atomic(path, text.as_bytes()).map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> Problem {
        Problem {
            file: "k,1.metal".into(),
            line: 3,
            column: 7,
            severity: Severity::Error,
            rule: "out-of-bounds".into(),
            message: "100% wrong\nnote: x".into(),
        }
    }

    #[test]
    fn github_escapes_messages_and_properties() {
        assert_eq!(github(&[p()]), "::error file=k%2C1.metal,line=3,col=7,title=metal-puzzles%3A out-of-bounds::100%25 wrong%0Anote: x\n");
    }

    #[test]
    fn sarif_has_rules_and_locations() {
        let s = sarif(&[p()], "0.1.0");
        assert_eq!(s["version"], "2.1.0");
        let r = &s["runs"][0]["results"][0];
        assert_eq!(r["ruleId"], "out-of-bounds");
        assert_eq!(r["locations"][0]["physicalLocation"]["region"]["startLine"], 3);
        assert_eq!(s["runs"][0]["tool"]["driver"]["rules"][0]["id"], "out-of-bounds");
    }

    #[test]
    fn junit_escapes_and_counts() {
        let cases = vec![
            TestCase { name: "a<b".into(), classname: "k".into(), ..Default::default() },
            TestCase { name: "c".into(), classname: "k".into(), failure: Some(("bad \"x\"".into(), "\u{1}".into())), ..Default::default() },
        ];
        let x = junit("s", &cases);
        assert!(x.contains("tests=\"2\" failures=\"1\""));
        assert!(x.contains("name=\"a&lt;b\""));
        assert!(x.contains("message=\"bad &quot;x&quot;\">?</failure>"));
    }
}
