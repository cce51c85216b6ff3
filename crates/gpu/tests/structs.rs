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

// ------------------------------------------------------------------- unions

#[test]
fn union_members_share_bytes_and_reading_another_reinterprets_them() {
    let src = format!(
        r#"
union bits {{
  uint u;
  float f;
  uchar4 b;
}};
union wide {{
  uint2 val;
  uchar4 bytes[2];
}};
union flags {{
  bool4 b;
  uint i;
}};
kernel void k({KERNEL_OUT}) {{
  bits x;
  x.f = float(i) + 1.0f;
  uint u = x.u;                      // the float's bit pattern
  bits y = {{0x40490fdbu}};          // braces set the first member
  wide w;
  w.val = uint2(0x04030201u, 0x08070605u);
  flags fl;
  fl.b = bool4(true, false, true, i == 1);
  bits z{{}};
  out[i] = (u == as_type<uint>(float(i) + 1.0f) ? 1.0f : 0.0f) + y.f * 10.0f + float(x.b.w) * 1000.0f
         + float(w.bytes[1].z) * 100.0f + float(fl.i) * 0.001f + z.f + float(sizeof(wide) + sizeof(bits)) * 10000.0f;
}}
"#
    );
    let out = run_out(&src, 2);
    for (i, v) in out.iter().enumerate() {
        let f = i as f32 + 1.0;
        let top_byte = (f.to_bits() >> 24) as f32;
        let flags = (1u32 | (1 << 16) | if i == 1 { 1 << 24 } else { 0 }) as f32;
        let expect = 1.0 + f32::from_bits(0x40490fdb) * 10.0 + top_byte * 1000.0 + 7.0 * 100.0 + flags * 0.001 + 12.0 * 10000.0;
        assert_eq!(*v, expect, "thread {i}");
    }
}

#[test]
fn anonymous_unions_and_structs_in_buffer_blocks() {
    // The layout of quantized blocks: a scale pair readable as two halves or
    // one half2, then the quants.
    let src = r#"
#define QK 8
typedef struct {
  union {
    struct {
      half d;
      half m;
    };
    half2 dm;
  };
  uint8_t qs[QK / 2];
} block_q;
static_assert(sizeof(block_q) == 2 * sizeof(half) + QK / 2, "block size");

template <typename T>
union packed {
  T val[4 / sizeof(T)];
  uint bits;
};

kernel void k(device const block_q* blocks [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  device const block_q* b = blocks + i;
  float2 dm = float2(b->dm);
  float sum = 0.0f;
  for (int j = 0; j < QK / 2; j++) {
    sum += float(b->qs[j] & 0xF) * float(b->d) + float(b->m);
  }
  block_q copy = *b;
  packed<ushort> p;
  p.bits = 0x00020001u;
  out[i] = sum + (dm.x == float(copy.d) && dm.y == float(copy.m) ? 1000.0f : 0.0f) + float(p.val[1]) * 10000.0f;
}
"#;
    let full = format!("{PRELUDE}{src}");
    let k = compile(&full, "k");
    // Two blocks: d, m as halves, then four quant bytes.
    let mut blocks = Vec::new();
    let ds = [(0.5f32, 1.0f32), (2.0, -1.0)];
    for (d, m) in ds {
        blocks.extend(half::f16::from_f32(d).to_le_bytes());
        blocks.extend(half::f16::from_f32(m).to_le_bytes());
        blocks.extend([0x21u8, 0x43, 0x05, 0xF0]);
    }
    let mut b = bufs(vec![(0, blocks), (1, f32s(&[0.0; 2]))]);
    let r = run(&k, &threads([2, 1, 1], [2, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let out = to_f32(&b[&1]);
    for (i, (d, m)) in ds.iter().enumerate() {
        let sum: f32 = [1.0f32, 3.0, 5.0, 0.0].iter().map(|q| q * d + m).sum();
        assert_eq!(out[i], sum + 1000.0 + 20000.0, "block {i}");
    }
}

#[test]
fn a_union_member_written_short_leaves_the_rest_unset() {
    let src = format!(
        r#"
union hu {{
  half h;
  uint u;
}};
kernel void k({KERNEL_OUT}) {{
  hu x;
  x.h = half(1.0h);
  out[i] = float(x.u);   // two of its bytes were never written
}}
"#
    );
    let (_, findings) = run_with_findings(&src, 1);
    assert!(findings.iter().any(|f| f.kind == FindingKind::UninitializedRead), "{findings:?}");
}

// ------------------------------------------------- types declared in functions

#[test]
fn structs_unions_and_enums_declared_inside_functions() {
    let src = format!(
        r#"
struct P {{ float unused; }};   // a program-scope P, hidden by the local one
template <typename T, int N>
T gather(thread const T* src) {{
  typedef struct {{
    T w[N];
  }} vec_w;
  struct P {{
    T x;
    T y = T(1);
    T sum() const {{ return x + y; }}
  }};
  enum Mode {{ Plain = 2, Doubled }};
  union word {{ uint u; float f; }};
  vec_w local;
  for (int j = 0; j < N; j++) {{
    local.w[j] = src[j];
  }}
  P p;
  p.x = local.w[N - 1];
  word wd;
  wd.f = 1.0f;
  return p.sum() + T(Doubled) + (wd.u == 0x3f800000u ? T(100) : T(0));
}}
kernel void k({KERNEL_OUT}) {{
  float a[3] = {{float(i), 2.0f, 5.0f}};
  int b[2] = {{int(i), 7}};
  out[i] = gather<float, 3>(a) + float(gather<int, 2>(b)) * 1000.0f;
}}
"#
    );
    let out = run_out(&src, 2);
    for (i, v) in out.iter().enumerate() {
        // float: 5 + 1 + 3 + 100; int: 7 + 1 + 3 + 100.
        assert_eq!(*v, 109.0 + 111.0 * 1000.0, "thread {i}");
    }
}

#[test]
fn array_members_with_default_initializers_in_structs_with_constructors() {
    let src = format!(
        r#"
struct Frag {{ float v; }};
struct Tile {{
  float vals[4] = {{1.0f, 2.0f}};
  Frag frags[2] = {{Frag{{5.0f}}}};
  float scale;
  Tile(float s) : scale(s) {{}}
}};
kernel void k({KERNEL_OUT}) {{
  Tile t(float(i));
  out[i] = t.vals[0] + t.vals[1] + t.vals[2] + t.vals[3] + t.frags[0].v + t.frags[1].v + t.scale;
}}
"#
    );
    let out = run_out(&src, 2);
    assert_eq!(out, vec![8.0, 9.0]);
}

/// A variable of an unnamed union or struct declared in a function body
/// (`union { uint i; uchar b[4]; } v;`, as PyTorch's c10/metal/atomic.h
/// writes), in a function template instantiated twice, two variables of one
/// unnamed struct, and braces setting the first member.
#[test]
fn variables_of_unnamed_local_unions_and_structs() {
    let src = format!(
        r#"
template <typename T>
uint bump_byte(uint word, uint which) {{
  constexpr uint n = sizeof(uint) / sizeof(T);
  union {{
    uint i;
    T t[n];
  }} v;
  v.i = word;
  v.t[which % n] += T(1);
  return v.i;
}}
kernel void k({KERNEL_OUT}) {{
  struct {{ float a; int b; }} p, q;
  p.a = float(i);
  p.b = 2;
  q = p;
  q.b += 1;
  union {{ float f; uint u; }} bits = {{1.0f}};
  out[i] = float(bump_byte<uchar>(0x01010101u, i)) + float(bump_byte<ushort>(0x00010001u, i)) * 0.5f
         + q.a * float(q.b) + float(bits.u >> 23);
}}
"#
    );
    let out = run_out(&src, 6);
    for (i, v) in out.iter().enumerate() {
        let bytes = 0x0101_0101u32 + (1u32 << (8 * (i % 4)));
        let halves = 0x0001_0001u32 + (1u32 << (16 * (i % 2)));
        let expect = bytes as f32 + halves as f32 * 0.5 + i as f32 * 3.0 + (1.0f32.to_bits() >> 23) as f32;
        assert_eq!(*v, expect, "thread {i}");
    }
}

// ------------------------------------------------------------ reference members

/// The corpus kernel `features/reference_members.metal`: a strided walker
/// holding a `constant` reference to the rank (brace-initialized from
/// kernel parameters, then copied) and a counter binding a `thread`
/// reference in its constructor, summing a strided view of `x`.
#[test]
fn reference_member_walker_sums_a_strided_view() {
    let src = include_str!("../../msl/tests/kernels/features/reference_members.metal");
    let k = compile(src, "strided_sum");
    let x: Vec<f32> = (0..24).map(|v| v as f32 * 0.5 + 1.0).collect();
    let (dims, strides) = ([2u32, 3], [4u32, 1]);
    let mut b = bufs(vec![(0, f32s(&x)), (1, u32s(&[2])), (2, u32s(&dims)), (3, u32s(&strides)), (4, f32s(&[0.0; 4]))]);
    let r = run(&k, &threads([4, 1, 1], [4, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    // Row-major walk over the view: element (a, c) is at a * 4 + c.
    let expect: f32 = (0..dims[0]).flat_map(|a| (0..dims[1]).map(move |c| a * strides[0] + c * strides[1])).map(|at| x[at as usize]).sum();
    assert_eq!(to_f32(&b[&4]), vec![expect; 4]);
}

/// Reading a reference member reads the referent (a later write to the
/// variable is seen), assigning through it writes the referent, a copy of
/// the struct shares the binding, and the struct stores a pointer-sized
/// slot for it.
#[test]
fn reference_members_read_write_and_copy_the_binding() {
    let src = format!(
        r#"
struct view {{
  thread float &r;
  float own;
}};
struct pair_ref {{
  device float &a;
  threadgroup float &b;
}};
kernel void k({KERNEL_OUT}) {{
  threadgroup float shared[4];
  float x = float(i);
  view v{{x, 10.0f}};
  x += 1.0f;             // seen through v.r
  float seen = v.r;
  view w = v;            // shares the binding
  w.r = w.r * 3.0f;      // writes x
  w.own = 0.0f;          // v.own is separate
  shared[i] = 5.0f;
  pair_ref p{{out[i], shared[i]}};
  p.b += 2.0f;
  p.a = seen * 1000.0f + x * 100.0f + v.own + shared[i] + float(sizeof(view) + sizeof(pair_ref)) * 0.0001f;
}}
"#
    );
    let out = run_out(&src, 4);
    for (i, v) in out.iter().enumerate() {
        let x = i as f32 + 1.0;
        let expect = x * 1000.0 + x * 3.0 * 100.0 + 10.0 + 7.0 + 32.0 * 0.0001;
        assert!((v - expect).abs() < 1e-3, "thread {i}: {v} vs {expect}");
    }
}
