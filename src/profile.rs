//! `--profile`: the simulator's per-site statistics gathered per line of
//! the user's files, shown as the hottest lines and an annotated listing,
//! or as JSON.

use gpu::profile::{Profile, SiteStats};
use msl::source::{FileId, SourceMap};
use std::collections::BTreeMap;

/// Lines shown in the "hottest lines" ranking.
const HOTTEST: usize = 5;

/// Statistics of one line.
pub struct LineStats {
    pub file: FileId,
    pub line: u32,
    pub stats: SiteStats,
}

/// Per-line statistics (source order) and the kernel's totals.
pub struct Lines {
    pub lines: Vec<LineStats>,
    pub totals: SiteStats,
}

pub fn by_line(p: &Profile, sources: &SourceMap) -> Lines {
    let mut map: BTreeMap<(u32, u32), SiteStats> = BTreeMap::new();
    let mut totals = SiteStats::default();
    for (span, s) in &p.sites {
        if *s == SiteStats::default() {
            continue;
        }
        totals.add(s);
        let line = sources.line_col(*span).0;
        map.entry((span.file.0, line)).or_default().add(s);
    }
    Lines { lines: map.into_iter().map(|((f, line), stats)| LineStats { file: FileId(f), line, stats }).collect(), totals }
}

/// Hottest first: the cost model's estimate (`SiteStats::cost`), then
/// memory operations, then executions.
fn hottest(lines: &Lines) -> Vec<&LineStats> {
    let mut v: Vec<&LineStats> = lines.lines.iter().collect();
    v.sort_by_key(|l| {
        let s = &l.stats;
        (std::cmp::Reverse((s.cost(), s.memory_ops() + s.barrier_waits, s.executions)), l.file.0, l.line)
    });
    v
}

fn utilisation(s: &SiteStats) -> Option<f64> {
    (s.simd_lanes > 0).then(|| s.executions as f64 * 100.0 / s.simd_lanes as f64)
}

fn source_line(sources: &SourceMap, file: FileId, line: u32) -> &str {
    let f = sources.file(file);
    let start = f.line_start(line) as usize;
    let rest = f.text.get(start..).unwrap_or("");
    rest.split('\n').next().unwrap_or("").trim_end_matches('\r')
}

fn is_user_file(sources: &SourceMap, file: FileId) -> bool {
    !sources.file(file).name.starts_with('<')
}

/// `12,345` style counts (blank for zero, to keep the listing readable).
fn count(n: u64) -> String {
    if n == 0 {
        return String::new();
    }
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

const HEADER: &str =
    "     execs   util   dev rd   dev wr   dev tx    tg rd    tg wr  bank cf  const rd      bytes  atomic  barrier       cost";

fn columns(s: &SiteStats) -> String {
    let util = utilisation(s).map(|u| format!("{u:.0}%")).unwrap_or_default();
    format!(
        "{:>10} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>10} {:>7} {:>8} {:>10}",
        count(s.executions),
        util,
        count(s.device_reads),
        count(s.device_writes),
        count(s.device_transactions),
        count(s.threadgroup_reads),
        count(s.threadgroup_writes),
        count(s.bank_conflicts),
        count(s.constant_reads),
        count(s.device_bytes + s.threadgroup_bytes),
        count(s.atomics),
        count(s.barrier_waits),
        count(s.cost())
    )
}

/// The terminal rendering: totals, the hottest lines, then each user
/// file's lines from the first to the last one with statistics.
pub fn text(kernel: &str, p: &Profile, sources: &SourceMap, threads: u64, threadgroups: u64) -> String {
    let lines = by_line(p, sources);
    let t = &lines.totals;
    let mut out = format!("profile of kernel `{kernel}`: {threads} threads in {threadgroups} threadgroups\n");
    out.push_str(&format!(
        "totals: {} statement executions ({} SIMD-group lanes active), device {} reads / {} writes, threadgroup {} reads / {} writes, {} bytes, {} atomics, {} barrier waits\n",
        t.executions,
        utilisation(t).map(|u| format!("{u:.0}%")).unwrap_or_else(|| "-".into()),
        t.device_reads,
        t.device_writes,
        t.threadgroup_reads,
        t.threadgroup_writes,
        t.device_bytes + t.threadgroup_bytes,
        t.atomics,
        t.barrier_waits
    ));
    out.push_str(&format!(
        "memory transactions: {} device (32-byte segments per SIMD-group access), {} threadgroup passes ({} from bank conflicts), {} constant reads ({} distinct per SIMD-group, {} bytes, not device traffic)\n",
        t.device_transactions, t.threadgroup_wavefronts, t.bank_conflicts, t.constant_reads, t.constant_transactions, t.constant_bytes
    ));
    let (resident, limit) = p.occupancy();
    out.push_str(&format!(
        "occupancy: {resident} threadgroups of {} threads per GPU core, limited by {limit} ({} bytes of threadgroup memory each); estimated cost {}\n",
        p.threads_per_threadgroup,
        p.threadgroup_memory,
        t.cost()
    ));
    out.push_str("\nhottest lines (by the cost model, see the README's \"Profile\" section):\n");
    out.push_str(&format!("  {:<24}{HEADER}\n", "where"));
    for l in hottest(&lines).into_iter().take(HOTTEST) {
        let name = sources.file(l.file).name.rsplit('/').next().unwrap_or("").to_string();
        let row = format!("  {:<24}{}", format!("{name}:{}", l.line), columns(&l.stats));
        out.push_str(row.trim_end());
        out.push('\n');
    }
    let mut files: Vec<FileId> = lines.lines.iter().map(|l| l.file).filter(|&f| is_user_file(sources, f)).collect();
    files.dedup();
    for f in files {
        let of_file: Vec<&LineStats> = lines.lines.iter().filter(|l| l.file == f).collect();
        let (Some(first), Some(last)) = (of_file.first(), of_file.last()) else { continue };
        out.push_str(&format!("\n{}:\n  line{HEADER}  | source\n", sources.file(f).name));
        for line in first.line..=last.line {
            let cols = match of_file.iter().find(|l| l.line == line) {
                Some(l) => columns(&l.stats),
                None => " ".repeat(columns(&SiteStats::default()).len()),
            };
            out.push_str(&format!("  {line:>4}{cols}  | {}\n", source_line(sources, f, line)));
        }
    }
    out.push_str("\n(execs: statement executions by threads; util: active lanes of the SIMD-groups that ran the line; dev tx: device memory transactions (32-byte segments per SIMD-group access); bank cf: extra threadgroup passes from bank conflicts; const rd: reads of constant memory, not counted as device traffic; bytes: device and threadgroup bytes moved; barrier: threads that waited at a threadgroup barrier; cost: the cost model's estimate)\n");
    out
}

/// The JSON rendering: totals and every line, hottest first.
pub fn json(kernel: &str, p: &Profile, sources: &SourceMap, threads: u64, threadgroups: u64) -> serde_json::Value {
    let lines = by_line(p, sources);
    let stats = |s: &SiteStats| {
        serde_json::json!({
            "executions": s.executions,
            "simd_executions": s.simd_executions,
            "utilization": utilisation(s).map(|u| (u * 10.0).round() / 1000.0),
            "device_reads": s.device_reads,
            "device_writes": s.device_writes,
            "threadgroup_reads": s.threadgroup_reads,
            "threadgroup_writes": s.threadgroup_writes,
            "device_bytes": s.device_bytes,
            "threadgroup_bytes": s.threadgroup_bytes,
            "atomics": s.atomics,
            "barrier_waits": s.barrier_waits,
            "device_transactions": s.device_transactions,
            "threadgroup_wavefronts": s.threadgroup_wavefronts,
            "bank_conflicts": s.bank_conflicts,
            "constant_reads": s.constant_reads,
            "constant_bytes": s.constant_bytes,
            "cost": s.cost(),
        })
    };
    let (resident, limit) = p.occupancy();
    let list: Vec<serde_json::Value> = hottest(&lines)
        .into_iter()
        .map(|l| {
            let mut v = stats(&l.stats);
            v["file"] = sources.file(l.file).name.clone().into();
            v["line"] = l.line.into();
            v["source"] = source_line(sources, l.file, l.line).trim().into();
            v
        })
        .collect();
    serde_json::json!({
        "kernel": kernel,
        "threads": threads,
        "threadgroups": threadgroups,
        "totals": stats(&lines.totals),
        "occupancy": {"threadgroups_per_core": resident, "limited_by": limit, "threadgroup_memory": p.threadgroup_memory, "threads_per_threadgroup": p.threads_per_threadgroup},
        "lines": list,
    })
}
