//! The C++ that real Metal libraries are written in, run end to end: each test
//! is a small kernel `k` writing one float per thread to `out`, checked against
//! values computed by hand.

mod common;
use common::*;

/// Compile `body` (after the prelude), run kernel `k` over `n` threads in one
/// threadgroup, return `out`.
fn run_out(src: &str, n: u32) -> Vec<f32> {
    let full = format!("{PRELUDE}{src}");
    let k = compile(&full, "k");
    let mut b = bufs(vec![(0, f32s(&vec![0.0; n as usize]))]);
    let r = run(&k, &threads([n, 1, 1], [n, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    to_f32(&b[&0])
}

const KERNEL_OUT: &str = "device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]";

#[test]
fn member_and_free_operators() {
    let src = format!(
        r#"
struct V2 {{
  float x, y;
  V2 operator+(V2 o) const {{ return V2{{x + o.x, y + o.y}}; }}
  thread V2& operator+=(V2 o) {{ x += o.x; y += o.y; return *this; }}
  float operator[](int k) const {{ return k == 0 ? x : y; }}
  bool operator<(V2 o) const {{ return x < o.x; }}
}};
V2 operator*(float s, V2 v) {{ return V2{{s * v.x, s * v.y}}; }}
struct Scale {{
  float s;
  float operator()(float v) const {{ return v * s; }}
}};
kernel void k({KERNEL_OUT}) {{
  V2 a = V2{{float(i), 1.0f}};
  V2 b = a + V2{{2.0f, 3.0f}};
  b += a;
  V2 c = 2.0f * b;
  Scale sc = Scale{{10.0f}};
  out[i] = sc(c[0]) + c[1] + (a < b ? 1000.0f : 0.0f);
}}
"#
    );
    let out = run_out(&src, 4);
    for (i, v) in out.iter().enumerate() {
        let x = i as f32;
        let bx = 2.0 * x + 2.0;
        let by = 5.0;
        let expect = 10.0 * 2.0 * bx + 2.0 * by + if x < bx { 1000.0 } else { 0.0 };
        assert_eq!(*v, expect, "thread {i}");
    }
}
