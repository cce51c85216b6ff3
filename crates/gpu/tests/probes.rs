//! Debugger probes placed by the front end (`msl::probe`): where they go,
//! what they see, and that they never change the kernel.

mod common;
use common::*;
use msl::probe::{ProbeAt, ProbeRequest, Probes};

fn at(line: u32, text: &str) -> ProbeRequest {
    ProbeRequest { at: ProbeAt::Line { file: None, line }, text: text.into(), name: format!("--print {line}"), optional: false }
}

fn watch(text: &str) -> ProbeRequest {
    ProbeRequest { at: ProbeAt::Everywhere, text: text.into(), name: "watch".into(), optional: true }
}

fn compile_probed(src: &str, requests: Vec<ProbeRequest>) -> msl::Compilation {
    let opts = msl::CompileOptions { probes: Probes { requests, view: None }, ..Default::default() };
    msl::compile("t.metal", src, &opts)
}

/// Thread `thread`'s values, one row per pass: (site, texts).
fn seen(src: &str, requests: Vec<ProbeRequest>, n: u32, thread: u32) -> (Vec<(u32, Vec<String>)>, Vec<msl::probe::ProbeSite>) {
    let c = compile_probed(src, requests);
    let p = c.program.as_ref().unwrap_or_else(|| panic!("{}", c.render(false)));
    let (id, _) = p.kernel("k").expect("kernel");
    let k = gpu::lower::lower_kernel(p, id).unwrap_or_else(|e| panic!("{}", e.message));
    let o = RunOptions { probe: Some(([thread, 0, 0], 1000)), ..opts(CheckLevel::All) };
    let r = run(&k, &threads([n, 1, 1], [n, 1, 1]), &mut bufs(vec![(0, f32s(&vec![0.0; n as usize]))]), &o);
    let mut rows: Vec<(u32, Vec<String>)> = Vec::new();
    for h in r.probes.expect("probes").hits {
        if h.slot == 0 {
            rows.push((h.probe, Vec::new()));
        }
        if let Some(r) = rows.last_mut() {
            r.1.push(h.text());
        }
    }
    (rows, r.probe_sites)
}

fn texts(rows: &[(u32, Vec<String>)]) -> Vec<String> {
    rows.iter().map(|r| r.1.join(" ")).collect()
}

#[test]
fn a_range_for_line_sees_each_element_after_it_is_bound() {
    let src = "#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float xs[3] = {1.5f, 2.5f, 4.0f};
    float s = 0;
    for (float x : xs) {
        s += x;
    }
    out[i] = s;
}
";
    let (rows, sites) = seen(src, vec![at(6, "x, s")], 2, 1);
    assert_eq!(texts(&rows), ["1.5 0", "2.5 1.5", "4 4"]);
    assert_eq!(sites.len(), 1);
    // The brace on a line of its own: still the loop's line.
    let allman = src.replace("for (float x : xs) {", "for (float x : xs)\n    {");
    let c = compile_probed(&allman, vec![at(6, "x")]);
    let site = &c.program.as_ref().expect("program").probe_sites[0];
    assert_eq!(c.sources.line_col(site.stmt).0, 6);
    // An unbraced body on the loop's line: before it, each pass.
    let src = src.replace("for (float x : xs) {\n        s += x;\n    }", "for (float x : xs) s += x;\n\n");
    let (rows, _) = seen(&src, vec![at(6, "x")], 2, 1);
    assert_eq!(texts(&rows), ["1.5", "2.5", "4"]);
}

#[test]
fn each_instance_of_a_template_has_its_site() {
    let src = "#include <metal_stdlib>
using namespace metal;
template <typename T>
T twice(T v) {
    T r = v + v;
    return r;
}
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    out[i] = twice(float(i) + 0.5f) + float(twice(int(i)));
}
";
    let (rows, sites) = seen(src, vec![at(6, "r")], 4, 3);
    assert_eq!(sites.len(), 2, "{sites:?}");
    assert!(sites.iter().all(|s| s.placed && s.stmt == sites[0].stmt));
    let mut v = texts(&rows);
    v.sort();
    assert_eq!(v, ["6", "7"]);
}

#[test]
fn a_watch_goes_only_where_it_compiles() {
    let src = "#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float a = 1;
    float t = a * 2;
    out[i] = t;
}
";
    let c = compile_probed(src, vec![watch("t")]);
    assert!(!c.has_errors(), "{}", c.render(false));
    let sites = &c.program.as_ref().expect("program").probe_sites;
    let lines: Vec<(u32, bool)> = sites.iter().map(|s| (c.sources.line_col(s.stmt).0, s.placed)).collect();
    assert_eq!(lines, [(4, false), (5, false), (6, true)]);
    let (rows, _) = seen(src, vec![watch("t")], 1, 0);
    assert_eq!(texts(&rows), ["2"]);
}

#[test]
fn macros_expand_in_probes_and_one_macro_line_is_probed_once() {
    let src = "#include <metal_stdlib>
using namespace metal;
#define SCALE 4
#define BOTH(x) x += 1; x *= 2;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float v = i;
    BOTH(v)
    out[i] = v;
}
";
    let (rows, sites) = seen(src, vec![at(7, "v * SCALE")], 4, 2);
    assert_eq!(texts(&rows), ["8"]);
    assert_eq!(sites.len(), 1);
}

#[test]
fn printing_never_changes_the_kernel() {
    let src = "#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float acc = 1;
    out[i] = acc;
}
";
    for e in ["acc = 99", "acc++", "out[0] = 1"] {
        let c = compile_probed(src, vec![at(5, e)]);
        let p = c.program.as_ref().expect("program");
        let (id, _) = p.kernel("k").expect("kernel");
        let err = gpu::lower::lower_kernel(p, id).err().unwrap_or_else(|| panic!("`{e}` was accepted"));
        assert!(err.message.contains("must not change the kernel"), "{}", err.message);
        // The error points at what was typed, not at the kernel.
        assert_eq!(c.sources.file(err.span.file).probe, Some(0));
    }
}

#[test]
fn a_line_without_a_statement_is_a_mistake_in_the_request() {
    let src = "#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {

    out[i] = 1;
}
";
    let c = compile_probed(src, vec![at(4, "i")]);
    let d = c.diagnostics.items.iter().find(|d| d.is_error()).expect("an error");
    assert_eq!(d.code, Some(msl::diag::codes::PROBE_PLACE));
    assert!(d.message.contains("line 4 of `t.metal` has no statement"), "{}", d.message);
    assert!(d.notes.iter().any(|n| n.contains("near it: 5")), "{:?}", d.notes);
}

#[test]
fn values_in_memory_print_whole_and_unwritten_bytes_as_unknown() {
    let src = "#include <metal_stdlib>
using namespace metal;
struct P { float a; int b; };
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float acc;
    P p = {1.5f, 2};
    int xs[3];
    xs[1] = 7;
    if (i > 100) acc = 1.0f;
    out[i] = p.a + acc;
}
";
    let (rows, _) = seen(src, vec![at(10, "acc, p, p.b, xs, xs[1], i")], 2, 1);
    assert_eq!(texts(&rows), ["? {a: 1.5, b: 2} 2 [?, 7, ?] 7 1"]);
}
