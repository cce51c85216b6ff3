//! `debug --thread --print` and `--profile` end to end, with golden outputs.

use std::path::Path;
use std::process::{Command, Output};

fn bin(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_metal-puzzles")).current_dir(dir).args(args).env_remove("VERBOSE").output().expect("runs")
}

/// A temporary folder, removed when the test ends.
struct Temp(tempfile::TempDir);

impl std::ops::Deref for Temp {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        self.0.path()
    }
}

fn temp(name: &str) -> Temp {
    Temp(tempfile::Builder::new().prefix(&format!("mp-debug-{name}-")).tempdir().unwrap())
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const SCAN: &str = "#include <metal_stdlib>
using namespace metal;

kernel void scan(device const float* a [[buffer(0)]],
                 device float* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]],
                 uint n [[threads_per_grid]]) {
    float acc = 0;
    for (uint k = 0; k <= i; k++) {
        acc += a[k];
    }
    if (i % 2 == 0)
        out[i] = acc;
    else
        out[i] = -acc;
}
";

const SCAN_ARGS: &[&str] =
    &["scan.metal", "--kernel", "scan", "--grid", "8", "--threadgroup", "4", "--arg", "a=arange(8):f32", "--arg", "out=zeros(8):f32"];

fn scan_dir(name: &str) -> Temp {
    let d = temp(name);
    std::fs::write(d.join("scan.metal"), SCAN).unwrap();
    d
}

fn debug(dir: &Path, own: &[&str], target: &[&str]) -> Output {
    let mut args = vec!["debug"];
    args.extend_from_slice(target);
    args.extend_from_slice(own);
    bin(dir, &args)
}

#[test]
fn print_in_a_loop_each_iteration_and_after_an_unbraced_if() {
    let d = scan_dir("loop");
    let o = debug(&d, &["--thread", "3", "--print", "10: k, a[k], acc", "--print", "15: acc, -acc, i % 2 == 1"], SCAN_ARGS);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    insta::assert_snapshot!("scan_thread3", out(&o));
    // The unbraced `if` body still belongs to the `if`: thread 2 passes line
    // 13, not 15 (the probe was wrapped in braces with the statement).
    let o = debug(&d, &["--thread", "2", "--print", "13: acc", "--print", "15: acc"], SCAN_ARGS);
    insta::assert_snapshot!("scan_thread2_branches", out(&o));
    let o = bin(
        &d,
        &[
            "run",
            SCAN_ARGS[0],
            "--kernel",
            "scan",
            "--grid",
            "8",
            "--threadgroup",
            "4",
            "--arg",
            "a=arange(8):f32",
            "--arg",
            "out=zeros(8):f32",
        ],
    );
    assert!(out(&o).contains("[  0.,  -1.,   3.,  -6.,  10., -15.,  21., -28.]"), "{}", out(&o));
}

#[test]
fn flags_may_come_before_the_target_and_vectors_print_whole() {
    let d = scan_dir("order");
    let mut args = vec!["debug", "--thread=5", "--print", "8: float2(i, n), uint3(1, 2, 3), i > 4"];
    args.extend_from_slice(SCAN_ARGS);
    let o = bin(&d, &args);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    insta::assert_snapshot!("vectors", out(&o));
}

#[test]
fn mistakes_are_explained() {
    let d = scan_dir("errors");
    let o = debug(&d, &["--thread", "2", "--print", "11: acc"], SCAN_ARGS);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("line 11 of `scan.metal` has no statement of the kernel to stop at"), "{}", err(&o));
    assert!(err(&o).contains("lines with statements near it: 8, 9, 10, 12, 13"), "{}", err(&o));
    // An expression that does not compile there: pointed at as typed.
    let o = debug(&d, &["--thread", "2", "--print", "10: k, kk"], SCAN_ARGS);
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("use of undeclared identifier `kk`") && err(&o).contains("--print 10:1:4"), "{}", err(&o));
    assert!(err(&o).contains("the expressions are compiled where they are printed: before line 10 of `scan.metal`"), "{}", err(&o));
    let o = debug(&d, &["--thread", "8", "--print", "10: k"], SCAN_ARGS);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--thread 8,0,0 is outside the grid of 8x1x1 threads"), "{}", err(&o));
    let o = debug(&d, &["--thread", "1", "--print", "ten: k"], SCAN_ARGS);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("`ten` is not a line number"), "{}", err(&o));
    let o = debug(&d, &["--print", "10: k"], SCAN_ARGS);
    assert!(err(&o).contains("--thread X,Y,Z is required"), "{}", err(&o));
    let o = debug(&d, &["--thread", "1", "--print", "10: k"], &["nosuch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("`nosuch` is not a puzzle"), "{}", err(&o));
}

#[test]
fn the_table_is_capped() {
    let d = scan_dir("cap");
    let o = debug(&d, &["--thread", "7", "--print", "10: k", "--limit", "3"], SCAN_ARGS);
    assert_eq!(o.status.code(), Some(0));
    let text = out(&o);
    assert!(text.contains("     3 | 2\n") && !text.contains("     4 | 3"), "{text}");
    assert!(text.contains("(stopped recording after 3 values; `--limit N` keeps more)"), "{text}");
}

const BODY: &str = "uint i = thread_position_in_grid.x;
float v = a[i];
for (int r = 0; r < 2; r++) {
    v = v * 2;
}
out[i] = v;
";

const BODY_ARGS: &[&str] = &["body.metal", "--input", "a=arange(4):f32", "--output", "out:float32:4", "--grid", "4", "--threadgroup", "4"];

#[test]
fn mlx_body_lines_are_the_bodys() {
    let d = temp("mlx");
    std::fs::write(d.join("body.metal"), BODY).unwrap();
    let o = debug(&d, &["--thread", "1", "--print", "4: r, v", "--print", "6: v, out[i]"], BODY_ARGS);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    insta::assert_snapshot!("mlx_body", out(&o));
}

#[test]
fn puzzle_form_runs_the_books_test() {
    let root = temp("puzzle");
    assert_eq!(bin(&root, &["init"]).status.code(), Some(0));
    let path = root.join("metal-puzzles/10_dot_product.metal");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "// Write your solution here.",
        "shared[local_i] = a[i] * b[i];
threadgroup_barrier(mem_flags::mem_threadgroup);
if (local_i == 0) {
    float s = 0;
    for (uint k = 0; k < threads_per_threadgroup.x; k++) {
        s += shared[k];
    }
    out[0] = s;
}",
    );
    std::fs::write(&path, &text).unwrap();
    let line = |needle: &str| (text.lines().position(|l| l.contains(needle)).unwrap() + 1).to_string();
    let (l_loop, l_out) = (line("for (uint k"), line("out[0] = s"));
    let o =
        bin(&root, &["debug", "10", "--thread", "0", "--print", &format!("{l_loop}: k, shared[k], s"), "--print", &format!("{l_out}: s")]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    insta::assert_snapshot!(
        "puzzle10_thread0",
        out(&o).replace(&format!("line {l_loop}:"), "line LOOP:").replace(&format!("line {l_out}:"), "line OUT:")
    );
    let o = bin(&root, &["debug", "10", "--thread", "3", "--print", &format!("{l_out}: s")]);
    assert!(out(&o).contains("the thread never reached line"), "{}", out(&o));
    let o = bin(&root, &["debug", "10", "--test", "2", "--thread", "0", "--print", &format!("{l_out}: s")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("puzzle 10 has no test 2; its tests are: 1 (Dot Product)"), "{}", err(&o));
}

#[test]
fn run_profile_listing_and_json() {
    let d = scan_dir("profile");
    let mut args = vec!["run"];
    args.extend_from_slice(SCAN_ARGS);
    args.push("--profile");
    let o = bin(&d, &args);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    insta::assert_snapshot!("scan_profile", out(&o));
    args.push("--json");
    let o = bin(&d, &args);
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    let p = &v["profile"];
    assert_eq!(p["threads"], 8);
    assert_eq!(p["totals"]["device_reads"], 36);
    assert_eq!(p["totals"]["device_writes"], 8);
    let lines = p["lines"].as_array().unwrap();
    // Hottest first: the loop body's 36 reads (threads 0..7 read i+1 values).
    assert_eq!(lines[0]["line"], 10);
    assert_eq!(lines[0]["device_reads"], 36);
    assert_eq!(lines[0]["device_bytes"], 144);
    // Half of each SIMD-group takes each side of the `if`.
    let l13 = lines.iter().find(|l| l["line"] == 13).unwrap();
    assert_eq!(l13["executions"], 4);
    assert_eq!(l13["utilization"], 0.5);
}

const SHARED: &str = "#include <metal_stdlib>
using namespace metal;

kernel void hist(device const uint* a [[buffer(0)]],
                 device atomic_uint* bins [[buffer(1)]],
                 uint i [[thread_position_in_grid]],
                 uint l [[thread_position_in_threadgroup]]) {
    threadgroup uint tile[64];
    tile[l] = a[i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (l < 16) {
        atomic_fetch_add_explicit(&bins[tile[l] % 4], 1, memory_order_relaxed);
    }
}
";

#[test]
fn profile_counts_threadgroup_memory_atomics_and_barriers() {
    let d = temp("hist");
    std::fs::write(d.join("hist.metal"), SHARED).unwrap();
    let o = bin(
        &d,
        &[
            "run",
            "hist.metal",
            "--kernel",
            "hist",
            "--grid",
            "128",
            "--threadgroup",
            "64",
            "--arg",
            "a=arange(128):u32",
            "--arg",
            "bins=zeros(4):u32",
            "--profile",
            "--json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    let lines = v["profile"]["lines"].as_array().unwrap();
    let at = |n: u64| lines.iter().find(|l| l["line"] == n).unwrap_or_else(|| panic!("line {n} in {lines:?}"));
    assert_eq!(at(9)["device_reads"], 128);
    assert_eq!(at(9)["threadgroup_writes"], 128);
    assert_eq!(at(10)["barrier_waits"], 128);
    assert_eq!(at(12)["atomics"], 32);
    assert_eq!(at(12)["threadgroup_reads"], 32);
    // 16 of the 32 lanes of the first SIMD-group of each threadgroup.
    assert_eq!(at(12)["executions"], 32);
    assert_eq!(at(12)["simd_executions"], 2);
    assert_eq!(at(12)["utilization"], 0.5);
    assert_eq!(v["profile"]["totals"]["atomics"], 32);
}

#[test]
fn mlx_and_check_profile_the_users_lines() {
    let d = temp("mlxprof");
    std::fs::write(d.join("body.metal"), BODY).unwrap();
    let mut args = vec!["mlx"];
    args.extend_from_slice(BODY_ARGS);
    args.push("--profile");
    let o = bin(&d, &args);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    insta::assert_snapshot!("mlx_profile", out(&o));

    assert_eq!(bin(&d, &["init"]).status.code(), Some(0));
    let o = bin(&d, &["check", "1", "--profile"]);
    let text = out(&o);
    assert!(text.contains("── profile of test 1 ──") && text.contains("metal-puzzles/01_map.metal:\n"), "{text}");
    let o = bin(&d, &["check", "1", "--profile", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    assert!(v["puzzles"][0]["profile"]["lines"].is_array(), "{v}");
}

#[test]
fn simd_group_functions_in_expressions_see_their_group() {
    let d = temp("simd");
    std::fs::write(
        d.join("s.metal"),
        "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n    if (i < 20) {\n        out[i] = simd_sum(1.0f);\n    }\n}\n",
    )
    .unwrap();
    let o = debug(
        &d,
        &["--thread", "3", "--print", "5: simd_sum(1), simd_sum(i)"],
        &["s.metal", "--kernel", "k", "--grid", "64", "--threadgroup", "64", "--arg", "out=zeros(64):f32"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).contains("     1 |          20 |         190\n"), "{}", out(&o));
}

/// A kernel whose work is in a header, as MLX's and candle's are.
const SOFTMAX_H: &str = "#pragma once
template <typename T>
T scaled_exp(T x, T m) {
    T d = x - m;
    T e = metal::exp(d);
    return e;
}
";

const USES_HEADER: &str = "#include <metal_stdlib>
#include \"softmax.h\"
using namespace metal;

kernel void sm(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
               uint i [[thread_position_in_grid]]) {
    out[i] = scaled_exp(a[i], 3.0f);
}
";

#[test]
fn print_file_line_in_a_header() {
    let d = temp("header");
    std::fs::write(d.join("softmax.h"), SOFTMAX_H).unwrap();
    std::fs::write(d.join("sm.metal"), USES_HEADER).unwrap();
    let target =
        ["sm.metal", "--kernel", "sm", "--grid", "4", "--threadgroup", "4", "--arg", "a=arange(4):f32", "--arg", "out=zeros(4):f32"];
    let o = debug(&d, &["--thread", "1", "--print", "softmax.h:5: x, d", "--print", "7: i, a[i]"], &target);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    insta::assert_snapshot!("print_in_header", out(&o));
    // A header the kernel does not read, and a header line without a statement.
    let o = debug(&d, &["--thread", "1", "--print", "other.h:5: x"], &target);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("`other.h` is not a file this kernel reads; its headers are: "), "{}", err(&o));
    let o = debug(&d, &["--thread", "1", "--print", "softmax.h:2: x"], &target);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("line 2 of `") && err(&o).contains("softmax.h` has no statement"), "{}", err(&o));
}

/// One copy kernel reading coalesced and one reading with a 128-byte
/// stride; a tile written along a row and along a column.
const COPIES: &str = "#include <metal_stdlib>
using namespace metal;

kernel void coalesced(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    out[i] = a[i];
}

kernel void strided(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
                    uint i [[thread_position_in_grid]]) {
    out[i] = a[i * 32];
}

kernel void tiles(device float* out [[buffer(0)]], constant float& scale [[buffer(1)]],
                  uint l [[thread_position_in_threadgroup]]) {
    threadgroup float tile[32][32];
    threadgroup float padded[32][33];
    tile[0][l] = scale;
    tile[l][0] = scale;
    padded[l][0] = scale;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[l] = tile[0][l] + tile[l][0] + padded[l][0];
}
";

fn profile_of(d: &Path, kernel: &str, args: &[&str], json: bool) -> Output {
    let mut all = vec!["run", "copies.metal", "--kernel", kernel, "--grid", "64", "--threadgroup", "32", "--profile"];
    all.extend_from_slice(args);
    if json {
        all.push("--json");
    }
    bin(d, &all)
}

#[test]
fn profile_counts_transactions_bank_conflicts_and_constant_reads_apart() {
    let d = temp("copies");
    std::fs::write(d.join("copies.metal"), COPIES).unwrap();
    let copy_args = ["--arg", "a=arange(2048):f32", "--arg", "out=zeros(64):f32"];
    let tx = |kernel: &str| {
        let o = profile_of(&d, kernel, &copy_args, true);
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
        let line =
            v["profile"]["lines"].as_array().unwrap().iter().find(|l| l["source"].as_str().unwrap().starts_with("out[i]")).unwrap().clone();
        (line["device_transactions"].as_u64().unwrap(), line["device_bytes"].as_u64().unwrap())
    };
    // Both move the same bytes; the strided read touches 8 times the segments.
    let (c, s) = (tx("coalesced"), tx("strided"));
    assert_eq!(c.1, s.1, "the same bytes");
    // Two SIMD-groups: reads 4 segments each coalesced, 32 strided; writes 4 each.
    assert_eq!((c.0, s.0), (2 * 4 + 2 * 4, 2 * 32 + 2 * 4));
    insta::assert_snapshot!("profile_coalesced", out(&profile_of(&d, "coalesced", &copy_args, false)));
    insta::assert_snapshot!("profile_strided", out(&profile_of(&d, "strided", &copy_args, false)));
    // The tile: a row is conflict-free, a column of a 32-wide tile puts all
    // 32 lanes in one bank (31 extra passes), the padded tile none.
    let tile_args = ["--grid", "32", "--arg", "out=zeros(32):f32", "--arg", "scale=2:f32"];
    let mut args = vec!["run", "copies.metal", "--kernel", "tiles", "--threadgroup", "32", "--profile", "--json"];
    args.extend_from_slice(&tile_args);
    let o = bin(&d, &args);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    let lines = v["profile"]["lines"].as_array().unwrap();
    let conflicts = |n: u64| lines.iter().find(|l| l["line"] == n).unwrap()["bank_conflicts"].as_u64().unwrap();
    assert_eq!((conflicts(18), conflicts(19), conflicts(20)), (0, 31, 0));
    // `scale` is constant memory: read apart, not device traffic.
    let l18 = lines.iter().find(|l| l["line"] == 18).unwrap();
    assert_eq!((l18["constant_reads"].as_u64(), l18["device_reads"].as_u64()), (Some(32), Some(0)));
    assert_eq!(l18["constant_bytes"], 128);
    assert_eq!(v["profile"]["occupancy"]["limited_by"], "threadgroup memory");
    args.pop();
    insta::assert_snapshot!("profile_bank_conflicts", out(&bin(&d, &args)));
}

/// A softmax that forgets to subtract the row's maximum: `exp` of a large
/// input overflows, and inf / inf is NaN.
const SOFTMAX: &str = "#include <metal_stdlib>
using namespace metal;

kernel void softmax(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                    uint i [[thread_position_in_grid]]) {
    float e = exp(x[i]);
    float total = simd_sum(e);
    out[i] = e / total;
}
";

/// A float32 .npy file of `vals`.
fn npy_f32(vals: &[f32]) -> Vec<u8> {
    let mut hdr = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}", vals.len());
    while (10 + hdr.len() + 1) % 64 != 0 {
        hdr.push(' ');
    }
    hdr.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((hdr.len() as u16).to_le_bytes());
    out.extend(hdr.as_bytes());
    out.extend(vals.iter().flat_map(|v| v.to_le_bytes()));
    out
}

#[test]
fn check_nan_names_the_operation_that_overflowed() {
    let d = temp("nan");
    std::fs::write(d.join("softmax.metal"), SOFTMAX).unwrap();
    let mut x: Vec<f32> = (0..32).map(|k| k as f32 * 0.5).collect();
    x[5] = 121.3;
    std::fs::write(d.join("x.npy"), npy_f32(&x)).unwrap();
    let args = [
        "run",
        "softmax.metal",
        "--kernel",
        "softmax",
        "--grid",
        "32",
        "--threadgroup",
        "32",
        "--arg",
        "x=@x.npy",
        "--arg",
        "out=zeros(32):f32",
    ];
    let mut with = args.to_vec();
    with.extend(["--check", "nan"]);
    let o = bin(&d, &with);
    assert_eq!(o.status.code(), Some(0), "NaN outputs are reported, not errors: {}", err(&o));
    insta::assert_snapshot!("check_nan_softmax", err(&o));
    with.push("--json");
    let v: serde_json::Value = serde_json::from_str(&out(&bin(&d, &with))).unwrap();
    let n = &v["nan"][0];
    assert_eq!((n["buffer"].as_str(), n["index"].as_i64(), n["value"].as_str()), (Some("out"), Some(5), Some("nan")));
    assert_eq!((n["born"]["line"].as_u64(), n["born"]["what"].as_str()), (Some(6), Some("exp(121.3) overflows float (inf)")));
    // Without --check nan nothing is traced or said.
    let o = bin(&d, &args);
    assert!(!err(&o).contains("born"), "{}", err(&o));
    let mut j = args.to_vec();
    j.push("--json");
    let v: serde_json::Value = serde_json::from_str(&out(&bin(&d, &j))).unwrap();
    assert!(v.get("nan").is_none());
}

#[test]
fn a_runaway_loop_names_the_thread_in_it_and_its_loop() {
    let d = temp("runaway");
    let src = "#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float x = 0;
    if (i == 5) {
        for (uint j = 0; j < 10; j += 0) {
            x += 1;
        }
    }
    out[i] = x;
}
";
    std::fs::write(d.join("loop.metal"), src).unwrap();
    let o = bin(
        &d,
        &[
            "run",
            "loop.metal",
            "--kernel",
            "k",
            "--grid",
            "8",
            "--threadgroup",
            "8",
            "--arg",
            "out=zeros(8):f32",
            "--budget",
            "10000",
            "--json",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    let f = &v["findings"][0];
    assert_eq!(
        (f["kind"].as_str(), f["line"].as_u64(), f["thread"].clone()),
        (Some("runaway-kernel"), Some(6), serde_json::json!([5, 0, 0]))
    );
    assert!(f["message"].as_str().unwrap().contains("while thread (5, 0, 0) in the grid, (5, 0, 0) in threadgroup (0, 0, 0) was still in this loop (the only thread of its threadgroup in it)"), "{f}");
}

/// A finding met while printing is shown on the line as written: the
/// probes placed on that line are not in its snippet, and its column is the
/// user's.
#[test]
fn findings_under_print_show_the_source_as_written() {
    let d = temp("asis");
    std::fs::write(
        d.join("un.metal"),
        "#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float acc;
    if (i > 100) acc = 1.0f;
    float x = acc + 2.0f;
    out[i] = x;
}
",
    )
    .unwrap();
    let target = ["un.metal", "--kernel", "k", "--grid", "4", "--threadgroup", "4", "--arg", "out=zeros(4):f32"];
    let o = debug(&d, &["--thread", "1", "--print", "6: i", "--print", "7: x"], &target);
    let e = err(&o);
    assert!(e.contains("un.metal:6:15"), "{e}");
    assert!(e.contains("6 │     float x = acc + 2.0f;"), "{e}");
    assert!(!e.contains("$probe"), "{e}");
}
