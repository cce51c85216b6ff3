//! `metal-puzzles run` end to end: .npy round trips, printed outputs,
//! `--json`, `--bench`, and the exit statuses of bad arguments and
//! compile errors (see the Usage section of README.md).

use arrays::{Array, DType};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

const BIN: &str = env!("CARGO_BIN_EXE_metal-puzzles");

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A fresh scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        let d = std::env::temp_dir().join(format!("mp-cli-run-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::SeqCst)));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
    fn npy(&self, name: &str, a: &Array) -> String {
        let p = self.0.join(name);
        a.write_npy(&p).unwrap();
        format!("@{}", p.display())
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn mp(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run metal-puzzles")
}

fn run_args<'a>(file: &'a Path, kernel: &'a str, grid: &'a str, tg: &'a str) -> Vec<String> {
    vec![
        "run".into(),
        file.display().to_string(),
        "--kernel".into(),
        kernel.into(),
        "--grid".into(),
        grid.into(),
        "--threadgroup".into(),
        tg.into(),
    ]
}

fn exec(mut base: Vec<String>, extra: &[String]) -> Output {
    base.extend_from_slice(extra);
    let v: Vec<&str> = base.iter().map(|s| s.as_str()).collect();
    mp(&v)
}

fn arg(name: &str, value: &str) -> Vec<String> {
    vec!["--arg".into(), format!("{name}={value}")]
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

const KERNELS: &str = r#"#include <metal_stdlib>
using namespace metal;

struct Pair { float a; float b; };

kernel void mix_types(const device float* x [[buffer(0)]], const device half* h [[buffer(1)]],
                      const device int* n [[buffer(2)]], const device uchar* u [[buffer(3)]],
                      const device bfloat* bf [[buffer(4)]], device float* fo [[buffer(5)]],
                      device half* ho [[buffer(6)]], device int* io [[buffer(7)]], device uchar* uo [[buffer(8)]],
                      device bfloat* bo [[buffer(9)]], constant float& scale [[buffer(10)]],
                      uint i [[thread_position_in_grid]]) {
  fo[i] = x[i] * scale;
  ho[i] = h[i] + half(1.0h);
  io[i] = n[i] * 3 - 7;
  uo[i] = u[i] + uchar(200);
  bo[i] = bf[i] * bfloat(2.0f);
}

kernel void vec4(const device float4* v [[buffer(0)]], device float4* o [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  o[i] = v[i].wzyx * 2.0f;
}

kernel void pairs(device Pair* p [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  Pair q = p[i];
  p[i].a = q.b;
  p[i].b = q.a + 1.0f;
}

kernel void add10(const device float* a [[buffer(0)]], device float* out [[buffer(1)]], constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = a[i] + 10.0f;
}

struct Affine { uint n; float3 scale; bool flip; int offsets[2]; };

kernel void affine(const device float* x [[buffer(0)]], device float* out [[buffer(1)]],
                   constant Affine& p [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i >= p.n) return;
  uint j = p.flip ? p.n - 1 - i : i;
  out[i] = x[j] * p.scale.z + float(p.offsets[i % 2]);
}

kernel void oob(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i + 1] = 1.0f;
}
"#;

/// bfloat16 bits of a value exactly representable in bfloat16.
fn bf16_bits(v: f64) -> u16 {
    let b = (v as f32).to_bits();
    assert_eq!(b & 0xffff, 0, "{v} is not a bfloat16");
    (b >> 16) as u16
}

fn read(p: &Path) -> Array {
    Array::read_npy(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn npy_round_trips_for_every_dtype() {
    let s = Scratch::new();
    let src = s.file("k.metal", KERNELS);
    let n = 37usize;
    let xf: Vec<f64> = (0..n).map(|i| i as f64 * 0.25 - 3.0).collect();
    let x = Array::from_f64(DType::F32, &[n], &xf).unwrap();
    let h = Array::from_f64(DType::F16, &[n], &xf).unwrap();
    let ni = Array::from_i64(DType::I32, &[n], &(0..n as i64).map(|i| i * 1000 - 5000).collect::<Vec<_>>()).unwrap();
    let u = Array::from_i64(DType::U8, &[n], &(0..n as i64).map(|i| i * 7 % 256).collect::<Vec<_>>()).unwrap();
    let bf_bits: Vec<i64> = xf.iter().map(|&v| bf16_bits(v) as i64).collect();
    let bf = Array::from_i64(DType::U16, &[n], &bf_bits).unwrap();
    let mut a = run_args(&src, "mix_types", &n.to_string(), "8");
    for (name, arr) in [("x", &x), ("h", &h), ("n", &ni), ("u", &u), ("bf", &bf)] {
        a.extend(arg(name, &s.npy(&format!("{name}.npy"), arr)));
    }
    a.extend(arg("fo", "zeros(37):f32"));
    a.extend(arg("ho", "zeros(37):f16"));
    a.extend(arg("io", &s.npy("io.npy", &Array::zeros(DType::I32, &[n]))));
    a.extend(arg("uo", "zeros(37):u8"));
    a.extend(arg("bo", &s.npy("bo.npy", &Array::zeros(DType::U16, &[n]))));
    a.extend(arg("scale", "0.5:f32"));
    let out = s.path("out");
    a.extend(["--out".into(), out.display().to_string()]);
    let o = exec(a, &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let fo = read(&out.join("fo.npy"));
    assert_eq!(fo.dtype, DType::F32);
    assert_eq!(fo.shape, vec![n]);
    assert_eq!(fo.to_f64_vec(), xf.iter().map(|v| v * 0.5).collect::<Vec<_>>());
    let ho = read(&out.join("ho.npy"));
    assert_eq!(ho.dtype, DType::F16);
    assert_eq!(ho.to_f64_vec(), xf.iter().map(|v| v + 1.0).collect::<Vec<_>>());
    let io = read(&out.join("io.npy"));
    assert_eq!(io.dtype, DType::I32);
    assert_eq!(io.to_f64_vec(), (0..n as i64).map(|i| ((i * 1000 - 5000) * 3 - 7) as f64).collect::<Vec<_>>());
    let uo = read(&out.join("uo.npy"));
    assert_eq!(uo.dtype, DType::U8);
    assert_eq!(uo.to_f64_vec(), (0..n as i64).map(|i| ((i * 7 % 256 + 200) % 256) as f64).collect::<Vec<_>>());
    let bo = read(&out.join("bo.npy"));
    assert_eq!(bo.dtype, DType::U16, "bfloat outputs keep the dtype they came in");
    let want: Vec<f64> = xf.iter().map(|&v| bf16_bits(v * 2.0) as f64).collect();
    assert_eq!(bo.to_f64_vec(), want);
    // Inputs are not outputs.
    assert!(!out.join("x.npy").exists());
}

#[test]
fn float4_buffers_as_n_by_4_and_structs_as_bytes() {
    let s = Scratch::new();
    let src = s.file("k.metal", KERNELS);
    let v: Vec<f64> = (0..40).map(|i| i as f64).collect();
    let a = Array::from_f64(DType::F32, &[10, 4], &v).unwrap();
    let out = s.path("out");
    let mut args = run_args(&src, "vec4", "10", "4");
    args.extend(arg("v", &s.npy("v.npy", &a)));
    args.extend(arg("o", &s.npy("o.npy", &Array::zeros(DType::F32, &[10, 4]))));
    args.extend(["--out".into(), out.display().to_string()]);
    let o = exec(args, &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r = read(&out.join("o.npy"));
    assert_eq!(r.shape, vec![10, 4]);
    let got = r.to_f64_vec();
    for i in 0..10 {
        for j in 0..4 {
            assert_eq!(got[i * 4 + j], v[i * 4 + (3 - j)] * 2.0);
        }
    }
    // Struct buffer as raw bytes (8 bytes per Pair).
    let pairs: Vec<u8> = (0..6).flat_map(|i| [i as f32, 100.0 + i as f32]).flat_map(|f: f32| f.to_le_bytes()).collect();
    let pa = Array::from_bytes(DType::U8, &[pairs.len()], pairs).unwrap();
    let mut args = run_args(&src, "pairs", "6", "2");
    args.extend(arg("p", &s.npy("p.npy", &pa)));
    args.extend(["--out".into(), out.display().to_string()]);
    let o = exec(args, &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r = read(&out.join("p.npy"));
    assert_eq!(r.dtype, DType::U8);
    let bytes = r.contiguous_bytes();
    let f: Vec<f32> = bytes.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    for i in 0..6 {
        assert_eq!(f[2 * i], 100.0 + i as f32);
        assert_eq!(f[2 * i + 1], i as f32 + 1.0);
    }
}

#[test]
fn struct_constants_from_json_or_a_numpy_record_array() {
    let s = Scratch::new();
    let src = s.file("k.metal", KERNELS);
    let out = s.path("out");
    let x: Vec<f64> = (0..6).map(|i| i as f64).collect();
    let xa = s.npy("x.npy", &Array::from_f64(DType::F32, &[6], &x).unwrap());
    let params = r#"{"n": 5, "scale": [0, 0, 2], "flip": true, "offsets": [100, -100]}"#;
    let json_file = s.file("p.json", params);
    for given in [params.to_string(), format!("@{}", json_file.display())] {
        let mut args = run_args(&src, "affine", "6", "2");
        args.extend(arg("x", &xa));
        args.extend(arg("out", "zeros(6):f32"));
        args.extend(arg("p", &given));
        args.extend(["--out".into(), out.display().to_string()]);
        let o = exec(args, &[]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        // x reversed over the first n=5, doubled, +100/-100 alternating; out[5] untouched.
        assert_eq!(read(&out.join("out.npy")).to_f64_vec(), vec![108.0, -94.0, 104.0, -98.0, 100.0, 0.0]);
    }
    // A NumPy record array (np.save of np.array((5, (0, 0, 2), True, (100, -100)), dtype=[('n', '<u4'),
    // ('scale', '<f4', (3,)), ('flip', '?'), ('offsets', '<i4', (2,))])): packed, so its offsets
    // differ from Metal's (float3 is 16-byte aligned); fields are matched by name.
    let header = "{'descr': [('n', '<u4'), ('scale', '<f4', (3,)), ('flip', '|b1'), ('offsets', '<i4', (2,))], 'fortran_order': False, 'shape': (), }";
    let mut h = header.to_string();
    while !(11 + h.len()).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    file.extend_from_slice(&(h.len() as u16).to_le_bytes());
    file.extend_from_slice(h.as_bytes());
    for v in [5u32.to_le_bytes(), 0f32.to_le_bytes(), 0f32.to_le_bytes(), 2f32.to_le_bytes()] {
        file.extend_from_slice(&v);
    }
    file.push(1);
    file.extend_from_slice(&100i32.to_le_bytes());
    file.extend_from_slice(&(-100i32).to_le_bytes());
    let rec = s.path("p.npy");
    std::fs::write(&rec, file).unwrap();
    let mut args = run_args(&src, "affine", "6", "2");
    args.extend(arg("x", &xa));
    args.extend(arg("out", "zeros(6):f32"));
    args.extend(arg("p", &format!("@{}", rec.display())));
    args.extend(["--out".into(), out.display().to_string()]);
    let o = exec(args, &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(read(&out.join("out.npy")).to_f64_vec(), vec![108.0, -94.0, 104.0, -98.0, 100.0, 0.0]);
    // A mistake names the parameter and the field.
    let mut args = run_args(&src, "affine", "6", "2");
    args.extend(arg("x", &xa));
    args.extend(arg("out", "zeros(6):f32"));
    args.extend(arg("p", r#"{"n": 5, "scale": [0, 0, 2], "flip": true}"#));
    let o = exec(args, &[]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("`p`: field `offsets` of `Affine` is missing (its fields: n, scale, flip, offsets)"), "{}", stderr(&o));
}

#[test]
fn outputs_are_printed_without_out() {
    let s = Scratch::new();
    let src = s.file("k.metal", KERNELS);
    let mut args = run_args(&src, "add10", "4", "4");
    args.extend(arg("a", "arange(4):f32"));
    args.extend(arg("out", "zeros(4):f32"));
    args.extend(arg("n", "4:u32"));
    let o = exec(args, &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("out = "), "{text}");
    assert!(text.contains("10") && text.contains("13"), "{text}");
    assert!(!text.contains("a = "), "inputs are not printed: {text}");
}

#[test]
fn json_schema_with_findings_and_outputs() {
    let s = Scratch::new();
    let src = s.file("k.metal", KERNELS);
    let oob_line = KERNELS.lines().position(|l| l.contains("out[i + 1] = 1.0f;")).unwrap() + 1;
    let mut args = run_args(&src, "oob", "8", "4");
    args.extend(arg("out", "zeros(8):f32"));
    args.push("--json".into());
    let o = exec(args, &[]);
    assert_eq!(code(&o), 1, "an error finding exits 1");
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    assert!(v["diagnostics"].is_array());
    let f = &v["findings"].as_array().unwrap()[0];
    assert_eq!(f["kind"], "out-of-bounds");
    assert_eq!(f["severity"], "error");
    assert!(f["message"].is_string());
    assert_eq!(f["line"], oob_line);
    assert_eq!(f["thread"], serde_json::json!([7, 0, 0]));
    assert_eq!(f["threadgroup"], serde_json::json!([1, 0, 0]));
    assert!(v["outputs"]["out"].is_null(), "printed (null path) without --out: {v}");

    // With --out, outputs name the written files; a clean run exits 0.
    let out = s.path("o");
    let mut args = run_args(&src, "add10", "4", "4");
    args.extend(arg("a", "ones(4):f32"));
    args.extend(arg("out", "zeros(4):f32"));
    args.extend(arg("n", "4:u32"));
    args.extend(["--json".into(), "--out".into(), out.display().to_string()]);
    let o = exec(args, &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["findings"], serde_json::json!([]));
    let p = v["outputs"]["out"].as_str().unwrap();
    assert_eq!(read(Path::new(p)).to_f64_vec(), vec![11.0; 4]);
}

#[test]
fn bench_prints_the_median() {
    let s = Scratch::new();
    let src = s.file("k.metal", KERNELS);
    let mut args = run_args(&src, "add10", "64", "32");
    args.extend(arg("a", "rand(64):f32"));
    args.extend(arg("out", "zeros(64):f32"));
    args.extend(arg("n", "64:u32"));
    args.extend(["--bench".into(), "2".into()]);
    let o = exec(args, &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let line = stdout(&o)
        .lines()
        .find(|l| l.starts_with("kernel_seconds_median="))
        .map(str::to_string)
        .unwrap_or_else(|| panic!("{}", stdout(&o)));
    let secs: f64 = line["kernel_seconds_median=".len()..].trim().parse().unwrap();
    assert!((0.0..60.0).contains(&secs));
}

/// Exit 2 with a message naming `needle`.
fn bad(args: Vec<String>, needle: &str) {
    let o = exec(args, &[]);
    assert_eq!(code(&o), 2, "stdout {} stderr {}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains(needle), "message should name `{needle}`: {}", stderr(&o));
}

#[test]
fn bad_arguments_exit_2_naming_the_parameter() {
    let s = Scratch::new();
    let src = s.file("k.metal", KERNELS);
    let base = || {
        let mut a = run_args(&src, "add10", "4", "4");
        a.extend(arg("a", "ones(4):f32"));
        a.extend(arg("out", "zeros(4):f32"));
        a
    };
    // Unknown parameter.
    let mut a = base();
    a.extend(arg("n", "4:u32"));
    a.extend(arg("bogus", "1:u32"));
    bad(a, "bogus");
    // Missing buffer.
    bad(base(), "`n`");
    // Wrong dtype for a scalar.
    let mut a = base();
    a.extend(arg("n", "4:f32"));
    bad(a, "`n`");
    // Wrong dtype for a buffer.
    let mut a = run_args(&src, "add10", "4", "4");
    a.extend(arg("a", "ones(4):i32"));
    a.extend(arg("out", "zeros(4):f32"));
    a.extend(arg("n", "4:u32"));
    bad(a, "`a`");
    // Size not a multiple of the element (float4 from 6 floats).
    let mut a = run_args(&src, "vec4", "1", "1");
    a.extend(arg("v", "zeros(6):f32"));
    a.extend(arg("o", "zeros(4):f32"));
    bad(a, "`v`");
    let mut a = run_args(&src, "pairs", "1", "1");
    a.extend(arg("p", "zeros(13):u8"));
    bad(a, "`p`");
    // Unreadable .npy.
    let garbage = s.file("garbage.npy", "not an npy file");
    let mut a = run_args(&src, "add10", "4", "4");
    a.extend(arg("a", &format!("@{}", garbage.display())));
    a.extend(arg("out", "zeros(4):f32"));
    a.extend(arg("n", "4:u32"));
    bad(a, "`a`");
    let mut a = run_args(&src, "add10", "4", "4");
    a.extend(arg("a", &format!("@{}", s.path("missing.npy").display())));
    a.extend(arg("out", "zeros(4):f32"));
    a.extend(arg("n", "4:u32"));
    bad(a, "`a`");
    // Bad --grid / --threadgroup.
    for g in ["4,x", "0", "1,2,3,4", ""] {
        let mut a = run_args(&src, "add10", g, "4");
        a.extend(arg("a", "ones(4):f32"));
        a.extend(arg("out", "zeros(4):f32"));
        a.extend(arg("n", "4:u32"));
        bad(a, "--grid");
    }
    let mut a = run_args(&src, "add10", "4", "4,0");
    a.extend(arg("a", "ones(4):f32"));
    a.extend(arg("out", "zeros(4):f32"));
    a.extend(arg("n", "4:u32"));
    bad(a, "--threadgroup");
    // Unknown kernel, missing file.
    let mut a = run_args(&src, "nope", "4", "4");
    a.extend(arg("n", "4:u32"));
    bad(a, "nope");
    let missing = s.path("missing.metal");
    bad(run_args(&missing, "k", "4", "4"), "missing.metal");
}

#[test]
fn compile_error_exits_1() {
    let s = Scratch::new();
    let src = s.file("bad.metal", "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  o[i] = undefined_name;\n}\n");
    let mut a = run_args(&src, "k", "4", "4");
    a.extend(arg("o", "zeros(4):f32"));
    let o = exec(a.clone(), &[]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("error"), "{}", stderr(&o));
    a.push("--json".into());
    let o = exec(a, &[]);
    assert_eq!(code(&o), 1);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let d = &v["diagnostics"].as_array().unwrap()[0];
    assert_eq!(d["severity"], "error");
    assert_eq!(d["line"], 4);
}

const FUNCTION_CONSTANTS: &str = r#"#include <metal_stdlib>
using namespace metal;
constant bool use_bias [[function_constant(0)]];
constant int scale [[function_constant(1)]];
constant bool scale_given = is_function_constant_defined(scale);
constant int tile [[function_constant(2)]];

kernel void k(device float* out [[buffer(0)]],
              const device float* bias [[buffer(1), function_constant(use_bias)]],
              uint i [[thread_position_in_grid]]) {
  float scratch[tile];
  scratch[tile - 1] = float(i);
  float v = scratch[tile - 1] * (scale_given ? float(scale) : 1.0f);
  if (use_bias) v += bias[i];
  out[i] = v;
}
"#;

fn run_constants(extra: &[&str]) -> Output {
    let s = Scratch::new();
    let f = s.file("fc.metal", FUNCTION_CONSTANTS);
    let bias = s.npy("bias.npy", &Array::from_f64(DType::F32, &[4], &[10.0, 20.0, 30.0, 40.0]).unwrap());
    let mut a = run_args(&f, "k", "4", "4");
    a.extend(["--arg".into(), "out=zeros(4):float32".into()]);
    a.extend(extra.iter().map(|x| x.replace("BIAS", &bias)));
    let a: Vec<&str> = a.iter().map(|x| x.as_str()).collect();
    mp(&a)
}

#[test]
fn a_dispatch_over_apple_limits_is_refused_before_running() {
    let s = Scratch::new();
    let f = s.file("k.metal", FUNCTION_CONSTANTS);
    let out = s.path("out");
    let mut a = run_args(&f, "k", "4000", "2000");
    a.extend(["--constant", "use_bias=false", "--constant", "tile=1", "--arg", "out=zeros(4000):float32", "--out"].map(String::from));
    a.push(out.display().to_string());
    let a: Vec<&str> = a.iter().map(|x| x.as_str()).collect();
    let o = mp(&a);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("2000 threads is over Apple GPUs' limit of 1024"), "{err}");
    assert!(stdout(&o).is_empty() && !out.exists(), "nothing runs, nothing is written");
}

#[test]
fn function_constants_by_name_and_index() {
    // Bias off: the parameter leaves the kernel's interface; scale left
    // undefined is allowed because `is_function_constant_defined` names it.
    let o = run_constants(&["--constant", "use_bias=false", "--constant", "2=4"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("[0., 1., 2., 3.]"), "{}", String::from_utf8_lossy(&o.stdout));
    let o = run_constants(&["--constant", "use_bias=true", "--constant", "scale=3", "--constant", "tile=8", "--arg", "bias=BIAS"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("[10., 23., 36., 49.]"), "{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn function_constants_missing_mistyped_or_unknown_are_refused() {
    // `tile` is required (used, never tested with is_function_constant_defined).
    let o = run_constants(&["--constant", "use_bias=false"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("function constant `tile` (index 2) has no value") && err.contains("--constant tile=VALUE"), "{err}");
    let o = run_constants(&["--constant", "use_bias=maybe", "--constant", "tile=2"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("is a `bool`, but the value given for it is `maybe`") && err.contains("fc.metal:3:"), "{err}");
    let o = run_constants(&["--constant", "use_bais=true", "--constant", "tile=2"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("names no function constant") && err.contains("use_bias (0)"), "{err}");
}

/// `run --counts`, `mlx --counts` and the book print the same table, and
/// both `--help`s state the counting rule (which the counts follow: a
/// `float4` load is four reads, a `constant T&` scalar one).
#[test]
fn counts_follow_the_stated_rule_in_the_books_table() {
    let rule = puzzles::render::COUNTING_RULE;
    for cmd in ["run", "mlx"] {
        let help = stdout(&mp(&[cmd, "--help"]));
        let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(&rule.split_whitespace().collect::<Vec<_>>().join(" ")), "{cmd} --help lacks the counting rule:\n{help}");
    }
    let s = Scratch::new();
    let k = s.file(
        "v.metal",
        "kernel void v(device const float4* a [[buffer(0)]], constant float& s [[buffer(1)]], device float4* out [[buffer(2)]], uint i [[thread_position_in_grid]]) { out[i] = a[i] * s; }",
    );
    let o = exec(
        run_args(&k, "v", "2", "2"),
        &[arg("a", "arange(8):float32"), arg("s", "2:float32"), arg("out", "zeros(8):float32"), vec!["--counts".into()]].concat(),
    );
    let book = puzzles::render::score_table("T", puzzles::Score::default(), puzzles::Targets::default(), false);
    let header: Vec<&str> = book.lines().skip(1).take(2).collect();
    let out = stdout(&o);
    assert!(out.contains(&header.join("\n")), "{out}");
    assert!(out.contains("   | Yours  |             5 |             4 |             0 |             0 |"), "{out}");
}

/// A `char*` buffer addresses raw bytes (llama.cpp passes every tensor so):
/// any array binds to it as its bytes and comes back in its own dtype; a
/// typed pointer still refuses an array of another dtype.
#[test]
fn byte_pointers_take_arrays_of_any_dtype_as_bytes() {
    let s = Scratch::new();
    let src = s.file(
        "bytes.metal",
        "#include <metal_stdlib>
using namespace metal;
kernel void scale(device const char* src [[buffer(0)]], device char* dst [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  ((device float*) dst)[i] = ((device const float*) src)[i] * 2.0f;
}
kernel void typed(device const int* src [[buffer(0)]], device int* dst [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  dst[i] = src[i];
}
",
    );
    let o = exec(run_args(&src, "scale", "4", "4"), &[arg("src", "arange(4):f32"), arg("dst", "zeros(4):f32")].concat());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("dst = array([0., 2., 4., 6.], dtype=float32)"), "{}", stdout(&o));
    let o = exec(run_args(&src, "typed", "4", "4"), &[arg("src", "arange(4):f32"), arg("dst", "zeros(4):i32")].concat());
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(stderr(&o).contains("points to `int`, so its array must have dtype int32, not float32"), "{}", stderr(&o));
    // A JSON list is laid out as the pointee: ints for `int*`.
    let o = exec(run_args(&src, "typed", "3", "3"), &[arg("src", "[7, -1, 3]"), arg("dst", "zeros(3):i32")].concat());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("dst = array([ 7, -1,  3], dtype=int32)"), "{}", stdout(&o));
}

/// `--engine jit` gives the interpreter's outputs bit for bit (here on a
/// kernel mixing half, bfloat, int and uchar loads and stores), and says
/// why when it cannot run compiled.
#[test]
fn engines_agree_and_jit_says_when_it_cannot_run() {
    let s = Scratch::new();
    let src = s.file("k.metal", KERNELS);
    let outputs = |engine: &str, check: &str| {
        let dir = s.path(&format!("out-{engine}-{check}"));
        let mut args = run_args(&src, "mix_types", "4096", "64");
        for (name, value) in [
            ("x", "rand(4096):f32"),
            ("h", "rand(4096):f16"),
            ("n", "arange(4096):i32"),
            ("u", "arange(4096):u8"),
            ("bf", "rand(4096):bf16"),
            ("fo", "zeros(4096):f32"),
            ("ho", "zeros(4096):f16"),
            ("io", "zeros(4096):i32"),
            ("uo", "zeros(4096):u8"),
            ("bo", "zeros(4096):bf16"),
            ("scale", "1.5:f32"),
        ] {
            args.extend(arg(name, value));
        }
        args.extend(["--engine".into(), engine.into(), "--check".into(), check.into(), "--out".into(), dir.display().to_string()]);
        let o = exec(args, &[]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let files = ["fo", "ho", "io", "uo", "bo"].map(|n| std::fs::read(dir.join(format!("{n}.npy"))).expect("an output"));
        (files, stderr(&o))
    };
    let (interp, _) = outputs("interp", "none");
    let (jit, note) = outputs("jit", "none");
    assert_eq!(interp, jit, "the engines disagree");
    assert!(!note.contains("runs interpreted"), "{note}");
    // With checks on the compiled code runs too (and gives up to the
    // interpreter wherever it might report something).
    let (checked, note) = outputs("jit", "all");
    assert_eq!(interp, checked, "the engines disagree with checks on");
    assert!(!note.contains("runs interpreted"), "{note}");
}
