//! The terminal rendering: per threadgroup, a compact grid of who wrote
//! each cell and a line of read counts per table.

use crate::model::{build, Model, Panel};
use crate::{thread_color, DiagramSpec, Role};
use gpu::trace::Trace;
use std::collections::BTreeSet;

/// A block of lines with their visible width.
struct Block {
    lines: Vec<String>,
    width: usize,
}

fn pad(s: &str, visible: usize, to: usize) -> String {
    format!("{s}{}", " ".repeat(to.saturating_sub(visible)))
}

fn cell_text(writers: Option<&BTreeSet<u32>>, atomics: Option<&BTreeSet<u32>>, cw: usize, color: bool) -> String {
    let inner = cw - 1;
    // A cell only atomics updated: its first thread and `*`.
    let (w, atomic) = match (writers.filter(|w| !w.is_empty()), atomics.filter(|a| !a.is_empty())) {
        (Some(w), _) => (w, false),
        (None, Some(a)) => (a, true),
        (None, None) => {
            let dot = format!("{:>inner$}", "·");
            return if color { format!("\x1b[2m{dot}\x1b[0m ") } else { format!("{dot} ") };
        }
    };
    let first = *w.iter().next().unwrap();
    let mut t = match (atomic, w.len()) {
        (true, _) => format!("{first}*"),
        (false, 1) => first.to_string(),
        (false, _) => format!("{first}+"),
    };
    if t.chars().count() > inner {
        t = if atomic {
            "*".repeat(inner)
        } else if w.len() == 1 {
            "#".repeat(inner)
        } else {
            "+".repeat(inner)
        };
    }
    let t = format!("{t:>inner$}");
    if color {
        let (r, g, b) = thread_color(first);
        let lum = 0.299 * r as f64 + 0.587 * g as f64 + 0.114 * b as f64;
        let fg = if lum > 150.0 { "30" } else { "97" };
        format!("\x1b[48;2;{r};{g};{b}m\x1b[{fg}m{t}\x1b[0m ")
    } else {
        format!("{t} ")
    }
}

/// How grids are drawn: cell width (with its separator), line width, colour.
#[derive(Clone, Copy)]
struct Style {
    cw: usize,
    width: usize,
    color: bool,
}

fn grid_block(spec: &DiagramSpec, m: &Model, p: &Panel, ti: usize, copy: u32, st: Style) -> Block {
    let Style { cw, width, color } = st;
    let t = &spec.tables[ti];
    let g = &m.tables[ti];
    let max_cols = ((width.saturating_sub(1)) / cw).max(1);
    let cols = g.shown_cols.min(max_cols);
    let mut title = if t.role == Role::Threadgroup { format!("{} @ interval {copy}", t.name) } else { t.name.clone() };
    if cols < g.cols || g.shown_rows < g.rows {
        title.push_str(" …");
    }
    let grid_w = cols * cw;
    let w = grid_w.max(title.chars().count());
    let mut lines = vec![pad(&title, title.chars().count(), w)];
    for r in 0..g.shown_rows {
        let mut line = String::new();
        for c in 0..cols {
            if r * g.cols + c >= g.len {
                line.push_str(&" ".repeat(cw));
                continue;
            }
            let pos = (ti, copy, r, c);
            line.push_str(&cell_text(p.writes.get(&pos), p.atomics.get(&pos), cw, color));
        }
        lines.push(pad(&line, grid_w, w));
    }
    Block { lines, width: w }
}

/// `  out: 40 atomics on 4/4 cells by 32 threads` for a table atomics touched.
fn atomic_line(spec: &DiagramSpec, p: &Panel, ti: usize, copy: u32) -> Option<String> {
    let t = &spec.tables[ti];
    let mut cells = 0usize;
    let mut threads = BTreeSet::new();
    for (_, th) in p.atomics.range((ti, copy, 0, 0)..=(ti, copy, usize::MAX, usize::MAX)) {
        cells += 1;
        threads.extend(th.iter().copied());
    }
    if cells == 0 {
        return None;
    }
    let name = if t.role == Role::Threadgroup { format!("{} @ interval {copy}", t.name) } else { t.name.clone() };
    Some(format!(
        "  {name}: atomics on {cells} cell{} by {} thread{} (*)",
        if cells == 1 { "" } else { "s" },
        threads.len(),
        if threads.len() == 1 { "" } else { "s" }
    ))
}

/// `  SIMD-group functions: simd_sum ×2 (64 lanes), …` within `width`.
fn exchange_lines(p: &Panel, width: usize) -> Vec<String> {
    if p.exchanges.is_empty() {
        return Vec::new();
    }
    let mut lines = vec!["  SIMD-group functions:".to_string()];
    for r in &p.exchanges {
        let runs = if r.runs == 1 { String::new() } else { format!(" ×{}", r.runs) };
        let moves = if r.moves.is_empty() { String::new() } else { format!(", {} lane-to-lane moves", r.moves.len()) };
        let line = format!("    {}{runs} ({} lanes{moves})", r.name, r.lanes.len());
        lines.push(line.chars().take(width).collect());
    }
    lines
}

fn read_line(spec: &DiagramSpec, m: &Model, p: &Panel, ti: usize, copy: u32, width: usize) -> Option<String> {
    let t = &spec.tables[ti];
    let g = &m.tables[ti];
    let mut events = 0u32;
    let mut cells = 0usize;
    let mut threads = BTreeSet::new();
    for (&(pt, pc, _, _), &n) in p.read_counts.range((ti, copy, 0, 0)..=(ti, copy, usize::MAX, usize::MAX)) {
        debug_assert_eq!((pt, pc), (ti, copy));
        events += n;
        cells += 1;
    }
    for (_, rs) in p.reads.range((ti, copy, 0, 0)..=(ti, copy, usize::MAX, usize::MAX)) {
        threads.extend(rs.iter().copied());
    }
    if events == 0 {
        return None;
    }
    let name = if t.role == Role::Threadgroup { format!("{} @ interval {copy}", t.name) } else { t.name.clone() };
    let total = (0..g.shown_rows).map(|r| g.shown_cols.min(g.len.saturating_sub(r * g.cols))).sum::<usize>();
    let mut s = format!(
        "  {name}: {events} read{} of {cells}/{total} cell{} by {} thread{}",
        if events == 1 { "" } else { "s" },
        if total == 1 { "" } else { "s" },
        threads.len(),
        if threads.len() == 1 { "" } else { "s" }
    );
    let mut digits = String::new();
    for r in 0..g.shown_rows {
        if r > 0 {
            digits.push(' ');
        }
        for c in 0..g.shown_cols {
            if r * g.cols + c >= g.len {
                break;
            }
            digits.push(match p.read_counts.get(&(ti, copy, r, c)).copied().unwrap_or(0) {
                0 => '.',
                n @ 1..=9 => char::from(b'0' + n as u8),
                _ => '+',
            });
        }
    }
    if s.chars().count() + 18 + digits.chars().count() <= width {
        s.push_str(" · reads per cell ");
        s.push_str(&digits);
    }
    Some(s)
}

/// A compact text diagram: for each threadgroup, a grid per written table
/// where each cell shows the (threadgroup-local) thread that wrote it
/// (`3+` when several did; coloured cells when `color`), and a line per
/// table with its read counts. Lines stay within `width` columns.
pub fn render_terminal(spec: &DiagramSpec, trace: &Trace, color: bool, width: usize) -> String {
    let width = width.max(20);
    let m = build(spec, trace);
    let mut out = String::new();
    out.push_str(&spec.title);
    if m.truncated {
        out.push_str(" … truncated");
    }
    out.push('\n');
    let widest = m.tables.iter().map(|g| g.shown_cols).max().unwrap_or(1);
    let cw = if widest * 3 < width { 3 } else { 2 };
    let order: Vec<usize> = [Role::Input, Role::Threadgroup, Role::Output]
        .iter()
        .flat_map(|role| spec.tables.iter().enumerate().filter(move |(_, t)| t.role == *role).map(|(i, _)| i))
        .collect();
    for p in &m.panels {
        if m.panels.len() > 1 {
            let [x, y, z] = p.tg;
            let name = if m.tg_counts[2] > 1 {
                format!("threadgroup ({x}, {y}, {z})")
            } else if m.tg_counts[1] > 1 {
                format!("threadgroup ({x}, {y})")
            } else {
                format!("threadgroup ({x})")
            };
            out.push_str(&format!("── {name} ──\n"));
        }
        for &ti in &order {
            let t = &spec.tables[ti];
            let copies = if t.role == Role::Threadgroup { m.intervals } else { 1 };
            let written = p.writes.keys().chain(p.atomics.keys()).any(|k| k.0 == ti);
            if t.role == Role::Output || written {
                let blocks: Vec<Block> =
                    (0..copies).map(|c| grid_block(spec, &m, p, ti, c, Style { cw, width: width - 2, color })).collect();
                // Side by side while they fit, else one under another.
                let mut row: Vec<&Block> = Vec::new();
                let mut row_w = 0;
                let flush = |row: &mut Vec<&Block>, out: &mut String| {
                    if row.is_empty() {
                        return;
                    }
                    let h = row.iter().map(|b| b.lines.len()).max().unwrap_or(0);
                    for i in 0..h {
                        let mut line = String::from("  ");
                        for (k, b) in row.iter().enumerate() {
                            if k > 0 {
                                line.push_str("   ");
                            }
                            match b.lines.get(i) {
                                Some(l) => line.push_str(l),
                                None => line.push_str(&" ".repeat(b.width)),
                            }
                        }
                        out.push_str(line.trim_end());
                        out.push('\n');
                    }
                    row.clear();
                };
                for b in &blocks {
                    let add = if row.is_empty() { b.width + 2 } else { b.width + 3 };
                    if !row.is_empty() && row_w + add > width {
                        flush(&mut row, &mut out);
                        row_w = 0;
                    }
                    row_w += if row.is_empty() { b.width + 2 } else { b.width + 3 };
                    row.push(b);
                }
                flush(&mut row, &mut out);
            }
            for c in 0..copies {
                for l in [read_line(spec, &m, p, ti, c, width), atomic_line(spec, p, ti, c)].into_iter().flatten() {
                    out.push_str(&l);
                    out.push('\n');
                }
            }
        }
        for l in exchange_lines(p, width) {
            out.push_str(&l);
            out.push('\n');
        }
    }
    if m.panels.iter().any(|p| !p.atomics.is_empty()) {
        out.push_str("(*: updated by atomic operations; the number is the first thread that did)\n");
    }
    if spec.tables.iter().any(|t| t.role == Role::Threadgroup) {
        out.push_str("(interval k: threadgroup memory after k barriers; one grid per interval)\n");
    }
    if let (Some(_), Some(p)) = (spec.focus, m.panels.first()) {
        let [x, y, z] = p.tg;
        out.push_str(&format!("(threadgroup ({x}, {y}, {z}) shown; `show --threadgroup X,Y,Z` draws another)\n"));
    }
    out
}
