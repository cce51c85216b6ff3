//! The trace boiled down to what is drawn: per threadgroup panel, which
//! threads read and wrote each cell, and the value-flow arcs.

use crate::{grid_shape, DiagramSpec, Role, MAX_ARCS, MAX_COLS, MAX_INTERVALS, MAX_PANELS, MAX_ROWS};
use gpu::trace::{ExchangeKind, Trace};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A drawn cell: (table, copy, row, col). `copy` is the barrier interval for
/// threadgroup tables and 0 otherwise.
pub(crate) type Pos = (usize, u32, usize, usize);

pub(crate) struct TableGeom {
    /// Full (rows, cols) of the table.
    pub rows: usize,
    pub cols: usize,
    /// Rows and columns drawn (capped).
    pub shown_rows: usize,
    pub shown_cols: usize,
    pub len: usize,
}

#[derive(Default)]
pub(crate) struct Panel {
    pub tg: [u32; 3],
    pub reads: BTreeMap<Pos, BTreeSet<u32>>,
    /// Read events per cell (repeated reads count).
    pub read_counts: BTreeMap<Pos, u32>,
    pub writes: BTreeMap<Pos, BTreeSet<u32>>,
    /// Threads that ran an atomic operation on each cell (drawn apart
    /// from plain reads and writes).
    pub atomics: BTreeMap<Pos, BTreeSet<u32>>,
    /// SIMD-group functions, one row per function call site, in the order
    /// they first ran.
    pub exchanges: Vec<ExchangeRow>,
    /// (thread, source, destination).
    pub arcs: BTreeSet<(u32, Pos, Pos)>,
    /// Threadgroup-memory values at the end of each interval (last store;
    /// carried over from earlier intervals when not stored again).
    pub tg_values: BTreeMap<Pos, String>,
    pub threads: BTreeSet<u32>,
    /// Cells two threads of the panel accessed in one barrier interval
    /// without atomics, at least one of them writing: a data race.
    pub races: BTreeSet<Pos>,
}

/// One SIMD-group function call site in a panel, over every time it ran.
pub(crate) struct ExchangeRow {
    pub name: String,
    pub kind: ExchangeKind,
    pub span: msl::source::Span,
    /// Times one SIMD-group ran it.
    pub runs: u32,
    /// Lanes (threadgroup-local) that took part.
    pub lanes: BTreeSet<u32>,
    /// Shuffles: (source lane, destination lane).
    pub moves: BTreeSet<(u32, u32)>,
}

/// Most SIMD-group function rows drawn per panel.
pub(crate) const MAX_EXCHANGE_ROWS: usize = 4;

pub(crate) struct Model {
    pub tables: Vec<TableGeom>,
    pub panels: Vec<Panel>,
    /// Copies drawn of each threadgroup table (max over panels, at least 1).
    pub intervals: u32,
    /// Events were dropped (the trace's limit) or threadgroups left out.
    pub truncated: bool,
    /// A table has more rows or columns than the SVG draws.
    pub clipped: bool,
    /// Threadgroups in the dispatch.
    pub tg_counts: [u32; 3],
    /// Threadgroup-local thread indices that appear, over all panels.
    pub threads: BTreeSet<u32>,
}

pub(crate) fn local_index(spec: &DiagramSpec, thread: [u32; 3], tg: [u32; 3]) -> u32 {
    let t = spec.threadgroup.map(|v| v.max(1));
    let l = [0, 1, 2].map(|d| thread[d].wrapping_sub(tg[d].wrapping_mul(t[d])));
    l[0] + l[1] * t[0] + l[2] * t[0] * t[1]
}

/// Threadgroup-local position of local index `i`.
pub(crate) fn local_pos(spec: &DiagramSpec, i: u32) -> [u32; 3] {
    let t = spec.threadgroup.map(|v| v.max(1));
    [i % t[0], (i / t[0]) % t[1], i / (t[0] * t[1])]
}

pub(crate) fn build(spec: &DiagramSpec, trace: &Trace) -> Model {
    let mut truncated = trace.truncated;
    let tables: Vec<TableGeom> = spec
        .tables
        .iter()
        .map(|t| {
            let (rows, cols) = grid_shape(&t.shape);
            let len = if t.shape.is_empty() { 1 } else { t.shape.iter().product() };
            TableGeom { rows, cols, shown_rows: rows.min(MAX_ROWS), shown_cols: cols.min(MAX_COLS), len }
        })
        .collect();
    let clipped = tables.iter().any(|g| g.shown_rows < g.rows || g.shown_cols < g.cols);

    let t = spec.threadgroup.map(|v| v.max(1));
    let tg_counts = [0, 1, 2].map(|d| spec.grid[d].max(1).div_ceil(t[d]));
    let mut order: Vec<[u32; 3]> = Vec::new();
    if let Some(f) = spec.focus.filter(|f| (0..3).all(|d| f[d] < tg_counts[d])) {
        order.push(f);
    }
    'outer: for z in 0..if order.is_empty() { tg_counts[2] } else { 0 } {
        for y in 0..tg_counts[1] {
            for x in 0..tg_counts[0] {
                if order.len() == MAX_PANELS {
                    truncated = true;
                    break 'outer;
                }
                order.push([x, y, z]);
            }
        }
    }
    let mut panels: Vec<Panel> = order.iter().map(|&tg| Panel { tg, ..Default::default() }).collect();
    let panel_of: HashMap<[u32; 3], usize> = order.iter().enumerate().map(|(i, &tg)| (tg, i)).collect();

    // Trace cell → the drawn elements it covers: (table, row, col).
    let mut cell_elems: Vec<Vec<(usize, usize, usize)>> = Vec::with_capacity(trace.cells.len());
    for c in &trace.cells {
        let mut v = Vec::new();
        if let Some(ti) = spec.tables.iter().position(|t| t.alloc == c.alloc) {
            let es = spec.tables[ti].elem_size.max(1) as i64;
            let g = &tables[ti];
            if c.offset >= 0 {
                let first = c.offset / es;
                let last = (c.offset + c.size.max(1) as i64 - 1) / es;
                for e in first..=last {
                    let e = e as usize;
                    if e >= g.len {
                        break;
                    }
                    // Every cell is recorded (counts describe the whole
                    // table); drawings leave out what they cannot show.
                    v.push((ti, e / g.cols, e % g.cols));
                }
            }
        }
        cell_elems.push(v);
    }
    let is_tg: Vec<bool> = spec.tables.iter().map(|t| t.role == Role::Threadgroup).collect();

    let mut intervals = 1u32;
    // Plain accesses per (panel, cell, barrier interval): writers, readers.
    type Access = (BTreeSet<u32>, BTreeSet<u32>);
    let mut accesses: HashMap<(usize, Pos, u32), Access> = HashMap::new();
    // Interval of the last read of (threadgroup, thread, cell): which copy
    // of a threadgroup table a value came from.
    let mut last_read: HashMap<([u32; 3], u32, u32), u32> = HashMap::new();
    let clamp = |iv: u32, truncated: &mut bool| {
        if iv >= MAX_INTERVALS {
            *truncated = true;
            MAX_INTERVALS - 1
        } else {
            iv
        }
    };
    for e in &trace.events {
        let Some(&pi) = panel_of.get(&e.threadgroup) else {
            // Left out on purpose when one threadgroup is in focus.
            truncated |= spec.focus.is_none();
            continue;
        };
        let Some(elems) = cell_elems.get(e.cell as usize) else {
            continue;
        };
        let th = local_index(spec, e.thread, e.threadgroup);
        let p = &mut panels[pi];
        p.threads.insert(th);
        let iv = clamp(e.interval, &mut truncated);
        let copy_of = |ti: usize, iv: u32| if is_tg[ti] { iv } else { 0 };
        if elems.iter().any(|&(ti, _, _)| is_tg[ti]) {
            intervals = intervals.max(iv + 1);
        }
        if e.atomic {
            // One mark for the read and the write of an atomic operation.
            for &(ti, r, c) in elems {
                p.atomics.entry((ti, copy_of(ti, iv), r, c)).or_default().insert(th);
            }
        }
        if !e.atomic {
            for &(ti, r, c) in elems {
                let a = accesses.entry((pi, (ti, copy_of(ti, iv), r, c), e.interval)).or_default();
                if e.write { &mut a.0 } else { &mut a.1 }.insert(th);
            }
        }
        if !e.write {
            last_read.insert((e.threadgroup, th, e.cell), iv);
            for &(ti, r, c) in elems.iter().filter(|_| !e.atomic) {
                let pos = (ti, copy_of(ti, iv), r, c);
                p.reads.entry(pos).or_default().insert(th);
                *p.read_counts.entry(pos).or_default() += 1;
            }
            continue;
        }
        for &(ti, r, c) in elems.iter().filter(|_| !e.atomic) {
            p.writes.entry((ti, copy_of(ti, iv), r, c)).or_default().insert(th);
        }
        if let (Some(&(ti, r, c)), Some((s, bits))) = (elems.first(), e.value) {
            if is_tg[ti] {
                p.tg_values.insert((ti, iv, r, c), format_value(s, bits));
            }
        }
        for &s in &e.sources {
            let siv = last_read.get(&(e.threadgroup, th, s)).copied().unwrap_or(iv);
            let Some(selems) = cell_elems.get(s as usize) else {
                continue;
            };
            for &(sti, sr, sc) in selems {
                for &(ti, r, c) in elems {
                    let from = (sti, copy_of(sti, siv), sr, sc);
                    let to = (ti, copy_of(ti, iv), r, c);
                    if from == to {
                        continue;
                    }
                    if p.arcs.len() >= MAX_ARCS {
                        truncated = true;
                    } else {
                        p.arcs.insert((th, from, to));
                    }
                }
            }
        }
    }
    for x in &trace.exchanges {
        let Some(&pi) = panel_of.get(&x.threadgroup) else { continue };
        let p = &mut panels[pi];
        let row = match p.exchanges.iter().position(|r| r.name == x.name && r.span == x.span) {
            Some(k) => k,
            None if p.exchanges.len() < MAX_EXCHANGE_ROWS => {
                p.exchanges.push(ExchangeRow {
                    name: x.name.clone(),
                    kind: x.kind,
                    span: x.span,
                    runs: 0,
                    lanes: BTreeSet::new(),
                    moves: BTreeSet::new(),
                });
                p.exchanges.len() - 1
            }
            None => {
                truncated = true;
                continue;
            }
        };
        let r = &mut p.exchanges[row];
        r.runs += 1;
        r.lanes.extend(x.lanes.iter().copied());
        r.moves.extend(x.moves.iter().copied());
        p.threads.extend(x.lanes.iter().copied());
    }
    for ((pi, pos, _), (writers, readers)) in &accesses {
        let racing = writers.len() > 1 || (writers.len() == 1 && readers.iter().any(|r| !writers.contains(r)));
        if racing {
            panels[*pi].races.insert(*pos);
        }
    }
    for p in &mut panels {
        for copy in 1..intervals {
            let carried: Vec<(Pos, String)> = p
                .tg_values
                .iter()
                .filter(|((_, c, _, _), _)| *c == copy - 1)
                .map(|(&(t, _, r, col), v)| ((t, copy, r, col), v.clone()))
                .collect();
            for (pos, v) in carried {
                p.tg_values.entry(pos).or_insert(v);
            }
        }
    }
    let threads = panels.iter().flat_map(|p| p.threads.iter().copied()).collect();
    Model { tables, panels, intervals, truncated, clipped, tg_counts, threads }
}

/// A stored value as a short label (registers hold halves as floats).
pub(crate) fn format_value(s: msl::types::Scalar, bits: u64) -> String {
    use msl::types::Scalar as S;
    match s {
        S::Float | S::Half | S::BFloat => {
            let v = f32::from_bits(bits as u32);
            if v.fract() == 0.0 && v.abs() < 1e6 {
                format!("{v:.0}")
            } else {
                let t = format!("{v:.3}");
                t.trim_end_matches('0').trim_end_matches('.').to_string()
            }
        }
        S::Bool => (if bits & 1 == 1 { "true" } else { "false" }).to_string(),
        _ if s.is_signed() => {
            let shift = 64 - 8 * s.size();
            (((bits << shift) as i64) >> shift).to_string()
        }
        _ => {
            let mask = if s.size() >= 8 { u64::MAX } else { (1u64 << (8 * s.size())) - 1 };
            (bits & mask).to_string()
        }
    }
}
