//! The SVG rendering.

use crate::model::{build, local_pos, Model, Pos};
use crate::{hex, thread_color, DiagramSpec, Role};
use gpu::trace::{ExchangeKind, Trace};
use std::fmt::Write;

const CELL: f64 = 30.0;
const TABLE_GAP: f64 = 28.0;
const ROW_GAP: f64 = 26.0;
const LABEL_H: f64 = 18.0;
const PAD: f64 = 14.0;
const PANEL_TITLE: f64 = 26.0;
const PANEL_GAP: f64 = 18.0;
const MARGIN: f64 = 20.0;
const TITLE_H: f64 = 52.0;
const MAX_WIDTH: f64 = 1600.0;
/// The picture stays within this height (rows of panels are dropped).
const MAX_HEIGHT: f64 = 2400.0;
/// Height kept for the legend under the panels (64 threads at most).
const LEGEND_ROOM: f64 = 260.0;
const FONT: &str = "DejaVu Sans, Helvetica, Arial, sans-serif";
/// How far below the tables' bottom edge an arc between two cells of one
/// row dips (within the gap under the row).
const ARC_DIP: f64 = 9.0;
/// The legend's explanation of arcs.
const FLOW_TEXT: &str = "value flow: source cell → written cell";
/// The legend's explanation of atomics.
const ATOMIC_TEXT: &str = "atomic operation on the cell: dashed outline in the thread's colour (not counted as a read or write)";
/// The legend's explanation of racing cells.
const RACE_TEXT: &str = "race: two threads accessed the cell in one barrier interval, at least one writing (red dashed frame, !)";
/// More arcs than this in a panel are a mesh: only one thread's are drawn.
const CLEAR_ARCS: usize = 160;
/// The legend's explanation of arcs.
const SIMD_TEXT: &str = "SIMD-group function: lanes share values (arc: shuffle source → lane; bracket: reduction; ramp: prefix scan)";
/// Most read dots drawn in one cell (5 a row, 3 rows).
const MAX_DOTS: usize = 15;
/// Most write outlines drawn in one cell.
const MAX_OUTLINES: usize = 4;

/// Escape text for XML content and attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

/// Shorten a cell label to fit a cell.
fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.6
}

/// A table copy placed in a panel.
struct Block {
    table: usize,
    copy: u32,
    name: String,
    note: String,
    x: f64,
    y: f64,
    w: f64,
}

struct Layout {
    blocks: Vec<Block>,
    w: f64,
    h: f64,
    /// The SIMD-group functions band under the tables, when any ran.
    band: Option<Band>,
}

/// Where a panel draws its SIMD-group functions: one row per call site,
/// a label then one dot per lane.
struct Band {
    /// Top of the band's title, relative to the panel.
    y: f64,
    /// Left edge of lane 0.
    lanes_x: f64,
    /// Lanes drawn (threadgroup-local 0..lanes).
    lanes: u32,
    /// Lanes that took part in any row (more than `lanes` when capped).
    all_lanes: u32,
}

/// Horizontal step between lanes in the SIMD-group band.
const LANE_DX: f64 = 7.0;
/// Height of one row of the band.
const EXCHANGE_ROW_H: f64 = 30.0;
/// Most lanes drawn in the band (two SIMD-groups).
const MAX_BAND_LANES: u32 = 64;
/// Most shuffle arcs drawn per row.
const MAX_MOVES: usize = 128;

/// A band row's label: the function and how often a SIMD-group ran it.
fn exchange_label(r: &crate::model::ExchangeRow) -> String {
    if r.runs == 1 {
        r.name.clone()
    } else {
        format!("{} ×{}", r.name, r.runs)
    }
}

/// The band's title.
fn band_title(b: &Band) -> String {
    if b.all_lanes > b.lanes {
        format!("SIMD-group functions (lanes 0–{} of {})", b.lanes - 1, b.all_lanes)
    } else {
        "SIMD-group functions".to_string()
    }
}

fn layout_panel(spec: &DiagramSpec, m: &Model) -> Layout {
    // Rows: all inputs; each threadgroup table with its copies (one per
    // barrier interval) side by side; all outputs.
    let mut rows: Vec<Vec<Block>> = Vec::new();
    for role in [Role::Input, Role::Threadgroup, Role::Output] {
        let mut row = Vec::new();
        for (ti, t) in spec.tables.iter().enumerate().filter(|(_, t)| t.role == role) {
            let copies = if role == Role::Threadgroup { m.intervals } else { 1 };
            for copy in 0..copies {
                let note = match role {
                    Role::Input => "input".to_string(),
                    Role::Output => "output".to_string(),
                    Role::Threadgroup => format!("threadgroup · interval {copy}"),
                };
                let g = &m.tables[ti];
                let label_w = text_width(&t.name, 12.0) + 5.0 + text_width(&note, 10.0);
                let w = (g.shown_cols as f64 * CELL).max(label_w);
                row.push(Block { table: ti, copy, name: t.name.clone(), note, x: 0.0, y: 0.0, w });
            }
            if role == Role::Threadgroup {
                rows.push(std::mem::take(&mut row));
            }
        }
        if !row.is_empty() {
            rows.push(row);
        }
    }
    let row_w = |r: &[Block]| r.iter().map(|b| b.w).sum::<f64>() + TABLE_GAP * (r.len().saturating_sub(1)) as f64;
    let mut inner_w = rows.iter().map(|r| row_w(r)).fold(160.0, f64::max);
    // (Bold text runs about a tenth wider than the estimate.)
    inner_w = m.panels.iter().map(|p| text_width(&panel_title(m, p), 13.0) * 1.1).fold(inner_w, f64::max);
    // The band: as many rows as the busiest panel, lanes after the longest label.
    let band_rows = m.panels.iter().map(|p| p.exchanges.len()).max().unwrap_or(0);
    let all_lanes = m.panels.iter().flat_map(|p| p.exchanges.iter()).filter_map(|r| r.lanes.last()).map(|&l| l + 1).max().unwrap_or(0);
    let label_w = m.panels.iter().flat_map(|p| p.exchanges.iter()).map(|r| text_width(&exchange_label(r), 10.0)).fold(0.0, f64::max);
    let mut band = (band_rows > 0).then(|| Band { y: 0.0, lanes_x: PAD + label_w + 12.0, lanes: all_lanes.min(MAX_BAND_LANES), all_lanes });
    if let Some(b) = &band {
        let title_w = text_width(&band_title(b), 12.0);
        inner_w = inner_w.max(label_w + 12.0 + b.lanes as f64 * LANE_DX).max(title_w);
    }
    let mut y = PANEL_TITLE;
    let mut blocks = Vec::new();
    for mut row in rows {
        // Left-aligned: element i of tables of one width lines up.
        let mut x = PAD;
        let h = row.iter().map(|b| m.tables[b.table].shown_rows as f64 * CELL).fold(0.0, f64::max);
        for b in row.iter_mut() {
            b.x = x;
            b.y = y + LABEL_H;
            x += b.w + TABLE_GAP;
        }
        blocks.extend(row);
        y += LABEL_H + h + ROW_GAP;
    }
    if let Some(b) = &mut band {
        b.y = y;
        y += LABEL_H + band_rows as f64 * EXCHANGE_ROW_H + ROW_GAP;
    }
    Layout { blocks, w: inner_w + 2.0 * PAD, h: y - ROW_GAP + PAD, band }
}

/// One panel's SIMD-group band: a title, then per call site its label and
/// the lanes that ran it (dots in their thread's colour), with a bracket
/// under the lanes of a reduction, a ramp under a prefix scan, a box
/// around a matrix multiply and an arc from source to destination lane
/// for each shuffle.
fn draw_band(s: &mut String, b: &Band, p: &crate::model::Panel) {
    if p.exchanges.is_empty() {
        return;
    }
    let _ = writeln!(s, r#"<g class="simd-band">"#);
    let _ = writeln!(
        s,
        r##"<text class="band-title" x="{PAD}" y="{}" font-size="12" font-weight="bold" fill="#222">{}</text>"##,
        f(b.y + LABEL_H - 5.0),
        esc(&band_title(b))
    );
    let lane_x = |l: u32| b.lanes_x + l as f64 * LANE_DX + LANE_DX / 2.0;
    for (k, r) in p.exchanges.iter().enumerate() {
        let top = b.y + LABEL_H + k as f64 * EXCHANGE_ROW_H;
        let cy = top + 15.0;
        let kind = match r.kind {
            ExchangeKind::Reduce => "reduce",
            ExchangeKind::Scan => "scan",
            ExchangeKind::Shuffle => "shuffle",
            ExchangeKind::Matrix => "matrix",
        };
        let _ = writeln!(s, r#"<g class="simd-exchange" data-name="{}" data-kind="{kind}" data-runs="{}">"#, esc(&r.name), r.runs);
        let _ = writeln!(
            s,
            r##"<text class="exchange-label" x="{PAD}" y="{}" font-size="10" fill="#333">{}</text>"##,
            f(cy + 3.5),
            esc(&exchange_label(r))
        );
        // Per SIMD-group (32 lanes): the span of its lanes that took part.
        let mut groups: Vec<(u32, u32)> = Vec::new();
        for &l in r.lanes.iter().filter(|&&l| l < b.lanes) {
            match groups.last_mut() {
                Some((_, last)) if l / 32 == *last / 32 => *last = l,
                _ => groups.push((l, l)),
            }
        }
        for &(first, last) in &groups {
            let (x0, x1) = (lane_x(first) - 3.0, lane_x(last) + 3.0);
            let shape = match r.kind {
                ExchangeKind::Reduce => {
                    format!("M{} {} L{} {} L{} {} L{} {}", f(x0), f(cy + 4.0), f(x0), f(cy + 8.0), f(x1), f(cy + 8.0), f(x1), f(cy + 4.0))
                }
                ExchangeKind::Scan => format!("M{} {} L{} {} L{} {} Z", f(x0), f(cy + 9.0), f(x1), f(cy + 9.0), f(x1), f(cy + 4.0)),
                ExchangeKind::Matrix => {
                    format!("M{} {} L{} {} L{} {} L{} {} Z", f(x0), f(cy - 5.0), f(x1), f(cy - 5.0), f(x1), f(cy + 5.0), f(x0), f(cy + 5.0))
                }
                ExchangeKind::Shuffle => continue,
            };
            let fill = if r.kind == ExchangeKind::Scan { "#9aa3ad" } else { "none" };
            let _ = writeln!(
                s,
                r##"<path class="exchange-shape" d="{shape}" fill="{fill}" fill-opacity="0.5" stroke="#59616b" stroke-width="1.2"/>"##
            );
        }
        for &(from, to) in r.moves.iter().filter(|(a, c)| *a < b.lanes && *c < b.lanes).take(MAX_MOVES) {
            let (x1, x2) = (lane_x(from), lane_x(to));
            let lift = ((x2 - x1).abs() / 3.0).clamp(4.0, 11.0);
            let _ = writeln!(
                s,
                r#"<path class="exchange-move" data-from="{from}" data-to="{to}" d="M{} {} Q{} {} {} {}" fill="none" stroke="{}" stroke-width="1" stroke-opacity="0.8"/>"#,
                f(x1),
                f(cy - 3.0),
                f((x1 + x2) / 2.0),
                f(cy - 3.0 - lift),
                f(x2),
                f(cy - 3.0),
                hex(thread_color(to))
            );
        }
        for &l in r.lanes.iter().filter(|&&l| l < b.lanes) {
            let _ = writeln!(
                s,
                r#"<circle class="lane" data-thread="{l}" cx="{}" cy="{}" r="2.4" fill="{}"/>"#,
                f(lane_x(l)),
                f(cy),
                hex(thread_color(l))
            );
        }
        let _ = writeln!(s, "</g>");
    }
    let _ = writeln!(s, "</g>");
}

/// The bottom edge of the drawn table holding a cell, relative to its panel.
fn block_bottom(l: &Layout, m: &Model, (t, copy, _, _): Pos) -> f64 {
    let b = l.blocks.iter().find(|b| b.table == t && b.copy == copy);
    b.map(|b| b.y + m.tables[t].shown_rows as f64 * CELL).unwrap_or(0.0)
}

/// Top-left corner of a drawn cell, relative to its panel.
fn cell_xy(l: &Layout, m: &Model, (t, copy, r, c): Pos) -> Option<(f64, f64)> {
    let b = l.blocks.iter().find(|b| b.table == t && b.copy == copy)?;
    let g = &m.tables[t];
    (r < g.shown_rows && c < g.shown_cols).then_some((b.x + c as f64 * CELL, b.y + r as f64 * CELL))
}

fn f(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

fn thread_label(spec: &DiagramSpec, i: u32) -> String {
    let p = local_pos(spec, i);
    if spec.threadgroup[2] > 1 {
        format!("t{i} ({},{},{})", p[0], p[1], p[2])
    } else if spec.threadgroup[1] > 1 {
        format!("t{i} ({},{})", p[0], p[1])
    } else {
        format!("t{i}")
    }
}

/// Draw the diagram as an SVG document. Same input, same bytes.
pub fn render_svg(spec: &DiagramSpec, trace: &Trace) -> String {
    let mut m = build(spec, trace);
    let l = layout_panel(spec, &m);
    let n = m.panels.len().max(1);
    let two_d = m.tg_counts[1] > 1 || m.tg_counts[2] > 1;
    let mut pcols = if two_d { m.tg_counts[0] as usize } else { n }.clamp(1, 3);
    while pcols > 1 && pcols as f64 * (l.w + PANEL_GAP) > MAX_WIDTH {
        pcols -= 1;
    }
    let mut prows = n.div_ceil(pcols);
    let panels_w = pcols as f64 * l.w + (pcols - 1) as f64 * PANEL_GAP;
    // Only as many rows of panels as fit the height limit (with room for the
    // title and legend); the subtitle says how many threadgroups are shown.
    let fit = ((MAX_HEIGHT - TITLE_H - LEGEND_ROOM + PANEL_GAP) / (l.h + PANEL_GAP)).floor().max(1.0) as usize;
    if prows > fit {
        prows = fit;
        m.panels.truncate(prows * pcols);
    }
    let panels_h = prows as f64 * l.h + (prows - 1) as f64 * PANEL_GAP;
    let mut title = spec.title.clone();
    if m.truncated || m.clipped {
        title.push_str(" … truncated");
    }
    let [gx, gy, gz] = spec.grid;
    let [tx, ty, tz] = spec.threadgroup;
    let n_tg: u64 = m.tg_counts.iter().map(|&c| c as u64).product();
    let subtitle = format!(
        "grid ({gx}, {gy}, {gz}) · threadgroup ({tx}, {ty}, {tz}) · {n_tg} threadgroup{}{}",
        if n_tg == 1 { "" } else { "s" },
        match (spec.focus, m.panels.first()) {
            (Some(_), Some(p)) if n_tg > 1 =>
                format!(", threadgroup ({}, {}, {}) shown (pick another with --threadgroup X,Y,Z)", p.tg[0], p.tg[1], p.tg[2]),
            _ if m.panels.len() == 1 && n_tg > 1 => ", only the first shown".to_string(),
            _ if (m.panels.len() as u64) < n_tg => format!(", the first {} shown", m.panels.len()),
            _ => String::new(),
        }
    );
    // Wide enough for the panels and for the title and subtitle (bold text
    // runs about a tenth wider than the estimate).
    let width = (panels_w + 2.0 * MARGIN)
        .max(560.0)
        .max(text_width(&title, 17.0) * 1.1 + 2.0 * MARGIN)
        .max(text_width(&subtitle, 11.0) + 2.0 * MARGIN);

    // Legend geometry.
    let threads: Vec<u32> = m.threads.iter().copied().take(64).collect();
    let legend_item = threads.iter().map(|&t| text_width(&thread_label(spec, t), 10.0)).fold(0.0, f64::max) + 34.0;
    let per_row = (((width - 2.0 * MARGIN) / legend_item).floor() as usize).clamp(1, 16);
    let legend_rows = threads.len().div_ceil(per_row);
    let more = m.threads.len() > threads.len();
    let legend_y = TITLE_H + panels_h + 24.0;
    // Where the line explaining the marks goes, relative to the legend.
    let ky = 10.0 + legend_rows as f64 * 18.0 + if more { 40.0 } else { 22.0 };
    // The threadgroup-memory note goes after the marks when it fits, else
    // on a line of its own.
    const TG_NOTE: &str = "threadgroup memory: one copy per interval; interval k = after k barriers";
    let has_tg = spec.tables.iter().any(|t| t.role == Role::Threadgroup);
    // (After the marks' last text, which starts at 156.)
    let flow_text = FLOW_TEXT.to_string();
    let note_x = 156.0 + text_width(&flow_text, 10.0) + 24.0;
    let note_inline = note_x + text_width(TG_NOTE, 10.0) <= width - 2.0 * MARGIN;
    let note_line = if has_tg && !note_inline { 18.0 } else { 0.0 };
    // Lines for the marks only some diagrams have: atomics, SIMD-group functions.
    let mut extra_marks: Vec<(&str, &str)> = Vec::new();
    if m.panels.iter().any(|p| !p.atomics.is_empty()) {
        extra_marks.push(("atomic", ATOMIC_TEXT));
    }
    if l.band.is_some() && m.panels.iter().any(|p| !p.exchanges.is_empty()) {
        extra_marks.push(("simd", SIMD_TEXT));
    }
    if m.panels.iter().any(|p| !p.races.is_empty()) {
        extra_marks.push(("race", RACE_TEXT));
    }

    let width = extra_marks.iter().map(|(_, t)| 20.0 + text_width(t, 10.0) + 2.0 * MARGIN).fold(width, f64::max);
    let height = legend_y + ky + 18.0 + note_line + 18.0 * extra_marks.len() as f64;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{FONT}">"#,
        w = f(width),
        h = f(height)
    );
    let _ = writeln!(s, r##"<rect class="background" x="0" y="0" width="{}" height="{}" fill="#ffffff"/>"##, f(width), f(height));
    let _ =
        writeln!(s, r##"<text class="title" x="{MARGIN}" y="26" font-size="17" font-weight="bold" fill="#222">{}</text>"##, esc(&title));
    let _ = writeln!(s, r##"<text class="subtitle" x="{MARGIN}" y="43" font-size="11" fill="#666">{}</text>"##, esc(&subtitle));

    for (pi, p) in m.panels.iter().enumerate() {
        let px = MARGIN + (pi % pcols) as f64 * (l.w + PANEL_GAP);
        let py = TITLE_H + (pi / pcols) as f64 * (l.h + PANEL_GAP);
        let tg_name = panel_title(&m, p);
        let _ = writeln!(s, r#"<g class="panel" transform="translate({},{})">"#, f(px), f(py));
        let _ = writeln!(
            s,
            r##"<rect x="0" y="0" width="{}" height="{}" rx="8" fill="#fafbfc" stroke="#c8ccd2" stroke-width="1"/>"##,
            f(l.w),
            f(l.h)
        );
        let _ = writeln!(
            s,
            r##"<text class="panel-title" x="{PAD}" y="18" font-size="13" font-weight="bold" fill="#333">{}</text>"##,
            esc(&tg_name)
        );

        // Tables: cells and values (labels go on top of the arcs, last).
        let tables_at = s.len();
        let mut labels = String::new();
        for b in &l.blocks {
            let g = &m.tables[b.table];
            let t = &spec.tables[b.table];
            let x0 = b.x;
            let _ = writeln!(
                labels,
                r##"<text class="table-label" x="{}" y="{}" font-size="12" font-weight="bold" fill="#222" stroke="#fafbfc" stroke-width="3" stroke-linejoin="round" paint-order="stroke">{}<tspan dx="5" font-size="10" font-weight="normal" fill="#888">{}</tspan></text>"##,
                f(x0),
                f(b.y - 5.0),
                esc(&b.name),
                esc(&b.note)
            );
            let _ = writeln!(s, r#"<g class="table" data-table="{}" data-copy="{}">"#, esc(&t.name), b.copy);
            let cell_fill = if t.role == Role::Threadgroup { "#f3f0ff" } else { "#ffffff" };
            for r in 0..g.shown_rows {
                for c in 0..g.shown_cols {
                    let e = r * g.cols + c;
                    if e >= g.len {
                        continue;
                    }
                    let (cx, cy) = (x0 + c as f64 * CELL, b.y + r as f64 * CELL);
                    let _ = writeln!(
                        s,
                        r##"<rect class="cell" x="{}" y="{}" width="{CELL}" height="{CELL}" fill="{cell_fill}" stroke="#b4b9c0" stroke-width="1"/>"##,
                        f(cx),
                        f(cy)
                    );
                    let (label, color) = match &t.values {
                        _ if t.role == Role::Threadgroup => match p.tg_values.get(&(b.table, b.copy, r, c)) {
                            // The value held at the end of this interval.
                            Some(v) => (short(v, 7), "#333"),
                            None => ("?".to_string(), "#b0b0b0"),
                        },
                        Some(v) => match v.get(e) {
                            Some(v) => (short(v, 7), "#333"),
                            None => continue,
                        },
                        _ => (e.to_string(), "#b0b0b0"),
                    };
                    // Long values get a smaller font, so they stay inside their cell.
                    // (0.68 em a character: DejaVu's digits are 0.64 em wide.)
                    let size = (9.0f64).min((CELL - 4.0) / (0.68 * label.chars().count().max(1) as f64));
                    let _ = writeln!(
                        s,
                        r##"<text class="value" x="{}" y="{}" font-size="{}" text-anchor="middle" fill="{color}">{}</text>"##,
                        f(cx + CELL / 2.0),
                        f(cy + 13.0),
                        f(size),
                        esc(&label)
                    );
                }
            }
            let _ = writeln!(s, "</g>");
        }

        // Arcs: value flow from each source cell to the written cell
        // (fainter when there are many). They go under the tables, so a
        // box is never hidden by arcs passing over it.
        let arcs_at = s.len();
        let (arc_w, arc_op) = if p.arcs.len() > 96 { ("0.8", "0.35") } else { ("1.2", "0.7") };
        let only = arc_thread(p);
        for &(th, from, to) in p.arcs.iter().filter(|(th, _, _)| only.is_none_or(|o| o == *th)) {
            let (Some((x1, y1)), Some((x2, y2))) = (cell_xy(&l, &m, from), cell_xy(&l, &m, to)) else {
                continue;
            };
            let (x1, y1, x2, y2) = (x1 + CELL / 2.0, y1 + CELL / 2.0, x2 + CELL / 2.0, y2 + CELL / 2.0);
            let (dx, dy) = (x2 - x1, y2 - y1);
            let len = (dx * dx + dy * dy).sqrt().max(1.0);
            let (cx, cy) = if dy.abs() < CELL {
                // Between cells of one row (e.g. one threadgroup table's
                // copies): dip into the gap below the tables, where the
                // curve stays visible, instead of running under the cells.
                let bottom = block_bottom(&l, &m, from).max(block_bottom(&l, &m, to));
                ((x1 + x2) / 2.0, 2.0 * (bottom + ARC_DIP) - y1.max(y2))
            } else {
                let bend = (len * 0.18).min(40.0) + 6.0;
                ((x1 + x2) / 2.0 - dy / len * bend, (y1 + y2) / 2.0 + dx / len * bend)
            };
            // Both ends on the cells' borders, so values stay readable.
            let (x1, y1) = to_border(x1, y1, cx, cy, CELL / 2.0 - 3.0);
            let (x2, y2) = to_border(x2, y2, cx, cy, CELL / 2.0 - 1.0);
            // Arrowhead along the curve's end tangent.
            let (tx, ty) = (x2 - cx, y2 - cy);
            let tl = (tx * tx + ty * ty).sqrt().max(1.0);
            let (ux, uy) = (tx / tl, ty / tl);
            let (bx, by) = (x2 - ux * 6.0, y2 - uy * 6.0);
            let col = hex(thread_color(th));
            let _ = writeln!(
                s,
                r#"<g class="arc" data-thread="{th}" data-from="{}" data-to="{}"><path d="M{} {} Q{} {} {} {}" fill="none" stroke="{col}" stroke-width="{arc_w}" stroke-opacity="{arc_op}"/><path d="M{} {} L{} {} L{} {} Z" fill="{col}" fill-opacity="0.85"/></g>"#,
                pos_id(spec, from),
                pos_id(spec, to),
                f(x1),
                f(y1),
                f(cx),
                f(cy),
                f(x2),
                f(y2),
                f(x2),
                f(y2),
                f(bx - uy * 3.0),
                f(by + ux * 3.0),
                f(bx + uy * 3.0),
                f(by - ux * 3.0)
            );
        }

        let arcs = s.split_off(arcs_at);
        s.insert_str(tables_at, &arcs);

        // Writes: one outline per writer, nested.
        for (&pos, writers) in &p.writes {
            let Some((x, y)) = cell_xy(&l, &m, pos) else {
                continue;
            };
            for (k, &th) in writers.iter().take(MAX_OUTLINES).enumerate() {
                let inset = 1.5 + 2.5 * k as f64;
                let _ = writeln!(
                    s,
                    r#"<rect class="write" data-thread="{th}" data-cell="{}" x="{}" y="{}" width="{}" height="{}" fill="none" stroke="{}" stroke-width="2.2"/>"#,
                    pos_id(spec, pos),
                    f(x + inset),
                    f(y + inset),
                    f(CELL - 2.0 * inset),
                    f(CELL - 2.0 * inset),
                    hex(thread_color(th))
                );
            }
        }

        // Atomics: a dashed outline per thread and a diamond in the corner.
        for (&pos, threads) in &p.atomics {
            let Some((x, y)) = cell_xy(&l, &m, pos) else {
                continue;
            };
            for (k, &th) in threads.iter().take(MAX_OUTLINES).enumerate() {
                let inset = 1.5 + 2.5 * k as f64;
                let _ = writeln!(
                    s,
                    r#"<rect class="atomic" data-thread="{th}" data-cell="{}" x="{}" y="{}" width="{}" height="{}" fill="none" stroke="{}" stroke-width="2" stroke-dasharray="3 2"/>"#,
                    pos_id(spec, pos),
                    f(x + inset),
                    f(y + inset),
                    f(CELL - 2.0 * inset),
                    f(CELL - 2.0 * inset),
                    hex(thread_color(th))
                );
            }
            let first = threads.iter().next().copied().unwrap_or(0);
            let (dx, dy) = (x + CELL - 6.0, y + 6.0);
            let _ = writeln!(
                s,
                r#"<path class="atomic-mark" d="M{} {} L{} {} L{} {} L{} {} Z" fill="{}"/>"#,
                f(dx),
                f(dy - 4.0),
                f(dx + 4.0),
                f(dy),
                f(dx),
                f(dy + 4.0),
                f(dx - 4.0),
                f(dy),
                hex(thread_color(first))
            );
        }

        if let Some(b) = &l.band {
            draw_band(&mut s, b, p);
        }

        // Races: a red dashed frame and a `!` in the corner.
        for &pos in &p.races {
            let Some((x, y)) = cell_xy(&l, &m, pos) else {
                continue;
            };
            let _ = writeln!(
                s,
                r##"<g class="race" data-cell="{}"><rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#d00000" stroke-width="2.4" stroke-dasharray="4 2"/><text x="{}" y="{}" font-size="10" font-weight="bold" fill="#d00000">!</text></g>"##,
                pos_id(spec, pos),
                f(x - 1.0),
                f(y - 1.0),
                f(CELL + 2.0),
                f(CELL + 2.0),
                f(x + 2.0),
                f(y + 9.5)
            );
        }

        // Reads: a dot per reading thread.
        for (&pos, readers) in &p.reads {
            let Some((x, y)) = cell_xy(&l, &m, pos) else {
                continue;
            };
            let k = readers.len().min(MAX_DOTS);
            for (i, &th) in readers.iter().take(MAX_DOTS).enumerate() {
                let (row, col) = (i / 5, i % 5);
                let in_row = (k - row * 5).min(5) as f64;
                let dx = x + CELL / 2.0 + (col as f64 - (in_row - 1.0) / 2.0) * 5.2;
                let dy = y + CELL - 6.5 - row as f64 * 5.2;
                let _ = writeln!(
                    s,
                    r#"<circle class="read" data-thread="{th}" data-cell="{}" cx="{}" cy="{}" r="2.2" fill="{}"/>"#,
                    pos_id(spec, pos),
                    f(dx),
                    f(dy),
                    hex(thread_color(th))
                );
            }
        }
        s.push_str(&labels);
        let _ = writeln!(s, "</g>");
    }

    // Legend.
    let _ = writeln!(s, r#"<g class="legend" transform="translate({MARGIN},{})">"#, f(legend_y));
    let _ = writeln!(
        s,
        r##"<text x="0" y="0" font-size="12" font-weight="bold" fill="#333">threads <tspan font-weight="normal" fill="#888" font-size="10">(colour = thread index within its threadgroup)</tspan></text>"##
    );
    for (i, &th) in threads.iter().enumerate() {
        let (x, y) = ((i % per_row) as f64 * legend_item, 10.0 + (i / per_row) as f64 * 18.0);
        let _ = writeln!(
            s,
            r##"<g class="legend-thread" data-thread="{th}"><rect x="{}" y="{}" width="12" height="12" rx="2" fill="{}"/><text x="{}" y="{}" font-size="10" fill="#333">{}</text></g>"##,
            f(x),
            f(y),
            hex(thread_color(th)),
            f(x + 16.0),
            f(y + 10.0),
            esc(&thread_label(spec, th))
        );
    }
    if more {
        let _ = writeln!(
            s,
            r##"<text x="0" y="{}" font-size="10" fill="#888">… {} more threads</text>"##,
            f(10.0 + legend_rows as f64 * 18.0 + 10.0),
            m.threads.len() - threads.len()
        );
    }
    let _ = writeln!(
        s,
        r##"<g class="legend-marks" font-size="10" fill="#333"><circle cx="6" cy="{y0}" r="2.6" fill="#555"/><text x="14" y="{y1}">read</text><rect x="56" y="{y2}" width="12" height="12" fill="none" stroke="#555" stroke-width="2"/><text x="74" y="{y1}">write</text><path d="M120 {y0} Q135 {y3} 150 {y0}" fill="none" stroke="#555" stroke-width="1.2"/><text x="156" y="{y1}">{flow}</text>{note}</g>"##,
        flow = esc(&flow_text),
        note = if has_tg {
            let (nx, ny) = if note_inline { (note_x, ky + 3.5) } else { (0.0, ky + 3.5 + 18.0) };
            format!(r##"<text x="{}" y="{}" fill="#888">{TG_NOTE}</text>"##, f(nx), f(ny))
        } else {
            String::new()
        },
        y0 = f(ky),
        y1 = f(ky + 3.5),
        y2 = f(ky - 6.0),
        y3 = f(ky - 9.0)
    );
    for (k, (what, text)) in extra_marks.iter().enumerate() {
        let y = ky + note_line + 18.0 * (k + 1) as f64;
        let mark = if *what == "race" {
            format!(
                r##"<rect x="0" y="{}" width="12" height="12" fill="none" stroke="#d00000" stroke-width="2" stroke-dasharray="4 2"/>"##,
                f(y - 6.0)
            )
        } else if *what == "thinned" {
            format!(r##"<path d="M0 {} Q6 {} 12 {}" fill="none" stroke="#555" stroke-width="1.2"/>"##, f(y), f(y - 8.0), f(y))
        } else if *what == "atomic" {
            format!(
                r##"<rect class="legend-atomic" x="0" y="{}" width="12" height="12" fill="none" stroke="#555" stroke-width="1.6" stroke-dasharray="3 2"/><path d="M12 {} L15 {} L12 {} L9 {} Z" fill="#555"/>"##,
                f(y - 6.0),
                f(y - 9.0),
                f(y - 6.0),
                f(y - 3.0),
                f(y - 6.0)
            )
        } else {
            format!(
                r##"<path d="M2 {} Q7 {} 12 {}" fill="none" stroke="#555" stroke-width="1"/><circle cx="2" cy="{}" r="2.2" fill="#555"/><circle cx="12" cy="{}" r="2.2" fill="#555"/>"##,
                f(y - 1.0),
                f(y - 9.0),
                f(y - 1.0),
                f(y + 1.0),
                f(y + 1.0)
            )
        };
        let _ = writeln!(
            s,
            r##"<g class="legend-{what}" font-size="10" fill="#333">{mark}<text x="20" y="{}">{}</text></g>"##,
            f(y + 3.5),
            esc(text)
        );
    }
    let _ = writeln!(s, "</g>");
    s.push_str("</svg>\n");
    s
}

/// A panel's title: its threadgroup, and whose arcs are drawn when there
/// are too many to read.
fn panel_title(m: &Model, p: &crate::model::Panel) -> String {
    let two_d = m.tg_counts[1] > 1 || m.tg_counts[2] > 1;
    let [x, y, z] = p.tg;
    let mut name = if m.tg_counts[2] > 1 {
        format!("threadgroup ({x}, {y}, {z})")
    } else if two_d || z > 0 {
        format!("threadgroup ({x}, {y})")
    } else {
        format!("threadgroup ({x})")
    };
    if let Some(t) = arc_thread(p) {
        name.push_str(&format!(" · value flow drawn for thread {t} only ({} arcs in all)", p.arcs.len()));
    }
    name
}

/// When a panel has too many arcs to read, the one thread whose arcs are
/// drawn: the first that wrote something.
fn arc_thread(p: &crate::model::Panel) -> Option<u32> {
    (p.arcs.len() > CLEAR_ARCS).then(|| p.arcs.iter().map(|(t, _, _)| *t).min()).flatten()
}

/// Where the ray from a cell's centre `(x, y)` towards `(tx, ty)` leaves
/// the square of half-side `h` around it.
fn to_border(x: f64, y: f64, tx: f64, ty: f64, h: f64) -> (f64, f64) {
    let (dx, dy) = (tx - x, ty - y);
    let m = dx.abs().max(dy.abs());
    if m < 1e-9 {
        return (x, y);
    }
    (x + dx / m * h, y + dy / m * h)
}

/// `name[i]` (or `name[r][c]`, with `@k` for a threadgroup copy) of a drawn cell.
fn pos_id(spec: &DiagramSpec, (t, copy, r, c): Pos) -> String {
    let d = &spec.tables[t];
    let idx = if d.shape.len() >= 2 { format!("{r}][{c}") } else { (r * crate::grid_shape(&d.shape).1 + c).to_string() };
    let at = if d.role == Role::Threadgroup { format!("@{copy}") } else { String::new() };
    esc(&format!("{}[{idx}]{at}", d.name))
}
