//! JSON values for buffer and `constant T&` arguments whose type is a struct,
//! a vector, a matrix or an array: the value is laid out byte for byte the way
//! Metal lays the type out in a buffer (field offsets, `float3` padded to 16
//! bytes, matrices as columns), so `constant Params& p` can be given as
//! `{"n": 4, "scale": 0.5, "shape": [2, 3]}` instead of hand-packed bytes.

use msl::types::{Scalar, Type, TypeTables};
use serde_json::Value;

/// Encode `value` as one `ty` (an object, array, number or bool) or, when
/// `many` is set and `value` is an array of such values, as consecutive
/// elements (a buffer of structs). `what` names the argument in errors.
pub fn json_to_bytes(value: &Value, ty: &Type, tables: &TypeTables, many: bool, what: &str) -> Result<Vec<u8>, String> {
    let size = tables.size_of(ty) as usize;
    let elements: Vec<&Value> = match value {
        Value::Array(items) if many && !is_single_value_of(value, ty) => items.iter().collect(),
        v => vec![v],
    };
    let total = size.checked_mul(elements.len()).ok_or_else(|| format!("`{what}`: too many values"))?;
    let mut out = vec![0u8; total];
    for (i, v) in elements.iter().enumerate() {
        let path = if elements.len() > 1 { format!("{what}[{i}]") } else { what.to_string() };
        write_value(&mut out[i * size..(i + 1) * size], v, ty, tables, &path)?;
    }
    Ok(out)
}

/// Whether a JSON array is one value of `ty` rather than a list of them:
/// compares how deeply arrays nest in the value (along first elements) with
/// how deeply the type nests (`float2` 1, `float2x2` 2, `int[3][4]` 2).
fn is_single_value_of(value: &Value, ty: &Type) -> bool {
    fn type_depth(ty: &Type) -> usize {
        match ty {
            Type::Vector { .. } => 1,
            Type::Matrix { .. } => 2,
            Type::Array { elem, .. } => 1 + type_depth(elem),
            _ => 0,
        }
    }
    let mut depth = 0;
    let mut v = value;
    while let Value::Array(items) = v {
        depth += 1;
        match items.first() {
            Some(first) => v = first,
            None => break,
        }
    }
    depth <= type_depth(ty)
}

fn write_value(out: &mut [u8], v: &Value, ty: &Type, tables: &TypeTables, path: &str) -> Result<(), String> {
    match ty {
        Type::Scalar(s) | Type::Atomic(s) => write_scalar(out, v, *s, path),
        Type::Enum(id) => {
            let def = tables.enum_def(*id);
            let n = match v {
                Value::String(name) => def.values.iter().find(|(n, _)| n == name).map(|(_, x)| *x as i128).ok_or_else(|| {
                    let names: Vec<&str> = def.values.iter().map(|(n, _)| n.as_str()).collect();
                    format!("`{path}`: `{name}` is not a value of enum `{}` (its values: {})", def.name, names.join(", "))
                })?,
                _ => integer(v, path)?,
            };
            write_integer(out, n, def.underlying, path)
        }
        Type::Vector { elem, len, .. } => {
            let items = list(v, *len as usize, path, &format!("a {}-element vector", len))?;
            let step = elem.size() as usize;
            for (i, item) in items.iter().enumerate() {
                write_scalar(&mut out[i * step..(i + 1) * step], item, *elem, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        Type::Matrix { elem, cols, rows } => {
            let column = Type::vector(*elem, *rows);
            let step = tables.size_of(&column) as usize;
            let items = list(v, *cols as usize, path, &format!("{cols} columns of {rows} values"))?;
            for (i, item) in items.iter().enumerate() {
                write_value(&mut out[i * step..(i + 1) * step], item, &column, tables, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        Type::Array { elem, len } => {
            let step = tables.size_of(elem) as usize;
            let items = list(v, *len as usize, path, &format!("{len} elements"))?;
            for (i, item) in items.iter().enumerate() {
                write_value(&mut out[i * step..(i + 1) * step], item, elem, tables, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        Type::Struct(id) => {
            let def = tables.struct_def(*id);
            let Value::Object(fields) = v else {
                return Err(format!("`{path}` is a `{}`: give a JSON object with its fields ({})", def.name, field_list(def)));
            };
            if let Some(extra) = fields.keys().find(|k| !def.fields.iter().any(|f| &f.name == *k)) {
                return Err(format!("`{path}`: `{}` has no field `{extra}` (its fields: {})", def.name, field_list(def)));
            }
            for f in &def.fields {
                let Some(fv) = fields.get(&f.name) else {
                    return Err(format!("`{path}`: field `{}` of `{}` is missing (its fields: {})", f.name, def.name, field_list(def)));
                };
                let start = f.offset as usize;
                let end = start + tables.size_of(&f.ty) as usize;
                let slot = out.get_mut(start..end).ok_or_else(|| format!("`{path}.{}` lies outside `{}`", f.name, def.name))?;
                write_value(slot, fv, &f.ty, tables, &format!("{path}.{}", f.name))?;
            }
            Ok(())
        }
        other => Err(format!("`{path}` has type `{}`, which cannot be given as a JSON value", tables.display(other))),
    }
}

fn field_list(def: &msl::types::StructDef) -> String {
    def.fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ")
}

fn list<'a>(v: &'a Value, len: usize, path: &str, expected: &str) -> Result<&'a Vec<Value>, String> {
    match v {
        Value::Array(items) if items.len() == len => Ok(items),
        Value::Array(items) => Err(format!("`{path}` needs {expected}, but {} were given", items.len())),
        _ => Err(format!("`{path}` needs {expected} as a JSON array")),
    }
}

fn integer(v: &Value, path: &str) -> Result<i128, String> {
    match v {
        Value::Bool(b) => Ok(*b as i128),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(i as i128)
            } else if let Some(u) = n.as_u64() {
                Ok(u as i128)
            } else {
                Err(format!("`{path}` must be a whole number, not {n}"))
            }
        }
        _ => Err(format!("`{path}` must be a number, not {v}")),
    }
}

fn write_scalar(out: &mut [u8], v: &Value, s: Scalar, path: &str) -> Result<(), String> {
    if s.is_float() {
        let x = match v {
            Value::Number(n) => n.as_f64().ok_or_else(|| format!("`{path}`: {n} is not a number"))?,
            // JSON has no NaN or infinities; accept their usual spellings.
            Value::String(t) => match t.as_str() {
                "nan" | "NaN" => f64::NAN,
                "inf" | "Infinity" => f64::INFINITY,
                "-inf" | "-Infinity" => f64::NEG_INFINITY,
                _ => return Err(format!("`{path}` must be a number, not \"{t}\"")),
            },
            _ => return Err(format!("`{path}` must be a number, not {v}")),
        };
        let bytes = match s {
            Scalar::Half => half::f16::from_f64(x).to_le_bytes().to_vec(),
            Scalar::BFloat => half::bf16::from_f64(x).to_le_bytes().to_vec(),
            _ => (x as f32).to_le_bytes().to_vec(),
        };
        out[..bytes.len()].copy_from_slice(&bytes);
        return Ok(());
    }
    write_integer(out, integer(v, path)?, s, path)
}

fn write_integer(out: &mut [u8], n: i128, s: Scalar, path: &str) -> Result<(), String> {
    let bits = s.size() * 8;
    let (lo, hi) = if s == Scalar::Bool {
        (0, 1)
    } else if s.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    if n < lo || n > hi {
        return Err(format!("`{path}`: {n} does not fit in a `{}` ({lo} to {hi})", s.name()));
    }
    let bytes = (n as u128).to_le_bytes();
    out[..s.size() as usize].copy_from_slice(&bytes[..s.size() as usize]);
    Ok(())
}

#[cfg(test)]
mod tests;
