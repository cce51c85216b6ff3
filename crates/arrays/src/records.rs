//! `.npy` files of a structured dtype (NumPy record arrays), read as JSON
//! values: one object per record, fields by name, sub-array fields as lists.
//! The caller lays the values out for the kernel's own struct (its offsets
//! need not match NumPy's packed or aligned layout).

use crate::dtype::DType;
use crate::npy::{descr_dtype, parse_header, Lit};
use serde_json::{Map, Value};

/// One field of a record dtype.
#[derive(Clone, Debug, PartialEq)]
struct Field {
    name: String,
    offset: usize,
    ty: FieldType,
    /// Sub-array shape (`('scale', '<f4', (3,))`), empty for one value.
    shape: Vec<usize>,
}

#[derive(Clone, Debug, PartialEq)]
enum FieldType {
    Scalar(DType),
    Record(Vec<Field>, usize),
}

impl FieldType {
    fn size(&self) -> usize {
        match self {
            FieldType::Scalar(d) => d.size(),
            FieldType::Record(_, size) => *size,
        }
    }
}

/// Whether a `.npy` file's header describes a structured dtype.
pub fn is_record_npy(bytes: &[u8]) -> bool {
    parse_header(bytes).is_ok_and(|(dict, _)| dict.iter().any(|(k, v)| k == "descr" && matches!(v, Lit::List(_))))
}

/// The records of a structured `.npy` file as JSON: a list of objects, or
/// one object for a 0-d file. Never allocates much beyond the input size.
pub fn records_from_npy_bytes(bytes: &[u8]) -> Result<Value, String> {
    let (dict, start) = parse_header(bytes)?;
    let get = |k: &str| dict.iter().find(|(n, _)| n == k).map(|(_, v)| v);
    let Some(Lit::List(descr)) = get("descr") else {
        return Err("not a structured (record) .npy file".into());
    };
    let (fields, itemsize) = record_fields(descr, 0)?;
    if get("fortran_order") == Some(&Lit::Bool(true)) {
        return Err("Fortran-ordered record arrays are not supported; save with np.ascontiguousarray first".into());
    }
    let shape: Vec<usize> = match get("shape") {
        Some(Lit::Tuple(items)) => items
            .iter()
            .map(|i| match i {
                Lit::Int(n) => usize::try_from(*n).map_err(|_| "shape dimension is too large".to_string()),
                _ => Err("'shape' holds a non-integer".to_string()),
            })
            .collect::<Result<_, _>>()?,
        _ => return Err("not a valid .npy file: header has no 'shape' tuple".into()),
    };
    let count = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).ok_or("shape is too large")?;
    let data = &bytes[start..];
    if count.checked_mul(itemsize) != Some(data.len()) {
        return Err(format!(
            "{count} records of {itemsize} bytes need {} bytes, the file has {}",
            count.saturating_mul(itemsize),
            data.len()
        ));
    }
    if itemsize == 0 {
        return Err("records of zero bytes hold nothing to bind".into());
    }
    let records: Vec<Value> = data.chunks_exact(itemsize).map(|r| record_value(r, &fields)).collect();
    Ok(if shape.is_empty() { records.into_iter().next().unwrap_or(Value::Null) } else { Value::Array(records) })
}

/// The fields of a descr list and the record size. Unnamed fields are
/// padding (NumPy writes `('', '|V4')` for aligned dtypes).
fn record_fields(descr: &[Lit], depth: usize) -> Result<(Vec<Field>, usize), String> {
    if depth > 16 {
        return Err("record dtype nests too deeply".into());
    }
    let mut fields = Vec::new();
    let mut offset = 0usize;
    for item in descr {
        let Lit::Tuple(parts) = item else {
            return Err("record dtype entries must be (name, type[, shape]) tuples".into());
        };
        let name = match parts.first() {
            Some(Lit::Str(n)) => n.clone(),
            Some(Lit::Tuple(t)) => match t.get(1) {
                // (title, name) pairs.
                Some(Lit::Str(n)) => n.clone(),
                _ => return Err("a record field's name is not a string".into()),
            },
            _ => return Err("a record field has no name".into()),
        };
        let shape: Vec<usize> = match parts.get(2) {
            None => vec![],
            Some(Lit::Tuple(dims)) => dims
                .iter()
                .map(|d| match d {
                    Lit::Int(n) if *n <= 1 << 20 => Ok(*n as usize),
                    _ => Err(format!("field `{name}`: sub-array shape must be small whole numbers")),
                })
                .collect::<Result<_, _>>()?,
            Some(Lit::Int(n)) if *n <= 1 << 20 => vec![*n as usize],
            Some(_) => return Err(format!("field `{name}`: bad sub-array shape")),
        };
        let ty = match parts.get(1) {
            Some(Lit::Str(d)) if name.is_empty() && d.trim_start_matches(['|', '<', '>', '=']).starts_with('V') => {
                let pad: usize = d
                    .trim_start_matches(['|', '<', '>', '='])
                    .trim_start_matches('V')
                    .parse()
                    .map_err(|_| format!("bad padding descr '{d}'"))?;
                offset = offset.checked_add(pad).ok_or("record is too large")?;
                continue;
            }
            Some(Lit::Str(d)) => FieldType::Scalar(descr_dtype(d).map_err(|e| format!("field `{name}`: {e}"))?),
            Some(Lit::List(inner)) => {
                let (f, size) = record_fields(inner, depth + 1)?;
                FieldType::Record(f, size)
            }
            _ => return Err(format!("field `{name}` has no type")),
        };
        let n: usize = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).ok_or("record is too large")?;
        let size = ty.size().checked_mul(n).ok_or("record is too large")?;
        fields.push(Field { name, offset, ty, shape });
        offset = offset.checked_add(size).ok_or("record is too large")?;
    }
    Ok((fields, offset))
}

fn record_value(bytes: &[u8], fields: &[Field]) -> Value {
    let mut obj = Map::new();
    for f in fields {
        let step = f.ty.size();
        let mut values =
            (0..f.shape.iter().product::<usize>()).map(|i| one_value(&bytes[f.offset + i * step..f.offset + (i + 1) * step], &f.ty));
        let v = if f.shape.is_empty() { values.next().unwrap_or(Value::Null) } else { nest(&mut values, &f.shape) };
        obj.insert(f.name.clone(), v);
    }
    Value::Object(obj)
}

/// Values in row-major order, nested into lists of `shape`.
fn nest(values: &mut impl Iterator<Item = Value>, shape: &[usize]) -> Value {
    match shape {
        [] => values.next().unwrap_or(Value::Null),
        [n, rest @ ..] => Value::Array((0..*n).map(|_| nest(values, rest)).collect()),
    }
}

fn one_value(b: &[u8], ty: &FieldType) -> Value {
    match ty {
        FieldType::Record(fields, _) => record_value(b, fields),
        FieldType::Scalar(d) => match d {
            DType::Bool => Value::Bool(b[0] != 0),
            DType::I8 => (b[0] as i8).into(),
            DType::U8 => b[0].into(),
            DType::I16 => i16::from_le_bytes([b[0], b[1]]).into(),
            DType::U16 => u16::from_le_bytes([b[0], b[1]]).into(),
            DType::I32 => i32::from_le_bytes(b[..4].try_into().unwrap_or_default()).into(),
            DType::U32 => u32::from_le_bytes(b[..4].try_into().unwrap_or_default()).into(),
            DType::I64 => i64::from_le_bytes(b[..8].try_into().unwrap_or_default()).into(),
            DType::U64 => u64::from_le_bytes(b[..8].try_into().unwrap_or_default()).into(),
            DType::F16 => float(half::f16::from_le_bytes([b[0], b[1]]).to_f64()),
            DType::BF16 => float(half::bf16::from_le_bytes([b[0], b[1]]).to_f64()),
            DType::F32 => float(f32::from_le_bytes(b[..4].try_into().unwrap_or_default()) as f64),
        },
    }
}

/// JSON has no NaN or infinities: they travel as the strings the JSON
/// argument reader accepts.
fn float(x: f64) -> Value {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        (if x > 0.0 { "inf" } else { "-inf" }).into()
    } else {
        x.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.npy` file with this header dictionary and data (format 1.0).
    fn npy(header: &str, data: &[u8]) -> Vec<u8> {
        let mut h = header.to_string();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(' ');
        }
        h.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(h.len() as u16).to_le_bytes());
        out.extend_from_slice(h.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn packed_and_padded_records_nested_and_sub_arrays() {
        // np.dtype([('n','<u4'),('', '|V4'),('scale','<f4',(2,)),('inner',[('a','<i2'),('h','<f2')])])
        let descr = "[('n', '<u4'), ('', '|V4'), ('scale', '<f4', (2,)), ('inner', [('a', '<i2'), ('h', '<f2')])]";
        let mut rec = Vec::new();
        for (n, s0, s1, a, h) in [(7u32, 1.5f32, -2.0f32, -3i16, 0.5f32), (8, f32::INFINITY, 0.0, 4, 2.0)] {
            rec.extend_from_slice(&n.to_le_bytes());
            rec.extend_from_slice(&[0xAA; 4]);
            rec.extend_from_slice(&s0.to_le_bytes());
            rec.extend_from_slice(&s1.to_le_bytes());
            rec.extend_from_slice(&a.to_le_bytes());
            rec.extend_from_slice(&half::f16::from_f32(h).to_le_bytes());
        }
        let file = npy(&format!("{{'descr': {descr}, 'fortran_order': False, 'shape': (2,), }}"), &rec);
        assert!(is_record_npy(&file));
        let v = records_from_npy_bytes(&file).unwrap();
        assert_eq!(
            v,
            serde_json::json!([
                {"n": 7, "scale": [1.5, -2.0], "inner": {"a": -3, "h": 0.5}},
                {"n": 8, "scale": ["inf", 0.0], "inner": {"a": 4, "h": 2.0}}
            ])
        );
        // A 0-d file is one record.
        let one = npy(&format!("{{'descr': {descr}, 'fortran_order': False, 'shape': (), }}"), &rec[..20]);
        assert_eq!(records_from_npy_bytes(&one).unwrap()["n"], 7);
    }

    #[test]
    fn damaged_record_files_are_refused() {
        let ok = "{'descr': [('n', '<u4')], 'fortran_order': False, 'shape': (2,), }";
        assert!(records_from_npy_bytes(&npy(ok, &[0; 7])).unwrap_err().contains("need 8 bytes, the file has 7"));
        let f8 = "{'descr': [('x', '<f8')], 'fortran_order': False, 'shape': (1,), }";
        assert!(records_from_npy_bytes(&npy(f8, &[0; 8])).unwrap_err().contains("field `x`: float64"));
        let huge = "{'descr': [('x', '<u4')], 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }";
        assert!(records_from_npy_bytes(&npy(huge, &[])).is_err());
        let deep = format!("{{'descr': {}('a', '<u4'){}, 'fortran_order': False, 'shape': (), }}", "[('r', ".repeat(20), ")]".repeat(20));
        assert!(records_from_npy_bytes(&npy(&deep, &[0; 4])).is_err());
        assert!(!is_record_npy(&npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", &[0; 4])));
    }
}
