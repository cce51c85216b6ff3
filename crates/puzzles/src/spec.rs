//! The spec of every puzzle: plain host code over arrays.

use arrays::{Array, DType};

fn make(dtype: DType, shape: &[usize], values: &[f64]) -> Array {
    Array::from_f64(dtype, shape, values).expect("spec output matches its shape")
}

/// `a + 10` (keeps the dtype of `a`, as the book's spec does).
pub fn add_ten(inputs: &[Array]) -> Array {
    let a = &inputs[0];
    let v: Vec<f64> = a.to_f64_vec().into_iter().map(|x| x + 10.0).collect();
    make(a.dtype, &a.shape, &v)
}

/// `a + b` with broadcasting of size-1 dimensions (same rank).
pub fn add(inputs: &[Array]) -> Array {
    let (a, b) = (&inputs[0], &inputs[1]);
    let shape: Vec<usize> = a.shape.iter().zip(&b.shape).map(|(&x, &y)| x.max(y)).collect();
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut index = vec![0usize; shape.len()];
    for _ in 0..n {
        let ia: Vec<usize> = index.iter().zip(&a.shape).map(|(&i, &d)| if d == 1 { 0 } else { i }).collect();
        let ib: Vec<usize> = index.iter().zip(&b.shape).map(|(&i, &d)| if d == 1 { 0 } else { i }).collect();
        out.push(a.get_f64(&ia) + b.get_f64(&ib));
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    make(a.dtype, &shape, &out)
}

/// `out[i] = a[max(i - 2, 0) ..= i].sum()`.
pub fn pooling(inputs: &[Array]) -> Array {
    let a = inputs[0].to_f64_vec();
    let v: Vec<f64> = (0..a.len()).map(|i| a[i.saturating_sub(2)..=i].iter().sum()).collect();
    make(DType::F32, &[a.len()], &v)
}

/// `[a @ b]` (the scalar as a one-element vector, the output's shape).
pub fn dot(inputs: &[Array]) -> Array {
    let (a, b) = (inputs[0].to_f64_vec(), inputs[1].to_f64_vec());
    let s = a.iter().zip(&b).map(|(x, y)| x * y).sum::<f64>();
    make(DType::F32, &[1], &[s])
}

/// `out[i] = sum_j a[i + j] * b[j]` over the `j` with `i + j` inside `a`.
pub fn conv(inputs: &[Array]) -> Array {
    let (a, b) = (inputs[0].to_f64_vec(), inputs[1].to_f64_vec());
    let v: Vec<f64> =
        (0..a.len()).map(|i| b.iter().enumerate().filter(|(j, _)| i + j < a.len()).map(|(j, w)| a[i + j] * w).sum()).collect();
    make(DType::F32, &[a.len()], &v)
}

/// The threadgroup size of the reductions (the book's `THREADGROUP_MEM_SIZE`).
const GROUP: usize = 8;

/// One sum per block of 8 elements.
pub fn prefix_sum(inputs: &[Array]) -> Array {
    let a = inputs[0].to_f64_vec();
    let v: Vec<f64> = a.chunks(GROUP).map(|c| c.iter().sum()).collect();
    make(DType::F32, &[v.len()], &v)
}

/// For each row, one sum per block of 8 columns.
pub fn axis_sum(inputs: &[Array]) -> Array {
    let a = &inputs[0];
    let (rows, cols) = (a.shape[0], a.shape[1]);
    let flat = a.to_f64_vec();
    let blocks = cols.div_ceil(GROUP);
    let mut v = Vec::with_capacity(rows * blocks);
    for row in flat.chunks(cols) {
        v.extend(row.chunks(GROUP).map(|c| c.iter().sum::<f64>()));
    }
    make(DType::F32, &[rows, blocks], &v)
}

/// `a @ b` for 2-D operands.
pub fn matmul(inputs: &[Array]) -> Array {
    let (a, b) = (&inputs[0], &inputs[1]);
    let (n, k, m) = (a.shape[0], a.shape[1], b.shape[1]);
    let (fa, fb) = (a.to_f64_vec(), b.to_f64_vec());
    let mut v = vec![0.0; n * m];
    for r in 0..n {
        for c in 0..m {
            v[r * m + c] = (0..k).map(|t| fa[r * k + t] * fb[t * m + c]).sum();
        }
    }
    make(DType::F32, &[n, m], &v)
}
