//! The terminal rendering: per threadgroup, a compact grid of who wrote
//! each cell and a line of read counts per table, then a legend. Nothing is
//! cut off: cells are as wide as the largest thread number needs, rows
//! wider than the terminal continue on further lines, and counts describe
//! whole tables.

use crate::model::{build, Model, Panel};
use crate::{thread_color, DiagramSpec, Role};
use gpu::trace::Trace;
use std::collections::BTreeSet;

/// Most rows of one table drawn in the terminal (the rest are counted).
const MAX_TERMINAL_ROWS: usize = 64;

/// A block of lines with their visible width.
struct Block {
    lines: Vec<String>,
    width: usize,
}

fn pad(s: &str, visible: usize, to: usize) -> String {
    format!("{s}{}", " ".repeat(to.saturating_sub(visible)))
}

/// One cell: the thread that wrote it (`3`), `3+` when others did too,
/// `3*` when only atomics updated it, `·` when nothing wrote it, and `!`
/// after it when threads raced on it. `inner` columns, then a space.
fn cell_text(writers: Option<&BTreeSet<u32>>, atomics: Option<&BTreeSet<u32>>, race: bool, inner: usize, color: bool) -> String {
    let (w, atomic) = match (writers.filter(|w| !w.is_empty()), atomics.filter(|a| !a.is_empty())) {
        (Some(w), _) => (w, false),
        (None, Some(a)) => (a, true),
        (None, None) => {
            let dot = format!("{:>inner$}", if race { "·!" } else { "·" });
            return if color { format!("\x1b[2m{dot}\x1b[0m ") } else { format!("{dot} ") };
        }
    };
    let first = *w.iter().next().unwrap_or(&0);
    let mark = match (atomic, w.len()) {
        (true, _) => "*",
        (false, 1) => "",
        (false, _) => "+",
    };
    let t = format!("{:>inner$}", format!("{first}{mark}{}", if race { "!" } else { "" }));
    if color {
        let (r, g, b) = thread_color(first);
        let lum = 0.299 * r as f64 + 0.587 * g as f64 + 0.114 * b as f64;
        let fg = if lum > 150.0 { "30" } else { "97" };
        let style = if race { ";1;4" } else { "" };
        format!("\x1b[48;2;{r};{g};{b}m\x1b[{fg}{style}m{t}\x1b[0m ")
    } else {
        format!("{t} ")
    }
}

/// How grids are drawn: cell width (without its separator), line width, colour.
#[derive(Clone, Copy)]
struct Style {
    inner: usize,
    width: usize,
    color: bool,
}

fn table_name(spec: &DiagramSpec, ti: usize, copy: u32) -> String {
    let t = &spec.tables[ti];
    if t.role == Role::Threadgroup {
        format!("{} @ interval {copy}", t.name)
    } else {
        t.name.clone()
    }
}

/// The grid of one table copy: one block per slice of columns that fits
/// the width (`out [columns 16–31]` for the second), every row drawn up to
/// [`MAX_TERMINAL_ROWS`] (then a line says how many more there are).
fn grid_blocks(spec: &DiagramSpec, m: &Model, p: &Panel, ti: usize, copy: u32, st: Style) -> Vec<Block> {
    let Style { inner, width, color } = st;
    let g = &m.tables[ti];
    let cw = inner + 1;
    // Columns per slice: as many as fit, spread evenly over the slices.
    let fit = (width.saturating_sub(1) / cw).max(1);
    let per_line = g.cols.div_ceil(g.cols.div_ceil(fit)).max(1);
    let rows = g.rows.min(MAX_TERMINAL_ROWS);
    let mut blocks = Vec::new();
    let mut first_col = 0;
    while first_col < g.cols {
        let cols = per_line.min(g.cols - first_col);
        let mut title = table_name(spec, ti, copy);
        if cols < g.cols {
            title.push_str(&format!(" [columns {}–{}]", first_col, first_col + cols - 1));
        }
        let grid_w = cols * cw;
        let w = grid_w.max(title.chars().count());
        let mut lines = vec![pad(&title, title.chars().count(), w)];
        for r in 0..rows {
            let mut line = String::new();
            for c in first_col..first_col + cols {
                if r * g.cols + c >= g.len {
                    line.push_str(&" ".repeat(cw));
                    continue;
                }
                let pos = (ti, copy, r, c);
                line.push_str(&cell_text(p.writes.get(&pos), p.atomics.get(&pos), p.races.contains(&pos), inner, color));
            }
            lines.push(pad(&line, grid_w, w));
        }
        if g.rows > rows {
            let more = format!("({} more rows not drawn)", g.rows - rows);
            lines.push(pad(&more, more.chars().count(), w));
        }
        blocks.push(Block { lines, width: w });
        first_col += cols;
    }
    blocks
}

/// `  out: atomics on 4 cells by 32 threads (*)` for a table atomics touched.
fn atomic_line(spec: &DiagramSpec, p: &Panel, ti: usize, copy: u32) -> Option<String> {
    let mut cells = 0usize;
    let mut threads = BTreeSet::new();
    for (_, th) in p.atomics.range((ti, copy, 0, 0)..=(ti, copy, usize::MAX, usize::MAX)) {
        cells += 1;
        threads.extend(th.iter().copied());
    }
    if cells == 0 {
        return None;
    }
    Some(format!(
        "  {}: atomics on {cells} cell{} by {} thread{} (*)",
        table_name(spec, ti, copy),
        if cells == 1 { "" } else { "s" },
        threads.len(),
        if threads.len() == 1 { "" } else { "s" }
    ))
}

/// `  SIMD-group functions:` and a line per call site.
fn exchange_lines(p: &Panel) -> Vec<String> {
    if p.exchanges.is_empty() {
        return Vec::new();
    }
    let mut lines = vec!["  SIMD-group functions:".to_string()];
    for r in &p.exchanges {
        let runs = if r.runs == 1 { String::new() } else { format!(" ×{}", r.runs) };
        let moves = if r.moves.is_empty() { String::new() } else { format!(", {} lane-to-lane moves", r.moves.len()) };
        lines.push(format!("    {}{runs} ({} lanes{moves})", r.name, r.lanes.len()));
    }
    lines
}

/// `  a: 12 reads of 4/4 cells by 4 threads` over the whole table, then
/// its read counts per cell (`.` none, 1–9, `+` more), a row of the table
/// per group, on further lines when they do not fit.
fn read_lines(spec: &DiagramSpec, m: &Model, p: &Panel, ti: usize, copy: u32, width: usize) -> Vec<String> {
    let g = &m.tables[ti];
    let mut events = 0u32;
    let mut cells = 0usize;
    let mut threads = BTreeSet::new();
    for (_, &n) in p.read_counts.range((ti, copy, 0, 0)..=(ti, copy, usize::MAX, usize::MAX)) {
        events += n;
        cells += 1;
    }
    for (_, rs) in p.reads.range((ti, copy, 0, 0)..=(ti, copy, usize::MAX, usize::MAX)) {
        threads.extend(rs.iter().copied());
    }
    if events == 0 {
        return Vec::new();
    }
    let total = g.len;
    let mut out = vec![format!(
        "  {}: {events} read{} of {cells}/{total} cell{} by {} thread{}",
        table_name(spec, ti, copy),
        if events == 1 { "" } else { "s" },
        if total == 1 { "" } else { "s" },
        threads.len(),
        if threads.len() == 1 { "" } else { "s" }
    )];
    if total > 4096 {
        return out;
    }
    // One group of digits per table row; groups fill lines of `width`.
    let mut line = String::from("    reads per cell:");
    for r in 0..g.rows {
        let mut group = String::new();
        for c in 0..g.cols {
            if r * g.cols + c >= g.len {
                break;
            }
            group.push(match p.read_counts.get(&(ti, copy, r, c)).copied().unwrap_or(0) {
                0 => '.',
                n @ 1..=9 => char::from(b'0' + n as u8),
                _ => '+',
            });
        }
        for chunk in group.as_bytes().chunks(width.saturating_sub(8).max(8)) {
            let chunk = std::str::from_utf8(chunk).unwrap_or("");
            if line.chars().count() + 1 + chunk.len() > width {
                out.push(std::mem::replace(&mut line, "     ".to_string()));
            }
            line.push(' ');
            line.push_str(chunk);
        }
    }
    out.push(line);
    out
}

/// A compact text diagram: for each threadgroup, a grid per written table
/// where each cell shows the (threadgroup-local) thread that wrote it
/// (`3+` when several did; coloured cells when `color`), and lines per
/// table with its read counts, then a legend. Lines stay within `width`
/// columns; nothing is cut off.
pub fn render_terminal(spec: &DiagramSpec, trace: &Trace, color: bool, width: usize) -> String {
    let width = width.max(20);
    let m = build(spec, trace);
    let mut out = String::new();
    out.push_str(&spec.title);
    if m.truncated {
        out.push_str(" (trace cut short: later accesses are not drawn)");
    }
    out.push('\n');
    // Wide enough for the largest thread number, a mark (+ or *) and `!`.
    let largest = m.threads.iter().next_back().copied().unwrap_or(0);
    let races = m.panels.iter().any(|p| !p.races.is_empty());
    let inner = largest.to_string().len() + 1 + usize::from(races);
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
                    (0..copies).flat_map(|c| grid_blocks(spec, &m, p, ti, c, Style { inner, width: width - 2, color })).collect();
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
                for l in read_lines(spec, &m, p, ti, c, width).into_iter().chain(atomic_line(spec, p, ti, c)) {
                    out.push_str(&l);
                    out.push('\n');
                }
            }
        }
        for l in exchange_lines(p) {
            out.push_str(&l);
            out.push('\n');
        }
    }
    out.push_str(&legend(spec, &m, width));
    if let (Some(_), Some(p)) = (spec.focus, m.panels.first()) {
        let [x, y, z] = p.tg;
        out.push_str(&wrap(&format!("(threadgroup ({x}, {y}, {z}) shown; `show --threadgroup X,Y,Z` draws another)"), width));
    }
    out
}

/// What the numbers and marks mean, for the marks this diagram has.
fn legend(spec: &DiagramSpec, m: &Model, width: usize) -> String {
    let two_d = spec.threadgroup[1] > 1 || spec.threadgroup[2] > 1;
    let mut text = format!(
        "Legend: in a grid, a number is the thread that wrote the cell, by its index in its threadgroup{}; `3+`: thread 3 and others; `·`: no thread wrote it",
        if two_d { format!(" (x + y × {})", spec.threadgroup[0].max(1)) } else { String::new() }
    );
    if m.panels.iter().any(|p| !p.atomics.is_empty()) {
        text.push_str("; `3*`: updated by atomic operations, thread 3 first");
    }
    if m.panels.iter().any(|p| !p.races.is_empty()) {
        text.push_str("; `!`: threads raced on the cell (two accessed it in one barrier interval, one writing)");
    }
    text.push_str(". Reads per cell: `.` none, 1 to 9, `+` more.");
    if spec.tables.iter().any(|t| t.role == Role::Threadgroup) {
        text.push_str(" One grid per barrier interval (interval k: threadgroup memory after k barriers).");
    }
    wrap(&text, width)
}

/// Words wrapped to `width` columns, each line ending in a newline.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
    out
}
