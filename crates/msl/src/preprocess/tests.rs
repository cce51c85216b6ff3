use super::*;
use crate::diag::Severity;
use std::path::Path;

fn run(src: &str) -> (Vec<Token>, Diagnostics, SourceMap, FileId) {
    let mut sm = SourceMap::new();
    let f = sm.add("test.metal", src);
    let mut d = Diagnostics::new();
    let toks = preprocess(&mut sm, f, &PreprocessOptions::default(), &mut d);
    (toks, d, sm, f)
}

fn pp(src: &str) -> (String, Diagnostics) {
    let (toks, d, _, _) = run(src);
    assert_eq!(toks.last().map(|t| &t.kind), Some(&TokenKind::Eof));
    assert_eq!(toks.iter().filter(|t| t.kind == TokenKind::Eof).count(), 1);
    let s: Vec<String> = toks.iter().filter(|t| t.kind != TokenKind::Eof).map(|t| t.kind.to_string()).collect();
    (s.join(" "), d)
}

fn ok(src: &str) -> String {
    let (s, d) = pp(src);
    assert!(!d.has_errors(), "unexpected errors for {src:?}: {:#?}", d.items);
    s
}

/// `src` preprocessed, without the built-in declarations that the
/// first `<metal_*>` include brings in front.
fn ok_user(src: &str) -> String {
    let builtins = ok("#include <metal_stdlib>");
    let all = ok(src);
    assert!(!builtins.is_empty() && all.starts_with(&builtins), "{all}");
    all[builtins.len()..].trim_start().to_string()
}

fn errors(d: &Diagnostics) -> Vec<String> {
    d.items.iter().filter(|x| x.severity == Severity::Error).map(|x| x.message.clone()).collect()
}

#[test]
fn object_and_function_macros() {
    assert_eq!(ok("#define N 4\nint a[N];"), "int a [ 4 ] ;");
    assert_eq!(ok("#define ADD(a, b) ((a) + (b))\nADD(1, 2)"), "( ( 1 ) + ( 2 ) )");
    assert_eq!(ok("#define F(x) x\nF"), "F");
    assert_eq!(ok("#define F(x) [x]\nF (1)"), "[ 1 ]");
    assert_eq!(ok("#define E()\nE() E"), "E");
    assert_eq!(ok("#define F(x) x\nF(f(a, b))"), "f ( a , b )");
}

#[test]
fn function_macro_args() {
    assert_eq!(ok("#define F(a, b) a|b\nF((1, 2), [3])"), "( 1 , 2 ) | [ 3 ]");
    let (_, d) = pp("#define F(a, b) a|b\nF((1, 2), [3, 4])");
    assert!(errors(&d)[0].contains("takes 2 arguments, but 3 were given"));
    assert_eq!(ok("#define F(a) <a>\nF(\n1\n+\n2\n)"), "< 1 + 2 >");
    assert_eq!(ok("#define F(a) <a>\nF()"), "< >");
    let (_, d) = pp("#define F(a, b) a\nF(1)");
    assert!(errors(&d)[0].contains("takes 2 arguments"), "{:?}", d.items);
}

#[test]
fn nested_macros() {
    assert_eq!(ok("#define A B + 1\n#define B C * 2\n#define C 3\nA"), "3 * 2 + 1");
    assert_eq!(ok("#define SQ(x) ((x)*(x))\n#define TWO 2\nSQ(SQ(TWO))"), "( ( ( ( 2 ) * ( 2 ) ) ) * ( ( ( 2 ) * ( 2 ) ) ) )");
    // A function-like macro name produced by expansion, called with a
    // `(` from the file.
    assert_eq!(ok("#define F(x) <x>\n#define G F\nG(1)"), "< 1 >");
    // Arguments are expanded before substitution.
    assert_eq!(ok("#define ID(x) x\n#define N 5\nID(N)"), "5");
    // Defined later than used in another macro body: fine.
    assert_eq!(ok("#define A B\n#define B 7\nA"), "7");
}

#[test]
fn stringify_and_paste() {
    assert_eq!(ok("#define S(x) #x\nS(a + b)"), "\"a + b\"");
    assert_eq!(ok("#define S(x) #x\nS(  a   +b  )"), "\"a +b\"");
    assert_eq!(ok("#define S(x) #x\nS(\"q\\n\")"), "\"\\\"q\\\\n\\\"\"");
    assert_eq!(ok("#define S(x) #x\n#define X 42\nS(X)"), "\"X\"");
    assert_eq!(ok("#define S(x) #x\n#define XS(x) S(x)\n#define X 42\nXS(X)"), "\"42\"");
    assert_eq!(ok("#define S(x) #x\nS(1.50f)"), "\"1.50f\"");
    assert_eq!(ok("#define CAT(a, b) a##b\nCAT(foo, bar) CAT(1, 2) CAT(+, =) CAT(, x) CAT(x, ) CAT(,)"), "foobar 12 += x x");
    assert_eq!(ok("#define CAT(a, b) a ## b\n#define foobar 99\nCAT(foo, bar)"), "99");
    assert_eq!(ok("#define CAT(a, b) a##b\n#define X 1\nCAT(X, 2)"), "X2");
    assert_eq!(ok("#define CAT3(a, b, c) a##b##c\nCAT3(x, 1, y)"), "x1y");
    // A preprocessing number that is no literal is a fine argument.
    assert_eq!(ok("#define N(op, s) op##_##s\n#define S(x) #x\nN(load, 8bit) S(16bit)"), "load_8bit \"16bit\"");
    let (_, d) = pp("#define I(x) x\nI(8bit)");
    assert!(errors(&d)[0].contains("invalid numeric literal `8bit`"), "{:?}", d.items);
    assert_eq!(ok("#define H(x) x##.5f\nH(1)"), "1.5f");
    assert_eq!(ok("#define AB a ## b\n#define ab 5\nAB"), "5");
    // Placemarkers: empty arguments around `##`.
    assert_eq!(ok("#define C(a, b, c) x a##b##c y\nC(,,) C(p,,) C(,,q) C(p,,q)"), "x y x p y x q y x pq y");
    assert_eq!(ok("#define P(a, e, f, b) a e##f##b\nP(u,,,v)"), "u v");
    let (s, d) = pp("#define CAT(a, b) a##b\nCAT(+, -)");
    assert!(errors(&d)[0].contains("does not give a valid token"), "{:?}", d.items);
    assert_eq!(s, "+ -");
    let (_, d) = pp("#define CAT(a, b) a##b\nCAT(/, /)");
    assert!(d.has_errors());
    let (_, d) = pp("#define BAD ## x\n");
    assert!(errors(&d)[0].contains("`##`"));
    let (_, d) = pp("#define BAD(x) #y\n");
    assert!(errors(&d)[0].contains("`#` must be followed"));
}

#[test]
fn variadic_macros() {
    assert_eq!(ok("#define V(...) f(__VA_ARGS__)\nV(1, 2, (3, 4))"), "f ( 1 , 2 , ( 3 , 4 ) )");
    assert_eq!(ok("#define V(a, ...) a: __VA_ARGS__\nV(1) V(1, 2, 3)"), "1 : 1 : 2 , 3");
    assert_eq!(ok("#define V(fmt, ...) p(fmt, ## __VA_ARGS__)\nV(x) V(x, 1)"), "p ( x ) p ( x , 1 )");
    assert_eq!(ok("#define V(args...) g(args)\nV(1, 2)"), "g ( 1 , 2 )");
    assert_eq!(ok("#define S(...) #__VA_ARGS__\nS(a, b)"), "\"a, b\"");
    assert_eq!(ok("#define O(f, ...) f(0 __VA_OPT__(,) __VA_ARGS__)\nO(g) O(g, 1, 2)"), "g ( 0 ) g ( 0 , 1 , 2 )");
    assert_eq!(ok("#define O(a, ...) a ## __VA_OPT__(x ## a) z\nO(p) O(p, 1)"), "p z pxp z");
}

#[test]
fn recursion_terminates() {
    assert_eq!(ok("#define A A\nA"), "A");
    assert_eq!(ok("#define A B\n#define B A\nA B"), "A B");
    assert_eq!(ok("#define A 1 + A\nA"), "1 + A");
    assert_eq!(ok("#define f(x) x + f(x)\nf(1)"), "1 + f ( 1 )");
    assert_eq!(ok("#define f(x) g(x)\n#define g(x) f(x)\nf(1)"), "f ( 1 )");
    // The painted name stays unexpanded even when rescanned later.
    assert_eq!(ok("#define foo foo\n#define ID(x) x\nID(foo)"), "foo");
    // Classic C standard example pieces.
    assert_eq!(ok("#define x 3\n#define f(a) f(x * (a))\n#undef x\n#define x 2\n#define g f\nf(y+1)"), "f ( 2 * ( y + 1 ) )");
    assert_eq!(ok("#define x 2\n#define f(a) f(x * (a))\n#define g f\ng(2+(3,4)-0)"), "f ( 2 * ( 2 + ( 3 , 4 ) - 0 ) )");
}

#[test]
fn conditionals() {
    assert_eq!(ok("#if 1\na\n#else\nb\n#endif"), "a");
    assert_eq!(ok("#if 0\na\n#elif 2 > 1\nb\n#else\nc\n#endif"), "b");
    assert_eq!(ok("#if 0\na\n#elif 0\nb\n#else\nc\n#endif"), "c");
    assert_eq!(ok("#define X\n#ifdef X\na\n#endif\n#ifndef X\nb\n#endif"), "a");
    assert_eq!(ok("#if defined(X) || defined Y\na\n#else\nb\n#endif"), "b");
    assert_eq!(ok("#define Y 0\n#if defined(X) || defined Y\na\n#else\nb\n#endif"), "a");
    assert_eq!(ok("#if 0\n#if 1\na\n#else\nb\n#endif\n#else\nc\n#endif"), "c");
    assert_eq!(ok("#if 0\n#bogus directive\n#error no\n#endif\nd"), "d");
    assert_eq!(ok("#if 1 ? 2 : (1/0)\na\n#endif"), "a");
    assert_eq!(ok("#if 0 && (1/0)\na\n#endif\n#if 1 || 1 % 0\nb\n#endif"), "b");
    assert_eq!(ok("#if (2 + 3 * 4 == 14) && (-1 < 0) && !0 && ~0 == -1 && (1 << 4) == 16 && 7 / 2 == 3 && 7 % 4 == 3\na\n#endif"), "a");
    assert_eq!(ok("#if true && !false\na\n#endif"), "a");
    assert_eq!(ok("#if UNKNOWN == 0\na\n#endif"), "a");
    assert_eq!(ok("#if __METAL_VERSION__ >= 310 && defined(__METAL__) && !defined(__METAL_IOS__)\na\n#endif"), "a");
    assert_eq!(ok("#if __has_include(<metal_stdlib>) && !__has_feature(x)\na\n#endif"), "a");
    assert_eq!(ok("#define F(x) (x * 2)\n#if F(3) == 6 && 'a' == 97\na\n#endif"), "a");
    assert_eq!(ok("#if 1\n#elif 1/0\n#endif\nz"), "z");
    let (_, d) = pp("#if 1/0\n#endif");
    assert!(errors(&d)[0].contains("division by zero"), "{:?}", d.items);
    let (_, d) = pp("#if 1 +\n#endif");
    assert!(d.has_errors());
    let (_, d) = pp("#if 1.0\n#endif");
    assert!(d.has_errors());
    let (_, d) = pp("#if\n#endif");
    assert!(d.has_errors());
    let (_, d) = pp("#else\n#endif\n#elif 1");
    assert_eq!(errors(&d).len(), 3, "{:?}", d.items);
    let (_, d) = pp("#if 1\n#else\n#else\n#endif");
    assert!(d.has_errors());
}

#[test]
fn error_warning_pragma_include() {
    let (_, d) = pp("#error \"bad thing\"\n");
    assert_eq!(errors(&d), vec!["\"bad thing\"".to_string()]);
    let (s, d) = pp("#warning careful here\nx");
    assert_eq!(s, "x");
    assert!(!d.has_errors());
    assert_eq!(d.items[0].severity, Severity::Warning);
    assert_eq!(d.items[0].message, "careful here");
    assert_eq!(
        ok("#pragma unroll\n#pragma clang loop unroll(full)\n#pragma METAL internals : enable\n#\n#line 10\nx _Pragma(\"unroll\") y"),
        "x y"
    );
    assert_eq!(ok_user("#include <metal_stdlib>\n#include <metal_simdgroup_matrix>\nusing namespace metal;"), "using namespace metal ;");
    let (s, d) = pp("#include \"utils.h\"\nx");
    assert_eq!(s, "x");
    let e = &d.items[0];
    assert_eq!(e.message, "cannot find header \"utils.h\"");
    assert!(e.notes[0].contains("only Metal's built-in headers"), "{:?}", e.notes);
    assert!(e.help[0].contains("-I DIR"), "{:?}", e.help);
    let (_, d) = pp("#include <stdio.h>\n");
    assert!(d.has_errors());
    let (_, d) = pp("#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>\n#include <metal_tensor>\n");
    assert_eq!(errors(&d).len(), 2);
    assert!(errors(&d)[0].starts_with("unsupported header <MetalPerformancePrimitives/"), "{:?}", errors(&d));
    assert!(errors(&d)[1].starts_with("unsupported header <metal_tensor>"), "{:?}", errors(&d));
    assert_eq!(ok("#if __has_include(<metal_tensor>)\nbad\n#else\ngood\n#endif"), "good");
    let (_, d) = pp("#defien X 1\n");
    assert!(errors(&d)[0].contains("unknown preprocessor directive"));
    assert!(d.items[0].help[0].contains("#define"));
}

/// A folder tree for include tests: `main.metal` includes headers from
/// its own folder and from a `-I` root.
/// A temporary folder, removed when the test ends.
struct Temp(tempfile::TempDir);

impl std::ops::Deref for Temp {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

fn include_tree(files: &[(&str, &str)]) -> Temp {
    let base = Temp(tempfile::Builder::new().prefix("msl-pp-").tempdir().unwrap());
    for (path, text) in files {
        let p = base.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    base
}

fn run_in(base: &Path, src: &str) -> (String, Diagnostics, SourceMap) {
    let mut sm = SourceMap::new();
    let f = sm.add("main.metal", src);
    let mut d = Diagnostics::new();
    let opts = PreprocessOptions { main_dir: Some(base.join("proj")), include_dirs: vec![base.join("lib")], ..Default::default() };
    let toks = preprocess(&mut sm, f, &opts, &mut d);
    let s: Vec<String> = toks.iter().filter(|t| t.kind != TokenKind::Eof).map(|t| t.kind.to_string()).collect();
    (s.join(" "), d, sm)
}

#[test]
fn includes_resolve_relative_then_roots() {
    let base = include_tree(&[
        ("proj/local.h", "#pragma once\n#include \"sub/inner.h\"\nint local;"),
        ("proj/sub/inner.h", "#ifndef INNER\n#define INNER\nint inner = HELLO;\n#endif"),
        ("lib/mylib/api.h", "#include \"detail.h\"\nint api;"),
        ("lib/mylib/detail.h", "int detail;"),
        ("lib/cycle_a.h", "#include <cycle_b.h>\n"),
        ("lib/cycle_b.h", "#include <cycle_a.h>\n"),
        ("lib/twice.h", "#include <twice.h>\n#include <twice.h>\n"),
        ("lib/open_if.h", "#if 1\nint x;\n"),
        ("secret.h", "int secret;"),
    ]);
    let (s, d, _) = run_in(
        &base,
        "#define HELLO 7\n#include \"local.h\"\n#include \"local.h\"\n#include \"sub/inner.h\"\n#include <mylib/api.h>\nint end;",
    );
    assert!(!d.has_errors(), "{:#?}", d.items);
    assert_eq!(s, "int inner = 7 ; int local ; int detail ; int api ; int end ;");
    assert!(
        run_in(&base, "#if __has_include(\"local.h\") && __has_include(<mylib/api.h>) && !__has_include(\"nope.h\")\nyes\n#endif").0
            == "yes"
    );

    // Outside the allowed folders: refused by name, never read.
    let (s, d, _) = run_in(&base, "#include \"../secret.h\"\nx");
    assert_eq!(s, "x");
    assert!(errors(&d)[0].starts_with("refusing to include \"../secret.h\""), "{:?}", errors(&d));

    // A cycle without guards stops at the depth limit with one error.
    let (_, d, _) = run_in(&base, "#include <cycle_a.h>\n");
    assert_eq!(errors(&d), vec![format!("#include nested too deeply (more than {MAX_INCLUDE_DEPTH} levels)")]);

    // A header including itself twice would be entered 2^200 times: the
    // total number of entries is bounded, with one error.
    let (_, d, _) = run_in(&base, "#include <twice.h>\n");
    let errs = errors(&d);
    assert!(errs.contains(&format!("headers were included more than {MAX_HEADER_ENTRIES} times in all")), "{errs:?}");
    assert!(errs.len() <= 2, "{errs:?}");

    // A header must close the `#if` groups it opens; the includer goes on.
    let (s, d, _) = run_in(&base, "#include <open_if.h>\nint after;");
    assert_eq!(s, "int x ; int after ;");
    assert_eq!(errors(&d).len(), 1);
}

#[test]
fn errors_in_headers_name_the_include_chain() {
    let base = include_tree(&[("proj/a.h", "#include \"b.h\"\n"), ("proj/b.h", "\n#error broken header\n")]);
    let (_, d, sm) = run_in(&base, "int x;\n#include \"a.h\"\n");
    let text = crate::diag::render(&sm, &d.items, false);
    assert!(text.contains("b.h:2:1"), "{text}");
    assert!(text.contains("in file included from a.h:1:1"), "{text}");
    assert!(text.contains("in file included from main.metal:2:1"), "{text}");
}

#[test]
fn predefined_macros() {
    assert_eq!(ok("__METAL_VERSION__ __METAL__ __METAL_MACOS__ __cplusplus __METAL_IOS__"), "310 1 1 201703l __METAL_IOS__");
    assert_eq!(ok("a\nb __LINE__\n\n__LINE__"), "a b 2 4");
    assert_eq!(ok("#define L __LINE__\n\nL"), "3");
    assert_eq!(ok("__FILE__"), "\"test.metal\"");
    assert_eq!(ok("__COUNTER__ __COUNTER__"), "0 1");
    assert_eq!(ok("#define S(x) #x\n#define XS(x) S(x)\nXS(__LINE__)"), "\"3\"");
    let mut sm = SourceMap::new();
    let f = sm.add("k.metal", "N F(2) __METAL_VERSION__");
    let mut d = Diagnostics::new();
    let opts = PreprocessOptions {
        defines: vec![("N".into(), "16".into()), ("F(x)".into(), "x+1".into())],
        metal_version: 300,
        ..Default::default()
    };
    let toks = preprocess(&mut sm, f, &opts, &mut d);
    let s: Vec<String> = toks.iter().map(|t| t.kind.to_string()).collect();
    assert_eq!(s.join(" "), "16 2 + 1 300 end of file");
}

#[test]
fn conformance_file() {
    let src = r#"#define TILE 8
#define SQUARE(x) ((x) * (x))
#define STR_CAT(a, b) a##b
#define SCALE 3
#if SCALE > 2
#define FACTOR 2.0f
#else
#define FACTOR 1.0f
#endif
#if defined(HAS_TILE) && (TILE == 8)
#define MODE 1
#elif defined(TILE)
#define MODE 2
#else
#define MODE 3
#endif
#define CLAMP01(x) \
  ((x) < 0.0f ? 0.0f : \
   ((x) > 1.0f ? 1.0f : (x)))
#undef SCALE
#ifdef SCALE
#error "SCALE should be undefined here"
#endif
float STR_CAT(val, ue) = SQUARE(TILE) + CLAMP01(FACTOR) + MODE + __LINE__;
"#;
    let (s, d) = pp(src);
    assert!(d.items.is_empty(), "{:?}", d.items);
    assert_eq!(s, "float value = ( ( 8 ) * ( 8 ) ) + ( ( 2.0f ) < 0.0f ? 0.0f : ( ( 2.0f ) > 1.0f ? 1.0f : ( 2.0f ) ) ) + 2 + 24 ;");
}

#[test]
fn spans_map_to_user_text() {
    let src = "#define SQUARE(x) ((x) * (x))\nfloat r = SQUARE(a + y);\n";
    let (toks, d, sm, _) = run(src);
    assert!(!d.has_errors());
    let ys: Vec<&Token> = toks.iter().filter(|t| t.is_ident("y")).collect();
    assert_eq!(ys.len(), 2);
    for y in &ys {
        assert_eq!(sm.snippet(y.span), "y");
        assert_eq!(y.span.lo as usize, src.rfind('y').unwrap());
        assert_eq!(y.macro_def, None);
    }
    let star = toks.iter().find(|t| t.is_punct(Punct::Star)).unwrap();
    assert_eq!(sm.snippet(star.span), "SQUARE(a + y)");
    assert_eq!(sm.snippet(star.macro_def.unwrap()), "*");
    assert_eq!(sm.line_col(star.macro_def.unwrap()), (1, 24));
    let r = toks.iter().find(|t| t.is_ident("r")).unwrap();
    assert_eq!(sm.snippet(r.span), "r");

    // Nested: tokens from inner macro bodies map to the outermost call.
    let src = "#define ONE 1\n#define INC(x) (x + ONE)\n#define WRAP INC\nint v = WRAP(q);";
    let (toks, _, sm, _) = run(src);
    let one = toks.iter().find(|t| matches!(t.kind, TokenKind::Int { value: 1, .. })).unwrap();
    assert_eq!(sm.snippet(one.span), "WRAP(q)");
    assert_eq!(sm.snippet(one.macro_def.unwrap()), "1");
    let q = toks.iter().find(|t| t.is_ident("q")).unwrap();
    assert_eq!(sm.snippet(q.span), "q");
    let plus = toks.iter().find(|t| t.is_punct(Punct::Plus)).unwrap();
    assert_eq!(sm.snippet(plus.span), "WRAP(q)");

    // Errors point at what the user wrote.
    let (_, d, sm, _) = run("#define F(x) x\nF(1,\n");
    assert_eq!(sm.snippet(d.items[0].span), "F");
    assert!(d.items[0].message.contains("unterminated call"));
    let (_, d, sm, _) = run("\n#if 1\nx\n");
    assert_eq!(sm.snippet(d.items[0].span), "#if");
    assert_eq!(sm.line_col(d.items[0].span), (2, 1));
}

#[test]
fn unterminated_things() {
    let (s, d) = pp("#define F(x) x\na F(1, (2)\nb c");
    assert_eq!(s, "a");
    assert_eq!(errors(&d).len(), 1);
    let (_, d) = pp("#ifdef X\n#if 1\n");
    let e = errors(&d);
    assert_eq!(e.len(), 2);
    assert!(e.iter().any(|m| m.contains("unterminated `#ifdef`: add a matching `#endif`")), "{e:?}");
    let (_, d) = pp("#define F(x\n#define G(x,)\n#define H(x x) 1\n#define\n#define 3 4\n");
    assert_eq!(errors(&d).len(), 5, "{:?}", d.items);
}

#[test]
fn deep_if_nesting_is_an_error_not_a_crash() {
    let mut src = String::new();
    for _ in 0..1000 {
        src.push_str("#if 1\n");
    }
    src.push_str("x\n");
    for _ in 0..1000 {
        src.push_str("#endif\n");
    }
    let (s, d) = pp(&src);
    assert_eq!(s, "x");
    assert!(errors(&d).iter().any(|m| m.contains("nested too deeply")));
    // Unterminated deep nesting: bounded number of diagnostics.
    let (_, d) = pp(&"#if 1\n".repeat(1000));
    assert!(d.has_errors());
    // Deep expressions.
    let (_, d) = pp(&format!("#if {}1{}\n#endif\n", "(".repeat(5000), ")".repeat(5000)));
    assert!(errors(&d)[0].contains("nested too deeply"));
    let (_, d) = pp(&format!("#if {}1\n#endif\n", "-".repeat(5000)));
    assert!(d.has_errors());
    let (_, d) = pp(&format!("#if {}1\n#endif\n", "1 ? ".repeat(5000)));
    assert!(d.has_errors());
}

#[test]
fn exponential_expansion_stops() {
    let mut src = String::from("#define X0 a a\n");
    for i in 1..=40 {
        src.push_str(&format!("#define X{i} X{} X{}\n", i - 1, i - 1));
    }
    src.push_str("X40\n");
    let (toks, d, _, _) = run(&src);
    assert!(errors(&d).iter().any(|m| m.contains("macro expansion too large")), "{:?}", d.items);
    assert_eq!(errors(&d).len(), 1);
    assert!(toks.len() <= MAX_OUTPUT_TOKENS + 1);

    // Same with function-like macros nested in arguments.
    let mut src = String::from("#define D(x) x x\n");
    src.push_str(&"D(".repeat(60));
    src.push('a');
    src.push_str(&")".repeat(60));
    let (_, d) = pp(&src);
    assert!(d.has_errors());

    // Arguments nested very deeply.
    let mut src = String::from("#define F(x) x\n");
    src.push_str(&"F(".repeat(3000));
    src.push('a');
    src.push_str(&")".repeat(3000));
    let (_, d) = pp(&src);
    assert!(errors(&d)[0].contains("nested too deeply"), "{:?}", d.items);

    // Growing pasted and stringified tokens.
    let mut src = String::from("#define P(x) x##x\n#define D(x) P(x)\n#define S(x) #x\n#define T(x) S(x)\n");
    src.push_str(&format!("{}a{}\n", "D(".repeat(40), ")".repeat(40)));
    src.push_str(&format!("{}a{}\n", "T(".repeat(40), ")".repeat(40)));
    let (_, d) = pp(&src);
    assert!(d.has_errors());
}

#[test]
fn garbage_input_finishes() {
    let mut state: u64 = 0x1234_5678_9abc_def0;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let alphabet = b"#()##,.\n\\ \"'abAB_0123<>?:!&|+-*/%defineifelsndfudcluA";
    for round in 0..200 {
        let len = (next() % 400) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                let r = next();
                if round % 2 == 0 {
                    alphabet[(r % alphabet.len() as u64) as usize]
                } else {
                    (r & 0xff) as u8
                }
            })
            .collect();
        let src = String::from_utf8_lossy(&bytes).into_owned();
        let (toks, _, _, _) = run(&src);
        assert_eq!(toks.last().map(|t| &t.kind), Some(&TokenKind::Eof));
    }
    // Structured garbage through the directive machinery.
    for src in [
        "#define F(x) F(x\nF(F(F(",
        "#define A(x) #\n#define B(x, ...) __VA_ARGS__ ## x\nB(1) B(,) B()",
        "#define F(...) __VA_ARGS__\nF(F(F()))",
        "#if defined\n#endif\n#if defined(\n#endif\n#if __has_include(\n#endif",
        "#define CAT(a,b) a##b\nCAT(CAT(1,2),3) CAT(\"a\",\"b\") CAT(.,.)",
        "#define f(x) x\nf(\n#define Y 1\nY)",
        "#endif\n#else\n#elif\n#if 1 ? \n#endif",
    ] {
        let (toks, _, _, _) = run(src);
        assert_eq!(toks.last().map(|t| &t.kind), Some(&TokenKind::Eof));
    }
}

#[test]
fn mlx_style_macros() {
    let src = r#"#include <metal_stdlib>
#define MLX_MTL_CONST static constant constexpr const
#define MLX_MTL_PRAGMA_UNROLL _Pragma("clang loop unroll(full)")
#define NAME(tname, type) k_##tname##_##type
#define instantiate_kernel(name, func, ...) \
  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;
MLX_MTL_CONST int n = 4;
MLX_MTL_PRAGMA_UNROLL
for (;;) {}
int NAME(add, float32);
instantiate_kernel("copy_" #x, copy, float, 4)
"#;
    assert_eq!(
        ok_user(src),
        "static constant constexpr const int n = 4 ; for ( ; ; ) { } int k_add_float32 ; \
         template [ [ host_name ( \"copy_\" # x ) ] ] [ [ kernel ] ] decltype ( copy < float , 4 > ) copy < float , 4 > ;"
    );
    let (toks, _, _, _) = run("a b\n  c");
    assert!(toks[0].line_start && !toks[1].line_start && toks[2].line_start);
    assert!(toks[1].space_before && toks[2].space_before);
}

#[test]
fn floods_stay_bounded() {
    let (_, d) = pp(&"#warning w\n".repeat(1000));
    assert!(d.items.len() <= MAX_WARNINGS);
    // `__LINE__` on one very long line (quadratic rescans would show
    // as a hang here; speed itself is the `lint` benchmark's business).
    let (toks, d, _, _) = run(&"__LINE__ ".repeat(100_000));
    assert!(!d.has_errors());
    assert_eq!(toks.len(), 100_001);
}

#[test]
fn structured_fuzz_finishes() {
    let pieces: &[&str] = &[
        "\n#define ",
        "\n#undef ",
        "\n#if ",
        "\n#ifdef ",
        "\n#elif ",
        "\n#else",
        "\n#endif",
        "\n",
        " ",
        "(",
        ")",
        ",",
        "##",
        "#",
        "...",
        "__VA_ARGS__",
        "A",
        "B",
        "F",
        "G",
        "x",
        "1",
        "0",
        "defined",
        "&&",
        "?",
        ":",
        "/",
        "\"s\"",
        "F(",
        "F(F(",
        "G(F, G)",
        "\n#define F(x) F(x) x x\n",
        "\n#define A A A B\n",
        "\n#define B A F(B)\n",
        "\n#define G(x, ...) #x x##__VA_ARGS__ G\n",
        "_Pragma",
        "__LINE__",
        "1.5",
        "-",
        "<",
        ">",
        "\n#include ",
        "\\\n",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..300 {
        let len = (next() % 120) as usize;
        let src: String = (0..len).map(|_| pieces[(next() % pieces.len() as u64) as usize]).collect();
        let (toks, _, _, _) = run(&src);
        assert_eq!(toks.last().map(|t| &t.kind), Some(&TokenKind::Eof));
    }
}

#[test]
fn large_file_expands_linearly() {
    // Speed is measured by the `lint` benchmark; here: 5,000 macro-heavy
    // lines give tokens in proportion to the lines, not more.
    let mut src = String::from("#include <metal_stdlib>\n#define TILE 16\n#define IDX(r, c) ((r) * TILE + (c))\n");
    for i in 0..5000 {
        src.push_str(&format!("    out[IDX(gid.y, {i})] = in[IDX(gid.x, {i})] * 2.0f + TILE; // line\n"));
    }
    let (toks, d, _, _) = run(&src);
    assert!(!d.has_errors());
    let per_line = toks.len() / 5000;
    assert!((20..=40).contains(&per_line), "{per_line} tokens per line");
}
