//! The text `metal-puzzles replay` prints: what the capture holds and
//! whether the replay reproduces it.

use crate::{ArrayRecord, Capture, Comparison, FindingRecord, OutputCheck, Program, Replayed};
use std::fmt::Write;

fn dims(d: [u32; 3]) -> String {
    format!("{},{},{}", d[0], d[1], d[2])
}

fn array_line(a: &ArrayRecord, width: usize) -> String {
    let stored = if a.data.is_some() { "" } else { "  (checksum only: over the capture limit)" };
    let written = if a.output { "  (the kernel may write it)" } else { "" };
    format!("    {:width$}  {} {:?}{written}{stored}", a.name, a.dtype, a.shape)
}

fn finding_line(f: &FindingRecord) -> String {
    let place = if f.line == 0 { String::new() } else { format!(" at {}:{}:{}", f.file, f.line, f.column) };
    let times = if f.count == 1 { String::new() } else { format!(", {} times", f.count) };
    format!("{} {}{place}, {}{times}: {}", f.severity, f.kind, gpu::findings::thread_name(f.thread, f.local, f.threadgroup), f.message)
}

/// What the capture at `shown` holds and how its replay compares.
pub fn summary(shown: &str, c: &Capture, r: &Replayed, cmp: &Comparison) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "capture {shown}: {} (from {}, written by {})", c.title, c.origin, c.made_by);
    let (files, grid, tg, mode, args) = match &c.program {
        Program::Source { main, grid, threadgroup, dispatch, arguments, .. } => {
            (main.name.clone(), *grid, *threadgroup, dispatch.as_str(), arguments)
        }
        Program::Mlx { source_file, header_file, grid, threadgroup, inputs, .. } => {
            let mut f = source_file.name.clone();
            if let Some(h) = header_file.as_ref().filter(|h| h.name != source_file.name) {
                f.push_str(&format!(" (MLX header {})", h.name));
            }
            (format!("{f}, an MLX body"), *grid, *threadgroup, "threads", inputs)
        }
    };
    let headers: Vec<&str> = {
        let mut h: Vec<&str> = c.compile.headers.iter().map(|h| h.name.as_str()).collect();
        h.dedup();
        h
    };
    let included = if headers.is_empty() { String::new() } else { format!(", including {}", headers.join(", ")) };
    let _ = writeln!(s, "  source: {files}{included}");
    let _ = writeln!(
        s,
        "  dispatch: grid {} ({mode}), threadgroup {}; checks {}, budget {} instructions per threadgroup, worker threads {}",
        dims(grid),
        dims(tg),
        c.options.check,
        c.options.budget,
        if c.options.threads == 0 { "auto".to_string() } else { c.options.threads.to_string() }
    );
    let width = args.iter().chain(&c.outputs).map(|a| a.name.chars().count()).max().unwrap_or(0);
    let _ = writeln!(s, "  arguments before the run:");
    for a in args {
        let _ = writeln!(s, "{}", array_line(a, width));
    }
    for note in &c.left_out {
        let _ = writeln!(s, "  left out: {note}");
    }
    let _ = writeln!(s, "\nreplayed:");
    for (name, check) in &cmp.outputs {
        let verdict = match check {
            OutputCheck::Same => "same as recorded".to_string(),
            OutputCheck::Differs(d) => format!("DIFFERS from the recording: {d}"),
            OutputCheck::Missing => "missing: the replay has no such output".to_string(),
        };
        let _ = writeln!(s, "  output {name}: {verdict}");
        if let Some((_, a)) = r.outputs.iter().find(|(n, _)| n == name) {
            let _ = writeln!(s, "    {name} = {}", a.repr_numpy().replace('\n', "\n    "));
        }
    }
    if cmp.findings.is_empty() && cmp.new_findings.is_empty() {
        let _ = writeln!(s, "  findings: none, as recorded");
    }
    for (f, again) in &cmp.findings {
        let _ = writeln!(s, "  {}: {}", if *again { "reproduced" } else { "NOT reproduced" }, finding_line(f));
    }
    for f in &cmp.new_findings {
        let _ = writeln!(s, "  NEW (not in the recording): {}", finding_line(f));
    }
    let _ = writeln!(s);
    if cmp.reproduces() {
        let _ = writeln!(s, "Reproduced: the replay gives the recorded outputs and findings.");
    } else {
        let _ = writeln!(s, "Not reproduced: the replay differs from the recording (a different simulator version, or an edited capture).");
    }
    s
}
