use super::*;
use gpu::ir::ParamKind;

/// The pointee type of `kernel k`'s parameter `name`, with the type tables.
fn param_type(src: &str, name: &str) -> (Type, TypeTables) {
    let c = msl::compile("t.metal", src, &msl::CompileOptions::default());
    let program = c.program.unwrap_or_else(|| panic!("{:?}", c.diagnostics.items));
    let (kid, _) = program.kernel("k").unwrap();
    let k = gpu::lower::lower_kernel(&program, kid).unwrap();
    let p = k.params.iter().find(|p| p.name == name).unwrap();
    let ParamKind::Buffer { pointee, .. } = &p.kind else { panic!("not a buffer") };
    (pointee.clone(), program.types.clone())
}

const PARAMS: &str = r#"
#include <metal_stdlib>
using namespace metal;
enum class Mode : uchar { Sum = 0, Max = 7 };
struct Params { uint n; float3 scale; half h; Mode mode; int2 shape[2]; float2x2 m; };
kernel void k(constant Params& p [[buffer(0)]], device float2* v [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    v[i] = p.scale.xy * float(p.n);
}
"#;

#[test]
fn a_struct_is_laid_out_at_metals_offsets() {
    let (ty, tables) = param_type(PARAMS, "p");
    let v: Value = serde_json::from_str(
        r#"{"n": 7, "scale": [1.5, 2, -3], "h": 0.5, "mode": "Max", "shape": [[1, 2], [3, -4]], "m": [[1, 2], [3, 4]]}"#,
    )
    .unwrap();
    let b = json_to_bytes(&v, &ty, &tables, false, "p").unwrap();
    assert_eq!(b.len() as u64, tables.size_of(&ty));
    let def = tables.struct_def(match ty {
        Type::Struct(id) => id,
        _ => unreachable!(),
    });
    let at = |name: &str| def.fields.iter().find(|f| f.name == name).unwrap().offset as usize;
    let f32_at = |o: usize| f32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    let i32_at = |o: usize| i32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    assert_eq!(u32::from_le_bytes(b[at("n")..at("n") + 4].try_into().unwrap()), 7);
    // float3 is 16-byte aligned.
    assert_eq!(at("scale") % 16, 0);
    assert_eq!([f32_at(at("scale")), f32_at(at("scale") + 4), f32_at(at("scale") + 8)], [1.5, 2.0, -3.0]);
    assert_eq!(half::f16::from_le_bytes([b[at("h")], b[at("h") + 1]]).to_f32(), 0.5);
    assert_eq!(b[at("mode")], 7);
    assert_eq!((0..4).map(|i| i32_at(at("shape") + 4 * i)).collect::<Vec<_>>(), [1, 2, 3, -4]);
    assert_eq!((0..4).map(|i| f32_at(at("m") + 4 * i)).collect::<Vec<_>>(), [1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn mistakes_are_named_by_path() {
    let (ty, tables) = param_type(PARAMS, "p");
    let err = |json: &str| json_to_bytes(&serde_json::from_str(json).unwrap(), &ty, &tables, false, "p").unwrap_err();
    let ok = r#""scale": [1, 2, 3], "h": 0, "mode": 0, "shape": [[1, 2], [3, 4]], "m": [[1, 2], [3, 4]]"#;
    assert!(err(&format!(r#"{{{ok}}}"#)).contains("field `n` of `Params` is missing"), "{}", err(&format!("{{{ok}}}")));
    assert!(err(&format!(r#"{{"n": 1, "extra": 2, {ok}}}"#)).contains("has no field `extra`"));
    assert!(err(&format!(r#"{{"n": -1, {ok}}}"#)).contains("`p.n`: -1 does not fit in a `uint`"));
    assert!(err(&format!(r#"{{"n": 1.5, {ok}}}"#)).contains("`p.n` must be a whole number"));
    let bad_mode = ok.replace(r#""mode": 0"#, r#""mode": "Min""#);
    assert!(err(&format!(r#"{{"n": 1, {bad_mode}}}"#)).contains("`Min` is not a value of enum `Mode` (its values: Sum, Max)"));
    let short = ok.replace("[1, 2, 3]", "[1, 2]");
    assert!(err(&format!(r#"{{"n": 1, {short}}}"#)).contains("`p.scale` needs a 3-element vector, but 2 were given"));
    assert!(err("[1, 2]").contains("give a JSON object with its fields (n, scale, h, mode, shape, m)"));
}

#[test]
fn a_buffer_takes_a_list_of_values_or_one() {
    let (ty, tables) = param_type(PARAMS, "v");
    let two = json_to_bytes(&serde_json::from_str("[[1, 2], [3, 4]]").unwrap(), &ty, &tables, true, "v").unwrap();
    assert_eq!(two.len(), 16);
    let one = json_to_bytes(&serde_json::from_str("[5, 6]").unwrap(), &ty, &tables, true, "v").unwrap();
    assert_eq!(one, [5f32.to_le_bytes(), 6f32.to_le_bytes()].concat());
    let err = json_to_bytes(&serde_json::from_str("[[1, 2], [3]]").unwrap(), &ty, &tables, true, "v").unwrap_err();
    assert!(err.contains("`v[1]` needs a 2-element vector, but 1 were given"), "{err}");
}

#[test]
fn floats_accept_spelled_out_infinities() {
    let b = json_to_bytes(&serde_json::from_str(r#""-inf""#).unwrap(), &Type::Scalar(Scalar::Float), &TypeTables::default(), false, "x")
        .unwrap();
    assert_eq!(f32::from_le_bytes(b.try_into().unwrap()), f32::NEG_INFINITY);
    let bf = json_to_bytes(&Value::from(1.0), &Type::Scalar(Scalar::BFloat), &TypeTables::default(), false, "x").unwrap();
    assert_eq!(bf, half::bf16::from_f32(1.0).to_le_bytes());
}
