//! Bad input must give a result (clean or with errors), never a panic or a
//! stack overflow. The deep cases run on a thread with a 2 MB stack (the
//! default for spawned threads; the main thread usually has 8 MB) so that
//! recursion without a depth limit would show up here.
//!
//! No test here asserts on time.

use proptest::prelude::*;

fn compile(text: &str) -> msl::Compilation {
    let c = msl::compile("input.metal", text, &msl::CompileOptions::default());
    // Rendering must cope with whatever spans came out.
    let _ = c.render(false);
    for d in &c.diagnostics.items {
        let _ = msl::diag::to_json(&c.sources, d);
    }
    c
}

/// Run `f` on a thread with a 2 MB stack and propagate panics.
fn small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(2 * 1024 * 1024).spawn(f).expect("spawn").join().unwrap_or_else(|e| std::panic::resume_unwind(e))
}

fn compile_small_stack(text: String) -> (bool, String) {
    small_stack(move || {
        let c = compile(&text);
        // Keep the first diagnostic lines for failure messages.
        let r: String = c.render(false).lines().take(20).collect::<Vec<_>>().join("\n");
        (c.has_errors(), r)
    })
}

#[test]
fn empty_file() {
    let c = compile("");
    assert!(!c.has_errors(), "{}", c.render(false));
    let c = compile("\n\n   \t\n");
    assert!(!c.has_errors(), "{}", c.render(false));
}

/// xorshift64*, so the "random" bytes are the same on every run.
fn pseudo_random_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

#[test]
fn binary_garbage() {
    for seed in 1..=16u64 {
        for len in [1usize, 7, 64, 1000, 20_000] {
            let bytes = pseudo_random_bytes(seed, len);
            let text = String::from_utf8_lossy(&bytes).into_owned();
            compile_small_stack(text);
        }
    }
    // Mostly-printable garbage reaches deeper into the parser.
    for seed in 1..=16u64 {
        let bytes: Vec<u8> = pseudo_random_bytes(seed, 5000).into_iter().map(|b| 32 + b % 95).collect();
        compile_small_stack(String::from_utf8(bytes).unwrap());
    }
}

#[test]
fn ten_megabytes_of_open_parens() {
    let (errors, _) = compile_small_stack("(".repeat(10 * 1024 * 1024));
    assert!(errors);
    let (errors, _) =
        compile_small_stack(format!("kernel void k(device float* o [[buffer(0)]]) {{ o[0] = {}1; }}", "(".repeat(1024 * 1024)));
    assert!(errors);
}

#[test]
fn unterminated_comment_and_string() {
    for text in [
        "/* never closed",
        "kernel void k() { /* never closed",
        "kernel void k() {\n  const char* s = \"never closed\n}\n",
        "\"",
        "'",
        "#define S \"abc\nkernel void k() {}",
        "// fine\n/*",
        "#include \"never",
        "#include <never",
    ] {
        let (errors, r) = compile_small_stack(text.to_string());
        assert!(errors, "{text:?} should be rejected, got:\n{r}");
    }
}

#[test]
fn macro_recursion() {
    for text in [
        "#define A A\nkernel void k(device int* o [[buffer(0)]]) { int A = 1; o[0] = A; }",
        "#define A B\n#define B A\nkernel void k(device int* o [[buffer(0)]]) { int A = 1; o[0] = A; }",
        "#define F(x) F(x)\nint v = F(1);",
        "#define F(x) G(x)\n#define G(x) F(x)\nint v = F(F(F(1)));",
        "#define A A A\n A A A",
        "#define CAT(a, b) a ## b\n#define X CAT(X, X)\nint X;",
    ] {
        compile_small_stack(text.to_string());
    }
    // Exponential expansion must not blow up memory or time unboundedly.
    let mut text = String::from("#define A0 x\n");
    for i in 1..40 {
        text.push_str(&format!("#define A{i} A{p} A{p}\n", p = i - 1));
    }
    text.push_str("int v = A39;\n");
    compile_small_stack(text);
}

#[test]
fn hundred_thousand_declarations_in_a_kernel() {
    let mut text = String::from(
        "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {\n  float acc = 0.0f;\n",
    );
    for i in 0..100_000 {
        text.push_str(&format!("  float v{i} = float(tid) * {i}.0f; acc += v{i};\n"));
    }
    text.push_str("  out[tid] = acc;\n}\n");
    let (errors, r) = compile_small_stack(text);
    assert!(!errors, "{r}");
}

#[test]
fn ten_thousand_nested_braces() {
    let n = 10_000;
    let text = format!("kernel void k(device float* out [[buffer(0)]]) {{\n{}out[0] = 1.0f;\n{}}}\n", "{".repeat(n), "}".repeat(n));
    compile_small_stack(text);
    // Unbalanced too.
    compile_small_stack(format!("kernel void k() {{ {}", "{".repeat(n)));
    compile_small_stack("}".repeat(n));
    // Nested control flow and expressions.
    compile_small_stack(format!("kernel void k(device int* o [[buffer(0)]]) {{ {} o[0] = 1; }}", "if (true) ".repeat(n)));
    compile_small_stack(format!("kernel void k(device int* o [[buffer(0)]]) {{ o[0] = {}1; }}", "-".repeat(n)));
    compile_small_stack(format!("kernel void k(device int* o [[buffer(0)]]) {{ o[0] = {}1{}; }}", "(".repeat(n), ")".repeat(n)));
    compile_small_stack(format!("int x = {}1{};", "{".repeat(n), "}".repeat(n)));
    compile_small_stack(format!("{}int x;", "namespace a { ".repeat(n)));
    compile_small_stack(format!("#if 1\n{}", "#if 1\n".repeat(n)));
}

#[test]
fn huge_array_sizes() {
    for size in ["4294967296", "18446744073709551615", "99999999999999999999999999", "0x7fffffff", "-1", "0", "1u << 40"] {
        let text = format!(
            "#include <metal_stdlib>\nusing namespace metal;\n\
             kernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {{\n\
             float big[{size}];\n  threadgroup float tg[{size}];\n  out[tid] = big[tid] + tg[tid];\n}}\n\
             constant float table[{size}] = {{1.0f}};\n\
             struct S {{ float a[{size}]; }};\n"
        );
        compile_small_stack(text);
    }
    // Multi-dimensional arrays whose total size overflows.
    compile_small_stack(
        "kernel void k(device float* out [[buffer(0)]]) { float a[65536][65536][65536][65536]; out[0] = a[0][0][0][0]; }".to_string(),
    );
}

#[test]
fn deeply_nested_templates() {
    let n = 5_000;
    // Type expression nesting.
    compile_small_stack(format!("#include <metal_stdlib>\nusing namespace metal;\n{}float{} x;", "vec<".repeat(n), ", 4>".repeat(n)));
    compile_small_stack(format!("template <typename T> struct W {{ T v; }};\n{}int{} w;", "W<".repeat(n), ">".repeat(n)));
    // Recursive instantiation: every level is a new type.
    compile_small_stack("template <int N> struct R { static constant int v = R<N + 1>::v; };\nconstant int x = R<0>::v;".to_string());
    compile_small_stack("template <typename T> struct P { typedef typename P<P<T>>::type type; };\nP<int>::type x;".to_string());
    compile_small_stack(
        "template <int N> int f() { return f<N + 1>(); }\nkernel void k(device int* o [[buffer(0)]]) { o[0] = f<0>(); }".to_string(),
    );
    compile_small_stack(format!("template <{}typename T> struct Z;", "template <".repeat(n)));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn token_soup_never_panics(tokens in proptest::collection::vec(token(), 0..200)) {
        let text = tokens.join(" ");
        let _ = compile(&text);
    }

    #[test]
    fn token_soup_inside_a_kernel_never_panics(tokens in proptest::collection::vec(token(), 0..200)) {
        let text = format!(
            "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {{\n{}\n}}\n",
            tokens.join(" ")
        );
        let _ = compile(&text);
    }
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "x", "y", "out", "tid", "foo", "T", "N", "float", "float4", "half", "int", "uint", "uint2",
            "bool", "void", "auto", "kernel", "device", "constant", "threadgroup", "thread", "const",
            "struct", "template", "typename", "using", "namespace", "typedef", "enum", "class", "return",
            "if", "else", "for", "while", "do", "switch", "case", "default", "break", "continue",
            "static_cast", "as_type", "sizeof", "decltype", "true", "false", "metal", "dot", "min",
            "threadgroup_barrier", "mem_flags::mem_threadgroup", "simd_sum", "atomic_fetch_add_explicit",
            "atomic_int", "vec", "array", "operator", "static", "inline", "constexpr",
            "thread_position_in_grid", "buffer", "#define", "#if", "#endif", "#include", "\n",
        ]).prop_map(str::to_string),
        4 => prop::sample::select(vec![
            "(", ")", "{", "}", "[", "]", "[[", "]]", "<", ">", ";", ",", ".", "::", "=", "==", "+",
            "-", "*", "/", "%", "&", "|", "^", "~", "!", "?", ":", "->", "++", "--", "+=", "<<", ">>",
            "&&", "||", "#", "##", "...",
        ]).prop_map(str::to_string),
        2 => prop_oneof![
            any::<u32>().prop_map(|v| v.to_string()),
            any::<i64>().prop_map(|v| format!("{v}u")),
            any::<f32>().prop_map(|v| format!("{v:?}f")),
            Just("0x".to_string()),
            Just("1e400".to_string()),
            Just("\"str\"".to_string()),
            Just("'c'".to_string()),
        ],
        1 => "[a-z_][a-z0-9_]{0,6}",
    ]
}

#[test]
fn deeply_nested_template_arguments_stop_early() {
    // Once exponential: every level was read as a type, a base type and a name.
    for word in ["enable_if_t", "vec", "W"] {
        let text = format!("template <typename T> struct W {{}};\n{}", format!("{word}<\n").repeat(200));
        let (has_errors, _) = compile_small_stack(text);
        assert!(has_errors);
    }
}

#[test]
fn a_struct_holding_an_array_of_itself_is_an_error() {
    let text = "struct S { float x; S inner[2]; };\nkernel void k(device float* o [[buffer(0)]]) { S s; o[0] = s.x; }\n".to_string();
    let (has_errors, msg) = compile_small_stack(text);
    assert!(has_errors && msg.contains("cannot contain itself"), "{msg}");
}

/// Deduction looks through alias templates: an alias of `metal::array`
/// named `array` (as PyTorch's c10 headers declare) and an alias that names
/// itself must not send it round in circles.
#[test]
fn alias_templates_that_name_themselves() {
    let c10_style = "#include <metal_stdlib>\nnamespace c10 { namespace metal {\ntemplate <typename T, size_t N> using array = ::metal::array<T, N>;\ntemplate <typename T> T first(array<T, 3> a) { return a[0]; }\n}}\nkernel void k(device float* o [[buffer(0)]]) { c10::metal::array<float, 3> a = {1.0f, 2.0f, 3.0f}; o[0] = c10::metal::first(a); }\n".to_string();
    let (errors, text) = compile_small_stack(c10_style);
    assert!(!errors, "{text}");
    let selfish = "template <typename T> using A = A<T>;\ntemplate <typename T> T f(A<T> x) { return x; }\nkernel void k(device float* o [[buffer(0)]]) { o[0] = f(1.0f); }\n".to_string();
    let (errors, _) = compile_small_stack(selfish);
    assert!(errors);
}

/// Template template parameters nested, recursing, applied to themselves
/// or to what is not a template: errors, never a crash.
#[test]
fn template_template_parameters_misused() {
    let n = 5_000;
    let cases = [
        format!("template <{}typename> class{} P> struct Z;", "template <".repeat(n), "> class".repeat(n)),
        "template <template <typename> class P, typename T> struct R { typedef typename R<P, P<T>>::type type; };\ntemplate <typename T> struct B {};\nR<B, int>::type x;".to_string(),
        "template <template <typename> class P> struct S { P<S> v; };\nS<S> s;".to_string(),
        "template <template <typename> class P> struct S { P<P> v; };\ntemplate <typename T> struct B { T v; };\nS<B> s;".to_string(),
        "template <template <typename> class P = P> struct S {};\nS<> s;".to_string(),
        "template <template <typename> class P> struct S {};\nS<1> a; S<int> b; S<S> c; S<> d; S<S, S> e;".to_string(),
        "template <template <typename> class P, typename T> T f(P<T> x) { return x; }\nkernel void k(device float* o [[buffer(0)]]) { o[0] = f(1.0f); }".to_string(),
        "template <template <typename> class... Ps> struct L {};\ntemplate <typename T> struct B {};\nL<B, B, int> l;".to_string(),
        "template <template <typename> class P> using Q = P<int>;\nQ<Q> q;".to_string(),
        "template <template class P> struct S {};".to_string(),
        "template <template <typename> P> struct S {};".to_string(),
    ];
    for text in cases {
        let (errors, rendered) = compile_small_stack(text.clone());
        assert!(errors, "{text}\n{rendered}");
    }
}

/// A chain as long as the parser allows (`parse::MAX_CHAIN` operators)
/// compiles, and dropping its tree, on a 2 MB stack; one more operator is
/// an error that says "too long", not "nested".
#[test]
fn chains_up_to_the_limit_compile_and_longer_ones_are_too_long() {
    let n = msl::parse::MAX_CHAIN as usize;
    let chain = |terms: usize| {
        format!(
            "kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {{ o[i] = {}; }}",
            vec!["o[i]"; terms].join(" + ")
        )
    };
    // (The indexing of the assigned `o[i]` and of the first term count too.)
    let (errors, text) = compile_small_stack(chain(n - 2));
    assert!(!errors, "{text}");
    let (errors, text) = compile_small_stack(chain(n + 2));
    assert!(errors && text.contains("too long"), "{text}");
}

/// Instantiation that doubles per level stops at the instance budget with
/// one error (also inside a probe whose diagnostics are rolled back).
#[test]
fn doubling_instantiation_stops_at_the_budget() {
    let src = "template<int N, typename T> struct E { using A = typename E<N-1, E<N,T>>::type; using B = typename E<N-1, T>::type; using type = T; };\n\
               template<typename T> struct E<0, T> { using type = T; };\n\
               kernel void k(device float* o [[buffer(0)]]) { typename E<40, float>::type x = 1; o[0] = x; }";
    let c = compile(src);
    let errors: Vec<&str> = c.diagnostics.items.iter().filter(|d| d.is_error()).map(|d| d.message.as_str()).collect();
    assert_eq!(errors.iter().filter(|m| m.contains("too many template instantiations")).count(), 1, "{errors:?}");
}

/// Expression nesting and instantiation depth are counted apart: a
/// template called at the bottom of an expression deeper than
/// `MAX_INSTANTIATION_DEPTH` is no "too deep" instantiation, and deep
/// expressions in every level of a deep instantiation are no "too deeply
/// nested" expression.
#[test]
fn expression_depth_and_instantiation_depth_are_counted_apart() {
    let head = "template <int N> float f(float x);\ntemplate <> float f<0>(float x) { return x; }\n";
    // 200 operators: the call is the deepest operand.
    let terms = vec!["x"; 200].join(" + ");
    let recursive = format!("template <int N> float f(float x) {{ return f<N - 1>(x) + {terms}; }}\n");
    let kernel = |n: u32| format!("kernel void k(device float* o [[buffer(0)]]) {{ float x = o[1]; o[0] = f<{n}>(x) + {terms}; }}");
    let (errors, text) = compile_small_stack(format!("{head}{recursive}{}", kernel(60)));
    assert!(!errors, "{text}");
    // Deeper than the instantiation limit is still refused, as an instantiation.
    let (errors, text) = compile_small_stack(format!("{head}{recursive}{}", kernel(100)));
    assert!(errors && text.contains("template instantiation is nested too deeply"), "{text}");
    assert!(!text.contains("expression is nested too deeply"), "{text}");
}

/// Expression nesting is counted per body, and bounded in all: a chain as
/// long as the parser allows in an instance called from under another such
/// chain compiles; ten levels of them stop with an error (the stack grows
/// on the heap, so the total is what bounds its memory).
#[test]
fn long_chains_in_nested_instances() {
    let n = msl::parse::MAX_CHAIN as usize - 10;
    let terms = vec!["x"; n].join(" + ");
    let src = |levels: u32| {
        format!(
            "template <int N> float f(float x);\ntemplate <> float f<0>(float x) {{ return x; }}\n\
             template <int N> float f(float x) {{ return f<N - 1>(x) + {terms}; }}\n\
             kernel void k(device float* o [[buffer(0)]]) {{ float x = o[1]; o[0] = f<{levels}>(x) + {terms}; }}"
        )
    };
    let (errors, text) = compile_small_stack(src(1));
    assert!(!errors, "{text}");
    let (errors, text) = compile_small_stack(src(10));
    assert!(errors && text.contains("expression is nested too deeply") && text.contains("in all"), "{text}");
}

#[test]
fn default_member_initializers_that_build_their_own_struct() {
    // Each `S{}` needs `a`'s default, which builds two more `S{}`: without
    // a stop this doubles at every level (found by the differential fuzz
    // target, where it ran out of time and memory).
    for text in [
        "struct S { int a = S{}.a + S{}.a; };\nkernel void k(device int* out [[buffer(0)]]) { out[0] = S{}.a; }",
        "template <int K> struct T { int s = T<2>{}.s + T<K>{}.s; };\nkernel void k(device int* out [[buffer(0)]]) { out[0] = T<4>{}.s; }",
    ] {
        let c = compile(text);
        let shown = c.render(false);
        assert!(c.has_errors() && shown.contains("without end"), "{shown}");
    }
}
