//! Declarations of real kernel libraries that name an existing template or
//! struct from outside it: explicit specializations of member function
//! templates, explicit instantiations written with a parameter list, and
//! out-of-class member definitions. Each kernel is run and its output
//! compared with values computed here.

mod common;
use common::*;
use std::collections::BTreeMap;

const KERNEL_OUT: &str = "device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]";

/// Compile `src` (after the prelude), run kernel `name` over `n` threads in
/// one threadgroup with `bufs`, return buffer 0 as floats.
fn run_kernel(src: &str, name: &str, n: u32, mut b: BTreeMap<u32, Vec<u8>>) -> Vec<f32> {
    let full = format!("{PRELUDE}{src}");
    let k = compile(&full, name);
    let r = run(&k, &threads([n, 1, 1], [n, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    to_f32(&b[&0])
}

fn run_out(src: &str, n: u32) -> Vec<f32> {
    run_kernel(src, "k", n, bufs(vec![(0, f32s(&vec![0.0; n as usize]))]))
}

/// `template <> R operator()(C, C)` inside a struct whose two primary
/// templates are `enable_if`-constrained: it specializes the one whose
/// return type exists for `C` (the other's body would not compile for `C`).
#[test]
fn member_template_specialization_picks_the_viable_primary() {
    let src = format!(
        r#"
struct Cplx {{ float re; float im; }};
struct Power {{
  template <typename T>
  enable_if_t<!is_integral_v<T>, T> operator()(T a, T b) thread {{ return metal::pow(a, b); }}
  template <typename T>
  enable_if_t<is_integral_v<T>, T> operator()(T a, T b) thread {{
    T r = 1;
    for (T e = 0; e < b; ++e) r *= a;
    return r;
  }}
  template <>
  Cplx operator()(Cplx a, Cplx b) thread {{ return Cplx{{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}}; }}
}};
kernel void k({KERNEL_OUT}) {{
  Power p;
  Cplx z = p(Cplx{{float(i), 1.0f}}, Cplx{{2.0f, 0.5f}});
  out[i] = z.re * 1000.0f + z.im * 100.0f + p(2.0f, float(i)) + float(p(3, int(i)));
}}
"#
    );
    let out = run_out(&src, 4);
    for (i, v) in out.iter().enumerate() {
        let x = i as f32;
        let (re, im) = (x * 2.0 - 0.5, x * 0.5 + 2.0);
        let expect = re * 1000.0 + im * 100.0 + 2f32.powf(x) + 3f32.powi(i as i32);
        assert!((v - expect).abs() < 1e-3, "thread {i}: {v} vs {expect}");
    }
}

/// A free function template's explicit specialization chooses among
/// overloads by the whole signature too.
#[test]
fn free_function_specialization_matches_by_signature() {
    let src = format!(
        r#"
template <typename T> T twice(T v) {{ return v * T(2); }}
template <typename T> T twice(device T* p) {{ return *p * T(2); }}
template <> float twice(float v) {{ return v * 3.0f; }}
template <> int twice<int>(int v) {{ return v * 5; }}
kernel void k({KERNEL_OUT}) {{
  out[i] = twice(float(i)) + float(twice(int(i))) * 10.0f + float(twice(uint(i))) * 100.0f;
}}
"#
    );
    let out = run_out(&src, 4);
    for (i, v) in out.iter().enumerate() {
        let x = i as f32;
        assert_eq!(*v, x * 3.0 + x * 50.0 + x * 200.0, "thread {i}");
    }
}

/// MLX's conv.metal form: `template [[host_name("…")]] [[kernel]] void
/// k(params…);` without template arguments; they are deduced from the
/// parameter types, non-type ones included (`Params<N>`).
#[test]
fn explicit_instantiation_by_parameter_list() {
    let src = r#"
template <int N> struct Params { int shape[N]; };
template <typename T, int N>
[[kernel]] void scale(device float* out [[buffer(0)]], const device T* in [[buffer(1)]],
                      const constant Params<N>* p [[buffer(2)]], const constant int& k [[buffer(3)]],
                      uint i [[thread_position_in_grid]]) {
  out[i] = float(in[i]) * float(k) + float(N * 100 + p->shape[N - 1]);
}
template <typename T>
[[kernel]] void scale(device float* out [[buffer(0)]], const device T* in [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
  out[i] = -float(in[i]);
}
#define inst(name, T, n)                                                      \
  template [[host_name("scale_" #name "_" #n)]] [[kernel]] void scale(        \
      device float* out [[buffer(0)]], const device T* in [[buffer(1)]],       \
      const constant Params<n>* p [[buffer(2)]], const constant int& k [[buffer(3)]], \
      uint i [[thread_position_in_grid]]);
inst(f32, float, 1)
inst(i32, int, 2)
template [[host_name("neg_f32")]] [[kernel]] void scale(device float* out, const device float* in, uint i);
"#;
    let zeros = || f32s(&[0.0; 4]);
    let out =
        run_kernel(src, "scale_f32_1", 4, bufs(vec![(0, zeros()), (1, f32s(&[1.0, 2.0, 3.0, 4.0])), (2, i32s(&[7])), (3, i32s(&[3]))]));
    assert_eq!(out, vec![110.0, 113.0, 116.0, 119.0]);
    let out = run_kernel(src, "scale_i32_2", 4, bufs(vec![(0, zeros()), (1, i32s(&[1, 2, 3, 4])), (2, i32s(&[7, 9])), (3, i32s(&[2]))]));
    assert_eq!(out, vec![211.0, 213.0, 215.0, 217.0]);
    let out = run_kernel(src, "neg_f32", 4, bufs(vec![(0, zeros()), (1, f32s(&[1.0, 2.0, 3.0, 4.0]))]));
    assert_eq!(out, vec![-1.0, -2.0, -3.0, -4.0]);
}

/// The corpus kernel `features/function_type_instantiation.metal`: one
/// template instantiated under three host names through function-type
/// typedefs (`typedef void (k_t)(…);`, `typedef void k_t(…);`, `using k_t =
/// void(…);`), each instance computing in its own `T`.
#[test]
fn instantiation_through_function_type_typedefs() {
    let src = include_str!("../../msl/tests/kernels/features/function_type_instantiation.metal");
    let x = [0.5f32, 1.75, 2.25, 3.5];
    let factor = 2.5f32;
    for (host, expect) in [
        ("scale_rows_f32", x.map(|v| v * factor + 1.0)),
        ("scale_rows_f16", x.map(|v| v * factor + 1.0)),
        // int(x) * int(2.5), converted back to float.
        ("scale_rows_i32", x.map(|v| (v as i32 * factor as i32) as f32 + 1.0)),
    ] {
        let k = compile(src, host);
        let mut b = bufs(vec![(0, f32s(&x)), (1, f32s(&[factor])), (2, f32s(&[0.0; 4]))]);
        let r = run(&k, &threads([4, 1, 1], [4, 1, 1]), &mut b, &opts(CheckLevel::All));
        assert!(r.findings.is_empty(), "{host}: {:?}", r.findings);
        assert_eq!(to_f32(&b[&2]), expect.to_vec(), "{host}");
    }
}

/// A function type without template arguments on the instantiated name:
/// they are deduced from the typedef's parameter types, choosing among
/// overloaded templates, and a function type inside a namespace is found
/// by its qualified name.
#[test]
fn function_type_typedef_deduces_template_arguments() {
    let src = r#"
namespace sig {
using halves_t = void(device half* out, uint i);
}
typedef void (pair_t)(device float* out, device const int* a, uint i);
template <typename T>
[[kernel]] void put(device T* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = T(i) + T(0.5f);
}
template <typename T, typename U>
[[kernel]] void put(device T* out [[buffer(0)]], device const U* a [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[i] = T(a[i]) * T(sizeof(U));
}
template [[host_name("put_half")]] kernel sig::halves_t put;
template [[host_name("put_pair")]] kernel pair_t put;
"#;
    let k = compile(&format!("{PRELUDE}{src}"), "put_half");
    let mut b = bufs(vec![(0, u16s(&[0; 4]))]);
    let r = run(&k, &threads([4, 1, 1], [4, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    // 0.5, 1.5, 2.5, 3.5 as IEEE half bits.
    assert_eq!(to_u16(&b[&0]), vec![0x3800, 0x3e00, 0x4100, 0x4300]);
    let out = run_kernel(src, "put_pair", 4, bufs(vec![(0, f32s(&[0.0; 4])), (1, i32s(&[1, -2, 3, 5]))]));
    assert_eq!(out, vec![4.0, -8.0, 12.0, 20.0]);
}

/// MLX's fence.metal: a program-scope constant of an enum type initialized
/// by `static_cast` (a compile-time constant), declared inside namespace
/// `metal` and named as `metal::…`.
#[test]
fn enum_casts_are_program_scope_constants_and_programs_extend_namespace_metal() {
    let src = format!(
        r#"
enum class Level : int {{ low = 1, mid = 2, high = 3 }};
namespace metal {{
constexpr constant metal::thread_scope my_scope = static_cast<thread_scope>(2);
constexpr constant int lanes = 4;
}}
constexpr constant Level level = static_cast<Level>(3);
constexpr constant int level_plus = static_cast<int>(level) + 10;
kernel void k({KERNEL_OUT}) {{
  metal::atomic_thread_fence(metal::mem_flags::mem_device, metal::memory_order_seq_cst, metal::my_scope);
  out[i] = float(static_cast<int>(level)) + float(level_plus) * 10.0f + float(metal::lanes * int(i)) * 1000.0f
      + (level == Level::high ? 0.5f : 0.0f);
}}
"#
    );
    let out = run_out(&src, 3);
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, 3.0 + 130.0 + 4000.0 * i as f32 + 0.5, "thread {i}");
    }
}

/// MLX's unary_ops.h: `R S::operator()(…) thread {…}` defines an operator
/// declared in the struct, its body using structs declared after `S`;
/// a call made before the definition gets the body too.
#[test]
fn out_of_class_member_definitions() {
    let src = format!(
        r#"
struct Cx {{ float re; float im; }};
struct Twice;
struct Mag {{
  float operator()(Cx z) thread;
  float scaled(float s, Cx z) const thread;
  float scaled(float s, float t) const thread {{ return s * t; }}
}};
float early(Cx z) {{ return Mag{{}}(z); }}
struct Twice {{
  float operator()(float x) thread {{ return 2.0f * x; }}
}};
float Mag::operator()(Cx z) thread {{
  return Twice{{}}(z.re * z.re + z.im * z.im);
}}
float Mag::scaled(float s, Cx z) const thread {{ return s * z.re; }}
kernel void k({KERNEL_OUT}) {{
  Mag m;
  Cx z = Cx{{float(i), 1.0f}};
  out[i] = early(z) + m.scaled(10.0f, z) * 100.0f + m.scaled(2.0f, 3.0f) * 10000.0f;
}}
"#
    );
    let out = run_out(&src, 4);
    for (i, v) in out.iter().enumerate() {
        let x = i as f32;
        assert_eq!(*v, 2.0 * (x * x + 1.0) + 10.0 * x * 100.0 + 60000.0, "thread {i}");
    }
}

/// MLX's fft/readwrite.h: `template <> R S<float, float2>::f() const
/// thread {…}` replaces the in-class body for that instance only, and
/// `template <class U> R S<U>::g(…) {…}` defines a member of every
/// instance (made before or after the definition).
#[test]
fn member_definitions_of_struct_templates() {
    let src = format!(
        r#"
template <typename T, typename U>
struct Rw {{
  T v;
  float load() const thread {{ return float(v); }}
  float scale(float s) const thread;
}};
float early() {{ Rw<int, int> r{{7}}; return r.scale(2.0f); }}
template <>
float Rw<float, float2>::load() const thread {{ return float(v) * 100.0f; }}
template <typename A, typename B>
float Rw<A, B>::scale(float s) const thread {{ return float(v) * s + float(sizeof(B)); }}
kernel void k({KERNEL_OUT}) {{
  Rw<float, float2> a{{float(i)}};
  Rw<float, float> b{{float(i)}};
  out[i] = a.load() + b.load() * 1000.0f + a.scale(3.0f) * 10000.0f + early() * 1000000.0f;
}}
"#
    );
    let out = run_out(&src, 3);
    for (i, v) in out.iter().enumerate() {
        let x = i as f32;
        let expect = x * 100.0 + x * 1000.0 + (x * 3.0 + 8.0) * 10000.0 + (14.0 + 4.0) * 1000000.0;
        assert_eq!(*v, expect, "thread {i}");
    }
}

/// A qualified name that names no member is the user's error, said so.
#[test]
fn a_definition_of_an_undeclared_member_is_reported() {
    let src = format!("{PRELUDE}struct S {{ float f(float x) thread; }};\nfloat S::g(float x) thread {{ return x; }}\nkernel void k({KERNEL_OUT}) {{ out[i] = 0; }}\n");
    let c = msl::compile("t.metal", &src, &Default::default());
    let text = c.render(false);
    assert!(text.contains("`S` declares no member function `g`"), "{text}");
    assert!(text.contains("t.metal:4:"), "{text}");
}

/// candle's sdpa.metal (MLX's integral_constant.h): operators declared with
/// an `auto` return type and no trailing type, deduced from the `return`
/// (a struct, a scalar, through a variadic recursion, a member function).
#[test]
fn auto_return_types_are_deduced_from_the_body() {
    let src = format!(
        r#"
template <int val> using Int = integral_constant<int, val>;
template <typename T, T tv, typename U, U uv>
constexpr auto operator+(integral_constant<T, tv>, integral_constant<U, uv>) {{
  constexpr auto res = tv + uv;
  return integral_constant<decltype(res), res>{{}};
}}
template <typename T> constexpr T sum(T x) {{ return x; }}
template <typename T, typename... Us> constexpr auto sum(T x, Us... us) {{ return x + sum(us...); }}
auto half_of(float x) {{ return x * 0.5f; }}
auto nothing(device float* p, uint j) {{ p[j] = 0.0f; }}
struct Acc {{
  float v;
  auto twice() const thread {{ return v * 2.0f; }}
}};
kernel void k({KERNEL_OUT}) {{
  auto c = Int<3>{{}} + Int<4>{{}};
  nothing(out, i);
  out[i] = float(decltype(c)::value) + sum(1.0f, 2.0f, float(i)) * 10.0f + half_of(8.0f) * 1000.0f
      + Acc{{float(i)}}.twice() * 10000.0f;
}}
"#
    );
    let out = run_out(&src, 3);
    for (i, v) in out.iter().enumerate() {
        let x = i as f32;
        assert_eq!(*v, 7.0 + (3.0 + x) * 10.0 + 4000.0 + 2.0 * x * 10000.0, "thread {i}");
    }
}

/// A braced list cannot give an `auto` return type: said so.
#[test]
fn auto_return_from_a_braced_list_is_an_error() {
    let src = format!("{PRELUDE}auto f() {{ return {{1, 2}}; }}\nkernel void k({KERNEL_OUT}) {{ out[i] = 0; }}\n");
    let c = msl::compile("t.metal", &src, &Default::default());
    let text = c.render(false);
    assert!(text.contains("cannot be deduced from a braced list"), "{text}");
}

/// A function template declared twice (as two headers do, one naming its
/// parameter `U`) and defined after a template that calls it is one
/// template: calls are not ambiguous, and the definition sees `helper`,
/// declared after the first declarations.
#[test]
fn function_template_redeclarations_are_one_template() {
    let src = format!(
        r#"
template <typename T> inline float twice_plus(const T);
template <typename U> inline float twice_plus(const U);
template <typename T> float use(T v) {{ return twice_plus(v) + 1.0f; }}
inline float helper(float x) {{ return x * 2.0f; }}
template <typename V> inline float twice_plus(const V x) {{ return helper(float(x)) + 0.5f; }}
kernel void k({KERNEL_OUT}) {{ out[i] = use(float(i)) + twice_plus(int(i)) * 10.0f; }}
"#
    );
    let out = run_out(&src, 4);
    for (i, v) in out.iter().enumerate() {
        let x = i as f32;
        assert_eq!(*v, (2.0 * x + 1.5) + (2.0 * x + 0.5) * 10.0, "thread {i}");
    }
}

/// Defining the same function template twice is an error that points at
/// both definitions.
#[test]
fn function_template_redefinition_is_an_error() {
    let src = format!("{PRELUDE}template <typename T> T f(T x) {{ return x; }}\ntemplate <typename U> U f(U y) {{ return y; }}\n");
    let c = msl::compile("t.metal", &src, &Default::default());
    let text = c.render(false);
    assert!(text.contains("redefinition of the function template `f`") && text.contains("first defined here"), "{text}");
}

/// `metal::array<T, N>` is a class: a parameter of that type takes a copy
/// (changing it leaves the caller's array alone), deduces `T` and `N`, and
/// is also reached through an alias template of the same name, as
/// PyTorch's c10 headers declare one. A plain C array parameter still
/// decays to a pointer that writes through.
#[test]
fn metal_array_parameters_are_copies() {
    let src = format!(
        r#"
namespace c10 {{ namespace metal {{
template <typename T, size_t N> using array = ::metal::array<T, N>;
}} }}
template <typename T, size_t N>
T sum_and_clobber(metal::array<T, N> a) {{
  T s = 0;
  for (size_t k = 0; k < N; ++k) {{ s += a[k]; a[k] = T(100); }}
  return s;
}}
float first_of(c10::metal::array<float, 3> a) {{ a[0] += 1.0f; return a[0]; }}
void bump(thread float b[3]) {{ b[1] += 10.0f; }}
kernel void k({KERNEL_OUT}) {{
  metal::array<float, 3> a = {{float(i), 2.0f, 3.0f}};
  float s = sum_and_clobber(a);
  float f = first_of(a);
  float c[3] = {{0.0f, 1.0f, 2.0f}};
  bump(c);
  out[i] = s * 1000.0f + f * 100.0f + a[0] * 10.0f + c[1];
}}
"#
    );
    let out = run_out(&src, 4);
    for (i, v) in out.iter().enumerate() {
        let x = i as f32;
        assert_eq!(*v, (x + 5.0) * 1000.0 + (x + 1.0) * 100.0 + x * 10.0 + 11.0, "thread {i}");
    }
}

/// MLX's conv.metal: a specialization of a struct template holds
/// `constexpr constant` tables, which are then defined again outside the
/// struct without a value (C++ allows it; it adds nothing). The tables read
/// as before, through an alias of the specialization too.
#[test]
fn out_of_class_definitions_of_static_data_members() {
    let src = format!(
        r#"
template <int R, int C> struct Table {{}};
template <> struct Table<2, 3> {{
  static constant constexpr const float cells[2][3] = {{{{1.0f, 2.0f, 3.0f}}, {{4.0f, 5.0f, 6.0f}}}};
  static constant constexpr const int bias = 7;
}};
constant constexpr const float Table<2, 3>::cells[2][3];
constant constexpr const int Table<2, 3>::bias;
struct Plain {{ static constant constexpr float scale = 0.5f; }};
constexpr constant float Plain::scale;
template <int R> float read(int r, int c) {{
  using T = Table<R, 3>;
  return T::cells[r][c] * 10.0f + T::bias;
}}
kernel void k({KERNEL_OUT}) {{
  out[i] = read<2>(i / 3, i % 3) * Plain::scale;
}}
"#
    );
    let out = run_out(&src, 6);
    let cells = [[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
    for (i, v) in out.iter().enumerate() {
        let expect = (cells[i / 3][i % 3] * 10.0 + 7.0) * 0.5;
        assert_eq!(*v, expect, "thread {i}");
    }
}

/// An out-of-class definition must name a static data member of that
/// struct, with its type; otherwise the message names the member.
#[test]
fn out_of_class_static_member_definitions_are_checked() {
    let cases = [
        ("constant constexpr const float S::missing;", "`S` has no static data member `missing`"),
        ("constant constexpr const int S::table[4];", "this definition of `S::table` has type `int[4]`"),
        ("constant constexpr const float S::table[4] = {1};", "`S::table` already has its value in the struct"),
    ];
    for (def, message) in cases {
        let src = format!(
            "{PRELUDE}struct S {{ static constant constexpr const float table[4] = {{1, 2, 3, 4}}; }};\n{def}\nkernel void k({KERNEL_OUT}) {{ out[i] = S::table[i]; }}\n"
        );
        let c = msl::compile("t.metal", &src, &Default::default());
        let text = c.render(false);
        assert!(text.contains(message), "{def}: {text}");
        assert!(text.contains("t.metal:4:"), "{text}");
    }
}

/// A member function whose body is first checked while a trailing
/// `decltype` probes a call (diagnostics rolled back) still reports its
/// errors: dropping them left the memoized function with an empty body,
/// which ran and returned 0 (candle's `Max<float>` calling a missing
/// function did exactly that).
#[test]
fn body_errors_found_while_probing_are_reported() {
    let src = format!(
        r#"{PRELUDE}
template <typename T>
struct Mx {{
  template <typename V> V operator()(V a, V b) {{ return a > b ? a : b; }}
  float operator()(float a, float b) {{ return no_such_max(a, b); }}
}};
template <typename Op, typename T> auto call(Op op, T a, T b) -> decltype(op(a, b)) {{ return op(a, b); }}
kernel void k({KERNEL_OUT}) {{ out[i] = call(Mx<float>(), float(i), 2.0f); }}
"#
    );
    let c = msl::compile("t.metal", &src, &Default::default());
    let text = c.render(false);
    assert!(c.has_errors() && text.contains("no_such_max"), "{text}");
}
