use super::tests::parse_src;
use crate::ast::ItemKind;
use crate::pretty;

fn stmt_text(body: &str) -> String {
    let (u, d) = parse_src(&format!("void f() {{\n{body}\n}}\n"));
    assert!(d.items.is_empty(), "{body}: {:#?}", d.items);
    pretty::unit_to_string(&u)
}

#[test]
fn unknown_templates_with_type_arguments() {
    let t = stmt_text("x = k<float>(1); y = a < float(b) && c > d; z = q<int>::v;");
    assert!(t.contains("x = k<float >(1);"), "{t}");
    assert!(t.contains("y = ((a < float(b)) && (c > d));"), "{t}");
    assert!(t.contains("z = q<int >::v;"), "{t}");
    let (u, d) = parse_src("template void f<int>(int);\ntemplate [[host_name(\"k\")]] [[kernel]] decltype(k<float>) k<float>;\n");
    assert!(d.items.is_empty(), "{:#?}", d.items);
    assert_eq!(u.items.len(), 2);
}

#[test]
fn recovery_gives_one_error_per_mistake() {
    let src = "kernel void k(device float* o) {\n  if (o[0] > 1 {\n    o[0] = 2;\n  }\n  o[1] = 3;\n  float a = ;\n  o[2] = a;\n}\nkernel void j() { int x = 1 }\n";
    let (u, d) = parse_src(src);
    assert_eq!(d.items.len(), 3, "{:#?}", d.items);
    assert_eq!(u.items.len(), 2);
    let src = "kernel void k(device float* o [[buffer(0)]] {\n  o[0] = f(1, 2;\n  o[1] = 2;\n}\nfloat g() { return 1; }\n";
    let (u, d) = parse_src(src);
    assert_eq!(d.items.len(), 2, "{:#?}", d.items);
    assert_eq!(u.items.len(), 2);
    let (u, d) = parse_src("namespace a::b { constant int Z = 1; }");
    assert!(d.items.is_empty(), "{:#?}", d.items);
    assert_eq!(pretty::unit_to_string(&u), "namespace a {\n    namespace b {\n        constant int Z = 1;\n    }\n}\n");
    let (u, d) = parse_src("struct S { float x; };\nstruct S make();\nconstant struct S* none = nullptr;\nstruct S s;\n");
    assert!(d.items.is_empty(), "{:#?}", d.items);
    assert!(matches!(u.items[1].kind, ItemKind::Function(_)));
    assert!(matches!(u.items[3].kind, ItemKind::Vars(_)));
    let (_, d) = parse_src("void f(struct S* p, enum E e) { struct S* q = p; }");
    assert!(d.items.is_empty(), "{:#?}", d.items);
}
