//! Templates and packs that grow: the input's bytes choose a shape (class,
//! function or alias templates; one, two or more instances per level;
//! packs that grow or double per level), a depth and the kernel that uses
//! it. The front end must stop with an error naming a limit, or compile;
//! a compiled kernel must lower within the lowering's budget or fail with
//! an error. Any panic, hang (`-timeout`) or runaway memory (`-rss_limit_mb`)
//! is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        let Some((&b, rest)) = self.0.split_first() else { return 0 };
        self.0 = rest;
        b
    }
}

/// One template family `F` parameterised by `N`, calling or naming `fan`
/// instances of the next level down (`F<N-1, …>`), with a base case at 0.
fn family(b: &mut Bytes) -> (String, String) {
    let fan = 1 + (b.next() % 4) as usize;
    let shape = b.next() % 5;
    let depth = b.next() % 70;
    let args = |k: usize| match k % 3 {
        0 => "T".to_string(),
        1 => "F<N, T>".to_string(),
        _ => "vec<T, 2>".to_string(),
    };
    let (decl, use_) = match shape {
        // Class template whose members name `fan` instances of the level below.
        0 => {
            let members: String =
                (0..fan).map(|k| format!(" using A{k} = typename F<N - 1, {}>::type;", args(k))).collect();
            (
                format!(
                    "template <int N, typename T> struct F {{{members} using type = T; }};\n\
                     template <typename T> struct F<0, T> {{ using type = T; }};\n"
                ),
                format!("typename F<{depth}, float>::type x = 1.0f; o[i] = float(x);"),
            )
        }
        // Static member functions calling `fan` instances of the level below.
        1 => {
            let calls: Vec<String> = (0..fan).map(|k| format!("F<N - 1>::g(x + {k}.0f)")).collect();
            (
                format!(
                    "template <int N> struct F {{ static float g(float x) {{ return {}; }} }};\n\
                     template <> struct F<0> {{ static float g(float x) {{ return x; }} }};\n",
                    calls.join(" + ")
                ),
                format!("o[i] = F<{depth}>::g(o[i]);"),
            )
        }
        // Function templates, the base case by `if constexpr`-free overloading.
        2 => {
            let calls: Vec<String> = (0..fan).map(|k| format!("f<N - 1>(x * {}.0f)", k + 1)).collect();
            (
                format!(
                    "template <int N> float f(float x) {{ return {}; }}\n\
                     template <> float f<0>(float x) {{ return x; }}\n",
                    calls.join(" - ")
                ),
                format!("o[i] = f<{depth}>(o[i]);"),
            )
        }
        // A pack that grows by `fan` copies of itself per level.
        3 => {
            let grown: Vec<&str> = (0..fan).map(|_| "Ts...").collect();
            (
                format!(
                    "template <int N, typename... Ts> struct F {{ static int g() {{ return F<N - 1, {}>::g() + 1; }} }};\n\
                     template <typename... Ts> struct F<0, Ts...> {{ static int g() {{ return int(sizeof...(Ts)); }} }};\n",
                    grown.join(", ")
                ),
                format!("o[i] = float(F<{depth}, float>::g());"),
            )
        }
        // Variadic function templates expanding their pack `fan` times.
        _ => {
            let grown: Vec<&str> = (0..fan).map(|_| "xs...").collect();
            (
                format!(
                    "inline float h() {{ return 0.0f; }}\n\
                     template <typename T, typename... Ts> float h(T x, Ts... xs) {{ return x + h(xs...); }}\n\
                     template <int N, typename... Ts> struct F {{ static float g(Ts... xs) {{ return F<N - 1, {}>::g({}); }} }};\n\
                     template <typename... Ts> struct F<0, Ts...> {{ static float g(Ts... xs) {{ return h(xs...); }} }};\n",
                    (0..fan).map(|_| "Ts...").collect::<Vec<_>>().join(", "),
                    grown.join(", ")
                ),
                format!("o[i] = F<{depth}, float>::g(o[i]);"),
            )
        }
    };
    (decl, use_)
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let (decl, use_) = family(&mut b);
    let src = format!(
        "#include <metal_stdlib>\nusing namespace metal;\n{decl}\
         kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {{ {use_} }}\n"
    );
    let c = msl::compile("growth.metal", &src, &Default::default());
    let _ = c.render(false);
    let Some(p) = c.program.as_ref() else {
        assert!(c.has_errors(), "no program and no error:\n{src}");
        return;
    };
    for (id, _) in p.kernels() {
        let _ = gpu::lower::lower_kernel(p, id);
    }
});
