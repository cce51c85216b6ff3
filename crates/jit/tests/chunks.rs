//! Four threads at a time (`codegen/wide.rs`): kernels without barriers or
//! loops run in chunks of four consecutive threads, and a chunk whose
//! threads branch apart runs one thread at a time. Every kernel here must
//! leave the interpreter's buffers bit for bit, on threadgroups of one row
//! (chunks, a short last chunk, threadgroups cut short by the grid) and of
//! several rows (no chunks); and the kernels the chunk code must refuse
//! (a store before a branch the threads may take apart, shifts by amounts
//! that differ) still run, one thread at a time.

use gpu::{CheckLevel, Dispatch, DispatchMode, RunOptions};
use std::collections::BTreeMap;
use std::sync::Arc;

const HEAD: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

/// Kernels, and whether they get the chunk code.
const KERNELS: &[(&str, bool)] = &[
    // Contiguous loads and stores behind the usual bounds test.
    (
        "kernel void k(const device float* a [[buffer(0)]], const device float* b [[buffer(1)]],
                       device float* out [[buffer(2)]], device uint* u [[buffer(3)]],
                       constant uint& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
             if (i < n) out[i] = a[i] * 1.5f + b[i] - a[i] / b[i];
         }",
        true,
    ),
    // Strided and reversed indices, a shared element, signed indices,
    // conversions (out of range, NaN) both ways.
    (
        "kernel void k(const device float* a [[buffer(0)]], const device float* b [[buffer(1)]],
                       device float* out [[buffer(2)]], device uint* u [[buffer(3)]],
                       constant uint& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
             float x = a[2u * i] + a[2u * i + 1u] + a[0];
             if (i < n) out[n - 1u - i] = x;
             int j = int(i) - 3;
             u[i] = uint(int(b[i] * 1e9f)) + uint(b[i] * 3e9f) + uint(j * 5);
             out[n + i] = float(j) + float(u[i] >> 3) + float(int(-7 * int(i)));
         }",
        true,
    ),
    // A branch the threads of a chunk take apart (before any store), one
    // they all take alike (arguments only), selects, min and max, bools.
    (
        "kernel void k(const device float* a [[buffer(0)]], const device float* b [[buffer(1)]],
                       device float* out [[buffer(2)]], device uint* u [[buffer(3)]],
                       constant uint& n [[buffer(4)]], uint i [[thread_position_in_grid]],
                       uint l [[thread_position_in_threadgroup]], uint g [[threadgroup_position_in_grid]]) {
             float x = a[i];
             bool odd = (i % 3u) == 1u;
             if (odd && !(x < 0.25f)) {
                 x = -x * b[i];
             } else if (n > 40u) {
                 x = select(x, b[i], x > b[i]) + float(l) + 1000.0f * float(g);
             }
             uint m = min(i, 100u) + max(i ^ 5u, 7u) + (i << (n & 3u)) + (i >> 2u);
             out[i] = x;
             u[i] = m + (x != x ? 1u : 0u) + uint(x >= 1.0f) * 2u;
         }",
        true,
    ),
    // Every thread writes one element with the same value, and the last
    // thread another.
    (
        "kernel void k(const device float* a [[buffer(0)]], const device float* b [[buffer(1)]],
                       device float* out [[buffer(2)]], device uint* u [[buffer(3)]],
                       constant uint& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
             if (i + 1u == n) out[1] = a[i];
             u[0] = 7u;
             out[i + 2u] = b[i] + 1.0f;
         }",
        true,
    ),
    // An early return, an inlined function that returns from a branch,
    // math functions (once per lane).
    (
        "static float f(float x, uint i) {
             if (i % 5u == 2u) return x * 2.0f;
             return sqrt(fabs(x)) + exp(x * 0.1f) + fmax(x, 0.5f);
         }
         kernel void k(const device float* a [[buffer(0)]], const device float* b [[buffer(1)]],
                       device float* out [[buffer(2)]], device uint* u [[buffer(3)]],
                       constant uint& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
             if (i >= n) return;
             out[i] = f(a[i], i) + pow(fabs(b[i]), 1.5f) + float(isnan(a[i]));
         }",
        true,
    ),
    // 64-bit offsets (MLX's two-dimensional elementwise kernels, candle's
    // `size_t` lengths), an early return on them.
    (
        "kernel void k(const device float* a [[buffer(0)]], const device float* b [[buffer(1)]],
                       device float* out [[buffer(2)]], device uint* u [[buffer(3)]],
                       constant uint& n [[buffer(4)]], uint2 index [[thread_position_in_grid]],
                       uint2 grid [[threads_per_grid]]) {
             size_t dim = size_t(n);
             size_t offset = index.x + grid.x * size_t(index.y);
             if (offset >= dim) return;
             out[offset] = a[offset] * 2.0f + b[offset + 1];
             long j = long(offset) - 3;
             u[offset] = uint(j) + uint(j < 6 ? 1 : 0);
         }",
        true,
    ),
    // Indices with no known spacing: each lane's load and store its own.
    (
        "kernel void k(const device float* a [[buffer(0)]], const device float* b [[buffer(1)]],
                       device float* out [[buffer(2)]], device uint* u [[buffer(3)]],
                       constant uint& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
             uint p = i ^ 1u;
             if (p < n) {
                 out[n - 1u - p] = a[p] + b[i / 3u];
                 u[p] = uint(a[p * 2u] > 0.0f) + p;
             }
         }",
        true,
    ),
    // Short counted loops (unrolled, their counters constants): a stencil
    // with shared weights, an inclusive limit.
    (
        "kernel void k(const device float* a [[buffer(0)]], const device float* b [[buffer(1)]],
                       device float* out [[buffer(2)]], device uint* u [[buffer(3)]],
                       constant uint& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
             if (i + 9u > n) return;
             float acc = 0.0f;
             for (uint j = 0; j < 9u; j++) acc += a[i + j] * b[j];
             uint s = 0;
             for (uint j = 2; j <= 5u; ++j) s += (i >> j) & 1u;
             out[i] = acc;
             u[i] = s;
         }",
        true,
    ),
    // A store, then a branch the threads may take apart: one at a time.
    (
        "kernel void k(const device float* a [[buffer(0)]], const device float* b [[buffer(1)]],
                       device float* out [[buffer(2)]], device uint* u [[buffer(3)]],
                       constant uint& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
             out[i] = a[i];
             if (a[i] > 0.5f) out[i] = out[i] + b[i];
         }",
        false,
    ),
    // Shifts by amounts that differ between threads: one at a time.
    (
        "kernel void k(const device float* a [[buffer(0)]], const device float* b [[buffer(1)]],
                       device float* out [[buffer(2)]], device uint* u [[buffer(3)]],
                       constant uint& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
             u[i] = (i * 2654435761u) >> (i & 31u);
         }",
        false,
    ),
];

fn kernel(src: &str) -> gpu::Kernel {
    let src = format!("{HEAD}{src}");
    let c = msl::compile("k.metal", &src, &Default::default());
    let p = c.program.as_ref().unwrap_or_else(|| panic!("compiles: {:?}", c.diagnostics));
    let (id, _) = p.kernels().next().expect("a kernel");
    gpu::lower::lower_kernel(p, id).expect("lowers")
}

/// Floats with the awkward ones among them (NaN, infinities, signed
/// zeros, subnormals, values out of every integer's range).
fn floats(count: usize, seed: u32) -> Vec<u8> {
    let special = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0, 1e-40, -3e9, 5e9, 0.25, 1.0];
    let mut x = seed.wrapping_mul(2654435761).wrapping_add(12345);
    (0..count)
        .flat_map(|k| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let v = if k % 7 == 3 { special[(x as usize) % special.len()] } else { (x % 20000) as f32 / 10000.0 - 0.5 };
            v.to_le_bytes()
        })
        .collect()
}

fn run(k: &gpu::Kernel, d: &Dispatch, n: u32, compiled: Option<Arc<jit::Native>>) -> BTreeMap<u32, Vec<u8>> {
    let threads = d.grid.iter().product::<u32>() as usize;
    let count = 2 * threads + 8;
    let mut bufs = BTreeMap::from([
        (0u32, floats(count, 1)),
        (1, floats(count, 2)),
        (2, vec![0u8; count * 4]),
        (3, vec![0u8; count * 4]),
        (4, n.to_le_bytes().to_vec()),
    ]);
    let opts = RunOptions {
        check: CheckLevel::None,
        threads: 1,
        compiled: compiled.map(|c| c as Arc<dyn gpu::engine::Compiled>),
        ..Default::default()
    };
    let r = gpu::run(k, d, &mut bufs, &opts);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    bufs
}

#[test]
fn chunks_of_four_leave_the_interpreters_buffers() {
    let shapes: &[([u32; 3], [u32; 3])] = &[
        ([64, 1, 1], [64, 1, 1]),
        ([67, 1, 1], [16, 1, 1]),
        ([1000, 1, 1], [256, 1, 1]),
        ([13, 1, 1], [13, 1, 1]),
        ([3, 1, 1], [3, 1, 1]),
        ([40, 3, 1], [8, 1, 1]),
        ([16, 16, 1], [8, 4, 1]),
    ];
    for (k, (src, chunked)) in KERNELS.iter().enumerate() {
        let kern = kernel(src);
        let native = Arc::new(jit::compile(&kern).expect("compiles"));
        assert_eq!(native.chunked(), *chunked, "kernel {k}: chunk code");
        for (grid, tg) in shapes {
            let d = Dispatch { grid: *grid, threadgroup: *tg, mode: DispatchMode::Threads };
            let threads = grid.iter().product::<u32>();
            for n in [threads, threads.saturating_sub(5).max(1), threads / 2 + 1] {
                let before = native.threadgroups_run();
                let got = run(&kern, &d, n, Some(native.clone()));
                assert!(native.threadgroups_run() > before, "kernel {k}, {grid:?}/{tg:?}: ran compiled");
                let want = run(&kern, &d, n, None);
                for (i, w) in &want {
                    assert!(got[i] == *w, "kernel {k}, grid {grid:?}, threadgroup {tg:?}, n {n}: buffer {i} differs");
                }
            }
        }
    }
}

/// A chunk whose last threads read or write past a buffer's end: the
/// compiled code must give up (never read or write the bytes past the end
/// with the others' 16), and the interpreter decides what happens.
#[test]
fn a_chunk_partly_out_of_bounds_gives_up() {
    let kern = kernel(
        "kernel void k(const device float* a [[buffer(0)]], device float* out [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) {
             out[i] = a[i] + 1.0f;
         }",
    );
    let native = Arc::new(jit::compile(&kern).expect("compiles"));
    assert!(native.chunked());
    let d = Dispatch { grid: [64, 1, 1], threadgroup: [64, 1, 1], mode: DispatchMode::Threads };
    for (a_len, out_len) in [(64, 63), (63, 64), (61, 64), (64, 62)] {
        let run = |compiled: Option<Arc<jit::Native>>| {
            let mut bufs = BTreeMap::from([(0u32, floats(a_len, 3)), (1, vec![0u8; out_len * 4])]);
            let opts = RunOptions {
                check: CheckLevel::None,
                threads: 1,
                compiled: compiled.map(|c| c as Arc<dyn gpu::engine::Compiled>),
                ..Default::default()
            };
            let r = gpu::run(&kern, &d, &mut bufs, &opts);
            (r.findings.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>(), bufs)
        };
        let before = native.threadgroups_run();
        let got = run(Some(native.clone()));
        assert_eq!(native.threadgroups_run(), before, "a: {a_len}, out: {out_len}: the compiled code gave up");
        let want = run(None);
        assert_eq!(got, want, "a: {a_len}, out: {out_len}");
    }
}

/// Under budgets too small for the kernel, the chunk code must end as the
/// interpreter does (it counts nothing: the runner compares the kernel's
/// bound with the budget before running, and gives up when it is over).
#[test]
fn chunked_code_ends_as_the_interpreter_would_for_every_budget() {
    let kern = kernel(KERNELS[2].0);
    let native = Arc::new(jit::compile(&kern).expect("compiles"));
    assert!(native.chunked());
    let d = Dispatch { grid: [64, 1, 1], threadgroup: [32, 1, 1], mode: DispatchMode::Threads };
    let run = |budget: u64, compiled: Option<Arc<jit::Native>>| {
        let mut bufs = BTreeMap::from([
            (0u32, floats(136, 1)),
            (1, floats(136, 2)),
            (2, vec![0u8; 136 * 4]),
            (3, vec![0u8; 136 * 4]),
            (4, 60u32.to_le_bytes().to_vec()),
        ]);
        let opts = RunOptions {
            check: CheckLevel::None,
            threads: 1,
            budget,
            compiled: compiled.map(|c| c as Arc<dyn gpu::engine::Compiled>),
            ..Default::default()
        };
        let r = gpu::run(&kern, &d, &mut bufs, &opts);
        (r.findings.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>(), bufs)
    };
    let (mut runaway, mut ran) = (0, 0);
    for budget in 1..200 {
        let before = native.threadgroups_run();
        let got = run(budget, Some(native.clone()));
        ran += (native.threadgroups_run() > before) as usize;
        let want = run(budget, None);
        runaway += !want.0.is_empty() as usize;
        assert_eq!(got, want, "budget {budget}");
    }
    assert!(runaway > 0 && ran > 0, "small budgets stop the kernel ({runaway}), larger ones let the chunk code run ({ran})");
}
