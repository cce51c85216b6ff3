//! Golden tests of the rendered diagnostics (no colour): one snapshot per
//! file in `tests/kernels/invalid`, plus hand-written cases below.
//!
//! Update with `INSTA_UPDATE=always cargo test -p msl --test diagnostics`
//! (or `cargo insta review`), then read the `.snap` diffs.

use std::path::Path;

fn render(name: &str, text: &str) -> String {
    let c = msl::compile(name, text, &msl::CompileOptions::default());
    let mut out = c.render(false);
    if out.is_empty() {
        out = "(no diagnostics)\n".to_string();
    }
    out
}

#[test]
fn invalid_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/invalid");
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "metal")).collect();
    files.sort();
    assert!(!files.is_empty());
    for path in files {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let name = format!("invalid/{stem}.metal");
        let rendered = render(&name, &text);
        insta::with_settings!({ snapshot_suffix => stem.clone(), description => name.clone(), omit_expression => true }, {
            insta::assert_snapshot!("invalid", rendered);
        });
    }
}

const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

/// Snapshot the diagnostics of a small kernel (the prelude is prepended).
macro_rules! case {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            let text = format!("{PRELUDE}{}", $src);
            let rendered = render(concat!(stringify!($name), ".metal"), &text);
            insta::with_settings!({ omit_expression => true, description => text.clone() }, {
                insta::assert_snapshot!(rendered);
            });
        }
    };
}

case!(
    undeclared_near_miss,
    r#"
kernel void k(device float* output [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  float value = 1.0f;
  outptu[tid] = valeu;
}
"#
);

case!(
    unknown_type_near_miss,
    r#"
kernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  flaot4 v = float4(1.0f);
  out[tid] = v.x;
}
"#
);

case!(
    wrong_argument_count_too_many,
    r#"
float twice(float x) { return 2.0f * x; }

kernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  out[tid] = twice(1.0f, 2.0f);
}
"#
);

case!(
    builtin_no_match_candidates,
    r#"
kernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  float2 a = float2(1.0f);
  float3 b = float3(2.0f);
  out[tid] = distance(a, b);
}
"#
);

case!(
    user_overload_no_match,
    r#"
float pick(float a, float b) { return a; }
float pick(float4 a) { return a.x; }

kernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  float3 v = float3(1.0f);
  out[tid] = pick(v);
}
"#
);

case!(
    narrowing_brace_init,
    r#"
kernel void k(device int* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  float f = 2.5f;
  int i{f};
  out[tid] = i;
}
"#
);

case!(
    write_through_const_pointer,
    r#"
kernel void k(const device float* in [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  in[tid] = 0.0f;
}
"#
);

case!(
    assign_to_const_local,
    r#"
kernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  const float scale = 2.0f;
  scale = 3.0f;
  out[tid] = scale;
}
"#
);

case!(
    missing_closing_brace,
    r#"
kernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  if (tid > 4) {
    out[tid] = 1.0f;
}
"#
);

case!(
    unknown_attribute_builtin,
    r#"
kernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grrid]]) {
  out[tid] = 1.0f;
}
"#
);

case!(
    unknown_member,
    r#"
struct Particle { float3 pos; float mass; };

kernel void k(device Particle* ps [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  ps[tid].mas = 1.0f;
}
"#
);

case!(
    threadgroup_pointer_into_device,
    r#"
kernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_threadgroup]]) {
  threadgroup float tile[32];
  device float* p = tile;
  out[tid] = p[0];
}
"#
);

case!(
    undefined_macro_function,
    r#"
#define SQUARE(x) ((x) * (x))
kernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  out[tid] = SQUARE(1.0f, 2.0f);
}
"#
);

case!(
    error_directive,
    r#"
#ifndef TILE
#error "TILE must be defined"
#endif
kernel void k(device float* out [[buffer(0)]]) {}
"#
);

// Things that are NOT errors: a kernel with no barrier, a divergent branch
// without a barrier, and a data race are run-time (sanitizer) questions, and an
// unused variable is at most a warning.
case!(
    not_errors_barrierless_kernel,
    r#"
kernel void k(device float* out [[buffer(0)]],
              uint tid [[thread_position_in_threadgroup]],
              uint gid [[thread_position_in_grid]]) {
  threadgroup float tile[64];
  tile[tid] = float(gid);
  if (tid % 2 == 0) {
    out[gid] = tile[(tid + 1) % 64];
  }
  float unused = 0.0f;
}
"#
);

#[test]
fn unsigned_loop_condition_that_never_fails() {
    let text = "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  for (uint s = 4; s >= 0; s /= 2) { out[i] += 1.0f; }\n  int j = 3;\n  while (j >= 0) { j--; }\n}\n";
    insta::assert_snapshot!(render("loop.metal", text));
}

case!(
    inheritance_ambiguous_member,
    r#"
struct A { float v; };
struct B { float v; };
struct D : A, B { };
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  D d;
  out[i] = d.v;
}
"#
);

case!(
    inheritance_base_not_a_struct,
    r#"
struct D : float { float x; };
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = 0.0f;
}
"#
);

case!(
    inheritance_virtual_base_unsupported,
    r#"
struct A { float v; };
struct D : public virtual A { };
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = 0.0f;
}
"#
);

case!(
    inheritance_missing_member_lists_base_fields_not_hidden_ones,
    r#"
struct A { float value; };
struct D : A { float other; };
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  D d;
  out[i] = d.valeu;
}
"#
);

// A Metal 4 tensor header is refused by name, and nothing after it is
// checked (its absence would only show up as a cascade of unknown names).
case!(
    metal4_tensor_header_is_refused_first,
    r#"
#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>
using namespace mpp::tensor_ops;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  matmul2d<desc> op;
  out[i] = undeclared_thing;
}
"#
);

// A threadgroup variable's initializer (and its type's default member
// initializers) are accepted, as Metal's compiler does, but not applied:
// Metal does not initialize threadgroup memory.
case!(
    threadgroup_initializers_are_not_applied,
    "struct Acc { float sum = 0.0f; };\nkernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_threadgroup]]) {\n  threadgroup float buf[32] = {0};\n  threadgroup Acc acc;\n  buf[i] = 1.0f;\n  acc.sum = 2.0f;\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  out[i] = buf[i] + acc.sum;\n}\n"
);

case!(
    function_type_as_value_type,
    r#"
typedef void (body_t)(device float* out, uint i);
struct holder {
  typedef void inner_t(int);
  float v;
};
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  body_t b;
  out[i] = 0.0f;
}
"#
);

// Function pointers compare only for equality, and `?:` needs one type.
case!(
    function_pointer_misuse,
    r#"
float add1(float x) { return x + 1.0f; }
int half_i(int x) { return x / 2; }
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float (*f)(float) = add1;
  int (*g)(int) = half_i;
  bool a = f < f;
  auto h = i > 2 ? f : g;
  out[i] = f(float(i));
}
"#
);

// The host cannot hand a kernel a function pointer as an argument.
case!(
    function_pointer_kernel_parameter,
    r#"
typedef float (*UnaryF)(float);
kernel void k(device float* out [[buffer(0)]], UnaryF f [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[i] = f(1.0f);
}
"#
);

case!(
    reference_member_binding_errors,
    r#"
struct view {
  device float &r;
  threadgroup float &s;
};
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  threadgroup float t[4];
  float x = 1.0f;
  view a{x, t[i]};
  view b{out[i], {1.0f}};
  view c;
  out[i] = a.r + b.r + c.r;
}
"#
);

// Arguments are checked against the pointer's parameter types.
case!(
    function_pointer_call_wrong_arity,
    r#"
float apply(float x, float (*f)(float, float)) { return f(x); }
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = 0.0f;
}
"#
);

case!(
    numeric_limits_of_an_unspecialized_struct,
    r#"
template <typename T> struct pair { T a; T b; };
template <typename T> struct other { T a; };
template <typename T>
struct _numeric_limits_impl<pair<T>> {
  static constexpr pair<T> max() { return pair<T>{numeric_limits<T>::max(), numeric_limits<T>::max()}; }
};
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = numeric_limits<pair<float>>::max().a + numeric_limits<other<float>>::max().a;
}
"#
);

// An overloaded name without a target type cannot be resolved.
case!(
    function_pointer_overload_needs_target,
    r#"
float twice(float x) { return 2.0f * x; }
int twice(int x) { return 2 * x; }
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  auto f = twice;
  out[i] = f(1.0f);
}
"#
);

case!(
    kernel_redeclared_with_another_host_name,
    r#"
kernel void fill(device float* o [[buffer(0)]], uint t [[thread_position_in_grid]]);
kernel void fill(device float* o [[buffer(0)]], uint t [[thread_position_in_grid]]) { o[t] = t; }
[[host_name("fill")]] kernel void fill(device float*, uint);
[[host_name("fill_all")]] kernel void fill(device float*, uint);
"#
);

case!(
    error_in_nested_instances_names_them_once,
    r#"
template <typename T> struct Ops {};
template <> struct Ops<float> { static float twice(float x) { return 2 * x; } };
template <> struct Ops<int> { static int thrice(int x) { return 3 * x; } };
template <typename T> T apply(T x) { return Ops<T>::twice(x); }
template <typename T> T wrap(T x) { return apply(x) + 1; }
template <typename T> kernel void k(device T* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = wrap(out[i]) + apply(out[i]);
}
template [[host_name("k_float")]] kernel void k<float>(device float*, uint);
template [[host_name("k_int")]] kernel void k<int>(device int*, uint);
"#
);

// Template template parameters: arguments that do not fit.
const TTP_DECLS: &str = r#"
template <typename T>
struct Plus {
  static T combine(T a, T b) { return a + b; }
};
template <typename A, typename B>
struct Both {
  static A combine(A a, A b) { return a; }
};
template <typename T, int N>
struct Sized {
  static T combine(T a, T b) { return a; }
};
template <template <typename> class Op, typename T>
struct Folder {
  static T fold(T a, T b) { return Op<T>::combine(a, b); }
};
"#;

case!(
    template_template_param_given_a_type,
    format!(
        "{TTP_DECLS}{}",
        r#"
kernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  out[tid] = Folder<Plus<float>, float>::fold(1.0f, 2.0f);
}
"#
    )
);

case!(
    template_template_param_wrong_arity,
    format!(
        "{TTP_DECLS}{}",
        r#"
kernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  out[tid] = Folder<Both, float>::fold(1.0f, 2.0f);
}
"#
    )
);

case!(
    template_template_param_wrong_kind,
    format!(
        "{TTP_DECLS}{}",
        r#"
kernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  out[tid] = Folder<Sized, float>::fold(1.0f, 2.0f);
}
"#
    )
);

case!(
    template_given_for_a_type_parameter,
    format!(
        "{TTP_DECLS}{}",
        r#"
kernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  out[tid] = Folder<Plus, Plus>::fold(1.0f, 2.0f);
}
"#
    )
);

case!(
    template_template_param_used_without_arguments,
    r#"
template <typename T>
struct Plus {
  static T combine(T a, T b) { return a + b; }
};
template <template <typename> class Op>
float apply(float a, float b) {
  Op x;
  return a + b;
}
kernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  out[tid] = apply<Plus>(1.0f, 2.0f);
}
"#
);

case!(
    template_template_param_bad_default,
    r#"
template <typename T>
struct Plus {
  static T combine(T a, T b) { return a + b; }
};
template <typename T, template <typename> class Op = float>
struct Folder {
  static T fold(T a, T b) { return Op<T>::combine(a, b); }
};
kernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  out[tid] = Folder<float>::fold(1.0f, 2.0f);
}
"#
);

case!(
    template_template_param_function_explicit_mismatch,
    r#"
template <typename A, typename B>
struct Both {
  static A combine(A a, B b) { return a; }
};
template <template <typename> class Op, typename T>
T pick(T a, T b) {
  return Op<T>::combine(a, b);
}
kernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  out[tid] = pick<Both>(1.0f, 2.0f);
}
"#
);

case!(
    local_alias_stays_in_its_function,
    r#"
inline float half_of(float x) { using V = float; return V(x / 2); }
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  V twice = 2 * out[i];
  out[i] = half_of(twice);
}
"#
);

// A function given as a template argument to overloaded function templates
// that fits none of their function-type parameters: each overload says why.
case!(
    function_template_argument_fits_no_overload,
    r#"
typedef void (rows_t)(device float* dst, uint i);
typedef void (scaled_t)(device float* dst, uint i, float s);
void put_int(device float* dst, uint i, int v) { dst[i] = float(v); }
template <rows_t f> void run_rows(device float* dst, uint i) { f(dst, i); }
template <scaled_t f> void run_rows(device float* dst, uint i) { f(dst, i, 2.0f); }
typedef decltype(run_rows<put_int>) run_t;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  run_rows<put_int>(out, i);
}
"#
);

// An overloaded function given as a template argument: each wrapper overload
// takes one of its functions, so the wrapper instance it names is ambiguous.
case!(
    function_template_argument_ambiguous,
    r#"
typedef void (rows_t)(device float* dst, uint i);
typedef void (scaled_t)(device float* dst, uint i, float s);
void put(device float* dst, uint i) { dst[i] = 1.0f; }
void put(device float* dst, uint i, float s) { dst[i] = s; }
template <rows_t f> void run_rows(device float* dst, uint i) { f(dst, i); }
template <scaled_t f> void run_rows(device float* dst, uint i) { f(dst, i, 2.0f); }
typedef decltype(run_rows<put>) run_t;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  run_rows<put>(out, i);
}
"#
);

case!(
    enable_if_condition_false_for_the_arguments,
    r#"
template <typename T, enable_if_t<is_integral_v<T>, bool> = true>
inline T halve(T x) { return x / 2; }
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = halve(out[i]);
}
"#
);

case!(
    no_overload_fits_names_each_with_its_reason,
    r#"
template <typename T, enable_if_t<is_scalar_v<T>, bool> = true>
inline T twice(T x) { return x + x; }
template <typename T, enable_if_t<is_integral_v<T> && is_vector_v<T>, bool> = true>
inline T twice(T x) { return x * 2; }
kernel void k(device float2* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = twice(out[i]);
}
"#
);

// Constant operations whose result C++ leaves undefined run with the
// hardware's result and warn, as clang does.
case!(
    undefined_constant_operations_warn,
    r#"
kernel void k(device int* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  int x = int(tid);
  out[0] = x << 32;
  out[1] = 2147483647 + 1;
  out[2] = x / 0;
  out[3] = int(3e9f);
  out[4] = -(-2147483647 - 1);
}
"#
);

// A threadgroup reference is a valid `[[threadgroup(n)]]` parameter.
case!(
    threadgroup_reference_parameter,
    r#"
kernel void k(device float* out [[buffer(0)]], threadgroup float& total [[threadgroup(0)]],
              uint lid [[thread_position_in_threadgroup]]) {
  if (lid == 0) total = 1.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid] = total;
}
"#
);

/// Tools recognise diagnostics by code and read the name from `subject`,
/// never from the message text.
#[test]
fn codes_and_subjects_for_tools() {
    use msl::diag::codes;
    let first = |text: &str| {
        let c = msl::compile("input.metal", text, &msl::CompileOptions::default());
        let d = c.diagnostics.items.iter().find(|d| d.is_error()).cloned().expect("an error");
        (d.code, d.subject)
    };
    let kernel = |body: &str| format!("kernel void k(device float* o [[buffer(0)]]) {{ {body} }}");
    assert_eq!(first(&kernel("o[0] = nope;")), (Some(codes::UNDECLARED_NAME), Some("nope".to_string())));
    assert_eq!(first(&kernel("o[0] = nope(1);")), (Some(codes::UNDECLARED_NAME), Some("nope".to_string())));
    assert_eq!(first(&kernel("T x = 1; o[0] = x;")), (Some(codes::UNKNOWN_TYPE), Some("T".to_string())));
    assert_eq!(first(&kernel("if (true) { o[0] = 1;")), (Some(codes::EXPECTED_CLOSING_BRACE), None));
    assert_eq!(first("#include <metal_tensor>\n"), (Some(codes::UNSUPPORTED_HEADER), None));
    // The code is the header's alone: a bad macro body has another.
    assert_ne!(first("#define P(a) a ##\n").0, Some(codes::UNSUPPORTED_HEADER));
}

// A function constant given no value is unknown, not the zero that stands
// in for it: no "division by zero" (a literal zero divisor still warns).
case!(
    unset_function_constant_is_not_zero,
    r#"
constant short FC_n [[function_constant(0)]];
kernel void k(device int* d [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  const short n = FC_n;
  d[i] = 32 / n + 32 / FC_n;
  d[i] += 1 / 0;
}
"#
);
