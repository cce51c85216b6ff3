//! Golden SVG diagrams of two solved puzzles, drawn from the simulator's
//! trace (`metal-puzzles show`), plus structural checks for every puzzle.

mod common;

use common::{file_with, solution};

fn svg(slug: &str) -> String {
    let p = puzzles::find(slug).expect("puzzle");
    let text = file_with(slug, solution(slug));
    let shown = puzzles::show::trace_test(p, &p.file_name(), &text, 0, None).expect("traced run");
    diagram::render_svg(&shown.spec, &shown.trace)
}

#[test]
fn zip_diagram() {
    insta::assert_snapshot!(svg("zip"));
}

#[test]
fn threadgroup_memory_diagram() {
    insta::assert_snapshot!(svg("threadgroup_memory"));
}

#[test]
fn every_solution_draws_its_writes() {
    for p in puzzles::PUZZLES.iter() {
        let text = file_with(p.slug, solution(p.slug));
        let shown = puzzles::show::trace_test(p, &p.file_name(), &text, 0, None).expect("traced run");
        assert!(shown.findings.is_empty(), "{}: {:?}", p.slug, shown.findings);
        let writes = shown.trace.events.iter().filter(|e| e.write).count();
        assert!(writes > 0, "{}: no writes traced", p.slug);
        let doc = diagram::render_svg(&shown.spec, &shown.trace);
        assert!(doc.starts_with("<svg") || doc.starts_with("<?xml"), "{}", p.slug);
        // Every output value the solution produced appears as a cell label.
        assert!(doc.contains(p.output_name), "{}: output table missing", p.slug);
    }
}

#[test]
fn matmul_full_draws_2d_tiles_with_values_for_one_threadgroup() {
    let p = puzzles::find("matmul").expect("puzzle");
    let text = file_with("matmul", solution("matmul"));
    let shown = puzzles::show::trace_test(p, &p.file_name(), &text, 1, None).expect("traced run");
    // Nine threadgroups with threadgroup memory: the first is drawn alone.
    assert_eq!(shown.spec.focus, Some([0, 0, 0]));
    let tile = shown.spec.tables.iter().find(|t| t.name == "a_shared").expect("a_shared");
    assert_eq!(tile.shape, vec![3, 3], "declared `a_shared[3][3]`");
    let doc = diagram::render_svg(&shown.spec, &shown.trace);
    let height: f64 = doc.split("height=\"").nth(1).and_then(|s| s.split('"').next()).and_then(|s| s.parse().ok()).unwrap();
    assert!(height < 1200.0, "readable size, got height {height}");
    assert!(doc.contains("threadgroup (0, 0, 0) shown"));
    // a is arange(64) reshaped 8x8: the first tile holds a[0..3][0..3].
    assert!(doc.contains(r##"fill="#333">9</text>"##), "tile values are drawn");
    // Another threadgroup on request.
    let other = puzzles::show::trace_test(p, &p.file_name(), &text, 1, Some([2, 1, 0])).expect("traced run");
    let doc = diagram::render_svg(&other.spec, &other.trace);
    assert!(doc.contains("threadgroup (2, 1, 0) shown"), "{}", &doc[..400]);
    let term = diagram::render_terminal(&other.spec, &other.trace, false, 100);
    assert!(term.contains("interval k: threadgroup memory after k barriers"));
}

/// A drawn element's rectangle, in SVG pixels.
#[derive(Clone, Debug)]
struct Boxed {
    kind: Kind,
    /// What it is, for failure messages (the element's text or class).
    what: String,
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
    /// The panel (`<g class="panel">`) it is drawn in, if any.
    panel: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Panel,
    Cell,
    /// A value written in a cell.
    Value,
    Text,
    /// A legend colour swatch or mark.
    Swatch,
}

impl Boxed {
    /// The area two boxes share (touching edges share none).
    fn overlap(&self, o: &Boxed) -> f64 {
        let w = self.x1.min(o.x1) - self.x0.max(o.x0);
        let h = self.y1.min(o.y1) - self.y0.max(o.y0);
        if w > 0.5 && h > 0.5 {
            w * h
        } else {
            0.0
        }
    }

    fn inside(&self, o: &Boxed) -> bool {
        const SLACK: f64 = 0.5;
        self.x0 >= o.x0 - SLACK && self.y0 >= o.y0 - SLACK && self.x1 <= o.x1 + SLACK && self.y1 <= o.y1 + SLACK
    }
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    Some(tag[at..].split('"').next()?.to_string())
}

fn num(tag: &str, name: &str) -> Option<f64> {
    attr(tag, name)?.parse().ok()
}

/// Visible characters of XML text (an entity is one).
fn chars(s: &str) -> f64 {
    let mut n = 0;
    let mut in_entity = false;
    for c in s.chars() {
        match c {
            '&' => in_entity = true,
            ';' if in_entity => {
                in_entity = false;
                n += 1;
            }
            _ if in_entity => {}
            _ => n += 1,
        }
    }
    n as f64
}

/// The rectangles of every panel, cell, text and swatch of an SVG the
/// diagram crate wrote. Text boxes use the renderer's own width rule (0.6
/// em a character, which DejaVu Sans stays under) and a line height of
/// 1 em; `<g>` translations and font sizes are followed.
fn boxes(svg: &str) -> (f64, f64, Vec<Boxed>) {
    let head = &svg[..svg.find('>').unwrap()];
    let (width, height) = (num(head, "width").unwrap(), num(head, "height").unwrap());
    let mut out = Vec::new();
    // (dx, dy, inherited font size, panel index)
    let mut groups: Vec<(f64, f64, f64, Option<usize>)> = vec![(0.0, 0.0, 16.0, None)];
    let mut panels = 0;
    let mut rest = svg;
    while let Some(lt) = rest.find('<') {
        rest = &rest[lt..];
        let end = rest.find('>').unwrap();
        let tag = &rest[..end + 1];
        let (dx, dy, fs, panel) = *groups.last().unwrap();
        if tag.starts_with("</g") {
            groups.pop();
        } else if tag.starts_with("<g") {
            let (mut gx, mut gy) = (dx, dy);
            if let Some(t) = attr(tag, "transform") {
                let inner = t.trim_start_matches("translate(").trim_end_matches(')');
                let mut it = inner.split(',').map(|v| v.trim().parse::<f64>().unwrap());
                gx += it.next().unwrap();
                gy += it.next().unwrap_or(0.0);
            }
            let fs = num(tag, "font-size").unwrap_or(fs);
            let panel = if attr(tag, "class").as_deref() == Some("panel") {
                panels += 1;
                Some(panels - 1)
            } else {
                panel
            };
            if !tag.ends_with("/>") {
                groups.push((gx, gy, fs, panel));
            }
        } else if tag.starts_with("<rect") {
            let class = attr(tag, "class").unwrap_or_default();
            let (x, y) = (num(tag, "x").unwrap_or(0.0) + dx, num(tag, "y").unwrap_or(0.0) + dy);
            let (w, h) = (num(tag, "width").unwrap(), num(tag, "height").unwrap());
            let kind = match class.as_str() {
                // Write and atomic outlines are drawn inside their cell.
                "background" | "write" | "atomic" => None,
                "cell" => Some(Kind::Cell),
                _ if attr(tag, "rx").as_deref() == Some("8") => Some(Kind::Panel),
                _ => Some(Kind::Swatch),
            };
            if let Some(kind) = kind {
                out.push(Boxed { kind, what: class, x0: x, y0: y, x1: x + w, y1: y + h, panel });
            }
        } else if tag.starts_with("<text") {
            let close = rest.find("</text>").unwrap();
            let inner = &rest[end + 1..close];
            let size = num(tag, "font-size").unwrap_or(fs);
            // The text's own run, then each tspan's (with its own size and offset).
            let mut w = 0.0;
            let mut text = String::new();
            let mut part = inner;
            let first = part.find("<tspan").unwrap_or(part.len());
            w += chars(&part[..first]) * size * 0.6;
            text.push_str(&part[..first]);
            part = &part[first..];
            while part.starts_with("<tspan") {
                let te = part.find('>').unwrap();
                let ttag = &part[..te + 1];
                let tclose = part.find("</tspan>").unwrap();
                let ts = num(ttag, "font-size").unwrap_or(size);
                w += num(ttag, "dx").unwrap_or(0.0) + chars(&part[te + 1..tclose]) * ts * 0.6;
                text.push(' ');
                text.push_str(&part[te + 1..tclose]);
                part = &part[tclose + "</tspan>".len()..];
                let next = part.find("<tspan").unwrap_or(part.len());
                w += chars(&part[..next]) * size * 0.6;
                part = &part[next..];
            }
            let (x, y) = (num(tag, "x").unwrap() + dx, num(tag, "y").unwrap() + dy);
            let x0 = if attr(tag, "text-anchor").as_deref() == Some("middle") { x - w / 2.0 } else { x };
            let kind = if attr(tag, "class").as_deref() == Some("value") { Kind::Value } else { Kind::Text };
            out.push(Boxed { kind, what: text, x0, y0: y - 0.8 * size, x1: x0 + w, y1: y + 0.2 * size, panel });
            rest = &rest[close..];
            continue;
        }
        rest = &rest[end + 1..];
    }
    (width, height, out)
}

/// What is wrong with a diagram's geometry: too large, something outside
/// the picture or its panel, panels overlapping, or a box or label covered
/// by another box or label (a value may only sit inside its own cell).
/// Arcs, read dots and write outlines are left out: arcs pass under the
/// tables by design, dots and outlines are drawn inside their cell.
fn geometry_problems(svg: &str) -> Vec<String> {
    let (w, h, b) = boxes(svg);
    let mut problems = Vec::new();
    if w > 2400.0 || h > 2400.0 {
        problems.push(format!("{w}x{h} px is over 2400x2400"));
    }
    let canvas = Boxed { kind: Kind::Panel, what: "picture".into(), x0: 0.0, y0: 0.0, x1: w, y1: h, panel: None };
    let panels: Vec<&Boxed> = b.iter().filter(|x| x.kind == Kind::Panel).collect();
    for x in &b {
        if !x.inside(&canvas) {
            problems
                .push(format!("{:?} `{}` at ({:.0},{:.0})-({:.0},{:.0}) is outside the picture", x.kind, x.what, x.x0, x.y0, x.x1, x.y1));
        }
        if let (Some(p), false) = (x.panel, x.kind == Kind::Panel) {
            if !x.inside(panels[p]) {
                problems.push(format!("{:?} `{}` sticks out of its panel", x.kind, x.what));
            }
        }
    }
    for (i, x) in b.iter().enumerate() {
        for y in &b[i + 1..] {
            let both_panels = x.kind == Kind::Panel && y.kind == Kind::Panel;
            if (x.kind == Kind::Panel) != (y.kind == Kind::Panel) || x.overlap(y) == 0.0 {
                continue;
            }
            // A value in its own cell is what a cell is for.
            let own_cell = |v: &Boxed, c: &Boxed| v.kind == Kind::Value && c.kind == Kind::Cell && v.inside(c);
            if !both_panels && (own_cell(x, y) || own_cell(y, x)) {
                continue;
            }
            problems.push(format!(
                "{:?} `{}` ({:.0},{:.0})-({:.0},{:.0}) and {:?} `{}` ({:.0},{:.0})-({:.0},{:.0}) overlap",
                x.kind, x.what, x.x0, x.y0, x.x1, x.y1, y.kind, y.what, y.x0, y.y0, y.x1, y.y1
            ));
        }
    }
    problems
}

/// Every test of every puzzle, drawn from the reference solution: at most
/// 2400x2400 px, nothing covered. With `DIAGRAM_PNG_DIR` set, the SVGs and
/// PNGs are written there too (to look at them).
#[test]
fn every_diagram_fits_and_covers_nothing() {
    let png_dir = std::env::var_os("DIAGRAM_PNG_DIR").map(std::path::PathBuf::from);
    let mut problems = Vec::new();
    let mut drawn = 0;
    for p in puzzles::PUZZLES.iter() {
        let text = file_with(p.slug, solution(p.slug));
        for (case, t) in p.tests.iter().enumerate() {
            let shown = puzzles::show::trace_test(p, &p.file_name(), &text, case, None).expect("traced run");
            let doc = diagram::render_svg(&shown.spec, &shown.trace);
            let (_, _, b) = boxes(&doc);
            assert!(b.iter().any(|x| x.kind == Kind::Cell) && b.iter().any(|x| x.kind == Kind::Value), "{}: nothing parsed", t.name);
            problems.extend(geometry_problems(&doc).into_iter().map(|e| format!("{} ({}): {e}", p.slug, t.name)));
            if let Some(dir) = &png_dir {
                std::fs::create_dir_all(dir).unwrap();
                let png = diagram::render_png(&doc).expect("png");
                let name = format!("{:02}_{}_test{}", p.number, p.slug, case + 1);
                std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
                std::fs::write(dir.join(format!("{name}.svg")), &doc).unwrap();
            }
            drawn += 1;
        }
    }
    assert!(drawn >= puzzles::PUZZLES.len());
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn the_geometry_check_sees_overlaps_and_oversize() {
    let ok = r##"<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100" viewBox="0 0 200 100">
<g class="panel" transform="translate(10,10)"><rect x="0" y="0" width="150" height="80" rx="8"/>
<rect class="cell" x="10" y="20" width="30" height="30"/><text class="value" x="25" y="33" font-size="9" text-anchor="middle">7</text>
<rect class="cell" x="40" y="20" width="30" height="30"/>
</g></svg>"##;
    assert!(geometry_problems(ok).is_empty(), "{:?}", geometry_problems(ok));
    let covered = ok.replace(r#"<rect class="cell" x="40""#, r#"<rect class="cell" x="30""#);
    assert!(geometry_problems(&covered).iter().any(|e| e.contains("overlap")));
    let wide_value = ok.replace(">7</text>", ">123456789</text>");
    assert!(geometry_problems(&wide_value).iter().any(|e| e.contains("overlap")));
    let outside = ok.replace(r#"<rect class="cell" x="40" y="20""#, r#"<rect class="cell" x="140" y="20""#);
    assert!(geometry_problems(&outside).iter().any(|e| e.contains("sticks out")));
    let big = ok.replace(r#"width="200""#, r#"width="2500""#);
    assert!(geometry_problems(&big).iter().any(|e| e.contains("over 2400")));
}

/// The diagram of a puzzle's first test drawn from `body`.
fn svg_of(slug: &str, body: &str) -> String {
    let p = puzzles::find(slug).unwrap();
    let shown = puzzles::show::trace_test(p, &p.file_name(), &file_with(slug, body), 0, None).expect("traced run");
    diagram::render_svg(&shown.spec, &shown.trace)
}

#[test]
fn atomics_and_simd_group_exchanges_are_drawn_apart() {
    // Histogram: threadgroup and device atomics get dashed outlines and
    // their legend line, not read dots or write outlines.
    let doc = svg_of("histogram", solution("histogram"));
    assert!(doc.contains(r#"class="atomic" data-thread="#) && doc.contains(r#"class="atomic-mark""#), "no atomics drawn");
    assert!(doc.contains(r#"class="legend-atomic""#));
    let out_cells =
        |class: &str| doc.lines().filter(|l| l.contains(&format!(r#"class="{class}""#)) && l.contains(r#"data-cell="out["#)).count();
    assert!(out_cells("atomic") > 0 && out_cells("write") == 0 && out_cells("read") == 0);
    assert!(geometry_problems(&doc).is_empty(), "{:?}", geometry_problems(&doc));
    // A reduction: one bracket per SIMD-group under its 32 lanes.
    let doc = svg_of("simd_sum", solution("simd_sum"));
    assert!(doc.contains(r#"data-name="simd_sum" data-kind="reduce""#), "{doc}");
    assert_eq!(doc.matches(r#"class="lane" "#).count(), 32);
    assert!(doc.contains(r#"class="legend-simd""#) && !doc.contains("legend-atomic"));
    // A prefix scan, a shuffle tree (arcs from source lane to lane), a matrix multiply.
    assert!(svg_of("simd_scan", solution("simd_scan")).contains(r#"data-kind="scan""#));
    let tree = "uint i = thread_position_in_grid.x;\nuint lane = thread_index_in_simdgroup;\n\
float s = i < uint(a_shape[0]) ? a[i] : 0.0f;\n\
for (ushort d = 16; d > 0; d /= 2) { s += simd_shuffle_xor(s, d); }\n\
if (lane == 0 && i < uint(a_shape[0])) { out[i / 32] = s; }\n";
    let doc = svg_of("simd_sum", tree);
    // One call site run 5 times; lane 0 gets lane 16's value (xor 16), among others.
    assert!(doc.contains(r#"data-name="simd_shuffle_xor" data-kind="shuffle" data-runs="5""#), "{doc}");
    assert!(doc.contains(r#"class="exchange-move" data-from="16" data-to="0""#));
    assert!(svg_of("simd_matmul", solution("simd_matmul")).contains(r#"data-kind="matrix""#));
    // Book one's diagrams have neither.
    let doc = svg_of("map", solution("map"));
    assert!(!doc.contains("simd-band") && !doc.contains("legend-atomic"));
}

#[test]
fn the_terminal_diagram_lists_atomics_and_simd_group_functions() {
    let text = |slug: &str, body: &str| {
        let p = puzzles::find(slug).unwrap();
        let shown = puzzles::show::trace_test(p, &p.file_name(), &file_with(slug, body), 0, None).expect("traced run");
        diagram::render_terminal(&shown.spec, &shown.trace, false, 100)
    };
    let t = text("matvec", solution("matvec"));
    // Lane 0 adds the chunk's sum to out[0] with a device atomic.
    assert!(t.contains("  out: atomics on 1 cell by 1 thread (*)"), "{t}");
    assert!(t.contains("0*"), "{t}");
    assert!(t.contains("  SIMD-group functions:\n    simd_sum (32 lanes)"), "{t}");
    assert!(t.contains("`3*`: updated by atomic operations"), "{t}");
    let t = text("map", solution("map"));
    assert!(!t.contains("SIMD-group") && !t.contains("atomic"), "{t}");
}

#[test]
fn cells_no_thread_wrote_are_drawn_as_unknown() {
    // Only the first two threads write: the other cells of `out` hold
    // garbage (MLX leaves outputs uninitialized) and must not look like 0.
    let p = puzzles::find("map").expect("puzzle");
    let text = file_with("map", "uint i = thread_position_in_grid.x;\n    if (i < 2) { out[i] = a[i] + 10; }");
    let shown = puzzles::show::trace_test(p, &p.file_name(), &text, 0, None).expect("traced run");
    let out = shown.spec.tables.iter().find(|t| t.name == p.output_name).expect("output table");
    let values = out.values.as_ref().expect("values");
    assert_eq!(&values[..2], &["10".to_string(), "11".to_string()]);
    assert!(values[2..].iter().all(|v| v == "?"), "{values:?}");
}
