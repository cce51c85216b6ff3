//! Diagrams of real kernel runs: structure of the SVG, a golden snapshot,
//! PNG output and the terminal rendering.

use diagram::{render_png, render_svg, render_terminal, DiagramSpec, Role, TableDesc};
use gpu::trace::{CellAlloc, Trace};
use gpu::{run, Dispatch, DispatchMode, RunOptions};
use std::collections::BTreeMap;

fn compile(src: &str, kernel: &str) -> gpu::Kernel {
    let c = msl::compile("test.metal", src, &Default::default());
    assert!(!c.has_errors(), "{}", c.render(false));
    let p = c.program.expect("program");
    let (id, _) = p.kernel(kernel).expect("kernel");
    gpu::lower::lower_kernel(&p, id).expect("lower")
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn to_f32(b: &[u8]) -> Vec<f32> {
    b.chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn labels(v: &[f32]) -> Vec<String> {
    v.iter().map(|x| format!("{x}")).collect()
}

/// Run `kernel` over float buffers (index → contents) and return the trace
/// and the final buffers.
fn trace_run(src: &str, kernel: &str, bufs: &[Vec<f32>], grid: [u32; 3], tg: [u32; 3], limit: usize) -> (Trace, Vec<Vec<f32>>) {
    let k = compile(src, kernel);
    let mut b: BTreeMap<u32, Vec<u8>> = bufs.iter().enumerate().map(|(i, v)| (i as u32, f32s(v))).collect();
    let opts = RunOptions { trace: Some(limit), ..Default::default() };
    let r = run(&k, &Dispatch { grid, threadgroup: tg, mode: DispatchMode::Threads }, &mut b, &opts);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    (r.trace.expect("trace"), b.values().map(|v| to_f32(v)).collect())
}

fn table(name: &str, role: Role, alloc: CellAlloc, shape: &[usize], values: Option<&[f32]>) -> TableDesc {
    TableDesc { name: name.into(), role, alloc, shape: shape.to_vec(), elem_size: 4, values: values.map(labels) }
}

fn count(s: &str, pat: &str) -> usize {
    s.matches(pat).count()
}

/// Write the PNG where `DIAGRAM_OUT` says (to look at), and check it.
fn save_text(name: &str, text: &str) {
    if let Ok(dir) = std::env::var("DIAGRAM_OUT") {
        std::fs::write(format!("{dir}/diagram-{name}.txt"), text).unwrap();
    }
}

fn png_ok(name: &str, svg: &str) {
    let png = render_png(svg).expect("png");
    assert!(png.len() > 100);
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    if let Ok(dir) = std::env::var("DIAGRAM_OUT") {
        std::fs::write(format!("{dir}/diagram-{name}.png"), &png).unwrap();
        std::fs::write(format!("{dir}/diagram-{name}.svg"), svg).unwrap();
    }
}

const MAP: &str = "kernel void map(const device float* a [[buffer(0)]], device float* out [[buffer(1)]], uint i [[thread_position_in_grid]]) { out[i] = a[i] + 10.0f; }";

fn map_case(n: usize) -> (DiagramSpec, Trace) {
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let (t, out) = trace_run(MAP, "map", &[a.clone(), vec![0.0; n]], [n as u32, 1, 1], [n as u32, 1, 1], 10_000);
    let spec = DiagramSpec {
        focus: None,
        title: "Puzzle 1 — Map".into(),
        grid: [n as u32, 1, 1],
        threadgroup: [n as u32, 1, 1],
        tables: vec![
            table("a", Role::Input, CellAlloc::Buffer(0), &[n], Some(&a)),
            table("out", Role::Output, CellAlloc::Buffer(1), &[n], Some(&out[1])),
        ],
    };
    (spec, t)
}

#[test]
fn map_kernel_diagram() {
    let (spec, t) = map_case(8);
    let svg = render_svg(&spec, &t);
    assert!(svg.starts_with("<svg"));
    assert_eq!(count(&svg, r#"class="panel""#), 1);
    assert_eq!(count(&svg, r#"class="cell""#), 16);
    assert_eq!(count(&svg, r#"class="arc""#), 8);
    for i in 0..8 {
        assert!(svg.contains(&format!(r#"data-from="a[{i}]" data-to="out[{i}]""#)), "arc a[{i}] → out[{i}]");
        assert!(svg.contains(&format!(r#"<circle class="read" data-thread="{i}" data-cell="a[{i}]""#)));
        assert!(svg.contains(&format!(r#"<rect class="write" data-thread="{i}" data-cell="out[{i}]""#)));
    }
    assert_eq!(count(&svg, r#"class="legend-thread""#), 8);
    assert!(svg.contains(">17<"), "final output labels");
    assert!(!svg.contains("truncated"));
    // Deterministic.
    assert_eq!(svg, render_svg(&spec, &t));
    png_ok("map", &svg);
}

#[test]
fn map_kernel_snapshot() {
    let (spec, t) = map_case(4);
    insta::assert_snapshot!("map4_svg", render_svg(&spec, &t));
}

const SHARED: &str = r#"
kernel void shift(const device float* a [[buffer(0)]], device float* out [[buffer(1)]],
                  uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
  threadgroup float s[4];
  s[l] = a[i];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[i] = s[l] + (l < 3 ? s[l + 1] : 0.0f);
}"#;

fn shared_case() -> (DiagramSpec, Trace) {
    let a: Vec<f32> = (1..=8).map(|i| i as f32).collect();
    let (t, out) = trace_run(SHARED, "shift", &[a.clone(), vec![0.0; 8]], [8, 1, 1], [4, 1, 1], 10_000);
    let spec = DiagramSpec {
        focus: None,
        title: "Shared memory: out[i] = s[l] + s[l+1]".into(),
        grid: [8, 1, 1],
        threadgroup: [4, 1, 1],
        tables: vec![
            table("a", Role::Input, CellAlloc::Buffer(0), &[8], Some(&a)),
            table("s", Role::Threadgroup, CellAlloc::Threadgroup(0), &[4], None),
            table("out", Role::Output, CellAlloc::Buffer(1), &[8], Some(&out[1])),
        ],
    };
    (spec, t)
}

#[test]
fn threadgroup_memory_diagram_has_a_column_per_interval() {
    let (spec, t) = shared_case();
    let svg = render_svg(&spec, &t);
    assert_eq!(count(&svg, r#"class="panel""#), 2);
    // Per panel: a (8) + s twice (interval 0 and 1, 4 each) + out (8).
    assert_eq!(count(&svg, r#"class="cell""#), 2 * (8 + 4 + 4 + 8));
    assert_eq!(count(&svg, r#"data-table="s" data-copy="0""#), 2);
    assert_eq!(count(&svg, r#"data-table="s" data-copy="1""#), 2);
    assert_eq!(count(&svg, r#"data-table="s" data-copy="2""#), 0);
    assert!(svg.contains("threadgroup (0)") && svg.contains("threadgroup (1)"));
    // a[i] → s[l] in interval 0; s[l], s[l+1] (read in interval 1) → out[i].
    assert!(svg.contains(r#"data-from="a[5]" data-to="s[1]@0""#));
    assert!(svg.contains(r#"data-from="s[1]@1" data-to="out[5]""#));
    assert!(svg.contains(r#"data-from="s[2]@1" data-to="out[5]""#));
    // Thread 1 of each threadgroup writes s[1] before the barrier; threads 0 and 1 read it after.
    assert_eq!(count(&svg, r#"<rect class="write" data-thread="1" data-cell="s[1]@0""#), 2);
    assert_eq!(count(&svg, r#"data-cell="s[1]@1""#), 4);
    png_ok("shared", &svg);

    let term = render_terminal(&spec, &t, false, 100);
    save_text("shared", &term);
    assert!(term.contains("── threadgroup (1) ──"), "{term}");
    assert!(term.contains("s @ interval 0"), "{term}");
    assert!(term.contains("s @ interval 1: 7 reads of 4/4 cells by 4 threads\n    reads per cell: 1222\n"), "{term}");
    // The legend says what the numbers are.
    assert!(term.contains("Legend: in a grid, a number is the thread that wrote the cell"), "{term}");
    assert!(term.lines().all(|l| l.chars().count() <= 100), "{term}");
    let colored = render_terminal(&spec, &t, true, 100);
    save_text("shared-color", &colored);
    assert!(colored.contains("\x1b[48;2;"));
}

const TWO_D: &str = r#"
kernel void add2d(const device float* a [[buffer(0)]], const device float* b [[buffer(1)]], device float* out [[buffer(2)]],
                  uint2 p [[thread_position_in_grid]]) {
  out[p.y * 6 + p.x] = a[p.y * 6 + p.x] + b[p.x];
}"#;

fn two_d_case() -> (DiagramSpec, Trace) {
    let a: Vec<f32> = (0..36).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..6).map(|i| (i * 100) as f32).collect();
    let (t, out) = trace_run(TWO_D, "add2d", &[a.clone(), b.clone(), vec![0.0; 36]], [6, 6, 1], [3, 3, 1], 10_000);
    let spec = DiagramSpec {
        focus: None,
        title: "2-D broadcast add, 4 threadgroups".into(),
        grid: [6, 6, 1],
        threadgroup: [3, 3, 1],
        tables: vec![
            table("a", Role::Input, CellAlloc::Buffer(0), &[6, 6], Some(&a)),
            table("b", Role::Input, CellAlloc::Buffer(1), &[6], Some(&b)),
            table("out", Role::Output, CellAlloc::Buffer(2), &[6, 6], Some(&out[2])),
        ],
    };
    (spec, t)
}

#[test]
fn two_d_kernel_with_four_threadgroups() {
    let (spec, t) = two_d_case();
    let svg = render_svg(&spec, &t);
    assert_eq!(count(&svg, r#"class="panel""#), 4);
    for name in ["threadgroup (0, 0)", "threadgroup (1, 0)", "threadgroup (0, 1)", "threadgroup (1, 1)"] {
        assert!(svg.contains(name), "{name}");
    }
    assert_eq!(count(&svg, r#"class="cell""#), 4 * (36 + 6 + 36));
    // Every output cell written once (in its own panel), with two arcs each.
    assert_eq!(count(&svg, r#"<rect class="write""#), 36);
    assert_eq!(count(&svg, r#"class="arc""#), 72);
    assert!(svg.contains(r#"data-from="a[4][5]" data-to="out[4][5]""#));
    assert!(svg.contains(r#"data-from="b[5]" data-to="out[4][5]""#));
    // 9 threads per threadgroup in the legend, labelled by local position.
    assert_eq!(count(&svg, r#"class="legend-thread""#), 9);
    assert!(svg.contains("t5 (2,1)"));
    png_ok("2d", &svg);

    let term = render_terminal(&spec, &t, false, 100);
    save_text("2d", &term);
    assert!(term.contains("── threadgroup (1, 1) ──"), "{term}");
    assert!(term.lines().all(|l| l.chars().count() <= 100), "{term}");
}

const TILED: &str = r#"
kernel void matmul(const device float* A [[buffer(0)]], const device float* B [[buffer(1)]], device float* C [[buffer(2)]],
                   uint2 gid [[thread_position_in_grid]], uint2 lid [[thread_position_in_threadgroup]]) {
  threadgroup float As[4][4];
  threadgroup float Bs[4][4];
  const uint n = 8;
  float acc = 0.0f;
  for (uint k0 = 0; k0 < n; k0 += 4) {
    As[lid.y][lid.x] = A[gid.y * n + k0 + lid.x];
    Bs[lid.y][lid.x] = B[(k0 + lid.y) * n + gid.x];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint k = 0; k < 4; k++) acc += As[lid.y][k] * Bs[k][lid.x];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  C[gid.y * n + gid.x] = acc;
}"#;

#[test]
fn tiled_matmul_renders_and_caps() {
    let a: Vec<f32> = (0..64).map(|i| (i % 5) as f32).collect();
    let b: Vec<f32> = (0..64).map(|i| (i % 3) as f32).collect();
    let (t, out) = trace_run(TILED, "matmul", &[a.clone(), b.clone(), vec![0.0; 64]], [8, 8, 1], [4, 4, 1], 100_000);
    let spec = DiagramSpec {
        focus: None,
        title: "Tiled matmul 8×8, 4×4 tiles".into(),
        grid: [8, 8, 1],
        threadgroup: [4, 4, 1],
        tables: vec![
            table("A", Role::Input, CellAlloc::Buffer(0), &[8, 8], Some(&a)),
            table("B", Role::Input, CellAlloc::Buffer(1), &[8, 8], Some(&b)),
            table("As", Role::Threadgroup, CellAlloc::Threadgroup(0), &[4, 4], None),
            table("Bs", Role::Threadgroup, CellAlloc::Threadgroup(1), &[4, 4], None),
            table("C", Role::Output, CellAlloc::Buffer(2), &[8, 8], Some(&out[2])),
        ],
    };
    let svg = render_svg(&spec, &t);
    assert_eq!(count(&svg, r#"class="panel""#), 4);
    // Two loop trips, two barriers each: threadgroup memory is used in
    // intervals 0..=3 (interval 4 only writes C).
    assert_eq!(count(&svg, r#"data-table="As" data-copy="3""#), 4);
    assert_eq!(count(&svg, r#"data-table="As" data-copy="4""#), 0);
    assert!(!svg.contains("truncated"));
    png_ok("matmul", &svg);
    save_text("matmul", &render_terminal(&spec, &t, false, 100));
    save_text("matmul-color", &render_terminal(&spec, &t, true, 100));

    // A small event limit truncates the trace: the title says so.
    let (t, _) = trace_run(TILED, "matmul", &[a, b, vec![0.0; 64]], [8, 8, 1], [4, 4, 1], 50);
    assert!(t.truncated);
    let svg = render_svg(&spec, &t);
    assert!(svg.contains("Tiled matmul 8×8, 4×4 tiles … truncated"));
    assert!(
        render_terminal(&spec, &t, false, 100).starts_with("Tiled matmul 8×8, 4×4 tiles (trace cut short: later accesses are not drawn)\n")
    );
}

#[test]
fn text_is_escaped_and_png_renders_without_trace() {
    let spec = DiagramSpec {
        focus: None,
        title: "a < b & \"c\"".into(),
        grid: [2, 1, 1],
        threadgroup: [2, 1, 1],
        tables: vec![TableDesc {
            name: "x<y>".into(),
            role: Role::Input,
            alloc: CellAlloc::Buffer(0),
            shape: vec![2],
            elem_size: 4,
            values: Some(vec!["&".into(), "'".into()]),
        }],
    };
    let svg = render_svg(&spec, &Trace::default());
    assert!(svg.contains("a &lt; b &amp; &quot;c&quot;"));
    assert!(svg.contains("x&lt;y&gt;"));
    assert!(!svg.contains("x<y>"));
    png_ok("empty", &svg);
}

#[test]
fn tables_from_the_kernel() {
    let k = compile(SHARED, "shift");
    let a = TableDesc::for_buffer(&k, 0, Role::Input, vec![8], None).unwrap();
    assert_eq!((a.name.as_str(), a.elem_size, a.alloc), ("a", 4, CellAlloc::Buffer(0)));
    assert!(TableDesc::for_buffer(&k, 7, Role::Input, vec![8], None).is_none());
    let s = TableDesc::for_threadgroup_var(&k, 0, None).unwrap();
    assert_eq!((s.name.as_str(), s.elem_size, s.shape.clone(), s.role), ("s", 4, vec![4], Role::Threadgroup));
}

const RACE: &str = r#"
kernel void race(const device float* a [[buffer(0)]], device float* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[i / 2] = a[i];
}"#;

#[test]
fn several_writers_of_one_cell_get_nested_outlines() {
    let k = compile(RACE, "race");
    let mut b = BTreeMap::new();
    b.insert(0, f32s(&[1.0, 2.0, 3.0, 4.0]));
    b.insert(1, f32s(&[0.0; 2]));
    let opts = RunOptions { trace: Some(1000), check: gpu::CheckLevel::None, ..Default::default() };
    let r = run(&k, &Dispatch { grid: [4, 1, 1], threadgroup: [4, 1, 1], mode: DispatchMode::Threads }, &mut b, &opts);
    let t = r.trace.unwrap();
    let spec = DiagramSpec {
        focus: None,
        title: "race".into(),
        grid: [4, 1, 1],
        threadgroup: [4, 1, 1],
        tables: vec![
            TableDesc::for_buffer(&k, 0, Role::Input, vec![4], None).unwrap(),
            TableDesc::for_buffer(&k, 1, Role::Output, vec![2], None).unwrap(),
        ],
    };
    let svg = render_svg(&spec, &t);
    // Two outlines, and the race frame.
    assert_eq!(count(&svg, r#"<rect class="write" data-thread="0" data-cell="out[0]""#), 1);
    assert_eq!(count(&svg, r#"<rect class="write" data-thread="1" data-cell="out[0]""#), 1);
    assert_eq!(count(&svg, r#"<g class="race" data-cell="out[0]">"#), 1);
    assert!(svg.contains("race: two threads accessed the cell in one barrier interval"), "{svg}");
    assert!(svg.contains(r#"data-thread="1" data-cell="out[0]" x="18" "#), "second outline inset: {svg}");
    let term = render_terminal(&spec, &t, false, 80);
    assert!(term.contains("\n  0+! 2+!\n"), "racing cells are marked: {term}");
    assert!(term.replace('\n', " ").contains("`!`: threads raced on the cell"), "{term}");
    png_ok("race", &svg);
}

#[test]
fn many_threadgroups_and_threads_are_capped() {
    // 16 threadgroups: 9 panels, and the title says the rest is left out.
    let a: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let (t, _) = trace_run(MAP, "map", &[a.clone(), vec![0.0; 64]], [64, 1, 1], [4, 1, 1], 10_000);
    let spec = DiagramSpec {
        focus: None,
        title: "map".into(),
        grid: [64, 1, 1],
        threadgroup: [4, 1, 1],
        tables: vec![
            table("a", Role::Input, CellAlloc::Buffer(0), &[64], Some(&a)),
            table("out", Role::Output, CellAlloc::Buffer(1), &[64], None),
        ],
    };
    let svg = render_svg(&spec, &t);
    assert_eq!(count(&svg, r#"class="panel""#), 9);
    assert!(svg.contains("map … truncated"));
    assert!(svg.contains("16 threadgroups, the first 9 shown"));
    // 64 cells wrap at 16 a row.
    assert_eq!(count(&svg, r#"class="cell""#), 9 * 128);
    png_ok("wrapped", &svg);

    // A 16×16 threadgroup: 256 threads, 64 in the legend.
    let src = "kernel void k(const device float* a [[buffer(0)]], device float* out [[buffer(1)]], uint2 p [[thread_position_in_grid]]) { out[p.y * 16 + p.x] = a[p.x * 16 + p.y]; }";
    let a: Vec<f32> = (0..256).map(|i| i as f32).collect();
    let (t, out) = trace_run(src, "k", &[a.clone(), vec![0.0; 256]], [16, 16, 1], [16, 16, 1], 10_000);
    let spec = DiagramSpec {
        focus: None,
        title: "transpose 16×16".into(),
        grid: [16, 16, 1],
        threadgroup: [16, 16, 1],
        tables: vec![
            table("a", Role::Input, CellAlloc::Buffer(0), &[16, 16], Some(&a)),
            table("out", Role::Output, CellAlloc::Buffer(1), &[16, 16], Some(&out[1])),
        ],
    };
    let svg = render_svg(&spec, &t);
    assert_eq!(count(&svg, r#"class="legend-thread""#), 64);
    assert!(svg.contains("… 192 more threads"));
    // 256 arcs are a mesh: only thread 0's are drawn, and the legend says so.
    assert_eq!(count(&svg, r#"class="arc""#), 1);
    assert!(svg.contains("value flow drawn for thread 0 only (256 arcs in all)"), "{svg}");
    png_ok("transpose", &svg);
    let term = render_terminal(&spec, &t, false, 100);
    save_text("transpose", &term);
    assert!(term.lines().all(|l| l.chars().count() <= 100), "{term}");
}
