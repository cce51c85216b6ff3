//! Reading and writing NumPy `.npy` files (format versions 1.0, 2.0, 3.0).

use std::path::Path;
use std::sync::Arc;

use crate::array::{checked_numel, row_major_strides, shape_str, Array};
use crate::dtype::DType;

const MAGIC: &[u8] = b"\x93NUMPY";
/// NumPy leaves room for the first axis to grow this many digits in place.
const GROWTH_AXIS_MAX_DIGITS: usize = 21;
const ALIGN: usize = 64;

/// A parsed header value (the subset of Python literals `.npy` headers use).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lit {
    Str(String),
    Bool(bool),
    Int(u128),
    Tuple(Vec<Lit>),
    List(Vec<Lit>),
    Dict(Vec<(String, Lit)>),
}

struct HeaderParser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl HeaderParser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && (self.s[self.i] as char).is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected `{}` at byte {}", c as char, self.i))
        }
    }

    fn value(&mut self) -> Result<Lit, String> {
        self.depth += 1;
        if self.depth > 32 {
            return Err("header nests too deeply".into());
        }
        let v = match self.peek() {
            Some(q @ (b'\'' | b'"')) => {
                self.i += 1;
                let start = self.i;
                while self.i < self.s.len() && self.s[self.i] != q {
                    if self.s[self.i] == b'\\' {
                        self.i += 1;
                    }
                    self.i += 1;
                }
                if self.i >= self.s.len() {
                    return Err("unterminated string".into());
                }
                let st = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                self.i += 1;
                Lit::Str(st)
            }
            Some(b'(') => {
                self.i += 1;
                let items = self.seq(b')')?;
                Lit::Tuple(items)
            }
            Some(b'[') => {
                self.i += 1;
                Lit::List(self.seq(b']')?)
            }
            Some(b'{') => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    if self.peek() == Some(b'}') {
                        self.i += 1;
                        break;
                    }
                    let k = match self.value()? {
                        Lit::Str(k) => k,
                        _ => return Err("dictionary key is not a string".into()),
                    };
                    self.expect(b':')?;
                    let v = self.value()?;
                    items.push((k, v));
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {}
                        _ => return Err(format!("expected `,` or `}}` at byte {}", self.i)),
                    }
                }
                Lit::Dict(items)
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.i;
                while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
                    self.i += 1;
                }
                // Python 2 long suffix
                if self.i < self.s.len() && (self.s[self.i] == b'L' || self.s[self.i] == b'l') {
                    self.i += 1;
                }
                let digits = std::str::from_utf8(&self.s[start..self.i]).unwrap().trim_end_matches(['L', 'l']);
                Lit::Int(digits.parse::<u128>().map_err(|_| format!("integer `{digits}` is too large"))?)
            }
            Some(_) => {
                let rest = &self.s[self.i..];
                if rest.starts_with(b"True") {
                    self.i += 4;
                    Lit::Bool(true)
                } else if rest.starts_with(b"False") {
                    self.i += 5;
                    Lit::Bool(false)
                } else {
                    return Err(format!("unexpected character at byte {}", self.i));
                }
            }
            None => return Err("unexpected end of header".into()),
        };
        self.depth -= 1;
        Ok(v)
    }

    fn seq(&mut self, close: u8) -> Result<Vec<Lit>, String> {
        let mut items = Vec::new();
        loop {
            if self.peek() == Some(close) {
                self.i += 1;
                return Ok(items);
            }
            items.push(self.value()?);
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(c) if c == close => {}
                _ => return Err(format!("expected `,` or `{}` at byte {}", close as char, self.i)),
            }
        }
    }
}

pub(crate) fn descr_dtype(descr: &str) -> Result<DType, String> {
    if descr.len() < 2 {
        return Err(format!("unsupported dtype descr '{descr}'"));
    }
    let (order, ty) = descr.split_at(1);
    let (order, ty) = match order {
        "<" | ">" | "|" | "=" => (order, ty),
        _ => ("=", descr),
    };
    let dtype = match ty {
        "b1" | "?" => DType::Bool,
        "i1" | "b" => DType::I8,
        "u1" | "B" => DType::U8,
        "i2" | "h" => DType::I16,
        "u2" | "H" => DType::U16,
        "i4" | "i" => DType::I32,
        "u4" | "I" => DType::U32,
        "i8" | "q" => DType::I64,
        "u8" | "Q" => DType::U64,
        "f2" | "e" => DType::F16,
        "f4" | "f" => DType::F32,
        "f8" | "d" => {
            return Err("float64 arrays are not supported: Metal has no double; convert first, \
                 e.g. np.save(path, a.astype(np.float32))"
                .into())
        }
        "V2" => {
            return Err("dtype '|V2' (e.g. ml_dtypes bfloat16) is not supported: save bfloat16 \
                 data as uint16 bit patterns, e.g. np.save(path, a.view(np.uint16))"
                .into())
        }
        _ => {
            return Err(format!(
                "unsupported dtype descr '{descr}'; supported: bool, int8..int64, uint8..uint64, \
                 float16, float32 (little-endian)"
            ))
        }
    };
    if order == ">" && dtype.size() > 1 {
        return Err(format!(
            "big-endian data ('{descr}') is not supported; convert first, \
             e.g. np.save(path, a.astype(a.dtype.newbyteorder('<')))"
        ));
    }
    Ok(dtype)
}

/// The header dictionary of a `.npy` file and where its data starts.
pub(crate) fn parse_header(bytes: &[u8]) -> Result<(Vec<(String, Lit)>, usize), String> {
    let bad = |m: String| Err(format!("not a valid .npy file: {m}"));
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return bad("missing the \\x93NUMPY magic string".into());
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (hlen, hstart) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10usize),
        2 | 3 => {
            if bytes.len() < 12 {
                return bad("truncated header".into());
            }
            (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12)
        }
        _ => return bad(format!("unsupported format version {major}.{minor}")),
    };
    let hend = match hstart.checked_add(hlen) {
        Some(e) if e <= bytes.len() => e,
        _ => return bad(format!("truncated header (header says {hlen} bytes, file has {})", bytes.len() - hstart)),
    };
    let header = &bytes[hstart..hend];
    if major < 3 && !header.is_ascii() {
        return bad("header is not ASCII".into());
    }
    let mut p = HeaderParser { s: header, i: 0, depth: 0 };
    let dict = match p.value() {
        Ok(Lit::Dict(d)) => d,
        Ok(_) => return bad("header is not a dictionary".into()),
        Err(e) => return bad(format!("bad header: {e}")),
    };
    if p.peek().is_some() {
        return bad("trailing characters after the header dictionary".into());
    }
    Ok((dict, hend))
}

impl Array {
    /// Parses the bytes of a `.npy` file. Never panics; never allocates more
    /// than the input size.
    pub fn from_npy_bytes(bytes: &[u8]) -> Result<Array, String> {
        let bad = |m: String| Err(format!("not a valid .npy file: {m}"));
        let (dict, hend) = parse_header(bytes)?;
        let get = |k: &str| dict.iter().find(|(n, _)| n == k).map(|(_, v)| v);
        let dtype = match get("descr") {
            Some(Lit::Str(s)) => descr_dtype(s)?,
            Some(Lit::List(_)) => {
                return Err("structured (record) arrays are not supported: give a struct argument as JSON \
                     (`NAME={\"field\": value, ...}` or `NAME=@file.json`, laid out at the struct's offsets) or as raw uint8 bytes"
                    .into())
            }
            _ => return bad("header has no 'descr' string".into()),
        };
        let fortran = match get("fortran_order") {
            Some(Lit::Bool(b)) => *b,
            _ => return bad("header has no 'fortran_order' boolean".into()),
        };
        let shape: Vec<usize> = match get("shape") {
            Some(Lit::Tuple(items)) => {
                let mut v = Vec::with_capacity(items.len());
                for it in items {
                    match it {
                        Lit::Int(n) if *n <= usize::MAX as u128 => v.push(*n as usize),
                        Lit::Int(_) => return bad("shape dimension is too large".into()),
                        _ => return bad("'shape' holds a non-integer".into()),
                    }
                }
                v
            }
            _ => return bad("header has no 'shape' tuple".into()),
        };
        let data = &bytes[hend..];
        let need = checked_numel(&shape)
            .and_then(|n| n.checked_mul(dtype.size()))
            .ok_or_else(|| format!("shape {} is too large", shape_str(&shape)))?;
        if need != data.len() {
            return Err(format!(
                "{} data: shape {} of {} needs {need} bytes, the file has {}",
                if need > data.len() { "truncated" } else { "size mismatch in" },
                shape_str(&shape),
                dtype,
                data.len()
            ));
        }
        let mut raw = data.to_vec();
        if dtype == DType::Bool {
            for b in &mut raw {
                *b = (*b != 0) as u8;
            }
        }
        if fortran && shape.len() > 1 {
            let mut rev = shape.clone();
            rev.reverse();
            let mut strides = row_major_strides(&rev);
            strides.reverse();
            let view = Array { dtype, shape, strides, offset: 0, data: Arc::new(raw) };
            return Ok(view.to_contiguous());
        }
        Array::from_bytes(dtype, &shape, raw)
    }

    /// Reads a `.npy` file.
    pub fn read_npy(path: impl AsRef<Path>) -> Result<Array, String> {
        let path = path.as_ref();
        let bytes = files::read_bytes(path, files::MAX_DATA_BYTES, "the array")?;
        Array::from_npy_bytes(&bytes).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The `.npy` header dictionary NumPy writes for this array (unpadded).
    pub fn npy_header_dict(&self) -> String {
        format!("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", self.dtype.npy_descr(), shape_str(&self.shape))
    }

    /// The bytes of a `.npy` file (C order; version 1.0 unless the header is
    /// too long), laid out as NumPy writes them. bf16 is written as `<u2`.
    pub fn to_npy_bytes(&self) -> Vec<u8> {
        let mut header = self.npy_header_dict();
        if let Some(&d0) = self.shape.first() {
            header.push_str(&" ".repeat(GROWTH_AXIS_MAX_DIGITS.saturating_sub(d0.to_string().len())));
        }
        let (version, prelude) = if header.len() + 1 + 10 <= 65535 { (1u8, 10) } else { (2u8, 12) };
        let pad = (ALIGN - (prelude + header.len() + 1) % ALIGN) % ALIGN;
        header.push_str(&" ".repeat(pad));
        header.push('\n');
        let mut out = Vec::with_capacity(prelude + header.len() + self.nbytes());
        out.extend_from_slice(MAGIC);
        out.push(version);
        out.push(0);
        if version == 1 {
            out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        } else {
            out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        }
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(&self.contiguous_bytes());
        out
    }

    /// Writes a `.npy` file.
    pub fn write_npy(&self, path: impl AsRef<Path>) -> Result<(), String> {
        let path = path.as_ref();
        files::write_atomic(path, &self.to_npy_bytes()).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}
