//! "Why is this cell wrong?": for the first wrong output cells of a failing
//! test, the story the access trace tells — no thread wrote the cell, or
//! which thread wrote it, at which line, from which cells (following one
//! step back through threadgroup memory), and whether several threads did.

use gpu::trace::{CellAlloc, CellInfo, Trace, TraceEvent};
use msl::source::SourceMap;

/// What a trace cell is called in messages: a named table with a shape.
#[derive(Clone, Debug)]
pub struct Table {
    pub alloc: CellAlloc,
    pub name: String,
    /// Row-major shape (empty or 1-D: one index).
    pub shape: Vec<usize>,
    pub elem_size: u32,
}

/// Names trace cells (`a[3]`, `a_shared[1][2]`).
pub struct Namer {
    pub tables: Vec<Table>,
    /// Threads of a full threadgroup of the traced run (to name a thread's
    /// position within its threadgroup).
    pub threads_per_threadgroup: [u32; 3],
}

impl Table {
    /// The name of element `e` (flat, row-major): `a[3]`, `b[1][2]`.
    pub fn name_of(&self, e: usize) -> String {
        format!("{}{}", self.name, index_text(e, &self.shape))
    }
}

impl Namer {
    fn table(&self, alloc: CellAlloc) -> Option<&Table> {
        self.tables.iter().find(|t| t.alloc == alloc)
    }

    pub fn name(&self, c: &CellInfo) -> String {
        let Some(t) = self.table(c.alloc) else { return "memory".into() };
        let e = (c.offset.max(0) as u64 / t.elem_size.max(1) as u64) as usize;
        format!("{}{}", t.name, index_text(e, &t.shape))
    }
}

/// `[e]` for 1-D shapes, `[r][c]` (and so on) for more dimensions.
fn index_text(mut e: usize, shape: &[usize]) -> String {
    if shape.len() <= 1 {
        return format!("[{e}]");
    }
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        let n = shape[d].max(1);
        idx[d] = e % n;
        e /= n;
    }
    idx.iter().map(|i| format!("[{i}]")).collect()
}

impl Namer {
    /// The thread of an event, named as every message names threads.
    fn thread(&self, e: &TraceEvent) -> String {
        let local = gpu::findings::local_of(e.thread, e.threadgroup, self.threads_per_threadgroup);
        gpu::findings::thread_name(e.thread, local, e.threadgroup)
    }
}

fn value_text(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        // Six significant digits, as the arrays print.
        arrays::format_g6(v)
    }
}

/// Input cells tried at most when finding what the spec reads (each costs one
/// evaluation of the spec).
const MAX_PROBED_INPUT_CELLS: usize = 4096;

/// For each output cell in `cells`, the input cells (input, flat index) the
/// spec's value depends on: those whose change changes it. `None` when the
/// inputs are too large to probe.
pub fn spec_dependencies(
    spec: crate::SpecFn,
    inputs: &[arrays::Array],
    cells: &[usize],
    tol: crate::Tolerance,
) -> Option<Vec<Vec<(usize, usize)>>> {
    if inputs.iter().map(|a| a.len()).sum::<usize>() > MAX_PROBED_INPUT_CELLS {
        return None;
    }
    let base = spec(inputs).to_f64_vec();
    let mut deps = vec![Vec::new(); cells.len()];
    for (k, a) in inputs.iter().enumerate() {
        let values = a.to_f64_vec();
        for e in 0..values.len() {
            let mut changed = values.clone();
            // A large step: a `max` or a comparison notices it too.
            changed[e] += 1000.0;
            let Ok(new_input) = arrays::Array::from_f64(a.dtype, &a.shape, &changed) else { continue };
            let mut probe = inputs.to_vec();
            probe[k] = new_input;
            let out = spec(&probe).to_f64_vec();
            for (d, &i) in deps.iter_mut().zip(cells) {
                if let (Some(&o), Some(&b)) = (out.get(i), base.get(i)) {
                    if !tol.matches(o, b) {
                        d.push((k, e));
                    }
                }
            }
        }
    }
    Some(deps)
}

/// The wrong cells of an output (flat indices, first `max`).
pub fn wrong_cells(yours: &[f64], spec: &[f64], max: usize, tol: crate::Tolerance) -> Vec<usize> {
    yours.iter().zip(spec).enumerate().filter(|(_, (y, s))| !tol.matches(**y, **s)).map(|(i, _)| i).take(max).collect()
}

/// `a[2]`, `a[1], a[2] and 3 more`.
fn cells_text(names: &[String]) -> String {
    let shown = names.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    match names.len() {
        n if n > 3 => format!("{shown} and {} more", n - 3),
        _ => shown,
    }
}

/// Explain up to `max` wrong cells of output `out` (flat, row-major).
/// `expected(i)` names the input cells the spec computes cell `i` from
/// (empty when unknown).
#[allow(clippy::too_many_arguments)]
pub fn explain(
    trace: &Trace,
    sources: &SourceMap,
    namer: &Namer,
    out: CellAlloc,
    yours: &[f64],
    spec: &[f64],
    max: usize,
    tol: crate::Tolerance,
    expected: &dyn Fn(usize) -> Vec<String>,
) -> Vec<String> {
    let Some(out_table) = namer.table(out) else { return Vec::new() };
    let line = |e: &TraceEvent| sources.line_col(e.span).0;
    if !trace.events.iter().any(|e| e.write && trace.cells[e.cell as usize].alloc == out) {
        return vec![format!("no thread wrote any cell of {}: it still holds whatever was there before the kernel ran", out_table.name)];
    }
    let mut lines = Vec::new();
    let wrong = yours.iter().zip(spec).enumerate().filter(|(_, (y, s))| !tol.matches(**y, **s)).map(|(i, _)| i);
    for i in wrong.take(max) {
        let cell_name = format!("{}{}", out_table.name, index_text(i, &out_table.shape));
        let head = format!("{cell_name} = {}, expected {}", value_text(yours[i]), value_text(spec[i]));
        let offset = i as i64 * out_table.elem_size as i64;
        let ids: Vec<u32> = (0..trace.cells.len() as u32)
            .filter(|&c| {
                let ci = &trace.cells[c as usize];
                ci.alloc == out && ci.offset <= offset && offset < ci.offset + ci.size.max(1) as i64
            })
            .collect();
        let writes: Vec<(usize, &TraceEvent)> = trace.events.iter().enumerate().filter(|(_, e)| e.write && ids.contains(&e.cell)).collect();
        let Some(&(at, last)) = writes.last() else {
            // Distinct cells, not writes: one cell written twice is one cell.
            let mut written: Vec<i64> = trace
                .events
                .iter()
                .filter(|e| e.write && trace.cells[e.cell as usize].alloc == out)
                .map(|e| trace.cells[e.cell as usize].offset / out_table.elem_size.max(1) as i64)
                .collect();
            written.sort_unstable();
            written.dedup();
            let others = written.len();
            let cells = if others == 1 { "1 other cell".to_string() } else { format!("{others} other cells") };
            // (Its value is whatever the memory held: not worth printing.)
            let head = format!("{cell_name} = ?, expected {}", value_text(spec[i]));
            lines.push(format!("{head}: no thread wrote it (threads wrote {cells} of {}: check the index and the guard)", out_table.name));
            continue;
        };
        if writes.iter().any(|(_, e)| e.atomic) {
            lines.push(atomic_text(trace, namer, &head, &writes, &line, &expected(i)));
            continue;
        }
        let mut text = format!("{head}: written by {} at line {}", namer.thread(last), line(last));
        text.push_str(&from_text(trace, sources, namer, at, last, true));
        let want = expected(i);
        let mut read: Vec<String> = Vec::new();
        roots(trace, namer, at, last, 0, &mut read);
        let mut want_sorted = want.clone();
        want_sorted.sort();
        read.sort();
        read.dedup();
        // (A value with the most sources the trace keeps may have had more:
        // then nothing is said about what it should have come from.)
        let complete = last.sources.len() < gpu::trace::MAX_SOURCES;
        if complete && !want.is_empty() && want_sorted != read {
            text.push_str(&format!(" — expected from {}", cells_text(&want)));
        }
        let writers: Vec<&TraceEvent> = writes.iter().map(|(_, e)| *e).filter(|e| e.thread != last.thread).collect();
        if let Some(other) = writers.last() {
            if other.threadgroup != last.threadgroup {
                // No barrier orders threads of different threadgroups.
                text.push_str(&format!(
                    "; {} of another threadgroup also wrote it (line {}): threadgroups run in any order, so which write lands is a race no barrier can fix; give each cell one writer, or combine with atomics",
                    namer.thread(other),
                    line(other)
                ));
            } else {
                text.push_str(&format!(
                    "; {} also wrote it (line {}), earlier: the last write decides, a race unless a barrier orders them",
                    namer.thread(other),
                    line(other)
                ));
            }
        }
        lines.push(text);
    }
    lines
}

/// A cell updated by atomic operations: how many updates, by whom, from
/// which cells (followed back as for plain writes), against what the spec
/// computes it from.
fn atomic_text(
    trace: &Trace,
    namer: &Namer,
    head: &str,
    writes: &[(usize, &TraceEvent)],
    line: &dyn Fn(&TraceEvent) -> u32,
    want: &[String],
) -> String {
    let atomics: Vec<&(usize, &TraceEvent)> = writes.iter().filter(|(_, e)| e.atomic).collect();
    let mut threads: Vec<[u32; 3]> = atomics.iter().map(|(_, e)| e.thread).collect();
    threads.sort_unstable();
    threads.dedup();
    let mut lines: Vec<u32> = atomics.iter().map(|(_, e)| line(e)).collect();
    lines.sort_unstable();
    lines.dedup();
    // (In the order first met, for reading; compared as sets.)
    let mut read: Vec<String> = Vec::new();
    for &&(at, e) in &atomics {
        roots(trace, namer, at, e, 0, &mut read);
    }
    let mut seen = std::collections::HashSet::new();
    read.retain(|c| seen.insert(c.clone()));
    let n = atomics.len();
    let by = match atomics.first() {
        Some((_, e)) if threads.len() == 1 => namer.thread(e),
        Some((_, e)) => format!("{} threads, the first {}", threads.len(), namer.thread(e)),
        None => String::new(),
    };
    let lines_text = lines.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(", ");
    let mut text = format!(
        "{head}: {n} atomic update{} by {by} (line{} {lines_text})",
        if n == 1 { "" } else { "s" },
        if lines.len() == 1 { "" } else { "s" },
    );
    if !read.is_empty() {
        text.push_str(&format!(" from {}", cells_text(&read)));
    }
    // Cells the spec computes this one from that no update brought in
    // (unless an update had more sources than the trace keeps).
    let complete = atomics.iter().all(|(_, e)| e.sources.len() < gpu::trace::MAX_SOURCES);
    let missing: Vec<String> = want.iter().filter(|w| !read.contains(w)).cloned().collect();
    if complete && !missing.is_empty() {
        text.push_str(&format!(" — expected from {}; never added: {}", cells_text(want), cells_text(&missing)));
    }
    text
}

/// The input cells a write's value came from, following threadgroup
/// memory back to the stores that filled it (a few steps at most).
fn roots(trace: &Trace, namer: &Namer, at: usize, w: &TraceEvent, depth: u32, out: &mut Vec<String>) {
    for &s in &w.sources {
        let cell = &trace.cells[s as usize];
        // (MLX's shape and stride buffers are not the puzzle's cells.)
        if namer.table(cell.alloc).is_none() {
            continue;
        }
        if !matches!(cell.alloc, CellAlloc::Threadgroup(_) | CellAlloc::ThreadgroupBuffer(_)) {
            out.push(namer.name(cell));
            continue;
        }
        if depth >= 4 || out.len() > 64 {
            continue;
        }
        let read = trace.events[..at].iter().rposition(|e| !e.write && e.cell == s && e.thread == w.thread);
        let stored = read.and_then(|ri| {
            trace.events[..ri].iter().enumerate().rev().find(|(_, e)| e.write && e.cell == s && e.threadgroup == w.threadgroup)
        });
        if let Some((si, st)) = stored {
            roots(trace, namer, si, st, depth + 1, out);
        }
    }
}

/// " from a[3] (read at line 4)", following a threadgroup source one step
/// back to the thread that stored it.
fn from_text(trace: &Trace, sources: &SourceMap, namer: &Namer, at: usize, w: &TraceEvent, follow: bool) -> String {
    if w.sources.is_empty() {
        return " (a value computed without reading memory)".into();
    }
    let line = |e: &TraceEvent| sources.line_col(e.span).0;
    let mut parts = Vec::new();
    let named: Vec<u32> = w.sources.iter().copied().filter(|&s| namer.table(trace.cells[s as usize].alloc).is_some()).collect();
    if named.is_empty() {
        return " (a value computed without reading the puzzle's arrays)".into();
    }
    for &s in named.iter().take(3) {
        let cell = &trace.cells[s as usize];
        let mut part = namer.name(cell);
        // The read of this cell by the writing thread, before the write.
        let read = trace.events[..at].iter().enumerate().rev().find(|(_, e)| !e.write && e.cell == s && e.thread == w.thread);
        if read.is_none() {
            // Read by another thread of the threadgroup: the value came
            // over through a SIMD-group function (a shuffle, a sum, a scan).
            let other = trace.events[..at].iter().rev().find(|e| !e.write && e.cell == s && e.threadgroup == w.threadgroup);
            if let Some(o) = other {
                part.push_str(&format!(" (read by {} at line {}, passed on by a SIMD-group function)", namer.thread(o), line(o)));
            }
        }
        if let Some((ri, r)) = read {
            part.push_str(&format!(" (read at line {})", line(r)));
            if follow && matches!(cell.alloc, CellAlloc::Threadgroup(_) | CellAlloc::ThreadgroupBuffer(_)) {
                let stored =
                    trace.events[..ri].iter().enumerate().rev().find(|(_, e)| e.write && e.cell == s && e.threadgroup == w.threadgroup);
                match stored {
                    Some((si, st)) => {
                        part.push_str(&format!(", which {} stored at line {}", namer.thread(st), line(st)));
                        part.push_str(&from_text(trace, sources, namer, si, st, false));
                    }
                    None => part.push_str(", which no thread of this threadgroup had stored yet"),
                }
            }
        }
        parts.push(part);
    }
    let more = if named.len() > 3 { format!(" and {} more", named.len() - 3) } else { String::new() };
    format!(" from {}{more}", parts.join(", "))
}

/// Why a read target is missed, from the trace of a passing test: the
/// thread that read `device` (else threadgroup) memory most, how often it
/// read each table, and advice for what it did.
pub fn read_advice(trace: &Trace, sources: &SourceMap, namer: &Namer, out: CellAlloc, device: bool, test: &str) -> Vec<String> {
    let counted = |a: CellAlloc| {
        namer.table(a).is_some()
            && match a {
                CellAlloc::Buffer(_) => device,
                CellAlloc::Threadgroup(_) | CellAlloc::ThreadgroupBuffer(_) => !device,
            }
    };
    let reads: Vec<&TraceEvent> =
        trace.events.iter().filter(|e| !e.write && !e.atomic && counted(trace.cells[e.cell as usize].alloc)).collect();
    // The busiest thread (the first of those with the most reads).
    let mut per_thread: std::collections::BTreeMap<([u32; 3], [u32; 3]), usize> = std::collections::BTreeMap::new();
    for e in &reads {
        *per_thread.entry((e.threadgroup, e.thread)).or_default() += 1;
    }
    let Some(most) = per_thread.values().copied().max() else { return Vec::new() };
    let Some((&(tg, thread), _)) = per_thread.iter().find(|(_, &n)| n == most) else { return Vec::new() };
    let mine: Vec<&TraceEvent> = reads.iter().copied().filter(|e| e.thread == thread && e.threadgroup == tg).collect();
    let space = if device { "device memory" } else { "threadgroup memory" };
    let who = namer.thread(mine[0]);
    // Reads per table, in the order first read.
    let mut by_table: Vec<(CellAlloc, usize)> = Vec::new();
    for e in &mine {
        let a = trace.cells[e.cell as usize].alloc;
        match by_table.iter_mut().find(|(t, _)| *t == a) {
            Some((_, n)) => *n += 1,
            None => by_table.push((a, 1)),
        }
    }
    let times = |n: usize| if n == 1 { "once".to_string() } else { format!("{n} times") };
    let tables: Vec<String> =
        by_table.iter().map(|(a, n)| format!("`{}` {}", namer.table(*a).map_or("?", |t| t.name.as_str()), times(*n))).collect();
    let mut out_lines = vec![format!("In test `{test}`, {who} reads {space} {}: {}.", times(mine.len()), tables.join(", "))];
    if device && by_table.iter().any(|(a, _)| *a == out) {
        let name = namer.table(out).map_or("out", |t| t.name.as_str());
        out_lines.push(format!(
            "It reads `{name}`, the output, which the spec never reads (as in `{name}[i] +=`): add up in a local variable and write `{name}` once."
        ));
    }
    // Cells this thread reads more than once.
    let mut cells: Vec<(u32, Vec<u32>)> = Vec::new();
    for e in &mine {
        let line = sources.line_col(e.span).0;
        match cells.iter_mut().find(|(c, _)| *c == e.cell) {
            Some((_, lines)) => lines.push(line),
            None => cells.push((e.cell, vec![line])),
        }
    }
    let again: Vec<String> = cells
        .iter()
        .filter(|(_, l)| l.len() > 1)
        .take(3)
        .map(|(c, l)| {
            let mut lines = l.clone();
            lines.dedup();
            let at = lines.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ");
            format!("{} {} (line{} {at})", namer.name(&trace.cells[*c as usize]), times(l.len()), if lines.len() == 1 { "" } else { "s" })
        })
        .collect();
    if !again.is_empty() {
        out_lines.push(format!(
            "It reads the same cell again: {}. Read it once into a local variable and reuse that: a register costs nothing{}.",
            again.join(", "),
            if device { ", and threadgroup memory would cost shared reads instead" } else { "" }
        ));
    } else if device {
        // Every cell once: the excess is cells other threads read as well.
        let shared = cells.iter().filter(|(c, _)| reads.iter().any(|e| e.cell == *c && e.threadgroup == tg && e.thread != thread)).count();
        if shared > 0 {
            out_lines.push(format!(
                "{shared} of the cells it reads are read by other threads of its threadgroup too: let each thread load its own share into threadgroup memory once, then read the others' from there after a barrier."
            ));
        }
    }
    out_lines
}
