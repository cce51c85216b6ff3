//! `<metal_type_traits>`: compile-time questions about types
//! (`is_same_v<A, B>`, `is_floating_point_v<T>`, …) and type computations
//! (`enable_if_t<c, T>`, `conditional_t<c, A, B>`, …). Each exists in the
//! `_v`/`_t` spelling and as a struct with `::value`/`::type`.

use crate::hir::ConstValue;
use crate::types::{implicit_conversion, Scalar, Type};

/// Traits whose result is a value (spelled with `_v`).
pub const VALUE_TRAITS: &[&str] = &[
    "is_same_v",
    "is_floating_point_v",
    "is_integral_v",
    "is_signed_v",
    "is_unsigned_v",
    "is_arithmetic_v",
    "is_scalar_v",
    "is_vector_v",
    "is_pointer_v",
    "is_void_v",
    "is_enum_v",
    "is_class_v",
    "is_bool_v",
    "is_convertible_v",
    "is_const_v",
    "vec_elements_v",
    "disjunction_v",
    "conjunction_v",
    "negation_v",
    "_disjunction_v",
    "_conjunction_v",
    // `<metal_simdgroup>`'s internal test of what SIMD-group functions take
    // (libraries build their own traits on it).
    "__is_valid_simdgroup_type_v",
];

/// Value traits whose arguments are traits themselves (`disjunction<is_same<T,
/// int>, is_same<T, uint>>`): each argument's `::value` is asked.
pub const META_TRAITS: &[&str] = &["disjunction_v", "conjunction_v", "negation_v", "_disjunction_v", "_conjunction_v"];

/// The result of a meta trait from its arguments' values.
pub fn meta(name: &str, values: &[bool]) -> Result<ConstValue, String> {
    match name {
        "disjunction_v" | "_disjunction_v" => Ok(ConstValue::Bool(values.iter().any(|v| *v))),
        "conjunction_v" | "_conjunction_v" => Ok(ConstValue::Bool(values.iter().all(|v| *v))),
        _ => match values {
            [v] => Ok(ConstValue::Bool(!v)),
            _ => Err("`negation` takes one trait".into()),
        },
    }
}

/// Traits whose result is a type (spelled with `_t`).
pub const TYPE_TRAITS: &[&str] = &[
    "enable_if_t",
    "conditional_t",
    "remove_cv_t",
    "remove_const_t",
    "remove_volatile_t",
    "remove_reference_t",
    "remove_cvref_t",
    "decay_t",
    "make_unsigned_t",
    "make_signed_t",
    "remove_pointer_t",
    "type_identity_t",
    "remove_addrspace_t",
];

/// Every trait name in both spellings (for the parser: these take `<...>`).
pub fn all_names() -> impl Iterator<Item = String> {
    VALUE_TRAITS.iter().chain(TYPE_TRAITS).flat_map(|n| [n.to_string(), n[..n.len() - 2].to_string()])
}

/// A trait argument: a type, or a constant (for `enable_if`'s condition).
#[derive(Clone, Debug)]
pub enum Arg {
    Type(Type),
    Value(ConstValue),
}

fn ty(args: &[Arg], i: usize, name: &str) -> Result<Type, String> {
    match args.get(i) {
        Some(Arg::Type(t)) => Ok(t.clone()),
        Some(Arg::Value(_)) => Err(format!("argument {} of `{name}` must be a type", i + 1)),
        None => Err(format!("`{name}` needs {} type argument{}", i + 1, if i == 0 { "" } else { "s" })),
    }
}

fn cond(args: &[Arg], name: &str) -> Result<bool, String> {
    match args.first() {
        Some(Arg::Value(v)) => Ok(v.as_i64() != 0),
        _ => Err(format!("the first argument of `{name}` must be a constant condition")),
    }
}

/// A scalar, or a vector's element type.
fn elem(t: &Type) -> Option<Scalar> {
    match t {
        Type::Scalar(s) | Type::Vector { elem: s, .. } => Some(*s),
        _ => None,
    }
}

/// Evaluate value trait `name` (with `_v`); `None` if it is not one.
pub fn value(name: &str, args: &[Arg]) -> Option<Result<ConstValue, String>> {
    if !VALUE_TRAITS.contains(&name) {
        return None;
    }
    let b = |v: bool| Ok(ConstValue::Bool(v));
    let one = |f: &dyn Fn(&Type) -> bool| ty(args, 0, name).and_then(|t| b(f(&t)));
    Some(match name {
        "is_same_v" => ty(args, 0, name).and_then(|a| ty(args, 1, name).and_then(|c| b(a == c))),
        "is_convertible_v" => ty(args, 0, name).and_then(|a| {
            ty(args, 1, name).and_then(|c| {
                let ok = a == c
                    || matches!((&a, &c), (Type::Scalar(_), Type::Scalar(_)))
                    || implicit_conversion(&a, &c).is_some() && !matches!(c, Type::Struct(_));
                b(ok)
            })
        }),
        // Metal extends these to vectors by their element type (PyTorch's c10
        // relies on `is_floating_point_v<half2>`); `is_scalar_v` tells them apart.
        "is_floating_point_v" => one(&|t| elem(t).is_some_and(Scalar::is_float)),
        "is_integral_v" => one(&|t| elem(t).is_some_and(|s| !s.is_float())),
        "is_bool_v" => one(&|t| *t == Type::Scalar(Scalar::Bool)),
        "is_signed_v" => one(&|t| elem(t).is_some_and(Scalar::is_signed)),
        "is_unsigned_v" => one(&|t| elem(t).is_some_and(|s| !s.is_signed() && !s.is_float())),
        "is_arithmetic_v" => one(&|t| elem(t).is_some()),
        "is_scalar_v" => one(&|t| matches!(t, Type::Scalar(_) | Type::Pointer { .. } | Type::Enum(_) | Type::NullPtr)),
        "is_vector_v" => one(&|t| matches!(t, Type::Vector { .. })),
        "is_pointer_v" => one(&|t| matches!(t, Type::Pointer { .. })),
        "is_void_v" => one(&|t| *t == Type::Void),
        "is_enum_v" => one(&|t| matches!(t, Type::Enum(_))),
        "is_class_v" => one(&|t| matches!(t, Type::Struct(_))),
        // Constness is not part of a resolved type here.
        "is_const_v" => one(&|_| false),
        "__is_valid_simdgroup_type_v" => one(&|t| {
            let elem = match t {
                Type::Scalar(s) => Some(*s),
                Type::Vector { elem, .. } => Some(*elem),
                _ => None,
            };
            // 64-bit integers, bfloat and bool are not among them.
            elem.is_some_and(|s| {
                matches!(
                    s,
                    Scalar::Float
                        | Scalar::Half
                        | Scalar::Int
                        | Scalar::UInt
                        | Scalar::Short
                        | Scalar::UShort
                        | Scalar::Char
                        | Scalar::UChar
                )
            })
        }),
        "vec_elements_v" => ty(args, 0, name).map(|t| ConstValue::Int(t.vector_len().unwrap_or(1) as i64)),
        _ => return None,
    })
}

/// Evaluate type trait `name` (with `_t`); `None` if it is not one.
pub fn type_of(name: &str, args: &[Arg]) -> Option<Result<Type, String>> {
    if !TYPE_TRAITS.contains(&name) {
        return None;
    }
    Some(match name {
        "enable_if_t" => cond(args, name).and_then(|c| {
            if !c {
                return Err("`enable_if` with a false condition has no type: this template does not apply here".into());
            }
            match args.get(1) {
                None => Ok(Type::Void),
                Some(_) => ty(args, 1, name),
            }
        }),
        "conditional_t" => cond(args, name).and_then(|c| ty(args, if c { 1 } else { 2 }, name)),
        "make_unsigned_t" | "make_signed_t" => ty(args, 0, name).and_then(|t| match t {
            Type::Scalar(s) if s.is_integer() => Ok(Type::Scalar(if name == "make_unsigned_t" { s.to_unsigned() } else { to_signed(s) })),
            other => Err(format!("`{name}` needs an integer type, not {other:?}")),
        }),
        "remove_pointer_t" => ty(args, 0, name).map(|t| match t {
            Type::Pointer { pointee, .. } => *pointee,
            t => t,
        }),
        _ => ty(args, 0, name).map(|t| t.strip_ref().clone()),
    })
}

fn to_signed(s: Scalar) -> Scalar {
    match s {
        Scalar::UChar => Scalar::Char,
        Scalar::UShort => Scalar::Short,
        Scalar::UInt => Scalar::Int,
        Scalar::ULong => Scalar::Long,
        s => s,
    }
}
