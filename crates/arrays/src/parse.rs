//! The command line's value forms: `VALUE:DTYPE` scalars and
//! `GEN(SHAPE):DTYPE` generated buffers.

use crate::array::{checked_nbytes, shape_str, Array};
use crate::dtype::DType;

/// Generated buffers larger than this are refused (1 GiB).
pub const MAX_GENERATED_BYTES: usize = 1 << 30;
/// All the buffers of one dispatch together (1 GiB): a per-buffer cap
/// alone lets four 1 GiB outputs exhaust the machine.
pub const MAX_TOTAL_BUFFER_BYTES: usize = 1 << 30;

const FORMS: &str = "expected VALUE:DTYPE (e.g. `1024:u32`, `0.5:f32`, `true:bool`, `0xFF:u8`) \
or GEN(SHAPE):DTYPE with GEN one of zeros, ones, arange, rand, randint(SHAPE,LO,HI), \
fill(SHAPE,VALUE) (e.g. `zeros(512,512):f32`, `rand(64,4):f32`)";

fn parse_int(text: &str) -> Option<i128> {
    let t = text.trim().replace('_', "");
    let (neg, body) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(&t)),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(h) = lower.strip_prefix("0x") {
        (16, h)
    } else if let Some(b) = lower.strip_prefix("0b") {
        (2, b)
    } else if let Some(o) = lower.strip_prefix("0o") {
        (8, o)
    } else {
        (10, lower.as_str())
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let v = i128::from_str_radix(digits, radix).ok()?;
    Some(if neg { -v } else { v })
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// One scalar value in `dtype`, checked to be representable.
fn scalar_value(text: &str, dtype: DType) -> Result<Array, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(format!("missing value before `:{}`; {FORMS}", dtype.short_name()));
    }
    if dtype == DType::Bool {
        let b = parse_bool(t).or(match parse_int(t) {
            Some(0) => Some(false),
            Some(1) => Some(true),
            _ => None,
        });
        return match b {
            Some(b) => Ok(Array::full(DType::Bool, &[], b as u8 as f64)),
            None => Err(format!("`{t}` is not a bool value; use true or false")),
        };
    }
    if let Some((min, max)) = dtype.int_range() {
        let v = if let Some(b) = parse_bool(t) {
            b as i128
        } else if let Some(v) = parse_int(t) {
            v
        } else {
            match t.parse::<f64>() {
                Ok(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e38 => f as i128,
                Ok(_) => return Err(format!("`{t}` is not an integer; dtype {} needs an integer value", dtype.short_name())),
                Err(_) => return Err(format!("`{t}` is not a number; {}", "expected an integer such as 42, -3 or 0xFF")),
            }
        };
        if v < min || v > max {
            return Err(format!("value {t} is out of range for {} ([{min}, {max}])", dtype.short_name()));
        }
        return Array::from_i64(dtype, &[], &[v as i64]);
    }
    // float dtypes
    let v = if let Some(b) = parse_bool(t) {
        b as u8 as f64
    } else if let Some(i) = parse_int(t) {
        i as f64
    } else {
        t.parse::<f64>().map_err(|_| format!("`{t}` is not a number; expected a value such as 0.5, -3, 1e-3, inf or nan"))?
    };
    let a = Array::full(dtype, &[], v);
    if v.is_finite() && !a.get_f64(&[]).is_finite() {
        return Err(format!("value {t} overflows {}", dtype.short_name()));
    }
    Ok(a)
}

/// Parses a comma-separated shape (`512,512`, `(4, 16)`, empty for 0-d).
pub fn parse_shape(text: &str) -> Result<Vec<usize>, String> {
    let t: String = text.chars().filter(|c| !matches!(c, '(' | ')' | '[' | ']')).collect();
    let t = t.trim();
    if t.is_empty() {
        return Ok(Vec::new());
    }
    t.split(',')
        .map(|d| d.trim())
        .map(|d| {
            d.parse::<usize>()
                .map_err(|_| format!("bad dimension `{d}` in shape `{text}`: dimensions are non-negative integers, e.g. 4,16"))
        })
        .collect()
}

fn split_args(inner: &str) -> Vec<String> {
    let flat: String = inner.chars().filter(|c| !matches!(c, '(' | ')' | '[' | ']')).collect();
    if flat.trim().is_empty() {
        return Vec::new();
    }
    flat.split(',').map(|s| s.trim().to_string()).collect()
}

fn shape_of(args: &[String], spec: &str) -> Result<Vec<usize>, String> {
    args.iter()
        .map(|d| {
            d.parse::<usize>().map_err(|_| {
                format!("bad dimension `{d}` in `{spec}`: SHAPE is non-negative integers separated by commas, e.g. zeros(512,512):f32")
            })
        })
        .collect()
}

/// Parses `VALUE:DTYPE` into a 0-d array or `GEN(SHAPE):DTYPE` into a
/// generated array (`seed` drives `rand`/`randint`). `@path.npy` loads a
/// file (callers usually handle it themselves to name the parameter).
pub fn parse_value(spec: &str, seed: u64) -> Result<Array, String> {
    parse_value_within(spec, seed, MAX_GENERATED_BYTES)
}

/// [`parse_value`], refusing a generated buffer over `limit` bytes before
/// allocating it (the room left in a dispatch's buffer budget).
pub fn parse_value_within(spec: &str, seed: u64, limit: usize) -> Result<Array, String> {
    let limit = limit.min(MAX_GENERATED_BYTES);
    let spec = spec.trim();
    if let Some(path) = spec.strip_prefix('@') {
        return Array::read_npy(path);
    }
    let Some((body, dt)) = spec.rsplit_once(':') else {
        return Err(format!("`{spec}` has no `:DTYPE`; {FORMS}"));
    };
    let dtype = DType::parse(dt).map_err(|e| format!("in `{spec}`: {e}"))?;
    let body = body.trim();
    let Some(open) = body.find('(') else {
        return scalar_value(body, dtype).map_err(|e| format!("in `{spec}`: {e}"));
    };
    let Some(inner) = body[open + 1..].strip_suffix(')') else {
        return Err(format!("`{spec}`: missing `)`; {FORMS}"));
    };
    let gen = body[..open].trim().to_ascii_lowercase();
    let args = split_args(inner);
    let check = |shape: &[usize]| -> Result<(), String> {
        let n = checked_nbytes(dtype, shape)?;
        if n > limit {
            return Err(format!(
                "`{spec}`: shape {} of {} is {n} bytes, over the limit of {limit} bytes left for it (all buffers of a dispatch together may take {MAX_TOTAL_BUFFER_BYTES} bytes)",
                shape_str(shape),
                dtype
            ));
        }
        Ok(())
    };
    match gen.as_str() {
        "zeros" | "ones" | "arange" | "rand" => {
            let shape = shape_of(&args, spec)?;
            check(&shape)?;
            Ok(match gen.as_str() {
                "zeros" => Array::zeros(dtype, &shape),
                "ones" => Array::ones(dtype, &shape),
                "arange" => Array::arange(dtype, &shape),
                _ => Array::rand(dtype, &shape, seed),
            })
        }
        "randint" => {
            if args.len() < 2 {
                return Err(format!("`{spec}`: randint takes SHAPE,LO,HI (values in [LO, HI)), e.g. randint(64,4,0,10):i32"));
            }
            let (sh, lohi) = args.split_at(args.len() - 2);
            let shape = shape_of(sh, spec)?;
            check(&shape)?;
            let bound = |s: &str| -> Result<i64, String> {
                parse_int(s)
                    .and_then(|v| i64::try_from(v).ok())
                    .ok_or_else(|| format!("`{spec}`: randint bound `{s}` is not a 64-bit integer"))
            };
            Array::randint(dtype, &shape, bound(&lohi[0])?, bound(&lohi[1])?, seed).map_err(|e| format!("`{spec}`: {e}"))
        }
        "fill" | "full" => {
            let Some((value, sh)) = args.split_last() else {
                return Err(format!("`{spec}`: fill takes SHAPE,VALUE, e.g. fill(4,4,0.5):f32"));
            };
            let shape = shape_of(sh, spec)?;
            check(&shape)?;
            let v = scalar_value(value, dtype).map_err(|e| format!("in `{spec}`: {e}"))?;
            let one = v.contiguous_bytes();
            let n = shape.iter().product::<usize>();
            Array::from_bytes(dtype, &shape, one.repeat(n))
        }
        _ => Err(format!(
            "`{spec}`: unknown generator `{}`; use zeros, ones, arange, rand, randint(SHAPE,LO,HI) or fill(SHAPE,VALUE)",
            &body[..open]
        )),
    }
}
