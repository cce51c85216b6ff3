//! The strided n-d array, its constructors, element access and views.

use std::sync::Arc;

use half::{bf16, f16};

use crate::dtype::DType;

/// One element, read without loss.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
}

impl Scalar {
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => b as u8 as f64,
            Scalar::Int(i) => i as f64,
            Scalar::UInt(u) => u as f64,
            Scalar::Float(f) => f,
        }
    }
}

/// An n-d array: raw little-endian element bytes plus shape/strides (in
/// elements) and an element offset (views share data).
#[derive(Clone, Debug)]
pub struct Array {
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    pub offset: usize,
    pub data: Arc<Vec<u8>>,
}

/// Row-major strides for `shape`, in elements.
pub fn row_major_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc: isize = 1;
    for (i, &d) in shape.iter().enumerate().rev() {
        strides[i] = acc;
        acc = acc.wrapping_mul(d.max(1) as isize);
    }
    strides
}

/// Product of the dimensions, or `None` on overflow.
pub fn checked_numel(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// Byte size of an array of `shape` and `dtype`, or an error if it overflows.
pub fn checked_nbytes(dtype: DType, shape: &[usize]) -> Result<usize, String> {
    checked_numel(shape)
        .and_then(|n| n.checked_mul(dtype.size()))
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| format!("shape {} is too large", shape_str(shape)))
}

/// `(2, 3)` / `(5,)` / `()`, as Python prints a tuple.
pub fn shape_str(shape: &[usize]) -> String {
    match shape.len() {
        0 => "()".to_string(),
        1 => format!("({},)", shape[0]),
        _ => format!("({})", shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    }
}

fn encode_f64(dtype: DType, v: f64, out: &mut Vec<u8>) {
    match dtype {
        DType::Bool => out.push((v != 0.0) as u8),
        DType::I8 => out.push(v as i8 as u8),
        DType::I16 => out.extend_from_slice(&(v as i16).to_le_bytes()),
        DType::I32 => out.extend_from_slice(&(v as i32).to_le_bytes()),
        DType::I64 => out.extend_from_slice(&(v as i64).to_le_bytes()),
        DType::U8 => out.push(v as u8),
        DType::U16 => out.extend_from_slice(&(v as u16).to_le_bytes()),
        DType::U32 => out.extend_from_slice(&(v as u32).to_le_bytes()),
        DType::U64 => out.extend_from_slice(&(v as u64).to_le_bytes()),
        DType::F16 => out.extend_from_slice(&f16::from_f64(v).to_bits().to_le_bytes()),
        DType::BF16 => out.extend_from_slice(&bf16::from_f64(v).to_bits().to_le_bytes()),
        DType::F32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
    }
}

fn encode_i64(dtype: DType, v: i64, out: &mut Vec<u8>) {
    match dtype {
        DType::Bool => out.push((v != 0) as u8),
        DType::I8 | DType::U8 => out.push(v as u8),
        DType::I16 | DType::U16 => out.extend_from_slice(&(v as u16).to_le_bytes()),
        DType::I32 | DType::U32 => out.extend_from_slice(&(v as u32).to_le_bytes()),
        DType::I64 | DType::U64 => out.extend_from_slice(&v.to_le_bytes()),
        DType::F16 | DType::BF16 | DType::F32 => encode_f64(dtype, v as f64, out),
    }
}

/// Deterministic PRNG (splitmix64): the same on every machine.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl Array {
    /// A row-contiguous array over `bytes`; the byte count must match.
    pub fn from_bytes(dtype: DType, shape: &[usize], bytes: Vec<u8>) -> Result<Array, String> {
        let need = checked_nbytes(dtype, shape)?;
        if bytes.len() != need {
            return Err(format!(
                "{} bytes do not make an array of shape {} and dtype {} ({} bytes needed)",
                bytes.len(),
                shape_str(shape),
                dtype,
                need
            ));
        }
        Ok(Array { dtype, shape: shape.to_vec(), strides: row_major_strides(shape), offset: 0, data: Arc::new(bytes) })
    }

    fn build(dtype: DType, shape: &[usize], mut f: impl FnMut(usize, &mut Vec<u8>)) -> Array {
        let nbytes = checked_nbytes(dtype, shape).unwrap_or_else(|e| panic!("{e}"));
        let n = nbytes / dtype.size().max(1);
        let mut bytes = Vec::with_capacity(nbytes);
        for i in 0..n {
            f(i, &mut bytes);
        }
        Array::from_bytes(dtype, shape, bytes).expect("size computed above")
    }

    pub fn zeros(dtype: DType, shape: &[usize]) -> Array {
        let nbytes = checked_nbytes(dtype, shape).unwrap_or_else(|e| panic!("{e}"));
        Array::from_bytes(dtype, shape, vec![0u8; nbytes]).expect("size computed above")
    }

    pub fn ones(dtype: DType, shape: &[usize]) -> Array {
        Array::full(dtype, shape, 1.0)
    }

    /// Every element `value` cast to `dtype` (ints saturate, bool is `value != 0`).
    pub fn full(dtype: DType, shape: &[usize], value: f64) -> Array {
        let mut one = Vec::new();
        encode_f64(dtype, value, &mut one);
        Array::build(dtype, shape, |_, out| out.extend_from_slice(&one))
    }

    /// 0, 1, 2, ... in row-major order, cast to `dtype` (ints wrap); bool
    /// alternates false, true.
    pub fn arange(dtype: DType, shape: &[usize]) -> Array {
        Array::build(dtype, shape, |i, out| match dtype {
            DType::Bool => out.push((i % 2) as u8),
            _ => encode_i64(dtype, i as i64, out),
        })
    }

    /// Random values: floats uniform in [0, 1), integers uniform over the
    /// whole range of the dtype, bools fair coin flips. Deterministic in `seed`.
    pub fn rand(dtype: DType, shape: &[usize], seed: u64) -> Array {
        let mut rng = SplitMix64(seed);
        Array::build(dtype, shape, |_, out| {
            let r = rng.next_u64();
            match dtype {
                DType::Bool => out.push((r >> 63) as u8),
                DType::F32 => {
                    let v = (r >> 40) as f32 * (1.0 / (1u64 << 24) as f32);
                    out.extend_from_slice(&v.to_le_bytes())
                }
                DType::F16 => {
                    let v = f16::from_f32((r >> 53) as f32 / (1u32 << 11) as f32);
                    out.extend_from_slice(&v.to_bits().to_le_bytes())
                }
                DType::BF16 => {
                    let v = bf16::from_f32((r >> 56) as f32 / (1u32 << 8) as f32);
                    out.extend_from_slice(&v.to_bits().to_le_bytes())
                }
                _ => out.extend_from_slice(&r.to_le_bytes()[..dtype.size()]),
            }
        })
    }

    /// Random integers uniform in `[lo, hi)` (NumPy's convention), cast to
    /// `dtype`. Errors if the range is empty or does not fit the dtype.
    pub fn randint(dtype: DType, shape: &[usize], lo: i64, hi: i64, seed: u64) -> Result<Array, String> {
        if hi <= lo {
            return Err(format!("randint: empty range [{lo}, {hi}); need lo < hi"));
        }
        if let Some((min, max)) = dtype.int_range() {
            if (lo as i128) < min || (hi as i128 - 1) > max {
                return Err(format!("randint: range [{lo}, {hi}) does not fit dtype {dtype} ([{min}, {max}])"));
            }
        }
        checked_nbytes(dtype, shape)?;
        let span = (hi as i128 - lo as i128) as u128;
        let mut rng = SplitMix64(seed);
        Ok(Array::build(dtype, shape, |_, out| {
            let r = rng.next_u64() as u128;
            let v = (lo as i128 + ((r * span) >> 64) as i128) as i64;
            encode_i64(dtype, v, out)
        }))
    }

    /// Values (row-major) cast to `dtype` as [`Array::full`] casts.
    pub fn from_f64(dtype: DType, shape: &[usize], values: &[f64]) -> Result<Array, String> {
        let n = checked_numel(shape).ok_or("shape too large")?;
        if n != values.len() {
            return Err(format!("{} values do not fill shape {}", values.len(), shape_str(shape)));
        }
        Ok(Array::build(dtype, shape, |i, out| encode_f64(dtype, values[i], out)))
    }

    /// Values (row-major); integers wrap to the dtype's width.
    pub fn from_i64(dtype: DType, shape: &[usize], values: &[i64]) -> Result<Array, String> {
        let n = checked_numel(shape).ok_or("shape too large")?;
        if n != values.len() {
            return Err(format!("{} values do not fill shape {}", values.len(), shape_str(shape)));
        }
        Ok(Array::build(dtype, shape, |i, out| encode_i64(dtype, values[i], out)))
    }

    /// A 0-d array holding one value.
    pub fn scalar_f64(dtype: DType, value: f64) -> Array {
        Array::full(dtype, &[], value)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Byte size of the logical elements.
    pub fn nbytes(&self) -> usize {
        self.len() * self.dtype.size()
    }

    /// Whether the elements are laid out in row-major order with no gaps.
    pub fn is_row_contiguous(&self) -> bool {
        if self.is_empty() {
            return true;
        }
        let mut expect: isize = 1;
        for (&d, &s) in self.shape.iter().zip(&self.strides).rev() {
            if d != 1 && s != expect {
                return false;
            }
            expect *= d as isize;
        }
        true
    }

    /// Element offsets (in elements, into `data`) in row-major logical order.
    pub fn element_offsets(&self) -> Vec<usize> {
        let n = self.len();
        let mut out = Vec::with_capacity(n);
        if n == 0 {
            return out;
        }
        let nd = self.ndim();
        let mut idx = vec![0usize; nd];
        let mut pos = self.offset as isize;
        for _ in 0..n {
            out.push(pos as usize);
            // advance the multi-index
            for ax in (0..nd).rev() {
                idx[ax] += 1;
                pos += self.strides[ax];
                if idx[ax] < self.shape[ax] {
                    break;
                }
                pos -= self.strides[ax] * self.shape[ax] as isize;
                idx[ax] = 0;
            }
        }
        out
    }

    fn elem_bytes(&self, elem: usize) -> &[u8] {
        let sz = self.dtype.size();
        &self.data[elem * sz..(elem + 1) * sz]
    }

    /// Bytes of the elements in row-major order.
    pub fn contiguous_bytes(&self) -> Vec<u8> {
        let sz = self.dtype.size();
        if self.is_row_contiguous() {
            let start = self.offset * sz;
            return self.data[start..start + self.nbytes()].to_vec();
        }
        let mut out = Vec::with_capacity(self.nbytes());
        for e in self.element_offsets() {
            out.extend_from_slice(self.elem_bytes(e));
        }
        out
    }

    /// A row-contiguous copy (offset 0, own data).
    pub fn to_contiguous(&self) -> Array {
        Array::from_bytes(self.dtype, &self.shape, self.contiguous_bytes()).expect("byte count matches shape")
    }

    fn scalar_at(&self, elem: usize) -> Scalar {
        let b = self.elem_bytes(elem);
        match self.dtype {
            DType::Bool => Scalar::Bool(b[0] != 0),
            DType::I8 => Scalar::Int(b[0] as i8 as i64),
            DType::I16 => Scalar::Int(i16::from_le_bytes([b[0], b[1]]) as i64),
            DType::I32 => Scalar::Int(i32::from_le_bytes(b.try_into().unwrap()) as i64),
            DType::I64 => Scalar::Int(i64::from_le_bytes(b.try_into().unwrap())),
            DType::U8 => Scalar::UInt(b[0] as u64),
            DType::U16 => Scalar::UInt(u16::from_le_bytes([b[0], b[1]]) as u64),
            DType::U32 => Scalar::UInt(u32::from_le_bytes(b.try_into().unwrap()) as u64),
            DType::U64 => Scalar::UInt(u64::from_le_bytes(b.try_into().unwrap())),
            DType::F16 => Scalar::Float(f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f64()),
            DType::BF16 => Scalar::Float(bf16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f64()),
            DType::F32 => Scalar::Float(f32::from_le_bytes(b.try_into().unwrap()) as f64),
        }
    }

    fn elem_index(&self, index: &[usize]) -> usize {
        assert_eq!(index.len(), self.ndim(), "index {index:?} has the wrong number of axes for shape {:?}", self.shape);
        let mut pos = self.offset as isize;
        for ((&i, &d), &s) in index.iter().zip(&self.shape).zip(&self.strides) {
            assert!(i < d, "index {index:?} out of bounds for shape {:?}", self.shape);
            pos += i as isize * s;
        }
        pos as usize
    }

    /// The element at a multi-index, exactly. Panics if out of bounds.
    pub fn get(&self, index: &[usize]) -> Scalar {
        self.scalar_at(self.elem_index(index))
    }

    /// The element at a multi-index as f64. Panics if out of bounds.
    pub fn get_f64(&self, index: &[usize]) -> f64 {
        self.get(index).to_f64()
    }

    /// All elements, exactly, in row-major logical order.
    pub fn to_scalars(&self) -> Vec<Scalar> {
        self.element_offsets().into_iter().map(|e| self.scalar_at(e)).collect()
    }

    /// All elements as f64 in row-major logical order.
    pub fn to_f64_vec(&self) -> Vec<f64> {
        self.to_scalars().into_iter().map(Scalar::to_f64).collect()
    }

    /// NumPy basic slicing along one axis: `a[start:stop:step]` with negative
    /// indices counted from the end and clamping. Use `isize::MIN` /
    /// `isize::MAX` (or [`Array::slice_opt`]) for open ends.
    pub fn slice(&self, axis: usize, start: isize, stop: isize, step: isize) -> Result<Array, String> {
        self.slice_opt(axis, Some(start), Some(stop), step)
    }

    /// Like [`Array::slice`] with Python's `None` for omitted bounds.
    pub fn slice_opt(&self, axis: usize, start: Option<isize>, stop: Option<isize>, step: isize) -> Result<Array, String> {
        if axis >= self.ndim() {
            return Err(format!("axis {axis} is out of bounds for an array with {} dimensions", self.ndim()));
        }
        if step == 0 {
            return Err("slice step cannot be zero".into());
        }
        let len = self.shape[axis] as isize;
        let norm = |v: isize, lo: isize, hi: isize| {
            let v = if v < 0 { v.saturating_add(len) } else { v };
            v.clamp(lo, hi)
        };
        let (b, e) = if step > 0 {
            (start.map_or(0, |s| norm(s, 0, len)), stop.map_or(len, |s| norm(s, 0, len)))
        } else {
            (start.map_or(len - 1, |s| norm(s, -1, len - 1)), stop.map_or(-1, |s| norm(s, -1, len - 1)))
        };
        let count = if step > 0 {
            if e > b {
                (e - b + step - 1) / step
            } else {
                0
            }
        } else if b > e {
            (b - e + (-step) - 1) / (-step)
        } else {
            0
        };
        let mut out = self.clone();
        if count > 0 {
            out.offset = (self.offset as isize + b * self.strides[axis]) as usize;
        }
        out.shape[axis] = count as usize;
        out.strides[axis] = self.strides[axis] * step;
        Ok(out)
    }

    /// Permutes the axes (`axes[i]` is the source axis of result axis `i`).
    pub fn transpose(&self, axes: &[usize]) -> Result<Array, String> {
        let nd = self.ndim();
        let mut seen = vec![false; nd];
        if axes.len() != nd {
            return Err(format!("transpose: axes {axes:?} do not match an array with {nd} dimensions"));
        }
        for &a in axes {
            if a >= nd || seen[a] {
                return Err(format!("transpose: axes {axes:?} are not a permutation of 0..{nd}"));
            }
            seen[a] = true;
        }
        let mut out = self.clone();
        out.shape = axes.iter().map(|&a| self.shape[a]).collect();
        out.strides = axes.iter().map(|&a| self.strides[a]).collect();
        Ok(out)
    }

    /// Reverses the axes.
    pub fn t(&self) -> Array {
        let axes: Vec<usize> = (0..self.ndim()).rev().collect();
        self.transpose(&axes).expect("reversal is a permutation")
    }

    /// Same elements in row-major order, new shape (a view when contiguous,
    /// else a copy).
    pub fn reshape(&self, shape: &[usize]) -> Result<Array, String> {
        let n = checked_numel(shape).ok_or_else(|| format!("reshape: shape {shape:?} too large"))?;
        if n != self.len() {
            return Err(format!("cannot reshape array of size {} into shape {}", self.len(), shape_str(shape)));
        }
        let base = if self.is_row_contiguous() { self.clone() } else { self.to_contiguous() };
        Ok(Array { dtype: self.dtype, shape: shape.to_vec(), strides: row_major_strides(shape), offset: base.offset, data: base.data })
    }

    /// Same bytes viewed as another dtype of the same size (e.g. `u16`
    /// bit patterns as `bf16`).
    pub fn reinterpret(&self, dtype: DType) -> Result<Array, String> {
        if dtype.size() != self.dtype.size() {
            return Err(format!(
                "cannot reinterpret {} ({} bytes) as {} ({} bytes): element sizes differ",
                self.dtype,
                self.dtype.size(),
                dtype,
                dtype.size()
            ));
        }
        let mut out = self.clone();
        out.dtype = dtype;
        if dtype == DType::Bool {
            // keep bools canonical (0/1)
            let mut c = out.to_contiguous();
            let bytes: Vec<u8> = c.data.iter().map(|&b| (b != 0) as u8).collect();
            c.data = Arc::new(bytes);
            return Ok(c);
        }
        Ok(out)
    }

    /// Converts every element to `dtype` (as [`Array::from_f64`] casts;
    /// integers convert exactly when they fit).
    pub fn astype(&self, dtype: DType) -> Array {
        let vals = self.to_scalars();
        Array::build(dtype, &self.shape, |i, out| match vals[i] {
            Scalar::Int(v) => encode_i64(dtype, v, out),
            Scalar::UInt(v) if !dtype.is_float() => encode_i64(dtype, v as i64, out),
            s => encode_f64(dtype, s.to_f64(), out),
        })
    }

    /// NumPy's `allclose` (equal_nan = false): same shape and
    /// `|a - b| <= atol + rtol * |b|` everywhere (infinities must match).
    pub fn allclose(&self, other: &Array, rtol: f64, atol: f64) -> bool {
        if self.shape != other.shape {
            return false;
        }
        self.to_f64_vec().into_iter().zip(other.to_f64_vec()).all(|(a, b)| isclose(a, b, rtol, atol))
    }

    /// Exact equality of dtype, shape and elements (bitwise for floats).
    pub fn same_as(&self, other: &Array) -> bool {
        self.dtype == other.dtype && self.shape == other.shape && self.contiguous_bytes() == other.contiguous_bytes()
    }
}

/// NumPy's `isclose` for one pair (equal_nan = false): the element rule of
/// [`Array::allclose`].
pub fn isclose(a: f64, b: f64, rtol: f64, atol: f64) -> bool {
    if a.is_nan() || b.is_nan() {
        return false;
    }
    if a.is_infinite() || b.is_infinite() {
        return a == b;
    }
    (a - b).abs() <= atol + rtol * b.abs()
}
