//! Structs as real Metal libraries write them, run end to end: default member
//! initializers in every construction path, unions, structs declared inside
//! functions, reference members. Each kernel `k` writes one float per thread
//! to `out`; expected values are computed by hand.

mod common;
use common::*;

/// Compile `src` (after the prelude), run kernel `k` over `n` threads in one
/// threadgroup with every check on, return `out` and the findings.
fn run_with_findings(src: &str, n: u32) -> (Vec<f32>, Vec<Finding>) {
    let full = format!("{PRELUDE}{src}");
    let k = compile(&full, "k");
    let mut b = bufs(vec![(0, f32s(&vec![0.0; n as usize]))]);
    let r = run(&k, &threads([n, 1, 1], [n, 1, 1]), &mut b, &opts(CheckLevel::All));
    (to_f32(&b[&0]), r.findings)
}

fn run_out(src: &str, n: u32) -> Vec<f32> {
    let (out, findings) = run_with_findings(src, n);
    assert!(findings.is_empty(), "{findings:?}");
    out
}

const KERNEL_OUT: &str = "device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]";

// ------------------------------------------------ default member initializers

#[test]
fn default_member_initializers_apply_to_default_and_value_construction() {
    let src = format!(
        r#"
struct S {{
  int a = 3;
  float b{{2.5f}};
  float c;
}};
kernel void k({KERNEL_OUT}) {{
  S s;            // a, b from their initializers; c unset
  s.c = float(i);
  S v{{}};        // c is zero
  S w = S();
  out[i] = float(s.a) + s.b + s.c + 10.0f * (float(v.a) + v.b + v.c) + 100.0f * (float(w.a) + w.b + w.c);
}}
"#
    );
    let out = run_out(&src, 3);
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, 5.5 + i as f32 + 55.0 + 550.0, "thread {i}");
    }
}

#[test]
fn default_member_initializers_fill_what_aggregates_and_constructors_leave_out() {
    let src = format!(
        r#"
struct P {{
  float x;
  float y = 4.0f;
  int n = 7;
}};
struct C {{
  float m = 1.5f;
  float k;
  C(float k_) : k(k_) {{}}                 // m keeps its default
  C(float m_, float k_) : m(m_), k(k_) {{}} // the list wins over the default
}};
kernel void k({KERNEL_OUT}) {{
  P p{{float(i)}};          // y, n from their initializers
  P q = {{1.0f, 2.0f}};     // n from its initializer
  C c(10.0f);
  C d(2.0f, 20.0f);
  out[i] = p.x + p.y + float(p.n) + 10.0f * (q.x + q.y + float(q.n)) + c.m + c.k + 100.0f * (d.m + d.k);
}}
"#
    );
    let out = run_out(&src, 3);
    for (i, v) in out.iter().enumerate() {
        let expect = (i as f32 + 4.0 + 7.0) + 10.0 * (1.0 + 2.0 + 7.0) + (1.5 + 10.0) + 100.0 * 22.0;
        assert_eq!(*v, expect, "thread {i}");
    }
}

#[test]
fn default_member_initializers_in_arrays_nested_structs_bases_and_templates() {
    let src = format!(
        r#"
struct Inner {{
  float v = 2.0f;
}};
struct Outer {{
  Inner in[2];
  Inner one;
  int tag = 5;
}};
struct Base {{
  float base = 100.0f;
}};
struct Derived : Base {{
  float own = 1.0f;
}};
template <typename T, int N>
struct Acc {{
  T total = T(N);
  T scale{{T(2)}};
}};
struct WithCtorMember {{
  Acc<float, 3> acc;
  float z;
  WithCtorMember(float z_) : z(z_) {{}}
}};
kernel void k({KERNEL_OUT}) {{
  Inner arr[3];
  Inner part[3] = {{Inner{{9.0f}}}};     // the rest from the initializer
  Outer o;
  Derived d;
  Acc<float, 4> a;
  WithCtorMember w(float(i));
  float s = arr[0].v + arr[1].v + arr[2].v;             // 6
  s += part[0].v + part[1].v + part[2].v;               // 13
  s += o.in[0].v + o.in[1].v + o.one.v + float(o.tag); // 11
  s += d.base + d.own;                                  // 101
  s += a.total * a.scale;                               // 8
  s += w.acc.total + w.acc.scale + w.z;                 // 5 + i
  out[i] = s;
}}
"#
    );
    let out = run_out(&src, 3);
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, 6.0 + 13.0 + 11.0 + 101.0 + 8.0 + 5.0 + i as f32, "thread {i}");
    }
}

#[test]
fn default_member_initializers_in_program_scope_constants() {
    let src = format!(
        r#"
struct Cfg {{
  float gain = 3.0f;
  int shift = 2;
}};
constant Cfg cfg = {{}};
constant Cfg cfg2 = {{5.0f}};
kernel void k({KERNEL_OUT}) {{
  out[i] = cfg.gain * float(cfg.shift) + cfg2.gain * float(cfg2.shift) + float(i);
}}
"#
    );
    let out = run_out(&src, 2);
    assert_eq!(out, vec![16.0, 17.0]);
}

#[test]
fn a_member_without_default_is_still_reported_when_read_unset() {
    let src = format!(
        r#"
struct S {{
  int a = 3;
  float unset;
}};
kernel void k({KERNEL_OUT}) {{
  S s;
  out[i] = float(s.a) + s.unset;
}}
"#
    );
    let (_, findings) = run_with_findings(&src, 1);
    assert!(findings.iter().any(|f| f.kind == FindingKind::UninitializedRead), "{findings:?}");
    // Reading only the defaulted member is clean.
    let clean = format!("struct S {{ int a = 3; float unset; }};\nkernel void k({KERNEL_OUT}) {{ S s; out[i] = float(s.a); }}");
    assert_eq!(run_out(&clean, 1), vec![3.0]);
}
