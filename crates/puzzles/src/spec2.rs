//! Book two's specs: plain host code over arrays, in float64 (the kernels
//! compute in float32; each puzzle states the tolerance that allows for it).

use arrays::{Array, DType};

fn make(dtype: DType, shape: &[usize], values: &[f64]) -> Array {
    Array::from_f64(dtype, shape, values).expect("spec output matches its shape")
}

/// SIMD-groups are 32 threads wide on Apple GPUs.
pub const SIMD_WIDTH: usize = 32;

/// `a.reshape(-1, 32).sum(axis=1)` with the last chunk short.
pub fn chunk_sums_32(inputs: &[Array]) -> Array {
    chunk_sums(&inputs[0].to_f64_vec(), SIMD_WIDTH)
}

fn chunk_sums(a: &[f64], width: usize) -> Array {
    let v: Vec<f64> = a.chunks(width).map(|c| c.iter().sum()).collect();
    make(DType::F32, &[v.len()], &v)
}

/// `np.cumsum` restarted at every 32-element chunk.
pub fn chunk_scan_32(inputs: &[Array]) -> Array {
    let a = inputs[0].to_f64_vec();
    let mut v = Vec::with_capacity(a.len());
    for c in a.chunks(SIMD_WIDTH) {
        let mut s = 0.0;
        for x in c {
            s += x;
            v.push(s);
        }
    }
    make(DType::F32, &[v.len()], &v)
}

/// Threads per threadgroup in puzzle 17's tests.
pub const GROUP: usize = 256;

/// One sum per 256-element chunk (one cell per threadgroup).
pub fn group_sums(inputs: &[Array]) -> Array {
    chunk_sums(&inputs[0].to_f64_vec(), GROUP)
}

/// Number of histogram bins in puzzle 18.
pub const BINS: usize = 16;

/// `np.bincount(x, minlength=16)`.
pub fn histogram(inputs: &[Array]) -> Array {
    let mut v = vec![0.0; BINS];
    for x in inputs[0].to_f64_vec() {
        if (0.0..BINS as f64).contains(&x) {
            v[x as usize] += 1.0;
        }
    }
    make(DType::I32, &[BINS], &v)
}

/// `A @ x` for `A` of shape (M, K).
pub fn matvec(inputs: &[Array]) -> Array {
    let (a, x) = (&inputs[0], inputs[1].to_f64_vec());
    let (m, k) = (a.shape[0], a.shape[1]);
    let fa = a.to_f64_vec();
    let v: Vec<f64> = (0..m).map(|r| (0..k).map(|c| fa[r * k + c] * x[c]).sum()).collect();
    make(DType::F32, &[m], &v)
}

/// Number of segments (output cells) in puzzle 20.
pub const SEGMENTS: usize = 64;

/// `np.bincount(ids, weights=x, minlength=64)`: the sum of each segment.
pub fn segment_sum(inputs: &[Array]) -> Array {
    let segments = SEGMENTS;
    let (x, ids) = (inputs[0].to_f64_vec(), inputs[1].to_f64_vec());
    let mut v = vec![0.0; segments];
    for (x, id) in x.iter().zip(&ids) {
        if (0.0..segments as f64).contains(id) {
            v[*id as usize] += x;
        }
    }
    make(DType::F32, &[segments], &v)
}
