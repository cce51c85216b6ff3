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
/// `np.exp(a - a.max(1, keepdims=True))`, each row divided by its sum.
pub fn softmax(inputs: &[Array]) -> Array {
    let a = &inputs[0];
    let cols = a.shape[1];
    let mut v = Vec::with_capacity(a.len());
    for row in a.to_f64_vec().chunks(cols) {
        let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = row.iter().map(|x| (x - m).exp()).collect();
        let s: f64 = e.iter().sum();
        v.extend(e.iter().map(|x| x / s));
    }
    make(DType::F32, &a.shape, &v)
}

/// The epsilon of puzzle 22 (its header's `EPS`).
pub const RMS_EPS: f64 = 1e-5;

/// `x / np.sqrt((x**2).mean(1, keepdims=True) + 1e-5) * w`.
pub fn rms_norm(inputs: &[Array]) -> Array {
    let (x, w) = (&inputs[0], inputs[1].to_f64_vec());
    let cols = x.shape[1];
    let mut v = Vec::with_capacity(x.len());
    for row in x.to_f64_vec().chunks(cols) {
        let ms = row.iter().map(|x| x * x).sum::<f64>() / cols as f64;
        let r = 1.0 / (ms + RMS_EPS).sqrt();
        v.extend(row.iter().zip(&w).map(|(x, w)| x * r * w));
    }
    make(DType::F32, &x.shape, &v)
}

/// `np.sqrt(((a[:, None, :] - b[None, :, :])**2).sum(-1))`.
pub fn cdist(inputs: &[Array]) -> Array {
    let (a, b) = (&inputs[0], &inputs[1]);
    let (n, m, d) = (a.shape[0], b.shape[0], a.shape[1]);
    let (fa, fb) = (a.to_f64_vec(), b.to_f64_vec());
    let mut v = Vec::with_capacity(n * m);
    for i in 0..n {
        for j in 0..m {
            v.push((0..d).map(|k| (fa[i * d + k] - fb[j * d + k]).powi(2)).sum::<f64>().sqrt());
        }
    }
    make(DType::F32, &[n, m], &v)
}

/// The four pixels bilinear sampling at normalized point (gx, gy) reads from
/// an (h, w) image, with their weights: PyTorch's `grid_sample` with
/// `align_corners=False` and zero padding (pixels outside are skipped).
pub fn bilinear_taps(gx: f64, gy: f64, h: usize, w: usize) -> Vec<(usize, f64)> {
    let x = ((gx + 1.0) * w as f64 - 1.0) / 2.0;
    let y = ((gy + 1.0) * h as f64 - 1.0) / 2.0;
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let mut taps = Vec::with_capacity(4);
    for (dy, wy) in [(0.0, 1.0 - fy), (1.0, fy)] {
        for (dx, wx) in [(0.0, 1.0 - fx), (1.0, fx)] {
            let (px, py) = (x0 + dx, y0 + dy);
            if px >= 0.0 && py >= 0.0 && px < w as f64 && py < h as f64 {
                taps.push((py as usize * w + px as usize, wx * wy));
            }
        }
    }
    taps
}

/// `grid_sample(img[None, None], grid[None, None])` for one channel:
/// `out[p]` is `img` sampled bilinearly at `grid[p] = (x, y)` in [-1, 1].
pub fn grid_sample(inputs: &[Array]) -> Array {
    let (img, grid) = (&inputs[0], inputs[1].to_f64_vec());
    let (h, w) = (img.shape[0], img.shape[1]);
    let px = img.to_f64_vec();
    let v: Vec<f64> = grid.chunks(2).map(|g| bilinear_taps(g[0], g[1], h, w).iter().map(|(k, wt)| px[*k] * wt).sum()).collect();
    make(DType::F32, &[v.len()], &v)
}

/// The VJP of [`grid_sample`] with respect to the image, from the primals
/// (`img`, `grid`) and the cotangent `cotan` of the output: every point
/// sends `cotan[p]` times its bilinear weights to its four pixels.
pub fn grid_sample_vjp(inputs: &[Array]) -> Array {
    let (img, grid, cotan) = (&inputs[0], inputs[1].to_f64_vec(), inputs[2].to_f64_vec());
    let (h, w) = (img.shape[0], img.shape[1]);
    let mut v = vec![0.0; h * w];
    for (g, d) in grid.chunks(2).zip(&cotan) {
        for (k, wt) in bilinear_taps(g[0], g[1], h, w) {
            v[k] += d * wt;
        }
    }
    make(DType::F32, &[h, w], &v)
}

/// One attention row: `softmax(k @ q / sqrt(d)) @ v`.
pub fn attention_row(inputs: &[Array]) -> Array {
    let (q, k, vv) = (inputs[0].to_f64_vec(), &inputs[1], inputs[2].to_f64_vec());
    let (n, d) = (k.shape[0], k.shape[1]);
    let fk = k.to_f64_vec();
    let scale = 1.0 / (d as f64).sqrt();
    let scores: Vec<f64> = (0..n).map(|j| (0..d).map(|c| q[c] * fk[j * d + c]).sum::<f64>() * scale).collect();
    let m = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
    let total: f64 = e.iter().sum();
    let v: Vec<f64> = (0..d).map(|c| (0..n).map(|j| e[j] * vv[j * d + c]).sum::<f64>() / total).collect();
    make(DType::F32, &[d], &v)
}

/// Elements per block (threads per threadgroup) of puzzle 28's scan.
pub const SCAN_BLOCK: usize = 64;

/// Blocks of `n` elements (the last may be short).
pub fn scan_blocks(n: usize) -> usize {
    n.div_ceil(SCAN_BLOCK)
}

/// Stage 1 of puzzle 28: `a` in blocks of 64, one sum per block.
pub fn block_sums(inputs: &[Array]) -> Array {
    chunk_sums(&inputs[0].to_f64_vec(), SCAN_BLOCK)
}

/// Stage 2 of puzzles 28 and 29: `np.cumsum(p) - p` over the flattened
/// input (same dtype and shape), the sum of the cells before each cell.
pub fn exclusive_scan(inputs: &[Array]) -> Array {
    let p = inputs[0].to_f64_vec();
    let mut s = 0.0;
    let v: Vec<f64> = p
        .iter()
        .map(|x| {
            let before = s;
            s += x;
            before
        })
        .collect();
    make(inputs[0].dtype, &inputs[0].shape, &v)
}

/// Stage 3 of puzzle 28: the scan of each block of `a` plus its block's
/// offset, `offsets[i // 64] + cumsum(block)`.
pub fn block_scan_add(inputs: &[Array]) -> Array {
    let (a, offsets) = (inputs[0].to_f64_vec(), inputs[1].to_f64_vec());
    let mut v = Vec::with_capacity(a.len());
    for (g, c) in a.chunks(SCAN_BLOCK).enumerate() {
        let mut s = offsets.get(g).copied().unwrap_or(0.0);
        for x in c {
            s += x;
            v.push(s);
        }
    }
    make(DType::F32, &[v.len()], &v)
}

/// Puzzle 28 as a whole: `np.cumsum(a)`.
pub fn cumsum(inputs: &[Array]) -> Array {
    let mut s = 0.0;
    let v: Vec<f64> = inputs[0]
        .to_f64_vec()
        .iter()
        .map(|x| {
            s += x;
            s
        })
        .collect();
    make(DType::F32, &[v.len()], &v)
}

/// Keys per block (threads per threadgroup) of puzzle 29's radix pass.
pub const RADIX_BLOCK: usize = 64;
/// Digits of 4 bits: 16 bins.
pub const RADIX_BINS: usize = 16;
/// The pass sorts by bits 4..8 of each key (the header's `SHIFT`).
pub const RADIX_SHIFT: u32 = 4;

/// The digit a radix pass sorts `key` by: `(key >> SHIFT) & 15`.
pub fn radix_digit(key: f64) -> usize {
    ((key as u64 as u32) >> RADIX_SHIFT) as usize & (RADIX_BINS - 1)
}

/// Blocks of 64 keys covering `n` keys (the last may be short).
pub fn radix_blocks(n: usize) -> usize {
    n.div_ceil(RADIX_BLOCK)
}

/// Stage 1 of puzzle 29: `counts[d][g]`, how many keys of block g have
/// digit d (16 rows, one column per block).
pub fn radix_counts(inputs: &[Array]) -> Array {
    let keys = inputs[0].to_f64_vec();
    let blocks = radix_blocks(keys.len());
    let mut v = vec![0.0; RADIX_BINS * blocks];
    for (i, &k) in keys.iter().enumerate() {
        v[radix_digit(k) * blocks + i / RADIX_BLOCK] += 1.0;
    }
    make(DType::U32, &[RADIX_BINS, blocks], &v)
}

/// Stage 3 of puzzle 29: every key moved to `offsets[d][g]` plus the
/// number of keys of digit d before it in its block g (its stable rank),
/// from the offsets it was given. Keys sent outside `out` are dropped.
pub fn radix_scatter(inputs: &[Array]) -> Array {
    let (keys, offsets) = (inputs[0].to_f64_vec(), inputs[1].to_f64_vec());
    let blocks = radix_blocks(keys.len());
    let mut v = vec![0.0; keys.len()];
    for (g, block) in keys.chunks(RADIX_BLOCK).enumerate() {
        let mut rank = [0usize; RADIX_BINS];
        for &k in block {
            let d = radix_digit(k);
            let base = offsets.get(d * blocks + g).copied().unwrap_or(0.0).max(0.0) as usize;
            if let Some(cell) = v.get_mut(base + rank[d]) {
                *cell = k;
            }
            rank[d] += 1;
        }
    }
    make(DType::U32, &[keys.len()], &v)
}

/// Puzzle 29 as a whole: the keys sorted by digit, keys with equal digits
/// in their input order (a stable sort).
pub fn radix_pass(inputs: &[Array]) -> Array {
    let mut keys = inputs[0].to_f64_vec();
    keys.sort_by_key(|&k| radix_digit(k));
    make(DType::U32, &[keys.len()], &keys)
}

/// A wrong scatter whose keys all sit in their digit's range but in
/// another order than the input's: it is not stable.
pub fn diagnose_unstable_scatter(_given: &[Array], yours: &Array, expected: &Array) -> Option<String> {
    let (y, e) = (yours.to_f64_vec(), expected.to_f64_vec());
    let (mut ys, mut es) = (y.clone(), e.clone());
    ys.sort_by(f64::total_cmp);
    es.sort_by(f64::total_cmp);
    let same_digits = y.len() == e.len() && y.iter().zip(&e).all(|(a, b)| radix_digit(*a) == radix_digit(*b));
    if ys != es || !same_digits {
        return None;
    }
    let i = y.iter().zip(&e).position(|(a, b)| a != b)?;
    Some(format!(
        "every key is in its digit's range, but keys with equal digits are out of their input order \
(out[{i}] is {}, expected {}, both digit {}): the scatter is not stable. Ranks taken from an atomic \
counter follow the order the threads' atomics happen to run in; count the keys of the same digit \
before each key instead",
        y[i] as u64,
        e[i] as u64,
        radix_digit(e[i])
    ))
}
