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

#[test]
fn nested_types_static_members_and_member_templates() {
    let src = format!(
        r#"
template <typename T, int N>
struct Block {{
  static constant constexpr int size = N * 2;
  using value_t = T;
  struct Pair {{
    value_t a;
    value_t b;
    value_t sum() const {{ return a + b + value_t(size); }}
  }};
  T scale;
  template <typename U = T>
  U scaled(U x, int times = 1) const {{ return x * U(scale) * U(times); }}
  static T twice(T x) {{ return x * T(2); }}
  template <typename U>
  static U thrice(U x) {{ return x * U(3); }}
}};
struct Divide {{
  template <typename T>
  T operator()(T a, T b) {{ return a / b; }}
  float operator()(float a, float b) {{ return a / b + 100.0f; }}
}};
kernel void k({KERNEL_OUT}) {{
  using B = Block<float, 3>;
  B::Pair p = B::Pair{{float(i), 1.0f}};
  B blk = B{{0.5f}};
  Divide d;
  float r = p.sum();               // i + 1 + 6
  r += blk.scaled(4.0f);           // 2
  r += blk.scaled(4, 3);           // int: 4 * int(0.5) * 3 = 0
  r += B::twice(1.5f);             // 3
  r += Block<float, 3>::thrice(2); // 6
  r += d(8.0f, 2.0f);              // the non-template overload: 104
  r += float(d(9, 2));             // the template, with int: 4
  out[i] = r;
}}
"#
    );
    let out = run_out(&src, 2);
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, i as f32 + 7.0 + 2.0 + 0.0 + 3.0 + 6.0 + 104.0 + 4.0, "thread {i}");
    }
}

#[test]
fn user_defined_conversions() {
    let src = format!(
        r#"
struct Half2 {{
  float a;
  float b;
  Half2(float x) thread : a(x), b(x * 2.0f) {{}}
  Half2(float x) device : a(x), b(x * 2.0f) {{}}
  operator float2() const thread {{ return float2(a, b); }}
  operator float2() const device {{ return float2(a, b); }}
  template <typename U, typename = enable_if_t<is_integral_v<U>>>
  operator U() const thread {{ return U(a) + U(b); }}
}};
float sum2(float2 v) {{ return v.x + v.y; }}
kernel void k({KERNEL_OUT}) {{
  Half2 h = float(i);        // converting constructor
  float2 v = h;              // conversion operator
  int n = h;                 // conversion operator template (integral)
  out[i] = sum2(h) + 10.0f * v.y + 100.0f * float(n);
}}
"#
    );
    let out = run_out(&src, 2);
    // i=1: a=1, b=2: sum 3, v.y 2 -> 20, n = 3 -> 300
    assert_eq!(out, vec![0.0, 323.0]);
}

#[test]
fn variadic_templates_and_folds() {
    let src = format!(
        r#"
template <typename T> T smallest(T x) {{ return x; }}
template <typename T, typename... R> T smallest(T x, R... r) {{ T m = smallest(r...); return x < m ? x : m; }}
template <typename... Ts> struct Count {{ static constant constexpr int n = sizeof...(Ts); }};
template <typename... Ts> using CountPlusOne = Count<int, Ts...>;
template <uint... Ks> constexpr uint bits() {{ return (0u | ... | (1u << Ks)); }}
template <typename... A> bool any_neg(A... a) {{ return ((a < 0) || ...); }}
template <typename... A> float lin(A... a) {{ float w = 0.0f; return (0.0f + ... + (a * (w += 1.0f))); }}
kernel void k({KERNEL_OUT}) {{
  float x = float(i);
  out[i] = smallest(x + 3.0f, 7.0f, x * 2.0f) + float(CountPlusOne<float, half>::n) * 100.0f + float(bits<0, 2, 4>()) * 1000.0f
         + (any_neg(1, x - 2.0f, 3u) ? 0.5f : 0.0f) + lin(1.0f, x) * 10000.0f;
}}
"#
    );
    let out = run_out(&src, 4);
    for (i, v) in out.iter().enumerate() {
        let x = i as f32;
        let small = (x + 3.0).min(7.0).min(x * 2.0);
        // bits<0,2,4> = 0b10101 = 21; lin(1, x) = 1*1 + x*2 (left fold: weights in order).
        let expect = small + 300.0 + 21000.0 + if x - 2.0 < 0.0 { 0.5 } else { 0.0 } + (1.0 + 2.0 * x) * 10000.0;
        assert_eq!(*v, expect, "thread {i}");
    }
}

#[test]
fn more_specialised_template_wins() {
    let src = format!(
        r#"
template <typename T> float pick(T) {{ return 1.0f; }}
template <typename T> float pick(thread T*) {{ return 2.0f; }}
template <typename T, int N> float pick(vec<T, N>) {{ return 3.0f; }}
template <typename T> float pick(T, T) {{ return 5.0f; }}
kernel void k({KERNEL_OUT}) {{
  float v = float(i);
  out[i] = pick(v) + 10.0f * pick(&v) + 100.0f * pick(float2(v)) + 1000.0f * pick(3, 4);
}}
"#
    );
    let out = run_out(&src, 2);
    assert!(out.iter().all(|&v| v == 1.0 + 20.0 + 300.0 + 5000.0), "{out:?}");
}

#[test]
fn class_partial_specialization_and_decltype_members() {
    let src = format!(
        r#"
template <typename T> struct Box {{ T v; }};
template <typename T, typename E = void> struct Kind {{ static constant constexpr int id = 1; }};
template <typename T> struct Kind<Box<T>> {{ static constant constexpr int id = 2; }};
template <typename T> struct Kind<T, enable_if_t<is_integral_v<T>>> {{ static constant constexpr int id = 3; }};
template <typename T, int N> struct Tile {{ static constant constexpr int n = N; }};
template <int N> struct Tile<half, N> {{ static constant constexpr int n = -N; }};
kernel void k({KERNEL_OUT}) {{
  Tile<float, 8> t;
  Tile<half, 4> h;
  out[i] = float(Kind<float>::id + 10 * Kind<Box<float>>::id + 100 * Kind<uint>::id) + float(decltype(t)::n * decltype(h)::n) + float(i);
}}
"#
    );
    let out = run_out(&src, 3);
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, 321.0 - 32.0 + i as f32, "thread {i}");
    }
}

#[test]
fn metal_intrinsics_and_library_overloads_beside_user_ones() {
    let src = format!(
        r#"
// A user overload beside Metal's: a `uint` argument still calls Metal's exact one.
inline long simd_shuffle_down(long v, ushort d) {{ return v + 1000; }}
inline float half_abs(float x) {{ return __metal_fabs(x, __METAL_MAYBE_FAST_MATH__) * 0.5f; }}
inline float mant(float x) {{ int e = 0; float m = __metal_frexp(x, &e); return m * 100.0f + float(e); }}
struct P {{ float v; constexpr P(float x) : v(x) {{}} }};
static_assert(P(2.0f).v == 2.0f, "checked by Metal, skipped here with a warning");
kernel void k({KERNEL_OUT}) {{
  uint u = simd_shuffle_down(i, ushort(1));
  out[i] = float(u) + half_abs(-float(i)) * 10.0f + mant(8.0f) * 100.0f + float(__metal_get_simdgroup_size(ushort()));
}}
"#
    );
    // (A whole SIMD-group: in a smaller one the last thread's shuffle would
    // read a lane that does not exist, which is undefined.)
    let out = run_out(&src, 32);
    for (i, v) in out.iter().enumerate() {
        let x = i as f32;
        let shuffled = if i < 31 { x + 1.0 } else { x };
        // frexp(8) = 0.5 * 2^4
        let expect = shuffled + x * 0.5 * 10.0 + (50.0 + 4.0) * 100.0 + 32.0;
        assert_eq!(*v, expect, "thread {i}");
    }
}

#[test]
fn if_constexpr_checks_only_the_taken_branch() {
    let src = format!(
        r#"
struct NoNan {{ int v; }};
template <typename T> float classify(T x) {{
  if constexpr (is_floating_point_v<T>) {{
    return isnan(x) ? -1.0f : float(x);
  }} else if constexpr (is_integral_v<T>) {{
    return float(x) * 10.0f;
  }} else {{
    return float(x.v) * 100.0f;   // only valid for NoNan
  }}
}}
kernel void k({KERNEL_OUT}) {{
  out[i] = classify(float(i)) + classify(int(i)) + classify(NoNan{{int(i)}});
}}
"#
    );
    let out = run_out(&src, 3);
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, 111.0 * i as f32, "thread {i}");
    }
}

#[test]
fn member_template_calls_with_explicit_arguments() {
    // `obj.template f<N>(…)` in a template, `obj.f<N>(…)` outside one; the
    // member template reads a static member declared after it.
    let src = format!(
        r#"
template <typename U>
struct Scaler {{
  template <int N>
  U many(U x) thread {{ return x * N + bias; }}
  static constexpr constant U bias = U(100);
}};
struct Plain {{
  template <int N, typename T>
  T pick(T a, T b) const thread {{ return N == 0 ? a : b; }}
}};
template <typename T, typename Op, int N>
T apply(T x) {{
  Op op;
  return op.template many<N>(x);
}}
kernel void k({KERNEL_OUT}) {{
  Plain p;
  float a = apply<float, Scaler<float>, 3>(float(i));
  out[i] = a + p.pick<1>(0.5f, 1000.0f) + p.pick<0, float>(0.25f, 2000.0f);
}}
"#
    );
    let out = run_out(&src, 3);
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, 3.0 * i as f32 + 100.0 + 1000.0 + 0.25, "thread {i}");
    }
}

#[test]
fn casts_and_conditions_through_constructors_and_conversion_operators() {
    let src = format!(
        r#"
template <typename T>
struct cx {{
  T re;
  T im;
  constexpr cx(T a, T b) thread : re(a), im(b) {{}}
  template <typename U, typename = enable_if_t<is_convertible_v<U, T>>>
  constexpr cx(U x) thread : re(static_cast<T>(x)), im(static_cast<T>(0)) {{}}
}};
struct Mask {{
  int on;
  constexpr operator bool() const thread {{ return on != 0; }}
}};
template <typename U, typename T>
U cast_to(T v) {{ return static_cast<U>(v); }}
kernel void k({KERNEL_OUT}) {{
  cx<float> a = static_cast<cx<float>>(i);   // constructor template
  cx<float> b = cast_to<cx<float>>(true);
  cx<float> c = (cx<float>)2.5f;
  Mask m{{int(i % 2)}};
  float f = float(m);                       // operator bool, then bool -> float
  float r = a.re + 10.0f * b.re + 100.0f * c.re + 1000.0f * f;
  if (!m) {{
    r += 0.5f;
  }}
  if (m) {{
    r += 0.25f;
  }}
  out[i] = r;
}}
"#
    );
    let out = run_out(&src, 4);
    for (i, v) in out.iter().enumerate() {
        let odd = i % 2 == 1;
        let expect = i as f32 + 10.0 + 250.0 + if odd { 1000.25 } else { 0.5 };
        assert_eq!(*v, expect, "thread {i}");
    }
}

#[test]
fn string_literals_and_constexpr_constructed_constants() {
    // A string literal is a `constant char` array (its bytes and a zero);
    // program-scope objects are built by `constexpr` constructors at compile
    // time, including one declared only for `constant` objects.
    let src = format!(
        r#"
namespace lib {{
struct logger {{
  constexpr logger(constant char*, constant char*) constant {{}}
  template <typename... Args>
  void note(constant char*, Args...) const thread {{}}
  template <typename... Args>
  void note(constant char*, Args...) const constant {{}}
}};
}}
struct Pair {{
  float a;
  int b;
  constexpr Pair(float x, int y) thread : a(x * 2), b(y + 1) {{}}
}};
constant lib::logger log_obj("lib", "tests");
constant Pair pair(1.5f, 3);
int length(constant char* s) {{
  int n = 0;
  while (s[n] != 0) {{
    n++;
  }}
  return n;
}}
kernel void k({KERNEL_OUT}) {{
  log_obj.note("value %d", 7);
  constant char* word = "metal";
  out[i] = pair.a + 10.0f * pair.b + 100.0f * length("hello!") + 1000.0f * float(word[i] == 'e');
}}
"#
    );
    let out = run_out(&src, 3);
    assert_eq!(out, vec![643.0, 1643.0, 643.0]);
}

#[test]
fn meta_traits_and_coherent_buffers() {
    let src = r#"
template <typename T>
constexpr constant bool is_small_int = _disjunction<is_same<T, char>, is_same<T, short>>::value;
template <typename T>
constexpr constant bool is_plain_float = conjunction<is_floating_point<T>, negation<is_same<T, half>>>::value;
kernel void k(volatile coherent(device) device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = float(is_small_int<short>) + 10.0f * float(is_small_int<int>) + 100.0f * float(is_plain_float<float>)
         + 1000.0f * float(is_plain_float<half>);
}
"#;
    let out = run_out(src, 1);
    assert_eq!(out, vec![101.0]);
}

#[test]
fn braced_lists_for_templates_with_written_arguments() {
    // Two overloads of one template: only the `uint3` one takes a list of
    // three; the template argument is written, so nothing is deduced.
    let src = format!(
        r#"
template <typename IdxT = long>
IdxT flat(IdxT e, int n) {{ return e * n; }}
template <typename IdxT = long>
IdxT flat(uint3 e, int n) {{ return IdxT(e.x) + IdxT(e.y) * n + IdxT(e.z) * n * n; }}
kernel void k({KERNEL_OUT}) {{
  int a = flat<int>({{i, 2u, 1u}}, 10);
  long b = flat({{1u, i, 0u}}, 10);
  out[i] = float(a) + 1000.0f * float(b);
}}
"#
    );
    let out = run_out(&src, 2);
    assert_eq!(out, vec![1120.0, 11121.0]);
}

/// The corpus kernel `features/inheritance.metal`, run and compared with
/// values computed by hand from C++'s rules.
#[test]
fn inheritance_corpus_kernel_matches_reference() {
    let src = include_str!("../../msl/tests/kernels/features/inheritance.metal");
    let out = run_eight_threads(src, "inheritance_kernel");
    for (i, v) in out.iter().enumerate() {
        let w = i as f32;
        // Box: width w, tag 3, depth w + 1; sides 4; sizeof = 3 floats/ints.
        let volume = w * w * (w + 1.0) + 3.0 + 4.0;
        let wide_side = 2.0 * w;
        // Meter: count 2 bumped to 3, unit 3: 3 * 3 + 3.
        let reading = 12.0;
        let expect = volume + wide_side + w + w + w + reading + 10.0 + 1.0 + 100.0 + 4.0 + 12.0;
        assert_eq!(*v, expect, "thread {i}");
    }
}

#[test]
fn inheritance_layout_puts_bases_first_in_device_buffers() {
    // A derived struct read from a device buffer: the base's fields come
    // first, then the derived ones; an empty base takes no bytes.
    let src = r#"
struct Empty { static constexpr constant int tag = 5; };
struct A { float a; };
struct B { float b0; float b1; };
struct D : Empty, A, B { float d; };
kernel void k(device float* out [[buffer(0)]], const device D* in [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  const device D& x = in[i];
  const device B& asb = x;
  out[i] = x.a * 1000.0f + asb.b0 * 100.0f + x.b1 * 10.0f + x.d + float(sizeof(D)) * 10000.0f + D::tag * 100000.0f;
}
"#;
    let full = format!("{PRELUDE}{src}");
    let k = compile(&full, "k");
    let input: Vec<f32> = (0..8).map(|x| x as f32).collect();
    let mut b = bufs(vec![(0, f32s(&[0.0, 0.0])), (1, f32s(&input))]);
    let r = run(&k, &threads([2, 1, 1], [2, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let out = to_f32(&b[&0]);
    for (i, v) in out.iter().enumerate() {
        let f = &input[i * 4..i * 4 + 4];
        let expect = f[0] * 1000.0 + f[1] * 100.0 + f[2] * 10.0 + f[3] + 16.0 * 10000.0 + 500000.0;
        assert_eq!(*v, expect, "thread {i}");
    }
}

#[test]
fn inheritance_hiding_multilevel_and_overloads() {
    // A derived member hides the base's; a grandparent's members are found
    // through two levels; a derived object picks the overload taking its
    // nearest viable base by reference; deduction sees a base template.
    let src = format!(
        r#"
struct G {{ float g; float who() const {{ return 1.0f; }} }};
struct P : G {{ float who() const {{ return 2.0f; }} float parent_who() const {{ return G::who(); }} }};
struct C : P {{ float c; }};
template <typename T> struct Wrap {{ T w; }};
struct W : Wrap<int> {{ }};
float take(const thread G& x) {{ return x.g; }}
template <typename T> T unwrap(Wrap<T> x) {{ return x.w; }}
kernel void k({KERNEL_OUT}) {{
  C c;
  c.g = float(i);
  c.c = 0.5f;
  W w;
  w.w = 7;
  out[i] = c.who() * 100.0f + c.parent_who() * 10.0f + take(c) + c.c + float(unwrap(w)) * 1000.0f;
}}
"#
    );
    let out = run_out(&src, 4);
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, 200.0 + 10.0 + i as f32 + 0.5 + 7000.0, "thread {i}");
    }
}

#[test]
fn metal_integral_constants_using_directives_and_injected_class_names() {
    // `<metal_type_traits>`'s integral_constant family as base classes and
    // tags, `__is_empty`, declarations added to namespace `metal`, `using
    // namespace` at program scope and in a body, and a template naming
    // itself without arguments inside its own definition.
    let src = r#"
namespace lib {
namespace inner {
struct Unit {};
struct Pair { float a; float b; };
template <typename T>
struct Cell {
  T v;
  using self = Cell;
  self twice() const { return self{v * 2}; }
};
float half_of(float x) { return x * 0.5f; }
}
}
namespace metal {
template <typename T>
struct is_unit : bool_constant<__is_empty(T)> {};
}
using namespace lib::inner;
template <typename T>
float tagged(T x, metal::true_type) { return x + 1000.0f; }
template <typename T>
float tagged(T x, metal::false_type) { return x; }
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  using namespace metal;
  Cell<float> c{float(i)};
  Pair p{1.0f, 2.0f};
  constexpr bool u = metal::is_unit<Unit>::value;
  constexpr bool n = is_unit<Pair>::value;
  int seven = integral_constant<int, 7>{};
  out[i] = c.twice().v + half_of(p.b) + (u ? 100.0f : 0.0f) + (n ? 10000.0f : 0.0f)
      + tagged(0.5f, is_unit<Unit>{}) + tagged(0.25f, false_type{}) + float(seven) + float(true_type::value);
}
"#;
    let out = run_out(src, 4);
    for (i, v) in out.iter().enumerate() {
        let expect = 2.0 * i as f32 + 1.0 + 100.0 + 1000.5 + 0.25 + 7.0 + 1.0;
        assert_eq!(*v, expect, "thread {i}");
    }
}

#[test]
fn const_and_non_const_member_overloads() {
    // `at()` and `at() const` with the same parameters: a non-const object
    // gets the non-const one (which returns a writable reference), a const
    // reference the const one.
    let src = r#"
struct Tile {
  float v[4];
  thread float& at(short k) thread { return v[k]; }
  const thread float& at(short k) const thread { return v[k]; }
  float tag() const { return 1.0f; }
  float tag() { return 2.0f; }
};
float read_const(const thread Tile& t) { return t.at(1) + t.tag() * 100.0f; }
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  Tile t;
  for (short k = 0; k < 4; ++k) { t.at(k) = float(i) + k; }
  out[i] = read_const(t) + t.tag() * 1000.0f + t.at(3);
}
"#;
    let out = run_out(src, 4);
    for (i, v) in out.iter().enumerate() {
        let x = i as f32;
        assert_eq!(*v, (x + 1.0) + 100.0 + 2000.0 + (x + 3.0), "thread {i}");
    }
}

/// The corpus kernel `features/matrices.metal` against the same products
/// computed here on column-major arrays.
#[test]
fn matrix_arithmetic_matches_reference() {
    let src = include_str!("../../msl/tests/kernels/features/matrices.metal");
    let k = compile(src, "matrices_kernel");
    let cols = [[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]];
    // float3x3 columns take 16 bytes each; then float2 shift at offset 48.
    let mut xf: Vec<f32> = cols.iter().flat_map(|c| [c[0], c[1], c[2], 0.0]).collect();
    xf.extend([5.0, -1.0, 0.0, 0.0]);
    let n = 4usize;
    let mut b = bufs(vec![(0, f32s(&xf)), (1, f32s(&vec![0.0; n * 16]))]);
    let r = run(&k, &threads([n as u32, 1, 1], [n as u32, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let out = to_f32(&b[&1]);
    let el = |c: usize, r: usize| cols[c][r];
    for i in 0..n {
        let v = [i as f32, 1.0, -2.0];
        let mv: Vec<f32> = (0..3).map(|r| (0..3).map(|c| el(c, r) * v[c]).sum()).collect();
        let vm: Vec<f32> = (0..3).map(|c| (0..3).map(|r| v[r] * el(c, r)).sum()).collect();
        // (m * mᵀ)(c, r) = Σ_t m(t, r) · m(t, c).
        let mmt = |c: usize, r: usize| (0..3).map(|t| el(t, r) * el(t, c)).sum::<f32>();
        let mm = |c: usize, r: usize| mmt(c, r) + if c == r { 2.0 } else { 0.0 } - el(c, r) * 0.5;
        // r = (column 0, column 2); sq = rᵀ r, sq(c, r') = column c · column r'.
        let picked = [cols[0], cols[2]];
        let sq = |c: usize, rr: usize| (0..3).map(|t| picked[c][t] * picked[rr][t]).sum::<f32>();
        let det3 = el(0, 0) * (el(1, 1) * el(2, 2) - el(2, 1) * el(1, 2)) - el(1, 0) * (el(0, 1) * el(2, 2) - el(2, 1) * el(0, 2))
            + el(2, 0) * (el(0, 1) * el(1, 2) - el(1, 1) * el(0, 2));
        // Upper-triangular 4x4: the product of its diagonal, 2·3·1·4; float2x2(1,2,3,4): 1·4 − 3·2.
        let det = 24.0 + (4.0 - 6.0);
        let want = [
            mv[0],
            mv[1],
            mv[2],
            vm[0],
            vm[1],
            vm[2],
            mm(1, 2),
            mm(0, 0),
            sq(1, 0),
            sq(1, 1),
            v[0] + 5.0,
            v[1] - 1.0,
            2.0 * i as f32 + 4.0,
            vm[2],
            det3,
            // Column i % 3 of mᵀ, row 1: element (1, i % 3) of m.
            det + 100.0 * el(1, i % 3),
        ];
        assert_eq!(&out[i * 16..i * 16 + 16], &want, "thread {i}");
    }
}

/// Designated array initializers: `[i] = v` moves the position, GNU's
/// `[a ... b] = v` fills a range (both ends), the rest are zero.
#[test]
fn designated_array_initializers() {
    let src = format!(
        r#"
constant constexpr int Q = 4;
kernel void k({KERNEL_OUT}) {{
  float s[Q] = {{ [0 ... Q - 1] = 0.5h }};
  int a[7] = {{ [1] = 7, 8, [4 ... 5] = -1 }};
  out[i] = s[i] + float(a[i]) * 10.0f + float(a[i + 3]) * 1000.0f;
}}
"#
    );
    let out = run_out(&src, 4);
    let a = [0.0f32, 7.0, 8.0, 0.0, -1.0, -1.0, 0.0];
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, 0.5 + a[i] * 10.0 + a[i + 3] * 1000.0, "thread {i}");
    }
}

/// The corpus kernel `features/steel_style_gemm.metal` (a tile GEMM in the
/// style of MLX's steel: fragments filled through `thread_elements()`,
/// partial specializations, alias templates, overloaded kernel templates),
/// both instantiations, compared with a product computed here.
#[test]
fn steel_style_gemm_matches_reference() {
    let src = include_str!("../../msl/tests/kernels/features/steel_style_gemm.metal");
    let (m, n, k) = (16usize, 16usize, 8usize);
    let a: Vec<f32> = (0..m * k).map(|x| (((x / k) * 3 + (x % k) * 5) % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..k * n).map(|x| (((x / n) * 2 + x % n) % 5) as f32 - 2.0).collect();
    let bias: Vec<f32> = (0..n).map(|j| j as f32 * 0.5).collect();
    let product = |i: usize, j: usize| (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum::<f32>();
    for (kernel, with_bias) in [("gemm_f32_16x16x8", true), ("gemm_plain_f32_16x16x8", false)] {
        let compiled = compile(src, kernel);
        let mut bu = bufs(vec![(0, f32s(&a)), (1, f32s(&b)), (2, f32s(&vec![0.0; m * n])), (3, f32s(&bias))]);
        let r = run(&compiled, &threads([32, 1, 1], [32, 1, 1]), &mut bu, &opts(CheckLevel::All));
        assert!(r.findings.is_empty(), "{kernel}: {:?}", r.findings);
        let c = to_f32(&bu[&2]);
        for i in 0..m {
            for j in 0..n {
                let expect = product(i, j) + if with_bias { bias[j] } else { 0.0 };
                assert_eq!(c[i * n + j], expect, "{kernel}: C[{i}][{j}]");
            }
        }
    }
}

/// Operators on a struct with a conversion operator when no user operator
/// fits (C++'s built-in candidates), and operators found by
/// argument-dependent lookup from inside a namespace that hides them.
#[test]
fn builtin_operators_through_conversions_and_adl() {
    let src = format!(
        r#"
template <typename T, T v>
struct ic {{
  constexpr operator T() const thread {{ return v; }}
}};
template <typename T, T a, typename U, U b>
constexpr ic<T, a + b> operator+(ic<T, a>, ic<U, b>) {{ return {{}}; }}
struct V {{ float x; }};
V operator*(V a, V b) {{ return V{{a.x * b.x}}; }}
namespace inner {{
struct W {{ float w; }};
// Hides the global `operator*` for unqualified lookup inside `inner`.
W operator*(W a, W b) {{ return W{{a.w + b.w}}; }}
template <typename T, int K>
float use(T s, device float* p) {{
  V v = V{{3.0f}};
  V sq = v * v;              // the global operator, found through V
  short i = 2;
  int prod = i * s;          // built-in `*` on ic's conversion to int
  int neg = -s;              // built-in unary `-`
  p += ic<int, 1>{{}};       // pointer += converted constant
  int sum = ic<int, 2>{{}} + ic<int, K>{{}};  // the user operator
  return sq.x + float(prod) * 10.0f + float(neg) * 100.0f + p[0] * 1000.0f + float(sum) * 10000.0f;
}}
}}
kernel void k({KERNEL_OUT}) {{
  if (i == 0) {{
    out[1] = 7.0f;
    out[0] = inner::use<ic<int, 4>, 5>(ic<int, 4>{{}}, out);
  }}
}}
"#
    );
    let out = run_out(&src, 2);
    assert_eq!(out[0], 9.0 + 80.0 - 400.0 + 7000.0 + 70000.0);
}

/// A template's signature is resolved where the template was declared: the
/// caller's kernel parameter `K` does not hide the template parameter `K`.
#[test]
fn caller_locals_do_not_hide_template_parameters() {
    let src = r#"
template <typename T, int R, int C>
struct Tile { T v[R * C]; };
template <typename T, int M, int N, int K>
float mm(thread Tile<T, M, N>& d, thread Tile<T, M, K>& a, thread Tile<T, K, N>& b) {
  return float(M * 100 + N * 10 + K) + d.v[0] + a.v[0] + b.v[0];
}
kernel void k(device float* K [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  Tile<float, 2, 3> d = {}; Tile<float, 2, 4> a = {}; Tile<float, 4, 3> b = {};
  K[i] = mm(d, a, b);
}
"#;
    let k = compile(&format!("{PRELUDE}{src}"), "k");
    let mut b = bufs(vec![(0, f32s(&[0.0]))]);
    let r = run(&k, &threads([1, 1, 1], [1, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!(to_f32(&b[&0]), vec![234.0]);
}

/// A struct converts implicitly to a scalar through a conversion operator
/// to another scalar followed by a standard conversion (MLX's `_NoMask`
/// assigned to a `half` scale through `operator bool`).
#[test]
fn conversion_operator_then_standard_conversion() {
    let src = format!(
        r#"
struct NoMask {{
  char x;
  constexpr operator bool() const device {{ return true; }}
  constexpr operator bool() const thread {{ return true; }}
}};
kernel void k({KERNEL_OUT}, const device NoMask* m [[buffer(1)]]) {{
  half scale = m[i];
  NoMask n;
  n.x = 0;
  float f = n;
  out[i] = float(scale) * 10.0f + f;
}}
"#
    );
    let k = compile(&format!("{PRELUDE}{src}"), "k");
    let mut b = bufs(vec![(0, f32s(&[0.0, 0.0])), (1, vec![0u8, 0u8])]);
    let r = run(&k, &threads([2, 1, 1], [2, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!(to_f32(&b[&0]), vec![11.0, 11.0]);
}

/// Array members with default initializers, kept by constructors that do
/// not name them (steel's `frag_type val_frags[N] = {frag_type(0)};`):
/// the given elements, the rest value-initialized.
/// `simdgroup_matrix<T, 8, 8>(d)` is a diagonal matrix (candle's
/// mlx_gemm zeroes its accumulators this way); stored and compared here.
#[test]
fn simdgroup_matrix_scalar_constructor_is_diagonal() {
    let src = r#"
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint lane [[thread_index_in_simdgroup]]) {
  simdgroup_matrix<float, 8, 8> d = simdgroup_matrix<float, 8, 8>(3);
  simdgroup_float8x8 z = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
  simdgroup_multiply_accumulate(z, d, d, z);
  simdgroup_store(z, out, 8);
}
"#;
    let k = compile(src, "k");
    let mut b = bufs(vec![(0, f32s(&[-1.0; 64]))]);
    let r = run(&k, &threads([32, 1, 1], [32, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let out = to_f32(&b[&0]);
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, if i / 8 == i % 8 { 9.0 } else { 0.0 }, "element {i}");
    }
}

/// MLX's random.metal: a range-based `for` over a row of a `constant` 2-D
/// table (by value, by `const auto&`, with an explicit element type), and
/// nested over the whole table by reference to each row.
#[test]
fn range_for_reads_rows_of_a_constant_table() {
    let src = format!(
        r#"
static constexpr constant uint table[3][4] = {{{{1, 2, 3, 4}}, {{10, 20, 30, 40}}, {{100, 200, 300, 400}}}};
kernel void k({KERNEL_OUT}) {{
  uint row = 0;
  for (auto v : table[i % 3]) {{
    row = row * 2 + v;
  }}
  uint all = 0;
  for (const auto& r : table) {{
    for (float v : r) {{
      all += uint(v);
    }}
  }}
  out[i] = float(row) + 10000.0f * float(all);
}}
"#
    );
    let out = run_out(&src, 4);
    let table = [[1u32, 2, 3, 4], [10, 20, 30, 40], [100, 200, 300, 400]];
    let all: u32 = table.iter().flatten().sum();
    for (i, v) in out.iter().enumerate() {
        let row = table[i % 3].iter().fold(0u32, |acc, &x| acc * 2 + x);
        assert_eq!(*v, row as f32 + 10000.0 * all as f32, "thread {i}");
    }
}

/// `auto&` binds each element in place, so the body modifies a thread
/// array (C array and `metal::array`, rows of a 2-D array too); a copy
/// (`auto`) leaves the array alone.
#[test]
fn range_for_modifies_elements_through_a_reference() {
    let src = format!(
        r#"
kernel void k({KERNEL_OUT}) {{
  float a[4] = {{1.0f, 2.0f, 3.0f, 4.0f}};
  for (auto& x : a) {{
    x = x * float(i + 2);
  }}
  for (auto x : a) {{
    x = 0.0f;
  }}
  metal::array<int, 3> b = {{5, 6, 7}};
  for (thread int& x : b) {{
    x += int(i);
  }}
  int m[2][2] = {{{{1, 2}}, {{3, 4}}}};
  for (auto& r : m) {{
    for (auto& x : r) {{
      x *= 10;
    }}
  }}
  out[i] = a[0] + a[1] + a[2] + a[3] + 100.0f * float(b[0] + b[1] + b[2]) + 1000.0f * float(m[1][1]);
}}
"#
    );
    let out = run_out(&src, 4);
    for (i, v) in out.iter().enumerate() {
        let x = i as f32;
        let a: f32 = [1.0f32, 2.0, 3.0, 4.0].iter().map(|e| e * (x + 2.0)).sum();
        let b = (5 + 6 + 7 + 3 * i) as f32;
        assert_eq!(*v, a + 100.0 * b + 1000.0 * 40.0, "thread {i}");
    }
}

/// `break` leaves a range-based `for`, `continue` goes on with the next
/// element (the hidden index still advances).
#[test]
fn range_for_break_and_continue() {
    let src = format!(
        r#"
constant int values[8] = {{3, -1, 4, -1, 5, 9, -2, 6}};
kernel void k({KERNEL_OUT}) {{
  int sum = 0;
  int seen = 0;
  for (int v : values) {{
    seen++;
    if (v < 0) continue;
    if (v > int(i) + 4) break;
    sum += v;
  }}
  out[i] = float(sum) + 100.0f * float(seen);
}}
"#
    );
    let out = run_out(&src, 6);
    let values = [3, -1, 4, -1, 5, 9, -2, 6];
    for (i, v) in out.iter().enumerate() {
        let (mut sum, mut seen) = (0, 0);
        for &x in &values {
            seen += 1;
            if x < 0 {
                continue;
            }
            if x > i as i32 + 4 {
                break;
            }
            sum += x;
        }
        assert_eq!(*v, (sum + 100 * seen) as f32, "thread {i}");
    }
}

/// The elements a range-based `for` reads are ordinary indexed accesses:
/// the sanitizer reports the read of an element never written.
#[test]
fn range_for_reads_are_sanitized() {
    let src = format!(
        r#"{PRELUDE}
kernel void k({KERNEL_OUT}) {{
  threadgroup float tile[4];
  tile[i] = float(i);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  float s = 0.0f;
  for (float v : tile) {{ s += v; }}
  out[i] = s;
}}
"#
    );
    let k = compile(&src, "k");
    // Only three threads write the four-element tile.
    let mut b = bufs(vec![(0, f32s(&[0.0; 3]))]);
    let r = run(&k, &threads([3, 1, 1], [3, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.iter().any(|f| f.kind == FindingKind::UninitializedRead), "{:?}", r.findings);
}

/// `a * b` on SIMD-group matrices is their product (MLX's Winograd
/// transforms); braces that leave out a vector's trailing components make
/// them zero (`uint4 k = {a, b, c}`, `uint2 v = {5}` is (5, 0)).
#[test]
fn simdgroup_matrix_product_operator_and_short_vector_braces() {
    let src = r#"
#include <metal_stdlib>
using namespace metal;
kernel void k(const device float* A [[buffer(0)]], const device float* B [[buffer(1)]], device float* out [[buffer(2)]],
              device uint* v [[buffer(3)]], uint lane [[thread_index_in_simdgroup]]) {
  simdgroup_float8x8 a, b;
  simdgroup_load(a, A, 8);
  simdgroup_load(b, B, 8);
  simdgroup_float8x8 c = (a * b) * a;
  simdgroup_store(c, out, 8);
  uint4 k = {lane, 2u, 3u};
  uint2 one = {5u};
  v[lane] = k.x + 10 * k.y + 100 * k.z + 1000 * k.w + 10000 * one.y + 100000 * (one.x == 5 ? 1 : 0);
}
"#;
    let a: Vec<f32> = (0..64).map(|i| ((i * 7) % 5) as f32 - 2.0).collect();
    let bm: Vec<f32> = (0..64).map(|i| ((i * 3) % 4) as f32 - 1.0).collect();
    let k = compile(src, "k");
    let mut b = bufs(vec![(0, f32s(&a)), (1, f32s(&bm)), (2, f32s(&[0.0; 64])), (3, u32s(&[7; 32]))]);
    let r = run(&k, &threads([32, 1, 1], [32, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let mul = |x: &[f32], y: &[f32]| -> Vec<f32> { (0..64).map(|e| (0..8).map(|t| x[(e / 8) * 8 + t] * y[t * 8 + e % 8]).sum()).collect() };
    assert_eq!(to_f32(&b[&2]), mul(&mul(&a, &bm), &a));
    let v = to_u32(&b[&3]);
    for (lane, x) in v.iter().enumerate() {
        assert_eq!(*x, lane as u32 + 320 + 100000, "lane {lane}");
    }
}

/// A range-based `for` over a struct with `begin()`/`end()` member
/// functions walks its iterators (here pointers into a thread array, given
/// to the struct by braces, where the array decays), by value and by
/// reference.
#[test]
fn range_for_over_begin_and_end() {
    let src = format!(
        r#"
struct Window {{
  thread float* first;
  int n;
  thread float* begin() const {{ return first; }}
  thread float* end() const {{ return first + n; }}
}};
kernel void k({KERNEL_OUT}) {{
  float vals[5] = {{1.0f, 2.0f, 3.0f, 4.0f, 5.0f}};
  Window w = Window{{vals, int(i % 5) + 1}};
  float sum = 0.0f;
  for (float v : w) {{
    sum += v;
  }}
  for (auto& v : w) {{
    v = -v;
  }}
  out[i] = sum + 100.0f * (vals[0] + vals[4]);
}}
"#
    );
    let out = run_out(&src, 6);
    for (i, v) in out.iter().enumerate() {
        let n = i % 5 + 1;
        let sum: f32 = (1..=n).map(|x| x as f32).sum();
        let last = if n == 5 { -5.0 } else { 5.0 };
        assert_eq!(*v, sum + 100.0 * (-1.0 + last), "thread {i}");
    }
}

/// The corpus kernels `features/range_for.metal` and
/// `features/static_member_definitions.metal`, run and compared with the
/// same computations here.
#[test]
fn range_for_and_static_member_corpus_kernels_match_reference() {
    let src = include_str!("../../msl/tests/kernels/features/range_for.metal");
    let k = compile(src, "range_for_kernel");
    let mut b = bufs(vec![(0, u32s(&[0; 8]))]);
    let r = run(&k, &threads([8, 1, 1], [8, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let shifts = [[1u32, 2, 3], [4, 5, 6]];
    let mut total = 0;
    'rows: for row in &shifts {
        for &s in row {
            if s == 2 {
                continue;
            }
            if s == 5 {
                break 'rows;
            }
            total += s;
        }
    }
    for (tid, v) in to_u32(&b[&0]).iter().enumerate() {
        let tid = tid as u32;
        let acc = shifts[tid as usize % 2].iter().fold(tid, |acc, &s| acc + ((acc << s) & 0xFF));
        let last = 2 * (tid + 3);
        assert_eq!(*v, acc + total + (7 + last) + (9 + last), "thread {tid}");
    }

    let src = include_str!("../../msl/tests/kernels/features/static_member_definitions.metal");
    let k = compile(src, "static_member_definitions_kernel");
    let mut b = bufs(vec![(0, f32s(&[0.0; 6]))]);
    let r = run(&k, &threads([6, 1, 1], [6, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let w = [[0.5f32, 1.0, 1.5], [2.0, 2.5, 3.0]];
    for (tid, v) in to_f32(&b[&0]).iter().enumerate() {
        assert_eq!(*v, w[tid / 3 % 2][tid % 3], "thread {tid}");
    }
}

/// The corpus kernel `features/reduction_traits.metal`: an argmax over one
/// SIMD-group through a library's own (index, value) type, with
/// `numeric_limits` from its `_numeric_limits_impl` specialization and a
/// shuffle overload found where the reducer is instantiated. Ties go to the
/// lower index.
#[test]
fn library_reduction_traits_argmax() {
    let src = include_str!("../../msl/tests/kernels/features/reduction_traits.metal");
    let k = compile(src, "argmax_rows");
    let cases: [Vec<f32>; 3] = [
        (0..32).map(|i| ((i * 7919) % 101) as f32 * 0.25 - 3.0).collect(),
        (0..32).map(|i| if i == 5 || i == 20 { 9.5 } else { -(i as f32) }).collect(),
        (0..32).map(|i| -1.0e30 - i as f32).collect(),
    ];
    for x in cases {
        let mut b = bufs(vec![(0, f32s(&x)), (1, u32s(&[0; 32]))]);
        let r = run(&k, &threads([32, 1, 1], [32, 1, 1]), &mut b, &opts(CheckLevel::All));
        assert!(r.findings.is_empty(), "{:?}", r.findings);
        let best = (0..32).fold(0, |m, i| if x[i] > x[m] { i } else { m }) as u32;
        assert_eq!(to_u32(&b[&1]), vec![best; 32], "{x:?}");
    }
}

#[test]
fn function_pointers_corpus_kernel_matches_reference() {
    let src = include_str!("../../msl/tests/kernels/features/function_pointers.metal");
    let out = run_eight_threads(src, "function_pointers");
    for (i, v) in out.iter().enumerate() {
        let x = i as f32;
        let vals = [x, 1.0, 2.0, x - 3.0];
        let sum: f32 = vals.iter().sum();
        let max = vals.iter().cloned().fold(f32::MIN, f32::max);
        let prod: f32 = vals.iter().product();
        let sub = vals[0] - vals[1];
        let via = |f: &dyn Fn(f32) -> f32| f(f(x)) + f(1.0);
        let loaded = 3.0 * 0.5 + 5.0 * 0.5;
        let expect = sum + max * 10.0 + prod * 100.0 + sub * 1000.0 + via(&|t| 2.0 * t) + via(&|t| t * t) + loaded;
        assert_eq!(*v, expect, "thread {i}");
    }
}

/// A generic `apply` with a function pointer template parameter, and an
/// atomic-style helper taking `T (*op)(T, T)` called with two different
/// functions (a compare-and-swap loop applies the operation).
#[test]
fn function_pointer_template_parameter_and_atomic_style_helper() {
    let src = r#"
template <typename T, T (*Op)(T)>
void apply(device T* data, uint k) { data[k] = Op(data[k]); }
float cube(float v) { return v * v * v; }
template <typename T> T halve(T v) { return v / T(2); }

template <typename T>
T atomic_update(device atomic_uint* cell, T value, T (*op)(T, T)) {
  uint old = atomic_load_explicit(cell, memory_order_relaxed);
  uint next;
  do {
    next = as_type<uint>(op(as_type<T>(old), value));
  } while (!atomic_compare_exchange_weak_explicit(cell, &old, next, memory_order_relaxed, memory_order_relaxed));
  return as_type<T>(old);
}
float fmax2(float a, float b) { return a > b ? a : b; }
template <typename T> T plus(T a, T b) { return a + b; }

kernel void k(device float* out [[buffer(0)]], device atomic_uint* cells [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[i] = float(i) + 1.0f;
  if (i % 2 == 0) {
    apply<float, cube>(out, i);
  } else {
    apply<float, halve<float>>(out, i);
  }
  atomic_update(&cells[0], float(i) * 1.5f, fmax2);
  atomic_update(&cells[1], float(i), plus<float>);
}
"#;
    let full = format!("{PRELUDE}{src}");
    let k = compile(&full, "k");
    let n = 8usize;
    let mut b = bufs(vec![(0, f32s(&vec![0.0; n])), (1, f32s(&[-1.0, 0.0]))]);
    let r = run(&k, &threads([n as u32, 1, 1], [n as u32, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let out = to_f32(&b[&0]);
    for (i, v) in out.iter().enumerate() {
        let x = i as f32 + 1.0;
        let expect = if i % 2 == 0 { x * x * x } else { x / 2.0 };
        assert_eq!(*v, expect, "thread {i}");
    }
    let cells = to_f32(&b[&1]);
    let max = (0..n).map(|i| i as f32 * 1.5).fold(-1.0f32, f32::max);
    let sum: f32 = (0..n).map(|i| i as f32).sum();
    assert_eq!(cells, vec![max, sum]);
}

#[test]
fn local_union_variables_corpus_kernel_matches_reference() {
    let src = include_str!("../../msl/tests/kernels/features/local_union_variables.metal");
    let k = compile(src, "local_union_variables");
    let n = 8usize;
    let mut b = bufs(vec![(0, vec![0u8; 8]), (1, f32s(&vec![0.0; n]))]);
    let r = run(&k, &threads([n as u32, 1, 1], [n as u32, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let out = to_f32(&b[&1]);
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, i as f32 * 2.0 + 3.0, "thread {i}");
    }
    // Threads i with (i % 4) / 2 == w add 0.25 to half i & 1 of word w:
    // every half gets two additions, 0.5 (0x3800).
    let words: Vec<u32> = b[&0].chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    assert_eq!(words, vec![0x3800_3800, 0x3800_3800]);
}

/// SIMD-group products whose matrices mix float and half (candle writes
/// `simdgroup_multiply(half_d, float_a, half_b)`): computed in float and
/// rounded to the destination's type.
#[test]
fn simdgroup_products_mixing_float_and_half() {
    let src = r#"#include <metal_stdlib>
using namespace metal;
kernel void k(device float* o [[buffer(0)]], uint l [[thread_index_in_simdgroup]]) {
  simdgroup_float8x8 a = make_filled_simdgroup_matrix<float, 8, 8>(1.5f);
  simdgroup_half8x8 b = make_filled_simdgroup_matrix<half, 8, 8>(2.0h);
  simdgroup_half8x8 d;
  simdgroup_multiply(d, a, b);
  simdgroup_float8x8 e;
  simdgroup_multiply_accumulate(e, b, a, a);
  simdgroup_half8x8 h = make_filled_simdgroup_matrix<half, 8, 8>(0.1h);
  simdgroup_multiply(d, h, a);
  o[l] = float(d.thread_elements()[0]) * 1000.0f + e.thread_elements()[1];
}
"#;
    let k = compile(src, "k");
    let mut b = bufs(vec![(0, f32s(&[0.0; 32]))]);
    let r = run(&k, &threads([32, 1, 1], [32, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    // 8 * 0.1h * 1.5 rounded to half; 8 * 2 * 1.5 + 1.5 in float.
    let h01 = half::f16::from_f32(0.1).to_f32();
    let d = half::f16::from_f32(8.0 * h01 * 1.5).to_f32();
    for v in to_f32(&b[&0]) {
        assert_eq!(v, d * 1000.0 + 25.5);
    }
}

/// Run `kernel` of `src` over 8 threads in one threadgroup with buffer 0
/// of 8 floats and every check on; no findings; buffer 0 as floats.
fn run_eight_threads(src: &str, kernel: &str) -> Vec<f32> {
    let k = compile(src, kernel);
    let mut b = bufs(vec![(0, f32s(&[0.0; 8]))]);
    let r = run(&k, &threads([8, 1, 1], [8, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    to_f32(&b[&0])
}

/// The corpus kernel `features/template_template_params.metal`: row
/// reductions parameterized by op class templates (`template <typename>
/// class OpFn`), one instance per op and load functor, and the other uses
/// of template template parameters, all compared with Rust.
#[test]
fn template_template_parameter_reductions() {
    let src = include_str!("../../msl/tests/kernels/features/template_template_params.metal");
    // Two rows of 64 values of mixed signs.
    let x: Vec<f32> = (0..128).map(|i| ((i * 37 % 61) as f32 - 30.0) * 0.5).collect();
    let rows: Vec<&[f32]> = x.chunks(64).collect();
    let sum = |r: &[f32]| r.iter().sum::<f32>();
    let abs_sum = |r: &[f32]| r.iter().map(|v| v.abs()).sum::<f32>();
    let max = |r: &[f32]| r.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let abs_min = |r: &[f32]| r.iter().map(|v| v.abs()).fold(f32::INFINITY, f32::min);
    type Reference = fn(&[f32]) -> f32;
    let cases: [(&str, Reference); 4] =
        [("row_reduce_sum", sum), ("row_reduce_max", max), ("row_reduce_abs_min", abs_min), ("row_reduce_alias_sum", abs_sum)];
    for (host, reference) in cases {
        let k = compile(src, host);
        let mut b = bufs(vec![(0, f32s(&x)), (1, f32s(&[0.0; 2]))]);
        let r = run(&k, &groups([2, 1, 1], [32, 1, 1]), &mut b, &opts(CheckLevel::All));
        assert!(r.findings.is_empty(), "{host}: {:?}", r.findings);
        let out = to_f32(&b[&1]);
        for (row, got) in rows.iter().zip(&out) {
            let want = reference(row);
            assert!((got - want).abs() <= 1e-4 * want.abs().max(1.0), "{host}: got {got}, want {want}");
        }
    }
    let k = compile(src, "ttp_misc");
    let x = &x[..64];
    let mut b = bufs(vec![(0, f32s(x)), (1, f32s(&[0.0; 8]))]);
    let r = run(&k, &threads([32, 1, 1], [32, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let argmax = (0..64).fold(0, |m, i| if x[i] > x[m] { i } else { m });
    let want = [x[0].max(x[1]), x[0] + x[1], 110.0, 2.0 * x[2], 1.0 + x[3] + x[4], 34.0 + 8.0, x[5] + 2.0, argmax as f32];
    assert_eq!(to_f32(&b[&1]), want.to_vec());
}

/// The corpus kernel `features/function_template_arguments.metal`: a
/// mixture-of-experts mat-vec instantiated once per storage format through
/// an overloaded wrapper template whose overloads differ in the function
/// type of their template parameter. Each instance picks matrix `ids[z]`
/// for input vector `z`; every output is checked against a dot product
/// computed here from the same (exactly representable) values.
#[test]
fn function_template_arguments_choose_overloads_by_function_type() {
    let src = include_str!("../../msl/tests/kernels/features/function_template_arguments.metal");
    const ROWS: usize = 4;
    const COLS: usize = 16;
    const QK: usize = 8;
    const MATS: usize = 3;
    let ids = [2i32, 0];
    let w = |e: usize, r: usize, k: usize| ((e * 7 + r * 3 + k * 5) % 11) as i32 - 5;
    let x: Vec<f32> = (0..ids.len() * COLS).map(|i| ((i * 5 + i / COLS) % 7) as f32 * 0.5 - 1.5).collect();
    let half_bytes = |v: f32| half::f16::from_f32(v).to_bits().to_le_bytes();
    // Per format: the matrices' bytes, bytes per row and per matrix, and
    // the value of element (e, r, k).
    type Elem = Box<dyn Fn(usize, usize, usize) -> f32>;
    let mut formats: Vec<(&str, Vec<u8>, usize, usize, Elem)> = Vec::new();
    let dense = |bytes_per: usize, enc: &dyn Fn(i32) -> Vec<u8>| {
        let mut m = Vec::new();
        for e in 0..MATS {
            for r in 0..ROWS {
                for k in 0..COLS {
                    m.extend(enc(w(e, r, k)));
                }
            }
        }
        (m, COLS * bytes_per, ROWS * COLS * bytes_per)
    };
    let (m, nr, nm) = dense(4, &|v| (v as f32).to_le_bytes().to_vec());
    formats.push(("mv_id_f32", m, nr, nm, Box::new(move |e, r, k| w(e, r, k) as f32)));
    let (m, nr, nm) = dense(2, &|v| half_bytes(v as f32).to_vec());
    formats.push(("mv_id_f16", m, nr, nm, Box::new(move |e, r, k| w(e, r, k) as f32)));
    let (m, nr, nm) = dense(1, &|v| vec![v as i8 as u8]);
    formats.push(("mv_id_i8", m, nr, nm, Box::new(move |e, r, k| w(e, r, k) as f32)));
    // block_q8: half d, char qs[8] (10 bytes).
    let q8_d = |e: usize, r: usize, b: usize| 0.25 * (1 + (e + r + b) % 3) as f32;
    let mut m = Vec::new();
    for e in 0..MATS {
        for r in 0..ROWS {
            for b in 0..COLS / QK {
                m.extend(half_bytes(q8_d(e, r, b)));
                m.extend((0..QK).map(|j| w(e, r, b * QK + j) as i8 as u8));
            }
        }
    }
    let row = COLS / QK * 10;
    formats.push(("mv_id_q8", m, row, ROWS * row, Box::new(move |e, r, k| q8_d(e, r, k / QK) * w(e, r, k) as f32)));
    // block_q4: half d, half m, uchar qs[4]: element j < 4 in the low
    // nibble of qs[j], element j >= 4 in the high nibble of qs[j - 4].
    let q4 = |e: usize, r: usize, k: usize| ((e + r * 2 + k * 3) % 16) as u8;
    let q4_dm = |e: usize, r: usize, b: usize| (0.5f32, -2.0 + (e + r + b) as f32);
    let mut m = Vec::new();
    for e in 0..MATS {
        for r in 0..ROWS {
            for b in 0..COLS / QK {
                let (d, mn) = q4_dm(e, r, b);
                m.extend(half_bytes(d));
                m.extend(half_bytes(mn));
                m.extend((0..QK / 2).map(|j| q4(e, r, b * QK + j) | (q4(e, r, b * QK + j + QK / 2) << 4)));
            }
        }
    }
    let row = COLS / QK * 8;
    formats.push((
        "mv_id_q4",
        m,
        row,
        ROWS * row,
        Box::new(move |e, r, k| {
            let (d, mn) = q4_dm(e, r, k / QK);
            d * q4(e, r, k) as f32 + mn
        }),
    ));
    let (m, nr, nm) = dense(4, &|v| (v as f32).to_le_bytes().to_vec());
    formats.push(("mv_id_scaled", m, nr, nm, Box::new(move |e, r, k| w(e, r, k) as f32)));

    for (host, mats, nb_row, nb_mat, elem) in formats {
        let k = compile(src, host);
        let mut b = bufs(vec![
            (0, mats),
            (1, f32s(&x)),
            (2, f32s(&[0.0; ROWS * 2])),
            (3, i32s(&ids)),
            (4, u64s(&[COLS as u64])),
            (5, u64s(&[nb_row as u64])),
            (6, u64s(&[nb_mat as u64])),
        ]);
        let r = run(&k, &threads([ROWS as u32, 2, 1], [ROWS as u32, 2, 1]), &mut b, &opts(CheckLevel::All));
        assert!(r.findings.is_empty(), "{host}: {:?}", r.findings);
        let scale = if host == "mv_id_scaled" { 0.5 } else { 1.0 };
        let expect: Vec<f32> = (0..2)
            .flat_map(|z| {
                let e = ids[z] as usize;
                let elem = &elem;
                let x = &x;
                (0..ROWS).map(move |r| (0..COLS).fold(0.0f32, |acc, k| acc + elem(e, r, k) * x[z * COLS + k]) * scale)
            })
            .collect();
        assert_eq!(to_f32(&b[&2]), expect, "{host}");
    }
}

/// Taking the address of an overloaded name for a known function type
/// (C++ [over.over]): a template's arguments are deduced from the target's
/// return type (`zero`) and parameter types, a plain function beats a
/// template instance of the same type (`twice`), a parameter or template
/// parameter of function type is a pointer to such a function, and a
/// template parameter of function type may have a function as default.
#[test]
fn address_of_overloaded_functions_for_a_function_type() {
    let src = r#"
typedef float (unary_t)(float);
template <typename R> R zero() { return R(7); }
template <typename T> T twice(T x) { return x * 2; }
float twice(float x) { return x * 3; }
float sq(float x) { return x * x; }
template <typename T> T neg(T x) { return -x; }
float apply(unary_t f, float x) { return f(x); }
template <unary_t f = sq> float apply_t(float x) { return f(x); }
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float (*z)() = zero;
  float (*t)(float) = twice;
  int (*ti)(int) = twice;
  float x = float(i);
  out[i] = z() + 10.0f * t(x) + 100.0f * float(ti(int(i))) + 1000.0f * apply(neg<float>, x)
         + 10000.0f * apply(twice, x) + 100000.0f * apply_t(x) + 1000000.0f * apply_t<neg>(x);
}
"#;
    let out = run_out(src, 4);
    for (i, v) in out.iter().enumerate() {
        let x = i as f32;
        let expect = 7.0 + 10.0 * (x * 3.0) + 100.0 * (x * 2.0) + 1000.0 * -x + 10000.0 * (x * 3.0) + 100000.0 * (x * x) + 1000000.0 * -x;
        assert_eq!(*v, expect, "thread {i}");
    }
}

/// `F*` of a function type `F` is a function pointer, initialized from an
/// overloaded template by that type; a struct template takes a function as
/// a template argument of function type (a template named without its
/// arguments, deduced from the parameter's type).
#[test]
fn pointer_to_function_type_and_struct_template_of_a_function() {
    let src = r#"
typedef float (unary_t)(float);
template <typename T> T neg(T x) { return -x; }
float sq(float x) { return x * x; }
template <unary_t f> struct op { static float run(float x) { return f(x) + 0.5f; } };
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  unary_t *n = neg;
  float x = float(i);
  out[i] = n(x) + 10.0f * op<neg>::run(x) + 100.0f * op<sq>::run(x);
}
"#;
    let out = run_out(src, 4);
    for (i, v) in out.iter().enumerate() {
        let x = i as f32;
        assert_eq!(*v, -x + 10.0 * (-x + 0.5) + 100.0 * (x * x + 0.5), "thread {i}");
    }
}
