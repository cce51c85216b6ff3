use super::*;
use crate::lex;
use crate::pretty::{self, erase_expr_spans, erase_unit_spans};
use crate::source::{FileId, SourceFile};

/// Lex and drop preprocessor directive lines (what the preprocessor does
/// for `#include <metal_stdlib>` and friends).
pub(crate) fn tokens(src: &str) -> Vec<Token> {
    let mut d = Diagnostics::new();
    let toks = lex::lex(FileId(0), src, &mut d);
    let mut out = Vec::new();
    let mut in_directive = false;
    for t in toks {
        if t.line_start {
            in_directive = t.is_punct(Punct::Hash);
        }
        if !in_directive || t.kind == TokenKind::Eof {
            out.push(t);
        }
    }
    out
}

pub(crate) fn parse_src(src: &str) -> (TranslationUnit, Diagnostics) {
    let mut d = Diagnostics::new();
    let u = parse(&tokens(src), &mut d);
    (u, d)
}

fn ok(src: &str) -> TranslationUnit {
    let (u, d) = parse_src(src);
    assert!(d.items.is_empty(), "unexpected errors for:\n{src}\n{:#?}", d.items);
    u
}

fn expr_of(src: &str) -> Expr {
    let mut d = Diagnostics::new();
    let e = parse_expression(&tokens(src), &mut d);
    assert!(d.items.is_empty(), "errors for {src}: {:#?}", d.items);
    e
}

fn show(src: &str) -> String {
    pretty::expr_to_string(&expr_of(src))
}

/// Line (1-based) of the first error.
fn first_error_line(src: &str) -> (u32, String) {
    let (_, d) = parse_src(src);
    let e = d.items.first().unwrap_or_else(|| panic!("expected an error for:\n{src}"));
    let f = SourceFile::new("t.metal", src);
    (f.line_col(e.span.lo).0, e.message.clone())
}

fn body_stmts(u: &TranslationUnit) -> &[Stmt] {
    for it in &u.items {
        if let ItemKind::Function(f) = &it.kind {
            if let Some(b) = &f.body {
                return &b.stmts;
            }
        }
    }
    panic!("no function body");
}

fn func(u: &TranslationUnit, i: usize) -> &Function {
    match &u.items[i].kind {
        ItemKind::Function(f) => f,
        ItemKind::Template { item, .. } => match &item.kind {
            ItemKind::Function(f) => f,
            k => panic!("not a function: {k:?}"),
        },
        k => panic!("not a function: {k:?}"),
    }
}

#[test]
fn precedence_and_associativity() {
    assert_eq!(show("a + b * c"), "(a + (b * c))");
    assert_eq!(show("a - b - c"), "((a - b) - c)");
    assert_eq!(show("a = b = c"), "(a = (b = c))");
    assert_eq!(show("a += b -= c"), "(a += (b -= c))");
    assert_eq!(show("a || b && c | d ^ e & f == g < h << i + j * k"), "(a || (b && (c | (d ^ (e & (f == (g < (h << (i + (j * k))))))))))");
    assert_eq!(show("a ? b : c ? d : e"), "(a ? b : (c ? d : e))");
    assert_eq!(show("a, b = c"), "(a, (b = c))");
    assert_eq!(show("-a++"), "(-(a++))");
    assert_eq!(show("!~*&x"), "(!(~(*(&x))))");
    assert_eq!(show("++i + i--"), "((++i) + (i--))");
    assert_eq!(show("a < b > c"), "((a < b) > c)");
    assert_eq!(show("x >> 2 >= y"), "((x >> 2) >= y)");
    assert_eq!(show("p->q.r[3](1, 2)"), "p->q.r[3](1, 2)");
}

#[test]
fn casts_and_templates() {
    assert_eq!(show("(float)x * 2"), "(((float)x) * 2)");
    assert_eq!(show("(const device uint*)f"), "((const device uint*)f)");
    assert_eq!(show("(a) * b"), "(a * b)");
    assert_eq!(show("static_cast<int>(x)"), "static_cast<int >(x)");
    assert_eq!(show("reinterpret_cast<device float*>(p)"), "reinterpret_cast<device float* >(p)");
    assert_eq!(show("float4(a, b)"), "float4(a, b)");
    assert_eq!(show("uint2{1, 2}"), "uint2{1, 2}");
    assert_eq!(show("as_type<uint>(x)"), "as_type<uint >(x)");
    assert_eq!(show("make_filled_simdgroup_matrix<float, 8, 8>(0.0f)"), "make_filled_simdgroup_matrix<float, 8, 8 >(0.0f)");
    assert_eq!(show("metal::numeric_limits<float>::max()"), "metal::numeric_limits<float >::max()");
    assert_eq!(show("metal::fast::exp(x)"), "metal::fast::exp(x)");
    assert_eq!(show("vec<float, 4>(1)"), "vec<float, 4 >(1)");
    assert_eq!(show("sizeof(float4)"), "sizeof(float4)");
    assert_eq!(show("sizeof x"), "sizeof(x)");
    assert_eq!(show("sizeof(x)"), "sizeof(x)");
    assert_eq!(show("alignof(float3)"), "alignof(float3)");
    assert_eq!(show("true && !false || nullptr == this"), "((true && (!false)) || (nullptr == this))");
    assert_eq!(show("metal::float4(1)"), "metal::float4(1)");
    // Nested template arguments close with a split `>>`.
    let e = expr_of("vec<vec<float, 2>, 2>(0)");
    assert!(matches!(e.kind, ExprKind::Cast { kind: CastKind::Functional, .. }));
    let e = expr_of("as_type<vec<float,2>>(x)");
    assert!(matches!(e.kind, ExprKind::Call { .. }));
    // Not a template: plain less-than.
    assert_eq!(show("foo<bar>(x)"), "((foo < bar) > x)");
    assert_eq!(show("'a' + \"s\\n\""), "('a' + \"s\\n\")");
}

#[test]
fn literals() {
    let e = expr_of("0x1Fu");
    assert_eq!(e.kind, ExprKind::IntLit { value: 31, unsigned: true, long: false, decimal: false });
    let e = expr_of("2.5f");
    assert_eq!(e.kind, ExprKind::FloatLit { value: 2.5, suffix: crate::token::FloatSuffix::F });
    assert!(matches!(expr_of("{1, 2}").kind, ExprKind::InitList(ref v) if v.len() == 2));
}

#[test]
fn functions_and_attributes() {
    let u = ok("#include <metal_stdlib>\nusing namespace metal;\n\
            kernel void k(device float* out [[buffer(0)]], uint id [[thread_position_in_grid]]) { out[id] = 1.0f; }\n\
            [[kernel]] void k2(const device float4* in [[buffer(1)]]) {}\n\
            [[max_total_threads_per_threadgroup(1024)]] kernel void k3() {}\n\
            inline float f(float);\n\
            static constexpr float g(float x) { return x; }\n\
            __attribute__((always_inline)) float h(float x, int) { return x; }\n\
            float v(void) { return 0; }\n");
    assert!(matches!(u.items[0].kind, ItemKind::UsingNamespace(_)));
    let k = func(&u, 1);
    assert!(k.is_kernel);
    assert_eq!(k.params.len(), 2);
    assert_eq!(&*k.params[0].attrs[0].name.name, "buffer");
    assert_eq!(&*k.params[1].attrs[0].name.name, "thread_position_in_grid");
    assert!(func(&u, 2).is_kernel);
    let k3 = func(&u, 3);
    assert!(k3.is_kernel);
    assert_eq!(&*k3.attrs[0].name.name, "max_total_threads_per_threadgroup");
    assert!(func(&u, 4).is_inline && func(&u, 4).body.is_none());
    assert!(func(&u, 5).is_static && func(&u, 5).is_constexpr);
    assert_eq!(func(&u, 6).params.len(), 2);
    assert!(func(&u, 7).params.is_empty());
}

#[test]
fn types_in_any_order() {
    let u = ok("void f(const device float* a, device const float* b, float const* c, \
            device float* const d, thread const float& e, volatile device atomic_int* g, \
            unsigned int h, unsigned i, signed char j, long long k, unsigned long l, short int m, \
            float arr[4], metal::float4 n, constant Params& p, threadgroup float* t);");
    let f = func(&u, 0);
    let s: Vec<String> = f.params.iter().map(|p| pretty::type_to_string(&p.ty)).collect();
    assert_eq!(
        s,
        [
            "const device float*",
            "const device float*",
            "const float*",
            "device float* const",
            "const thread float&",
            "volatile device atomic_int*",
            "uint",
            "uint",
            "char",
            "long",
            "ulong",
            "short",
            "float[4]",
            "metal::float4",
            "constant Params&",
            "threadgroup float*",
        ]
    );
}

#[test]
fn declarations() {
    let u = ok("kernel void k(device float* o) {\n\
            float a = 1, *p = &a, b[4];\n\
            int k{a};\n\
            float4 c(1, 2, 3, 4);\n\
            constexpr float kk = 2;\n\
            threadgroup float tile[32][33];\n\
            static constexpr int N = 4;\n\
            using T = float;\n\
            typedef int I;\n\
            T x = 1; I y = 2;\n\
            float(x) * 2;\n\
            float4(1) + 2;\n\
            Foo unknown;\n\
            const float z = 0;\n\
            a * b;\n\
        }");
    let st = body_stmts(&u);
    let StmtKind::Decl(v) = &st[0].kind else { panic!() };
    assert_eq!(v.len(), 3);
    assert_eq!(pretty::type_to_string(&v[1].ty), "float*");
    assert_eq!(pretty::type_to_string(&v[2].ty), "float[4]");
    let StmtKind::Decl(v) = &st[1].kind else { panic!() };
    assert!(matches!(v[0].init, Some(Init::Brace(..))));
    let StmtKind::Decl(v) = &st[2].kind else { panic!() };
    assert!(matches!(v[0].init, Some(Init::Paren(ref a, _)) if a.len() == 4));
    let StmtKind::Decl(v) = &st[3].kind else { panic!() };
    assert!(v[0].is_constexpr);
    let StmtKind::Decl(v) = &st[4].kind else { panic!() };
    assert_eq!(pretty::declarator_to_string(&v[0].ty, "tile"), "threadgroup float tile[32][33]");
    let StmtKind::Decl(v) = &st[5].kind else { panic!() };
    assert!(v[0].is_static && v[0].is_constexpr);
    assert!(matches!(st[6].kind, StmtKind::Alias(_)));
    assert!(matches!(st[7].kind, StmtKind::Alias(_)));
    assert!(matches!(st[8].kind, StmtKind::Decl(_)));
    assert!(matches!(st[10].kind, StmtKind::Expr(_)));
    assert!(matches!(st[11].kind, StmtKind::Expr(_)));
    assert!(matches!(st[12].kind, StmtKind::Decl(_)));
    assert!(matches!(st[13].kind, StmtKind::Decl(_)));
    assert!(matches!(st[14].kind, StmtKind::Expr(_)));
}

#[test]
fn control_flow() {
    let u = ok("void f(int n) {\n\
            if (n) n = 1; else { n = 2; }\n\
            for (uint i = 0, j = 1; i < 4; ++i, j++) {}\n\
            for (n = 0; ; ) break;\n\
            for (;;) { continue; }\n\
            while (n < 3) n++;\n\
            do { n--; } while (n > 0);\n\
            switch (n) { case 1: n = 2; break; case 2 + 1: default: break; }\n\
            return;\n\
            ;\n\
            static_assert(sizeof(int) == 4, \"int\");\n\
        }");
    let st = body_stmts(&u);
    assert!(matches!(st[0].kind, StmtKind::If { els: Some(_), .. }));
    let StmtKind::For { init: Some(init), .. } = &st[1].kind else { panic!() };
    assert!(matches!(&init.kind, StmtKind::Decl(v) if v.len() == 2));
    assert!(matches!(st[2].kind, StmtKind::For { init: Some(_), cond: None, step: None, .. }));
    assert!(matches!(st[4].kind, StmtKind::While { .. }));
    assert!(matches!(st[5].kind, StmtKind::DoWhile { .. }));
    let StmtKind::Switch { body, .. } = &st[6].kind else { panic!() };
    let StmtKind::Block(b) = &body.kind else { panic!() };
    assert!(matches!(b.stmts[0].kind, StmtKind::Case(_)));
    assert!(b.stmts.iter().any(|s| matches!(s.kind, StmtKind::Default)));
    assert!(matches!(st[7].kind, StmtKind::Return(None)));
    assert!(matches!(st[8].kind, StmtKind::Empty));
    assert!(matches!(st[9].kind, StmtKind::StaticAssert { message: Some(_), .. }));
}

#[test]
fn structs_enums_aliases_namespaces() {
    let u = ok("struct S { float2 pos; float m[4]; float2 advance(float dt) const { return pos * dt; } \
            S(float a) : m{a} {} static constexpr int K = 4; using T = float; T t; };\n\
            class C { public: float x; private: int y; };\n\
            struct [[attr]] F;\n\
            enum Color { RED, GREEN = 5, };\n\
            enum class Op : uint { Add = 0, Sub };\n\
            typedef float real;\n\
            using vec2 = float2;\n\
            namespace a { namespace b { constant int Z = 1; } }\n\
            namespace { float helper(real x) { return x; } }\n\
            using metal::fast::exp;\n\
            constant float k = 1.0f;\n\
            constant constexpr int N = 4;\n\
            constant uint LUT[4] = {1u, 2u, 3u, 4u};\n\
            constant S P = {0.25f, 3u};\n\
            constexpr constant int X = 1;\n\
            float scale = 2.0f;\n\
            static_assert(N == 4, \"n\");\n\
            ;\n\
            Color c = RED;\n\
            Op o = Op::Add;\n");
    let ItemKind::Struct(s) = &u.items[0].kind else { panic!() };
    assert_eq!(s.members.len(), 7);
    assert!(matches!(s.members[2].kind, MemberKind::Method(ref f) if f.is_const_method));
    assert!(matches!(s.members[3].kind, MemberKind::Constructor { ref inits, .. } if inits.len() == 1));
    assert!(matches!(s.members[4].kind, MemberKind::StaticConst(_)));
    assert!(matches!(s.members[5].kind, MemberKind::Alias(_)));
    let ItemKind::Struct(c) = &u.items[1].kind else { panic!() };
    assert_eq!(c.members.len(), 2);
    assert!(matches!(u.items[2].kind, ItemKind::Struct(Struct { is_forward: true, .. })));
    let ItemKind::Enum(e) = &u.items[3].kind else { panic!() };
    assert_eq!(e.enumerators.len(), 2);
    let ItemKind::Enum(e) = &u.items[4].kind else { panic!() };
    assert!(e.scoped && e.underlying.is_some());
    assert!(matches!(u.items[5].kind, ItemKind::Alias(_)));
    assert!(matches!(u.items[6].kind, ItemKind::Alias(_)));
    assert!(matches!(u.items[7].kind, ItemKind::Namespace { .. }));
    assert!(matches!(u.items[8].kind, ItemKind::Namespace { name: None, .. }));
    assert!(matches!(u.items[9].kind, ItemKind::UsingDecl(_)));
    let ItemKind::Vars(v) = &u.items[10].kind else { panic!() };
    assert_eq!(pretty::type_to_string(&v[0].ty), "constant float");
    let ItemKind::Vars(v) = &u.items[11].kind else { panic!() };
    assert!(v[0].is_constexpr);
    let ItemKind::Vars(v) = &u.items[14].kind else { panic!() };
    assert!(v[0].is_constexpr);
    assert!(matches!(u.items[15].kind, ItemKind::Vars(_)));
    assert!(matches!(u.items[16].kind, ItemKind::StaticAssert { .. }));
    assert!(matches!(u.items[17].kind, ItemKind::Empty));
}

#[test]
fn templates() {
    let u = ok("template <typename T, int N = 4, class U> T power(T x) { return x; }\n\
            template <typename T> struct Pair { T a; T b; T sum() const { return a + b; } };\n\
            template <typename T> struct Limits;\n\
            template <> struct Limits<float> { static constexpr float max = 1.0f; };\n\
            template <> float power<float, 2, int>(float x) { return x * x; }\n\
            template void power<int, 3, int>(int);\n\
            template <typename T> T Limits_max() { return Limits<T>::max; }\n\
            kernel void k(device float* o) {\n\
                Pair<float> p = {o[0], 1.0f};\n\
                Pair<Pair<float>> q;\n\
                o[1] = power<float, 3>(o[0]) + p.sum() + q.a.a;\n\
                o[2] = Pair<float>{1, 2}.sum();\n\
            }\n");
    let ItemKind::Template { params, .. } = &u.items[0].kind else { panic!() };
    assert_eq!(params.len(), 3);
    assert!(matches!(params[1].kind, TemplateParamKind::Value { default: Some(_), .. }));
    let ItemKind::Template { params, .. } = &u.items[3].kind else { panic!() };
    assert!(params.is_empty());
    assert!(matches!(u.items[5].kind, ItemKind::ExplicitInstantiation { .. }));
    let st = body_stmts(&u);
    assert!(matches!(st[0].kind, StmtKind::Decl(_)));
    assert!(matches!(st[1].kind, StmtKind::Decl(_)));
}

#[test]
fn error_missing_semicolon_is_on_its_line() {
    let src = "kernel void k(device float* o) {\n    float a = 1\n    o[0] = a;\n}\n";
    let (line, msg) = first_error_line(src);
    assert_eq!(line, 2, "{msg}");
    assert!(msg.contains("expected `;`"), "{msg}");
    let (_, d) = parse_src(src);
    assert_eq!(d.items.len(), 1, "{:#?}", d.items);
    let src = "kernel void k(device float* o) {\n    o[0] = 1\n\n\n}\n";
    assert_eq!(first_error_line(src).0, 2);
    let src = "constant float k = 1.0f\nkernel void k() {}\n";
    assert_eq!(first_error_line(src).0, 1);
}

#[test]
fn error_missing_paren() {
    let src = "kernel void k(device float* o) {\n    o[0] = (1 + 2;\n}\n";
    let (_, d) = parse_src(src);
    let e = &d.items[0];
    assert!(e.message.contains("expected `)`"), "{}", e.message);
    assert_eq!(e.secondary.len(), 1);
    assert_eq!(e.secondary[0].span.lo, src.find('(').map(|_| src.find("(1").unwrap() as u32).unwrap());
    assert_eq!(first_error_line(src).0, 2);
    let src = "kernel void k(device float* o) {\n    if (o[0] > 1 {\n        o[0] = 2;\n    }\n}\n";
    assert_eq!(first_error_line(src).0, 2);
    let (_, d) = parse_src(src);
    assert_eq!(d.items.len(), 1, "{:#?}", d.items);
}

#[test]
fn error_extra_brace() {
    let src = "kernel void k(device float* o) {\n    o[0] = 1;\n}\n}\nkernel void j() {}\n";
    let (line, msg) = first_error_line(src);
    assert_eq!(line, 4);
    assert!(msg.contains("unexpected `}` at file scope"), "{msg}");
    let (u, d) = parse_src(src);
    assert_eq!(d.items.len(), 1);
    assert_eq!(u.items.len(), 2);
}

#[test]
fn unsupported_keywords() {
    for (src, kw) in [
        ("void f() {\n  goto end;\n}", "goto"),
        ("void f() {\n  try { } catch (...) {}\n}", "try"),
        ("void f() {\n  throw 1;\n}", "throw"),
        ("void f() {\n  int* p = new int;\n}", "new"),
        ("void f(int* p) {\n  delete p;\n}", "delete"),
        ("struct S {\n  virtual void f();\n};", "virtual"),
        ("void f(int* p) {\n  int* q = dynamic_cast<int*>(p);\n}", "dynamic_cast"),
        ("void f(int p) {\n  typeid(p);\n}", "typeid"),
        ("void f() {\n  asm(\"nop\");\n}", "asm"),
    ] {
        let (_, d) = parse_src(src);
        let e = d.items.first().unwrap_or_else(|| panic!("no error for {src}"));
        let at = &src[e.span.lo as usize..e.span.hi as usize];
        assert_eq!(at, kw, "{src}: {}", e.message);
        assert!(e.message.contains("not supported"), "{}", e.message);
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let h = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(|| {
            let mut src = String::from("kernel void k() { int x = ");
            src.push_str(&"(".repeat(1_000_000));
            src.push_str("1;\n}\n");
            let (_, d) = parse_src(&src);
            assert!(d.items.iter().any(|e| e.message.contains("nested too deeply")));
            assert!(d.items.len() < 5, "{:#?}", d.items);
            let mut src = String::from("void f() {");
            src.push_str(&"{ if (1) ".repeat(100_000));
            src.push_str(&"-!~".repeat(100_000));
            let (_, d) = parse_src(&src);
            assert!(d.has_errors());
            let src = "(".repeat(200_000);
            let (_, d) = parse_src(&src);
            assert!(d.has_errors());
            let src = "namespace a { ".repeat(100_000);
            let (_, d) = parse_src(&src);
            assert!(d.items.iter().any(|e| e.message.contains("nested too deeply")));
            let src = "namespace a { struct S { void f() { ".repeat(100_000);
            let (_, d) = parse_src(&src);
            assert!(d.has_errors());
            let src = "float x = {{{{".repeat(100_000);
            let (_, d) = parse_src(&src);
            assert!(d.has_errors());
            let src = "template <".repeat(100_000);
            let (_, d) = parse_src(&src);
            assert!(d.has_errors());
            let src = "vec<".repeat(100_000);
            let mut dd = Diagnostics::new();
            let _ = parse_expression(&tokens(&src), &mut dd);
            assert!(dd.has_errors());
        })
        .unwrap();
    h.join().unwrap();
}

#[test]
fn garbage_never_panics() {
    let pieces = [
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        "[[",
        "]]",
        ";",
        ",",
        "<",
        ">",
        ">>",
        "::",
        "template",
        "struct",
        "kernel",
        "void",
        "float",
        "x",
        "1",
        "2.0f",
        "=",
        "+",
        "*",
        "&",
        "const",
        "device",
        "enum",
        "class",
        "using",
        "namespace",
        "typedef",
        "if",
        "else",
        "for",
        "while",
        "do",
        "switch",
        "case",
        "default",
        ":",
        "?",
        "return",
        "vec",
        "as_type",
        "static_cast",
        "sizeof",
        "\"s\"",
        "'c'",
        "...",
        "->",
        ".",
        "~",
        "!",
        "typename",
        "decltype",
        "operator",
        "goto",
        "#",
        "static_assert",
        "__attribute__",
        "++",
        "--",
    ];
    let mut seed: u64 = 0x1234_5678_9abc_def0;
    for _ in 0..300 {
        let mut src = String::new();
        let n = (seed % 200) as usize;
        for _ in 0..n {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            src.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            src.push(if seed >> 61 == 0 { '\n' } else { ' ' });
        }
        let (_, d) = parse_src(&src);
        assert!(d.items.len() <= crate::diag::MAX_ERRORS + 1);
    }
    // Empty token stream and one without Eof.
    let mut d = Diagnostics::new();
    let _ = parse(&[], &mut d);
    let toks = tokens("kernel void k(");
    let _ = parse(&toks[..toks.len() - 1], &mut d);
}

// ----- real kernels -----

pub(crate) const KERNELS: &[&str] = &[
    r#"#include <metal_stdlib>
using namespace metal;
template <typename T>
[[kernel]] void custom_kernel_myexp_float(
  const device T* inp [[buffer(0)]],
  device T* out [[buffer(1)]],
  uint3 thread_position_in_grid [[thread_position_in_grid]]) {
  uint elem = thread_position_in_grid.x;
  T tmp = inp[elem];
  out[elem] = metal::exp(tmp);
}
template [[host_name("custom_kernel_myexp_float")]] [[kernel]] decltype(custom_kernel_myexp_float<float>) custom_kernel_myexp_float<float>;
"#,
    r#"#include <metal_stdlib>
using namespace metal;
#define TILE 16
kernel void matmul(device const float* A [[buffer(0)]],
                   device const float* B [[buffer(1)]],
                   device float* C [[buffer(2)]],
                   constant uint& N [[buffer(3)]],
                   uint2 gid [[thread_position_in_grid]],
                   uint2 lid [[thread_position_in_threadgroup]]) {
    threadgroup float As[16][16];
    threadgroup float Bs[16][16];
    float acc = 0.0f;
    for (uint t = 0; t < N / 16; ++t) {
        As[lid.y][lid.x] = A[gid.y * N + t * 16 + lid.x];
        Bs[lid.y][lid.x] = B[(t * 16 + lid.y) * N + gid.x];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint k = 0; k < 16; k++) {
            acc += As[lid.y][k] * Bs[k][lid.x];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (gid.x < N && gid.y < N) {
        C[gid.y * N + gid.x] = acc;
    }
}
"#,
    r#"#include <metal_stdlib>
using namespace metal;
kernel void histogram(device const float* v [[buffer(0)]],
                      device float* o [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    uint k = uint(v[i] * 4.0f) & 3u;
    atomic_fetch_add_explicit((device atomic_float*)&o[k], v[i], memory_order_relaxed);
}
"#,
    r#"#include <metal_stdlib>
using namespace metal;
struct Body {
    float2 pos;
    float2 vel;
    float2 advance(float dt) const { return pos + vel * dt; }
};
template <typename T> struct Pair { T a; T b; T sum() const { return a + b; } };
kernel void step(device Body* bodies [[buffer(0)]], device float* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
    Body b = bodies[i];
    float v = b.advance(0.5f).x;
    Pair<float> p = {v, 1.0f};
    bodies[i] = Body{b.advance(0.1f), b.vel};
    out[i] = p.sum();
}
"#,
    r#"#include <metal_stdlib>
using namespace metal;
enum class Op : uint { Add = 0, Mul = 1, Max = 2 };
constant float3 AXIS = float3(0.0f, 0.0f, 1.0f);
kernel void apply(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                  constant Op& op [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    float r = 0.0f;
    switch (op) {
        case Op::Add: r = x[i] + AXIS.z; break;
        case Op::Mul: r = x[i] * 2.0f; break;
        default: break;
    }
    float2 v = as_type<float2>(as_type<uint2>(float2(r, r))).y;
    y[i] = v.x;
    if (i == 0) {
        y[i] = metal::numeric_limits<float>::max();
    }
}
"#,
    r#"#include <metal_stdlib>
using namespace metal;
constant uint LUT[4] = {1u, 2u, 3u, 4u};
struct Params { float scale; uint n; };
constant Params P = {0.25f, 3u};
template <typename T, int N = 4>
METAL_FUNC T power(T x) {
    T r = T(1);
    for (int i = 0, j = 0; i < N; ++i, j--) r *= x;
    return r;
}
kernel void misc(device float4* out [[buffer(0)]], threadgroup float* scratch [[threadgroup(0)]],
                 uint tid [[thread_index_in_threadgroup]], uint gid [[thread_position_in_grid]]) {
    float a = 1, *p = &a, b[4] = {0};
    int k{int(a)};
    scratch[tid] = power<float, 3>(a) + float(LUT[gid & 3]) * P.scale;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float4 c = float4(scratch[0], *p, b[1], (float)sizeof(float4));
    out[gid] = gid < 4 ? c : -c;
    do { k >>= 1; } while (k > 0);
    simdgroup_float8x8 m = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    (void)m;
}
"#,
];

#[test]
fn real_kernels_parse_cleanly() {
    for k in KERNELS {
        let k = k.replace("METAL_FUNC", "inline");
        let u = ok(&k);
        assert!(!u.items.is_empty());
    }
    let u = ok(KERNELS[0]);
    assert!(matches!(u.items.last().map(|i| &i.kind), Some(ItemKind::ExplicitInstantiation { .. })));
}

fn erased(src: &str) -> TranslationUnit {
    let mut u = ok(src);
    erase_unit_spans(&mut u);
    u
}

#[test]
fn print_reparse_is_a_fixed_point() {
    for k in KERNELS {
        let k = k.replace("METAL_FUNC", "inline");
        let u1 = erased(&k);
        let s1 = pretty::unit_to_string(&u1);
        let u2 = erased(&s1);
        let s2 = pretty::unit_to_string(&u2);
        if std::env::var_os("MSL_SHOW_PRETTY").is_some() {
            eprintln!("{s1}");
        }
        assert_eq!(s1, s2);
        assert_eq!(u1, u2, "AST changed after printing:\n{s1}");
    }
}

#[test]
fn template_template_parameters() {
    let src = "template <typename T> struct Plus { T v; };\n\
            namespace ops { template <typename T> struct Max { T v; }; }\n\
            template <template <typename> class Op, template <class...> typename Many, typename T,\n\
                template <typename, int> class = Plus, template <typename> class D = ops::Max>\n\
            struct Acc { Op<T> a; typename Many<T, T>::type b; D<T> c; };\n\
            template <template <typename> class... Ps> struct L {};\n";
    let u = ok(src);
    let ItemKind::Template { params, .. } = &u.items[2].kind else { panic!() };
    assert_eq!(params.len(), 5);
    let TemplateParamKind::Template { params: inner, default: None } = &params[0].kind else { panic!("{:?}", params[0]) };
    assert_eq!((&*params[0].name.name, inner.len()), ("Op", 1));
    let TemplateParamKind::Template { params: inner, .. } = &params[1].kind else { panic!() };
    assert!(inner[0].is_pack);
    let TemplateParamKind::Template { params: inner, default: Some(d) } = &params[3].kind else { panic!() };
    assert!(matches!(inner[1].kind, TemplateParamKind::Value { .. }));
    assert_eq!(d.plain_name(), "Plus");
    let TemplateParamKind::Template { default: Some(d), .. } = &params[4].kind else { panic!() };
    assert_eq!(d.plain_name(), "ops::Max");
    let ItemKind::Template { params, .. } = &u.items[3].kind else { panic!() };
    assert!(params[0].is_pack && matches!(params[0].kind, TemplateParamKind::Template { .. }));
    // Printing and reading again gives the same tree.
    let u1 = erased(src);
    let s1 = pretty::unit_to_string(&u1);
    assert_eq!(u1, erased(&s1), "{s1}");
    // Errors, not crashes, for broken forms.
    for bad in ["template <template class P> struct S {};", "template <template <typename> P> struct S {};"] {
        let (_, d) = parse_src(bad);
        assert!(d.has_errors(), "{bad}");
    }
}

#[test]
fn print_reparse_other_constructs() {
    let src = "struct S { float2 pos; float m[4]; float2 advance(float dt) const { return pos * dt; } \
            S(float a) : m{a} {} static constexpr int K = 4; using T = float; T t; };\n\
            enum class Op : uint { Add = 0, Sub };\n\
            namespace a { constant int Z = 1; }\n\
            typedef float real;\n\
            template <typename T, int N = 4> struct Arr { T v[N]; };\n\
            void f(const device float* a, device float* const d, thread const float& e, int n = 3) {\n\
                float x = 1, *p = &x, b[4][2];\n\
                int k{1}; float4 c(1, 2, 3, 4);\n\
                if (n) { n = 1; } else n = 2;\n\
                for (uint i = 0; i < 4; ++i) continue;\n\
                while (n) n--;\n\
                switch (n) { case 1: break; default: break; }\n\
                static_assert(true, \"x\\\"y\");\n\
                Arr<float, 2> arr;\n\
            }\n";
    let u1 = erased(src);
    let s1 = pretty::unit_to_string(&u1);
    let u2 = erased(&s1);
    assert_eq!(u1, u2, "{s1}");
}

#[test]
fn function_pointer_declarators_round_trip() {
    let src = "template <typename T> using BinOp = T (*)(T, T);\n\
            typedef float* (*Getter)(device float*, int);\n\
            template <typename T, BinOp<T> op, float (*f)(float)> T g(T a) { return op(a, a); }\n\
            float h(float x, float (*op)(float, float), float (*)(int)) {\n\
                float (*p)(float) = &sq, (*q)(float) = sq;\n\
                return op(x, (*p)(x));\n\
            }\n";
    let u1 = erased(src);
    let s1 = pretty::unit_to_string(&u1);
    let u2 = erased(&s1);
    assert_eq!(u1, u2, "{s1}");
    assert!(s1.contains("float (*op)(float, float)") && s1.contains("T (*)(T, T)"), "{s1}");
}

#[test]
fn large_file_parses() {
    let mut src = String::new();
    for i in 0..1000 {
        src.push_str(&format!(
                "kernel void k{i}(device float* o [[buffer(0)]], uint id [[thread_position_in_grid]]) {{\n  float a = o[id] * 2.0f + {i};\n  if (a > 1) {{ o[id] = a; }}\n}}\n"
            ));
    }
    let toks = tokens(&src);
    let mut d = Diagnostics::new();
    let u = parse(&toks, &mut d);
    assert!(d.items.is_empty());
    assert_eq!(u.items.len(), 1000);
}

// ----- property tests -----

use proptest::prelude::*;

fn sp() -> Span {
    Span::default()
}

fn name_expr(n: &str) -> Expr {
    Expr { kind: ExprKind::Name(simple_path(n, sp())), span: sp() }
}

fn named_ty(n: &str, is_const: bool, addr: Option<AddressSpace>) -> TypeExpr {
    TypeExpr { kind: TypeExprKind::Named { path: simple_path(n, sp()), is_const, is_volatile: false, addr_space: addr }, span: sp() }
}

fn arb_type() -> impl Strategy<Value = TypeExpr> {
    let names = prop::sample::select(vec!["float", "int", "uint", "half", "float4", "uint2", "bool", "ulong"]);
    let addr = prop::option::of(prop::sample::select(vec![
        AddressSpace::Device,
        AddressSpace::Constant,
        AddressSpace::Threadgroup,
        AddressSpace::Thread,
    ]));
    (names, any::<bool>(), addr, 0..3usize, any::<bool>()).prop_map(|(n, c, a, ptrs, pc)| {
        let mut t = named_ty(n, c, if ptrs > 0 { a } else { None });
        for _ in 0..ptrs {
            t = TypeExpr { kind: TypeExprKind::Pointer { pointee: Box::new(t), is_const: pc }, span: sp() };
        }
        t
    })
}

fn arb_leaf() -> impl Strategy<Value = Expr> {
    prop_oneof![
        prop::sample::select(vec!["a", "b", "x1", "idx", "out"]).prop_map(name_expr),
        (any::<u32>(), any::<bool>(), any::<bool>(), any::<bool>())
            .prop_map(|(v, u, l, d)| { Expr { kind: ExprKind::IntLit { value: v as u64, unsigned: u, long: l, decimal: d }, span: sp() } }),
        (
            0.0f64..1e6,
            prop::sample::select(vec![crate::token::FloatSuffix::None, crate::token::FloatSuffix::F, crate::token::FloatSuffix::H])
        )
            .prop_map(|(v, s)| {
                // The lexer gives a literal a value of its own type.
                // (half stays below its largest finite value, 65504).
                let (kind, v) =
                    if s == crate::token::FloatSuffix::H { (gpu_math::FloatKind::F16, v % 65504.0) } else { (gpu_math::FloatKind::F32, v) };
                Expr { kind: ExprKind::FloatLit { value: gpu_math::round_f64_to(kind, v) as f64, suffix: s }, span: sp() }
            }),
        any::<bool>().prop_map(|b| Expr { kind: ExprKind::BoolLit(b), span: sp() }),
        (32u32..127).prop_map(|c| Expr { kind: ExprKind::CharLit(c), span: sp() }),
        "[a-z \"\\\\]{0,6}".prop_map(|s| Expr { kind: ExprKind::StrLit(Rc::from(s.as_str())), span: sp() }),
        Just(Expr { kind: ExprKind::Null, span: sp() }),
    ]
}

fn arb_expr() -> impl Strategy<Value = Expr> {
    arb_leaf().prop_recursive(6, 64, 4, |inner| {
        let b = |k| Box::new(k);
        prop_oneof![
            (
                prop::sample::select(vec![
                    UnaryOp::Neg,
                    UnaryOp::Plus,
                    UnaryOp::Not,
                    UnaryOp::BitNot,
                    UnaryOp::Deref,
                    UnaryOp::AddrOf,
                    UnaryOp::PreInc,
                    UnaryOp::PreDec,
                    UnaryOp::PostInc,
                    UnaryOp::PostDec
                ]),
                inner.clone()
            )
                .prop_map(move |(op, e)| Expr { kind: ExprKind::Unary { op, operand: b(e) }, span: sp() }),
            (
                prop::sample::select(vec![
                    BinaryOp::Add,
                    BinaryOp::Sub,
                    BinaryOp::Mul,
                    BinaryOp::Div,
                    BinaryOp::Rem,
                    BinaryOp::Shl,
                    BinaryOp::Shr,
                    BinaryOp::BitAnd,
                    BinaryOp::BitOr,
                    BinaryOp::BitXor,
                    BinaryOp::LogAnd,
                    BinaryOp::LogOr,
                    BinaryOp::Eq,
                    BinaryOp::Ne,
                    BinaryOp::Lt,
                    BinaryOp::Gt,
                    BinaryOp::Le,
                    BinaryOp::Ge
                ]),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(op, l, r)| Expr { kind: ExprKind::Binary { op, lhs: Box::new(l), rhs: Box::new(r) }, span: sp() }),
            (prop::option::of(prop::sample::select(vec![BinaryOp::Add, BinaryOp::Shr, BinaryOp::BitXor])), inner.clone(), inner.clone())
                .prop_map(|(op, l, r)| Expr { kind: ExprKind::Assign { op, lhs: Box::new(l), rhs: Box::new(r) }, span: sp() }),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(|(c, t, e)| Expr {
                kind: ExprKind::Conditional { cond: Box::new(c), then: Box::new(t), els: Box::new(e) },
                span: sp()
            }),
            (inner.clone(), inner.clone())
                .prop_map(|(l, r)| Expr { kind: ExprKind::Comma { lhs: Box::new(l), rhs: Box::new(r) }, span: sp() }),
            (prop::sample::select(vec!["f", "metal::exp", "max"]), prop::collection::vec(inner.clone(), 0..3)).prop_map(|(f, args)| {
                let segs: Vec<PathSegment> = f.split("::").map(|s| PathSegment { ident: ident(s, sp()), template_args: None }).collect();
                let callee = Expr { kind: ExprKind::Name(Path { global: false, segments: segs, span: sp() }), span: sp() };
                Expr { kind: ExprKind::Call { callee: Box::new(callee), args }, span: sp() }
            }),
            (inner.clone(), inner.clone())
                .prop_map(|(a, i)| Expr { kind: ExprKind::Index { base: Box::new(a), index: Box::new(i) }, span: sp() }),
            (inner.clone(), prop::sample::select(vec!["x", "xy", "len"]), any::<bool>()).prop_map(|(e, n, arrow)| {
                Expr { kind: ExprKind::Member { base: Box::new(e), name: ident(n, sp()), arrow, targs: None }, span: sp() }
            }),
            (arb_type(), inner.clone()).prop_map(|(t, e)| Expr {
                kind: ExprKind::Cast { kind: CastKind::CStyle, ty: t, args: vec![e], braces: false },
                span: sp()
            }),
            (arb_type(), inner.clone(), prop::sample::select(vec![CastKind::Static, CastKind::Reinterpret, CastKind::Const]))
                .prop_map(|(t, e, k)| Expr { kind: ExprKind::Cast { kind: k, ty: t, args: vec![e], braces: false }, span: sp() }),
            (prop::sample::select(vec!["float", "float4", "uint2", "half"]), prop::collection::vec(inner.clone(), 0..3), any::<bool>())
                .prop_map(|(t, args, braces)| Expr {
                    kind: ExprKind::Cast { kind: CastKind::Functional, ty: named_ty(t, false, None), args, braces },
                    span: sp()
                }),
            (inner.clone(), prop::sample::select(vec!["float", "uint2"])).prop_map(|(e, t)| {
                let callee = Expr {
                    kind: ExprKind::Name(Path {
                        global: false,
                        segments: vec![PathSegment {
                            ident: ident("as_type", sp()),
                            template_args: Some(vec![TemplateArg::Type(named_ty(t, false, None))]),
                        }],
                        span: sp(),
                    }),
                    span: sp(),
                };
                Expr { kind: ExprKind::Call { callee: Box::new(callee), args: vec![e] }, span: sp() }
            }),
            arb_type().prop_map(|t| Expr { kind: ExprKind::SizeofType(t), span: sp() }),
            inner.clone().prop_map(|e| Expr { kind: ExprKind::SizeofExpr(Box::new(e)), span: sp() }),
            prop::collection::vec(inner, 0..3).prop_map(|v| Expr { kind: ExprKind::InitList(v), span: sp() }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn mutated_kernels_never_panic(
        k in 0..KERNELS.len(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..12, prop::sample::select(vec![
            "", "(", ")", "{", "}", "[[", "]]", ";", "<", ">>", "template", "struct", ",", "::", "const", "*",
        ])), 1..6),
    ) {
        let mut src = KERNELS[k].to_string();
        for (at, del, ins) in edits {
            let mut i = at.index(src.len() + 1);
            while !src.is_char_boundary(i) {
                i -= 1;
            }
            let mut j = (i + del).min(src.len());
            while !src.is_char_boundary(j) {
                j -= 1;
            }
            src.replace_range(i..j, ins);
        }
        let (_, d) = parse_src(&src);
        prop_assert!(d.items.len() <= crate::diag::MAX_ERRORS + 1);
    }

    #[test]
    fn printed_expressions_reparse_to_the_same_tree(e in arb_expr()) {
        let text = pretty::expr_to_string(&e);
        let mut d = Diagnostics::new();
        let mut back = parse_expression(&tokens(&text), &mut d);
        prop_assert!(d.items.is_empty(), "{text}: {:?}", d.items);
        erase_expr_spans(&mut back);
        prop_assert_eq!(back, e, "{}", text);
    }

    #[test]
    fn printed_statements_reparse(e in arb_expr(), t in arb_type(), e2 in arb_expr(), n in 0usize..4) {
        let decl_ty = match n {
            0 => t.clone(),
            _ => TypeExpr {
                kind: TypeExprKind::Array { elem: Box::new(t.clone()), size: Some(Box::new(e2.clone())) },
                span: sp(),
            },
        };
        let var = VarDecl {
            name: ident("v", sp()),
            ty: decl_ty,
            init: Some(match n { 2 => Init::Brace(vec![e.clone()], sp()), 3 => Init::Paren(vec![e.clone()], sp()), _ => Init::Assign(e.clone()) }),
            attrs: vec![],
            is_constexpr: n == 1,
            is_static: false,
            specialization: None,
            owner: None,
            span: sp(),
        };
        let stmts = vec![
            Stmt { kind: StmtKind::Decl(vec![var.clone()]), span: sp() },
            Stmt { kind: StmtKind::Expr(e.clone()), span: sp() },
            Stmt {
                kind: StmtKind::If {
                    cond: Box::new(e2.clone()),
                    then: Box::new(Stmt { kind: StmtKind::Return(Some(e.clone())), span: sp() }),
                    els: Some(Box::new(Stmt { kind: StmtKind::Block(Block { stmts: vec![], span: sp() }), span: sp() })),
                    is_constexpr: false,
                },
                span: sp(),
            },
            Stmt {
                kind: StmtKind::For {
                    init: Some(Box::new(Stmt { kind: StmtKind::Decl(vec![var.clone()]), span: sp() })),
                    cond: Some(e2.clone()),
                    step: None,
                    body: Box::new(Stmt { kind: StmtKind::Break, span: sp() }),
                },
                span: sp(),
            },
        ];
        let f = Function {
            attrs: vec![],
            is_kernel: false,
            is_inline: false,
            is_static: false,
            is_constexpr: false,
            ret: named_ty("void", false, None),
            name: simple_path("f", sp()),
            params: vec![Param {
                ty: t.clone(),
                is_pack: false,
                name: Some(ident("p", sp())),
                attrs: vec![],
                default: None,
                span: sp(),
            }],
            is_const_method: false,
            object_space: None,
            body: Some(Block { stmts, span: sp() }),
            span: sp(),
        };
        let unit = TranslationUnit { items: vec![
            Item { kind: ItemKind::Vars(vec![VarDecl { is_constexpr: false, ..var }]), span: sp() },
            Item { kind: ItemKind::Function(f), span: sp() },
        ] };
        let text = pretty::unit_to_string(&unit);
        let (mut back, d) = parse_src(&text);
        prop_assert!(d.items.is_empty(), "{text}: {:?}", d.items);
        erase_unit_spans(&mut back);
        prop_assert_eq!(back, unit, "{}", text);
    }
}
