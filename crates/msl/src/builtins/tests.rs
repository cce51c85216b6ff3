use super::*;
use crate::types::builtin_type_name;

fn ty(name: &str) -> Type {
    builtin_type_name(name).unwrap_or_else(|| panic!("no type {name}"))
}

fn v(name: &str) -> ArgInfo {
    ArgInfo::lvalue(ty(name))
}

fn ilit() -> ArgInfo {
    ArgInfo::int_literal(Type::INT)
}

fn flit() -> ArgInfo {
    ArgInfo::float_literal(Type::FLOAT)
}

fn ptr(pointee: Type, space: AddressSpace) -> ArgInfo {
    ArgInfo::value(Type::pointer(pointee, space, false))
}

fn order() -> ArgInfo {
    ArgInfo::value(Type::BuiltinEnum(crate::types::BuiltinEnum::MemoryOrder))
}

fn flags() -> ArgInfo {
    ArgInfo::value(Type::BuiltinEnum(crate::types::BuiltinEnum::MemFlags))
}

fn ok(name: &str, args: &[ArgInfo]) -> Resolved {
    resolve(name, None, args).unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

fn ret(name: &str, args: &[ArgInfo]) -> Type {
    ok(name, args).ret
}

#[test]
fn whole_table_parses() {
    for &(id, _, ns, decls) in table::TABLE {
        let name = id.name();
        for d in decls {
            if let Err(e) = sig::parse(name, d, ns == table::Ns::Mfp) {
                panic!("`{d}` ({name}): {e}");
            }
        }
    }
    // Forcing the registry parses everything too, and merges by name.
    let n = names().count();
    let mut unique: Vec<&str> = table::TABLE.iter().map(|e| e.0.name()).collect();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(n, unique.len());
    for name in unique {
        assert!(names().any(|x| x == name), "{name} missing from names()");
        let f = lookup(name).unwrap();
        assert_eq!(function(f.id).map(|g| g.name), Some(name));
        assert!(!f.signatures.is_empty());
        for s in &f.signatures {
            assert!(!s.display().is_empty());
        }
    }
}

#[test]
fn ids_are_distinct_and_named() {
    let mut names: Vec<&str> = BuiltinId::ALL.iter().map(|id| id.name()).collect();
    let n = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), n, "two builtin ids share a name");
    // The ids without a table entry are exactly the checker's own.
    let own: Vec<BuiltinId> = BuiltinId::ALL.iter().copied().filter(|&id| function(id).is_none()).collect();
    assert_eq!(
        own,
        [BuiltinId::Transpose, BuiltinId::Determinant, BuiltinId::MatrixMultiply, BuiltinId::SimdgroupDiagonal, BuiltinId::OsLog]
    );
}

#[test]
fn math() {
    assert_eq!(ret("exp", &[v("float")]), Type::FLOAT);
    assert_eq!(ret("exp", &[v("half4")]), ty("half4"));
    assert_eq!(ok("exp", &[flit()]).params, vec![Type::FLOAT]);
    assert_eq!(ret("fma", &[v("float"), v("float"), flit()]), Type::FLOAT);
    assert_eq!(resolve("fma", None, &[v("float"), v("float")]), Err(ResolveError::WrongArgCount { expected: vec![3] }));
    // exp(int): half, float and bfloat are equally good, as in C++.
    assert!(matches!(resolve("exp", None, &[v("int")]), Err(ResolveError::Ambiguous { .. })));
    // divide exists only for float, so an int converts.
    assert_eq!(ret("divide", &[v("int"), v("float")]), Type::FLOAT);
    assert_eq!(ret("ilogb", &[v("float3")]), ty("int3"));
    assert_eq!(ret("ldexp", &[v("float"), ilit()]), Type::FLOAT);
    // Out parameters need an lvalue of the exact type.
    let r = ok("frexp", &[v("float2"), v("int2")]);
    assert_eq!(r.ret, ty("float2"));
    assert!(matches!(r.params[1], Type::Reference { .. }));
    assert!(resolve("frexp", None, &[v("float2"), ArgInfo::value(ty("int2"))]).is_err());
    // Like Metal's non-template overloads: the out parameter picks `half`.
    assert_eq!(ret("sincos", &[v("float"), v("half")]), Type::HALF);
    assert!(resolve("sincos", None, &[v("float"), v("int")]).is_err());
    assert_eq!(ret("sincos", &[v("float"), v("float")]), Type::FLOAT);
    assert_eq!(ret("isnan", &[v("float4")]), ty("bool4"));
    assert_eq!(ret("pow", &[v("half"), flit()]), Type::HALF);
}

#[test]
fn namespaces() {
    assert_eq!(resolve("exp", Some(Namespace::Fast), &[v("float")]).unwrap().ret, Type::FLOAT);
    assert_eq!(resolve("divide", Some(Namespace::Precise), &[v("float"), v("float")]).unwrap().ret, Type::FLOAT);
    assert_eq!(resolve("max", Some(Namespace::Fast), &[v("float"), v("float")]).unwrap().ret, Type::FLOAT);
    assert_eq!(resolve("fmod", Some(Namespace::Fast), &[v("int"), v("int")]).map(|r| r.ret).ok(), None);
    // fast::abs is the floating one only, so an int is ambiguous there.
    assert!(matches!(resolve("abs", Some(Namespace::Fast), &[v("int")]), Err(ResolveError::Ambiguous { .. })));
    assert_eq!(resolve("abs", Some(Namespace::Fast), &[v("half")]).unwrap().ret, Type::HALF);
    assert_eq!(resolve("abs", Some(Namespace::Metal), &[v("int")]).unwrap().ret, Type::INT);
    let f = lookup("exp").unwrap();
    assert!(f.in_fast && f.in_precise);
    assert!(!lookup("simd_sum").unwrap().in_fast);
}

#[test]
fn common_and_literals() {
    assert_eq!(ok("max", &[v("float"), ilit()]).params, vec![Type::FLOAT, Type::FLOAT]);
    assert_eq!(ret("max", &[v("uint"), ilit()]), Type::UINT);
    assert_eq!(ret("max", &[v("int"), v("int")]), Type::INT);
    assert_eq!(ret("max", &[v("half"), flit()]), Type::HALF);
    assert_eq!(ret("min", &[ArgInfo::value(Type::UINT), v("int")]), Type::UINT);
    assert_eq!(ret("min", &[v("short"), v("short")]), ty("short"));
    assert_eq!(ret("max", &[ilit(), ilit()]), Type::INT);
    assert_eq!(ret("clamp", &[v("float4"), flit(), flit()]), ty("float4"));
    assert_eq!(ok("clamp", &[v("float4"), flit(), flit()]).params, vec![ty("float4"); 3]);
    assert_eq!(ret("clamp", &[v("half"), flit(), flit()]), Type::HALF);
    assert_eq!(ret("mix", &[v("float4"), v("float4"), flit()]), ty("float4"));
    assert_eq!(ret("abs", &[v("int")]), Type::INT);
    assert_eq!(ret("abs", &[v("float")]), Type::FLOAT);
    assert_eq!(ret("abs", &[ilit()]), Type::INT);
    assert_eq!(ret("saturate", &[v("half3")]), ty("half3"));
    // A vector never converts to another vector.
    assert!(matches!(resolve("max", None, &[v("float4"), v("int4")]), Err(ResolveError::NoMatch { .. })));
    assert!(matches!(resolve("max", None, &[v("float4"), v("float3")]), Err(ResolveError::NoMatch { .. })));
}

#[test]
fn integer_geometric_relational() {
    assert_eq!(ret("popcount", &[v("uint")]), Type::UINT);
    assert_eq!(ret("extract_bits", &[v("uint"), ilit(), ilit()]), Type::UINT);
    assert_eq!(ret("mulhi", &[v("ulong"), v("ulong")]), Type::ULONG);
    assert_eq!(ret("dot", &[v("float3"), v("float3")]), Type::FLOAT);
    assert_eq!(ret("length", &[v("float2")]), Type::FLOAT);
    assert_eq!(ret("cross", &[v("half3"), v("half3")]), ty("half3"));
    assert!(resolve("cross", None, &[v("float4"), v("float4")]).is_err());
    assert_eq!(ret("normalize", &[v("float4")]), ty("float4"));
    assert_eq!(ret("refract", &[v("float3"), v("float3"), flit()]), ty("float3"));
    assert_eq!(ret("select", &[v("float4"), v("float4"), v("bool4")]), ty("float4"));
    assert_eq!(ret("select", &[v("int"), ilit(), v("bool")]), Type::INT);
    assert_eq!(ret("all", &[v("bool3")]), Type::BOOL);
    assert_eq!(ret("any", &[v("bool")]), Type::BOOL);
}

#[test]
fn simd_and_quad() {
    assert_eq!(ret("simd_sum", &[v("float")]), Type::FLOAT);
    assert_eq!(ret("simd_max", &[v("half4")]), ty("half4"));
    let r = ok("simd_shuffle_down", &[v("float"), v("uint")]);
    assert_eq!(r.ret, Type::FLOAT);
    assert_eq!(r.params[1], ty("ushort"));
    assert_eq!(ret("simd_shuffle_and_fill_down", &[v("float"), v("float"), ilit()]), Type::FLOAT);
    assert_eq!(ret("simd_shuffle_and_fill_down", &[v("float"), v("float"), ilit(), ilit()]), Type::FLOAT);
    assert_eq!(ret("simd_ballot", &[v("bool")]), Type::ULONG);
    assert_eq!(ret("simd_is_first", &[]), Type::BOOL);
    assert_eq!(ret("simd_broadcast", &[v("bool"), ilit()]), Type::BOOL);
    assert_eq!(ret("quad_shuffle_xor", &[v("int2"), ilit()]), ty("int2"));
    assert!(resolve("simd_and", None, &[v("float")]).is_err());
}

#[test]
fn atomics_and_barriers() {
    let au = Type::Atomic(Scalar::UInt);
    let r = ok("atomic_fetch_add_explicit", &[ptr(au.clone(), AddressSpace::Device), ilit(), order()]);
    assert_eq!(r.ret, Type::UINT);
    assert_eq!(r.params[1], Type::UINT);
    match resolve("atomic_fetch_add_explicit", None, &[ptr(Type::UINT, AddressSpace::Device), ilit(), order()]) {
        Err(ResolveError::NoMatch { candidates }) => {
            assert!(candidates[0].contains("atomic<T>*"), "{candidates:?}")
        }
        other => panic!("{other:?}"),
    }
    let ai = Type::Atomic(Scalar::Int);
    assert_eq!(ret("atomic_fetch_max_explicit", &[ptr(ai.clone(), AddressSpace::Threadgroup), v("int"), order()]), Type::INT);
    assert!(resolve("atomic_fetch_add_explicit", None, &[ptr(ai.clone(), AddressSpace::Thread), ilit(), order()]).is_err());
    assert_eq!(ret("atomic_load_explicit", &[ptr(ai.clone(), AddressSpace::Device), order()]), Type::INT);
    assert_eq!(ret("atomic_store_explicit", &[ptr(au.clone(), AddressSpace::Device), ilit(), order()]), Type::Void);
    let expected = ArgInfo::value(Type::pointer(Type::INT, AddressSpace::Thread, false));
    assert_eq!(
        ret("atomic_compare_exchange_weak_explicit", &[ptr(ai, AddressSpace::Device), expected, ilit(), order(), order()]),
        Type::BOOL
    );
    let af = Type::Atomic(Scalar::Float);
    assert_eq!(ret("atomic_fetch_add_explicit", &[ptr(af.clone(), AddressSpace::Device), flit(), order()]), Type::FLOAT);
    assert!(resolve("atomic_fetch_or_explicit", None, &[ptr(af, AddressSpace::Device), flit(), order()]).is_err());
    let aul = Type::Atomic(Scalar::ULong);
    assert_eq!(ret("atomic_max_explicit", &[ptr(aul.clone(), AddressSpace::Device), v("ulong"), order()]), Type::Void);
    assert!(resolve("atomic_fetch_max_explicit", None, &[ptr(aul, AddressSpace::Device), v("ulong"), order()]).is_err());
    assert_eq!(ret("threadgroup_barrier", &[flags()]), Type::Void);
    assert!(resolve("threadgroup_barrier", None, &[ilit()]).is_err());
    assert_eq!(ret("atomic_thread_fence", &[flags(), order()]), Type::Void);
}

#[test]
fn simdgroup_matrix() {
    let m = ty("simdgroup_float8x8");
    let src = ArgInfo::value(Type::pointer(Type::FLOAT, AddressSpace::Threadgroup, true));
    assert_eq!(ret("simdgroup_load", &[v("simdgroup_float8x8"), src.clone()]), Type::Void);
    let r = ok("simdgroup_load", &[v("simdgroup_float8x8"), src.clone(), ilit(), v("ulong2"), ArgInfo::value(Type::BOOL)]);
    assert_eq!(r.params[2], Type::ULONG);
    let half_src = ptr(Type::HALF, AddressSpace::Device);
    assert!(resolve("simdgroup_load", None, &[v("simdgroup_float8x8"), half_src]).is_err());
    assert!(resolve("simdgroup_load", None, &[ArgInfo::value(m.clone()), src]).is_err());
    assert_eq!(
        ret(
            "simdgroup_multiply_accumulate",
            &[v("simdgroup_float8x8"), v("simdgroup_float8x8"), v("simdgroup_float8x8"), v("simdgroup_float8x8")]
        ),
        Type::Void
    );
    // Half or bfloat factors with a float accumulator; not the reverse.
    for f in ["simdgroup_half8x8", "simdgroup_bfloat8x8"] {
        let mixed = [v("simdgroup_float8x8"), v(f), v(f), v("simdgroup_float8x8")];
        assert_eq!(ret("simdgroup_multiply_accumulate", &mixed), Type::Void);
    }
    let narrowing = [v("simdgroup_half8x8"), v("simdgroup_float8x8"), v("simdgroup_float8x8"), v("simdgroup_half8x8")];
    assert!(resolve("simdgroup_multiply_accumulate", None, &narrowing).is_err());
    let unequal = [v("simdgroup_float8x8"), v("simdgroup_half8x8"), v("simdgroup_bfloat8x8"), v("simdgroup_float8x8")];
    assert!(resolve("simdgroup_multiply_accumulate", None, &unequal).is_err());
    assert_eq!(ret("simdgroup_store", &[v("simdgroup_half8x8"), ptr(Type::HALF, AddressSpace::Device), ilit()]), Type::Void);
    assert!(lookup("make_filled_simdgroup_matrix").is_some());
    assert_eq!(ret("make_filled_simdgroup_matrix", &[v("float")]), m);
}

#[test]
fn errors_and_display() {
    assert_eq!(resolve("log1p", None, &[v("float")]), Err(ResolveError::NotFound));
    assert_eq!(resolve("nope", None, &[]), Err(ResolveError::NotFound));
    assert_eq!(resolve("simd_shuffle_and_fill_up", None, &[v("float")]), Err(ResolveError::WrongArgCount { expected: vec![3, 4] }));
    assert_eq!(resolve("atomic_thread_fence", None, &[flags()]), Err(ResolveError::WrongArgCount { expected: vec![2, 3] }));
    let d = lookup("exp").unwrap().signatures[0].display();
    assert!(d.starts_with("Tn exp(Tn x) where T is half, bfloat or float"), "{d}");
    let d = lookup("atomic_fetch_add_explicit").unwrap().signatures[0].display();
    assert!(d.contains("S is device or threadgroup"), "{d}");
}

#[test]
fn constants() {
    let (t, v) = constant("M_PI_F").unwrap();
    assert_eq!(t, Type::FLOAT);
    match v {
        ConstValue::Float(f) => assert!((f - std::f64::consts::PI).abs() < 1e-12),
        other => panic!("{other:?}"),
    }
    assert_eq!(constant("INT_MAX"), Some((Type::INT, ConstValue::Int(2147483647))));
    assert_eq!(constant("UINT_MAX"), Some((Type::UINT, ConstValue::UInt(4294967295))));
    assert_eq!(constant("HALF_MAX").unwrap().0, Type::HALF);
    assert_eq!(constant("FLT_EPSILON"), Some((Type::FLOAT, ConstValue::Float(f32::EPSILON as f64))));
    for name in constant_names() {
        assert!(constant(name).is_some(), "{name}");
    }
    assert!(constant("M_PI").is_none());
}
