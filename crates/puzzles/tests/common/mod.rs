//! Reference solutions (bodies) for every puzzle, shared by the tests.
#![allow(dead_code)]

use puzzles::{CheckResult, BODY_MARKER};

/// The workspace file a learner would have written: the puzzle's header,
/// the marker, then `body`.
pub fn file_with(slug: &str, body: &str) -> String {
    let p = puzzles::find(slug).expect("known puzzle");
    if p.header.is_empty() {
        body.to_string()
    } else {
        format!("{}{BODY_MARKER}\n{body}", p.header)
    }
}

pub fn check(slug: &str, body: &str) -> CheckResult {
    let p = puzzles::find(slug).expect("known puzzle");
    puzzles::check(p, &file_with(slug, body))
}

pub fn kinds(r: &CheckResult) -> Vec<&'static str> {
    r.findings.iter().map(|f| f.finding.kind.name()).collect()
}

pub const SOLUTIONS: [(&str, &str); 29] = [
    (
        "map",
        r#"
uint local_i = thread_position_in_grid.x;
out[local_i] = a[local_i] + 10;
"#,
    ),
    (
        "zip",
        r#"
uint local_i = thread_position_in_grid.x;
out[local_i] = a[local_i] + b[local_i];
"#,
    ),
    (
        "guard",
        r#"
uint local_i = thread_position_in_grid.x;
if (local_i < uint(a_shape[0])) {
    out[local_i] = a[local_i] + 10;
}
"#,
    ),
    (
        "map_2d",
        r#"
uint thread_x = thread_position_in_grid.x;
uint thread_y = thread_position_in_grid.y;
uint rows = a_shape[0];
uint cols = a_shape[1];
if (thread_x < cols && thread_y < rows) {
    out[thread_y * cols + thread_x] = a[thread_y * cols + thread_x] + 10;
}
"#,
    ),
    (
        "broadcast",
        r#"
uint thread_x = thread_position_in_grid.x;
uint thread_y = thread_position_in_grid.y;
uint rows = a_shape[0];
uint cols = b_shape[1];
if (thread_x < cols && thread_y < rows) {
    out[thread_y * cols + thread_x] = a[thread_y] + b[thread_x];
}
"#,
    ),
    (
        "threadgroups",
        r#"
uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
if (i < uint(a_shape[0])) {
    out[i] = a[i] + 10;
}
"#,
    ),
    (
        "threadgroups_2d",
        r#"
uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
uint j = threadgroup_position_in_grid.y * threads_per_threadgroup.y + thread_position_in_threadgroup.y;
uint rows = a_shape[0];
uint cols = a_shape[1];
if (i < cols && j < rows) {
    out[j * cols + i] = a[j * cols + i] + 10;
}
"#,
    ),
    (
        "threadgroup_memory",
        r#"
threadgroup float shared[THREADGROUP_MEM_SIZE];
uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
uint local_i = thread_position_in_threadgroup.x;
if (i < uint(a_shape[0])) {
    shared[local_i] = a[i];
}
threadgroup_barrier(mem_flags::mem_threadgroup);
if (i < uint(a_shape[0])) {
    out[i] = shared[local_i] + 10;
}
"#,
    ),
    (
        "pooling",
        r#"
threadgroup float shared[THREADGROUP_MEM_SIZE];
uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
uint local_i = thread_position_in_threadgroup.x;
uint n = a_shape[0];
shared[local_i] = i < n ? float(a[i]) : 0.0f;
threadgroup_barrier(mem_flags::mem_threadgroup);
if (i < n) {
    float acc = shared[local_i];
    if (local_i >= 1) { acc += shared[local_i - 1]; }
    if (local_i >= 2) { acc += shared[local_i - 2]; }
    out[i] = acc;
}
"#,
    ),
    (
        "dot_product",
        r#"
threadgroup float shared[THREADGROUP_MEM_SIZE];
uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
uint local_i = thread_position_in_threadgroup.x;
shared[local_i] = i < uint(a_shape[0]) ? a[i] * b[i] : 0.0f;
threadgroup_barrier(mem_flags::mem_threadgroup);
for (uint stride = THREADGROUP_MEM_SIZE / 2; stride > 0; stride /= 2) {
    if (local_i < stride) {
        shared[local_i] += shared[local_i + stride];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
}
if (local_i == 0) {
    out[0] = shared[0];
}
"#,
    ),
    (
        "1d_conv",
        r#"
uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
uint local_i = thread_position_in_threadgroup.x;
threadgroup float a_tile[THREADGROUP_MAX_CONV_SIZE];
threadgroup float b_tile[MAX_CONV];
uint n = a_shape[0];
uint k = b_shape[0];
uint width = threads_per_threadgroup.x;
uint start = threadgroup_position_in_grid.x * width;
a_tile[local_i] = i < n ? a[i] : 0.0f;
if (local_i < k) {
    b_tile[local_i] = b[local_i];
} else if (local_i < k + MAX_CONV - 1) {
    uint t = local_i - k;
    a_tile[width + t] = start + width + t < n ? a[start + width + t] : 0.0f;
}
threadgroup_barrier(mem_flags::mem_threadgroup);
if (i < n) {
    float acc = 0.0f;
    for (uint j = 0; j < k; j++) {
        if (i + j < n) {
            acc += a_tile[local_i + j] * b_tile[j];
        }
    }
    out[i] = acc;
}
"#,
    ),
    (
        "prefix_sum",
        r#"
threadgroup float cache[THREADGROUP_MEM_SIZE];
uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
uint local_i = thread_position_in_threadgroup.x;
cache[local_i] = i < uint(a_shape[0]) ? float(a[i]) : 0.0f;
threadgroup_barrier(mem_flags::mem_threadgroup);
for (uint step = 1; step < THREADGROUP_MEM_SIZE; step *= 2) {
    if (local_i % (2 * step) == 0) {
        cache[local_i] += cache[local_i + step];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
}
if (local_i == 0) {
    out[threadgroup_position_in_grid.x] = cache[0];
}
"#,
    ),
    (
        "axis_sum",
        r#"
threadgroup float cache[THREADGROUP_MEM_SIZE];
uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
uint local_i = thread_position_in_threadgroup.x;
uint batch = threadgroup_position_in_grid.y;
uint cols = a_shape[1];
cache[local_i] = i < cols ? float(a[batch * cols + i]) : 0.0f;
threadgroup_barrier(mem_flags::mem_threadgroup);
for (uint half_width = THREADGROUP_MEM_SIZE / 2; half_width > 0; half_width /= 2) {
    if (local_i < half_width) {
        cache[local_i] += cache[local_i + half_width];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
}
if (local_i == 0) {
    uint blocks = (cols + THREADGROUP_MEM_SIZE - 1) / THREADGROUP_MEM_SIZE;
    out[batch * blocks + threadgroup_position_in_grid.x] = cache[0];
}
"#,
    ),
    (
        "matmul",
        r#"
threadgroup float a_shared[THREADGROUP_MEM_SIZE][THREADGROUP_MEM_SIZE];
threadgroup float b_shared[THREADGROUP_MEM_SIZE][THREADGROUP_MEM_SIZE];

uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
uint j = threadgroup_position_in_grid.y * threads_per_threadgroup.y + thread_position_in_threadgroup.y;

uint local_i = thread_position_in_threadgroup.x;
uint local_j = thread_position_in_threadgroup.y;

uint n = a_shape[0];
float acc = 0.0f;
for (uint base = 0; base < n; base += THREADGROUP_MEM_SIZE) {
    a_shared[local_i][local_j] = (i < n && base + local_j < n) ? a[i * n + base + local_j] : 0.0f;
    b_shared[local_i][local_j] = (base + local_i < n && j < n) ? b[(base + local_i) * n + j] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint k = 0; k < THREADGROUP_MEM_SIZE; k++) {
        acc += a_shared[local_i][k] * b_shared[k][local_j];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
}
if (i < n && j < n) {
    out[i * n + j] = acc;
}
"#,
    ),
    // ---- book two ----
    (
        "simd_sum",
        r#"
uint i = thread_position_in_grid.x;
uint lane = thread_index_in_simdgroup;
uint n = a_shape[0];
float s = simd_sum(i < n ? a[i] : 0.0f);
if (lane == 0 && i < n) {
    out[i / 32] = s;
}
"#,
    ),
    (
        "simd_scan",
        r#"
uint i = thread_position_in_grid.x;
uint lane = thread_index_in_simdgroup;
uint n = a_shape[0];
float s = simd_prefix_inclusive_sum(i < n ? a[i] : 0.0f);
if (i < n) {
    out[i] = s;
}
"#,
    ),
    (
        "threadgroup_reduce",
        r#"
threadgroup float partials[MAX_SIMDGROUPS];
uint i = thread_position_in_grid.x;
uint lane = thread_index_in_simdgroup;
uint simdgroup = simdgroup_index_in_threadgroup;
float s = simd_sum(i < uint(a_shape[0]) ? a[i] : 0.0f);
if (lane == 0) {
    partials[simdgroup] = s;
}
threadgroup_barrier(mem_flags::mem_threadgroup);
if (simdgroup == 0) {
    float total = simd_sum(lane < simdgroups_per_threadgroup ? partials[lane] : 0.0f);
    if (lane == 0) {
        out[threadgroup_position_in_grid.x] = total;
    }
}
"#,
    ),
    (
        "histogram",
        r#"
threadgroup atomic_int bins[BINS];
uint i = thread_position_in_grid.x;
uint local_i = thread_position_in_threadgroup.x;
uint stride = threads_per_grid.x;
if (local_i < BINS) {
    atomic_store_explicit(&bins[local_i], 0, memory_order_relaxed);
}
threadgroup_barrier(mem_flags::mem_threadgroup);
for (uint j = i; j < uint(x_shape[0]); j += stride) {
    atomic_fetch_add_explicit(&bins[x[j]], 1, memory_order_relaxed);
}
threadgroup_barrier(mem_flags::mem_threadgroup);
if (local_i < BINS) {
    int count = atomic_load_explicit(&bins[local_i], memory_order_relaxed);
    if (count > 0) {
        atomic_fetch_add_explicit(&out[local_i], count, memory_order_relaxed);
    }
}
"#,
    ),
    (
        "matvec",
        r#"
uint chunk = threadgroup_position_in_grid.x;
uint row = threadgroup_position_in_grid.y;
uint lane = thread_index_in_simdgroup;
uint cols = a_shape[1];
uint end = min(cols, (chunk + 1) * CHUNK);
float acc = 0.0f;
for (uint c = chunk * CHUNK + lane; c < end; c += 32) {
    acc += a[row * cols + c] * x[c];
}
float s = simd_sum(acc);
if (lane == 0) {
    atomic_fetch_add_explicit(&out[row], s, memory_order_relaxed);
}
"#,
    ),
    (
        "segment_sum",
        r#"
uint i = thread_position_in_grid.x;
uint start = i * PER_THREAD;
uint n = x_shape[0];
if (start < n) {
    uint end = min(n, start + PER_THREAD);
    int current = ids[start];
    float run = 0.0f;
    for (uint j = start; j < end; j++) {
        if (ids[j] != current) {
            atomic_fetch_add_explicit(&out[current], run, memory_order_relaxed);
            current = ids[j];
            run = 0.0f;
        }
        run += x[j];
    }
    atomic_fetch_add_explicit(&out[current], run, memory_order_relaxed);
}
"#,
    ),
    (
        "softmax",
        r#"
uint row = threadgroup_position_in_grid.y;
uint lane = thread_index_in_simdgroup;
uint cols = a_shape[1];
const device float* x = a + row * cols;
float m = -INFINITY;
for (uint c = lane; c < cols; c += 32) {
    m = max(m, x[c]);
}
m = simd_max(m);
float s = 0.0f;
for (uint c = lane; c < cols; c += 32) {
    s += exp(x[c] - m);
}
s = simd_sum(s);
for (uint c = lane; c < cols; c += 32) {
    out[row * cols + c] = exp(x[c] - m) / s;
}
"#,
    ),
    (
        "rms_norm",
        r#"
uint row = threadgroup_position_in_grid.y;
uint lane = thread_index_in_simdgroup;
uint cols = x_shape[1];
float ss = 0.0f;
for (uint c = lane; c < cols; c += 32) {
    float v = x[row * cols + c];
    ss += v * v;
}
float scale = rsqrt(simd_sum(ss) / float(cols) + EPS);
for (uint c = lane; c < cols; c += 32) {
    out[row * cols + c] = x[row * cols + c] * scale * w[c];
}
"#,
    ),
    (
        "cdist",
        r#"
uint j = thread_position_in_grid.x;
uint i = thread_position_in_grid.y;
uint n = a_shape[0];
uint m = b_shape[0];
uint dims = a_shape[1];
if (i < n && j < m) {
    float s = 0.0f;
    for (uint k = 0; k < dims; k++) {
        float d = a[i * dims + k] - b[j * dims + k];
        s += d * d;
    }
    out[i * m + j] = sqrt(s);
}
"#,
    ),
    (
        "grid_sample",
        r#"
uint p = thread_position_in_grid.x;
if (p < uint(grid_shape[0])) {
    int h = img_shape[0];
    int w = img_shape[1];
    float px = ((grid[2 * p] + 1.0f) * w - 1.0f) / 2.0f;
    float py = ((grid[2 * p + 1] + 1.0f) * h - 1.0f) / 2.0f;
    float x0 = floor(px);
    float y0 = floor(py);
    float fx = px - x0;
    float fy = py - y0;
    float acc = 0.0f;
    for (int dy = 0; dy < 2; dy++) {
        for (int dx = 0; dx < 2; dx++) {
            int x = int(x0) + dx;
            int y = int(y0) + dy;
            float wt = (dx ? fx : 1.0f - fx) * (dy ? fy : 1.0f - fy);
            if (x >= 0 && y >= 0 && x < w && y < h) {
                acc += img[y * w + x] * wt;
            }
        }
    }
    out[p] = acc;
}
"#,
    ),
    (
        "grid_sample_vjp",
        r#"
uint p = thread_position_in_grid.x;
if (p < uint(grid_shape[0])) {
    int h = img_shape[0];
    int w = img_shape[1];
    float px = ((grid[2 * p] + 1.0f) * w - 1.0f) / 2.0f;
    float py = ((grid[2 * p + 1] + 1.0f) * h - 1.0f) / 2.0f;
    float x0 = floor(px);
    float y0 = floor(py);
    float fx = px - x0;
    float fy = py - y0;
    float g = cotan[p];
    for (int dy = 0; dy < 2; dy++) {
        for (int dx = 0; dx < 2; dx++) {
            int x = int(x0) + dx;
            int y = int(y0) + dy;
            float wt = (dx ? fx : 1.0f - fx) * (dy ? fy : 1.0f - fy);
            if (x >= 0 && y >= 0 && x < w && y < h) {
                atomic_fetch_add_explicit(&out[y * w + x], g * wt, memory_order_relaxed);
            }
        }
    }
}
"#,
    ),
    (
        "attention_row",
        r#"
uint lane = thread_index_in_simdgroup;
uint d = q_shape[0];
uint n = k_shape[0];
float qc = lane < d ? q[lane] : 0.0f;
float scale = rsqrt(float(d));
float m = -INFINITY;
float l = 0.0f;
float acc = 0.0f;
for (uint j = 0; j < n; j++) {
    float s = simd_sum(lane < d ? qc * k[j * d + lane] : 0.0f) * scale;
    float m2 = max(m, s);
    float c = exp(m - m2);
    float e = exp(s - m2);
    l = l * c + e;
    acc = acc * c + (lane < d ? e * v[j * d + lane] : 0.0f);
    m = m2;
}
if (lane < d) {
    out[lane] = acc / l;
}
"#,
    ),
    (
        "simd_matmul",
        r#"
uint tile_col = threadgroup_position_in_grid.x;
uint tile_row = threadgroup_position_in_grid.y;
uint K = a_shape[1];
uint N = b_shape[1];
simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
for (uint t = 0; t < K; t += 8) {
    simdgroup_float8x8 ta;
    simdgroup_float8x8 tb;
    simdgroup_load(ta, a + tile_row * 8 * K + t, K);
    simdgroup_load(tb, b + t * N + tile_col * 8, N);
    simdgroup_multiply_accumulate(acc, ta, tb, acc);
}
simdgroup_store(acc, out + tile_row * 8 * N + tile_col * 8, N);
"#,
    ),
    (
        "grid_scan",
        r#"// ---- kernel reduce ----
threadgroup float sums[2];
uint i = thread_position_in_grid.x;
float s = simd_sum(i < uint(a_shape[0]) ? a[i] : 0.0f);
if (thread_index_in_simdgroup == 0) {
    sums[simdgroup_index_in_threadgroup] = s;
}
threadgroup_barrier(mem_flags::mem_threadgroup);
if (thread_index_in_threadgroup == 0) {
    partials[threadgroup_position_in_grid.x] = sums[0] + sums[1];
}

// ---- kernel scan ----
uint lane = thread_index_in_simdgroup;
uint blocks = partials_shape[0];
float before = simd_prefix_exclusive_sum(lane < blocks ? partials[lane] : 0.0f);
if (lane < blocks) {
    offsets[lane] = before;
}

// ---- kernel add_back ----
threadgroup float first_total[1];
uint i = thread_position_in_grid.x;
float s = simd_prefix_inclusive_sum(i < uint(a_shape[0]) ? a[i] : 0.0f);
if (simdgroup_index_in_threadgroup == 0 && thread_index_in_simdgroup == 31) {
    first_total[0] = s;
}
threadgroup_barrier(mem_flags::mem_threadgroup);
if (simdgroup_index_in_threadgroup == 1) {
    s += first_total[0];
}
if (i < uint(a_shape[0])) {
    out[i] = s + offsets[threadgroup_position_in_grid.x];
}
"#,
    ),
    (
        "radix_pass",
        r#"// ---- kernel histogram ----
threadgroup atomic_uint bins[BINS];
uint i = thread_position_in_grid.x;
uint local_i = thread_position_in_threadgroup.x;
uint block = threadgroup_position_in_grid.x;
uint n = keys_shape[0];
uint blocks = (n + BLOCK - 1) / BLOCK;
if (local_i < BINS) {
    atomic_store_explicit(&bins[local_i], 0u, memory_order_relaxed);
}
threadgroup_barrier(mem_flags::mem_threadgroup);
if (i < n) {
    atomic_fetch_add_explicit(&bins[(keys[i] >> SHIFT) & (BINS - 1)], 1u, memory_order_relaxed);
}
threadgroup_barrier(mem_flags::mem_threadgroup);
if (local_i < BINS) {
    counts[local_i * blocks + block] = atomic_load_explicit(&bins[local_i], memory_order_relaxed);
}

// ---- kernel scan ----
threadgroup uint totals[8];
uint i = thread_position_in_threadgroup.x;
uint lane = thread_index_in_simdgroup;
uint simdgroup = simdgroup_index_in_threadgroup;
uint cells = counts_shape[0] * counts_shape[1];
uint c = i < cells ? counts[i] : 0u;
uint before = simd_prefix_exclusive_sum(c);
if (lane == 31) {
    totals[simdgroup] = before + c;
}
threadgroup_barrier(mem_flags::mem_threadgroup);
uint base = 0;
for (uint k = 0; k < simdgroup; k++) {
    base += totals[k];
}
if (i < cells) {
    offsets[i] = base + before;
}

// ---- kernel scatter ----
threadgroup uint digits[BLOCK];
uint i = thread_position_in_grid.x;
uint local_i = thread_position_in_threadgroup.x;
uint block = threadgroup_position_in_grid.x;
uint n = keys_shape[0];
uint blocks = (n + BLOCK - 1) / BLOCK;
uint key = i < n ? keys[i] : 0u;
uint d = i < n ? (key >> SHIFT) & (BINS - 1) : BINS;
digits[local_i] = d;
threadgroup_barrier(mem_flags::mem_threadgroup);
if (i < n) {
    uint rank = 0;
    for (uint j = 0; j < local_i; j++) {
        rank += digits[j] == d ? 1u : 0u;
    }
    out[offsets[d * blocks + block] + rank] = key;
}
"#,
    ),
];

/// Puzzle 28's three kernels, one section each.
pub const GRID_SCAN: &str = SOLUTIONS[27].1;

/// Puzzle 29's three kernels (the whole file: its header, then one section each).
pub fn radix_file(sections: &str) -> String {
    file_with("radix_pass", sections)
}

pub fn solution(slug: &str) -> &'static str {
    SOLUTIONS.iter().find(|(s, _)| *s == slug).expect("solution").1
}
