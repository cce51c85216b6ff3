//! Book two: puzzles 15 on, as data. Where book one ends (a tiled matmul),
//! these go on to what real kernels use: SIMD-group functions, atomics, and
//! numerically careful reductions.
//!
//! Conventions of book two: random inputs are floats (their sums depend on
//! the order of additions, so each puzzle states a tolerance), sizes are not
//! multiples of the threadgroup (the last threadgroup sticks out), and the
//! score has extra columns (atomics, barriers, SIMD-group functions) where a
//! puzzle sets a target for them.

use crate::spec2;
use crate::{Dispatch, Fill, InputSpec, Puzzle, Random, Stage, Targets, TestCase, Tolerance, NO_TARGETS};
use arrays::DType::{F32, I32, U32};

pub const SIMD: &str = "SIMD-groups";
pub const ATOMICS: &str = "Atomics";
pub const ML: &str = "ML kernels";
pub const PIPELINES: &str = "Pipelines";

/// Sums of up to a few hundred float32 values in [-4, 4) added in any
/// order stay well within this of the exact sum.
const SUM_TOLERANCE: Tolerance = Tolerance { rtol: 1e-5, atol: 1e-3 };

const fn input(name: &'static str, dtype: arrays::DType, shape: &'static [usize], fill: Fill, random: Random) -> InputSpec {
    InputSpec { name, dtype, shape, fill, transpose: false, random }
}

/// Floats: arange in the book's test, uniform in [-4, 4) in random tests.
const fn floats(name: &'static str, shape: &'static [usize]) -> InputSpec {
    input(name, F32, shape, Fill::Arange, Random::Floats(-4.0, 4.0))
}

const fn test(
    name: &'static str,
    inputs: &'static [InputSpec],
    output_shape: &'static [usize],
    grid: [u32; 3],
    threadgroup: [u32; 3],
) -> TestCase {
    TestCase { name, inputs, output_shape, grid, threadgroup }
}

pub const BOOK_TWO: [Puzzle; 15] = [
    Puzzle {
        number: 15,
        slug: "simd_sum",
        answer_lines: 5,
        title: "SIMD Sum",
        kernel_name: "simd_sum",
        explanation: "The threads of a threadgroup run in SIMD-groups of 32 that execute in lock-step, \
and the threads of one SIMD-group can combine their registers directly: `simd_sum(v)` returns the \
sum of `v` over the active threads of the SIMD-group, to every one of them, with no threadgroup \
memory and no barrier. Write into `out[k]` the sum of the k-th block of 32 elements of `a` (the \
last block may be short). In the second test the grid is rounded up to whole threadgroups of 64, \
so threads past the end of `a` exist and must contribute nothing. Random tests use floats: the order of additions \
changes the last bits, so results are compared with a tolerance (1e-5 relative + 1e-3 absolute).",
        input_names: &["a"],
        output_name: "out",
        header: "",
        starter: "uint i = thread_position_in_grid.x;\nuint lane = thread_index_in_simdgroup;\n",
        tests: &[
            test("SIMD Sum (Simple)", &[floats("a", &[32])], &[1], [32, 1, 1], [32, 1, 1]),
            test("SIMD Sum (Edges)", &[floats("a", &[100])], &[4], [128, 1, 1], [64, 1, 1]),
        ],
        spec: spec2::chunk_sums_32,
        // One load and one store per thread; nothing through threadgroup
        // memory; a shuffle tree (5 rounds) is allowed, one simd_sum is best.
        targets: Targets {
            global_reads: Some(1),
            global_writes: Some(1),
            shared_reads: Some(0),
            shared_writes: Some(0),
            barriers: Some(0),
            simd_ops: Some(5),
            ..NO_TARGETS
        },
        hints: &[
            "Threads past the end load 0 instead of reading `a`; every thread then calls `simd_sum` with its value.",
            "Block k is SIMD-group k of the grid: `i / 32`. Only one thread per block (lane 0) writes the result.",
        ],
        chapter: SIMD,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: SUM_TOLERANCE,
        stages: &[],
    },
    Puzzle {
        number: 16,
        slug: "simd_scan",
        answer_lines: 5,
        title: "SIMD Scan",
        kernel_name: "simd_scan",
        explanation: "An inclusive scan inside each SIMD-group: `out[i]` is the sum of the elements of \
`a` from the start of i's block of 32 up to and including `a[i]` (NumPy: `np.cumsum` of each \
32-element block). Threadgroups hold 64 threads, two SIMD-groups, and each SIMD-group scans its own \
block. Use the SIMD-group functions: `simd_prefix_inclusive_sum`, or rounds of `simd_shuffle_up` \
where lane l adds the value of lane l - d. No threadgroup memory, no barriers. Random tests use \
floats (tolerance 1e-5 relative + 1e-3 absolute).",
        input_names: &["a"],
        output_name: "out",
        header: "",
        starter: "uint i = thread_position_in_grid.x;\nuint lane = thread_index_in_simdgroup;\n",
        tests: &[
            test("SIMD Scan (Simple)", &[floats("a", &[32])], &[32], [32, 1, 1], [32, 1, 1]),
            test("SIMD Scan (Edges)", &[floats("a", &[100])], &[100], [128, 1, 1], [64, 1, 1]),
        ],
        spec: spec2::chunk_scan_32,
        // As puzzle 15: registers only; 5 shuffle rounds or one prefix sum.
        targets: Targets {
            global_reads: Some(1),
            global_writes: Some(1),
            shared_reads: Some(0),
            shared_writes: Some(0),
            barriers: Some(0),
            simd_ops: Some(5),
            ..NO_TARGETS
        },
        hints: &[
            "`simd_prefix_inclusive_sum(v)` is the whole scan; `simd_prefix_exclusive_sum` leaves out the thread's own value.",
            "With shuffles: for d = 1, 2, 4, 8, 16, take `simd_shuffle_up(s, d)` and add it only when `lane >= d`.",
            "Guard the load and the store: lanes past the end still take part in the SIMD-group function with a 0.",
        ],
        chapter: SIMD,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: SUM_TOLERANCE,
        stages: &[],
    },
    Puzzle {
        number: 17,
        slug: "threadgroup_reduce",
        answer_lines: 11,
        title: "Threadgroup Reduce",
        kernel_name: "threadgroup_reduce",
        explanation: "Sum each threadgroup's 256 elements of `a` into `out[group]`, in two levels: every \
SIMD-group reduces its 32 values with `simd_sum`, one thread of each writes the partial sum into \
threadgroup memory, all threads meet at a single barrier, and then the first SIMD-group reduces the \
partials (there are `simdgroups_per_threadgroup` of them) with `simd_sum` again. Compare Prefix Sum \
(puzzle 12): there, every round of halving needed a barrier. The last threadgroup reaches \
past the end of `a`. Tolerance: 1e-5 relative + 1e-3 absolute.",
        input_names: &["a"],
        output_name: "out",
        header: "constant uint MAX_SIMDGROUPS = 32;\n",
        starter: "threadgroup float partials[MAX_SIMDGROUPS];\n\
uint i = thread_position_in_grid.x;\n\
uint lane = thread_index_in_simdgroup;\n\
uint simdgroup = simdgroup_index_in_threadgroup;\n",
        tests: &[
            test("Threadgroup Reduce (Simple)", &[floats("a", &[256])], &[1], [256, 1, 1], [256, 1, 1]),
            test("Threadgroup Reduce (Edges)", &[floats("a", &[1000])], &[4], [1024, 1, 1], [256, 1, 1]),
            test("Threadgroup Reduce (Short)", &[floats("a", &[300])], &[2], [512, 1, 1], [256, 1, 1]),
        ],
        spec: spec2::group_sums,
        // One partial written and read per thread at most, one barrier; two
        // simd_sums, or two shuffle trees of 5 rounds.
        targets: Targets {
            global_reads: Some(1),
            global_writes: Some(1),
            shared_reads: Some(1),
            shared_writes: Some(1),
            barriers: Some(1),
            simd_ops: Some(10),
            ..NO_TARGETS
        },
        hints: &[
            "Lane 0 of each SIMD-group stores `partials[simdgroup]`; after the barrier, lane l of SIMD-group 0 loads `partials[l]` (0 when l is past the last SIMD-group).",
            "The barrier must be reached by every thread: put it outside any `if`.",
        ],
        chapter: SIMD,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: SUM_TOLERANCE,
        stages: &[],
    },
    Puzzle {
        number: 18,
        slug: "histogram",
        answer_lines: 14,
        title: "Histogram",
        kernel_name: "histogram",
        explanation: "Count how often each value 0..15 occurs in `x` (NumPy: \
`np.bincount(x, minlength=16)`) into the 16 bins of `out`, which is `device atomic<int>*`: \
`atomic_fetch_add_explicit(&out[b], 1, memory_order_relaxed)` adds 1 safely even when other threads \
add to the same bin. The grid is smaller than `x`: each thread walks `x` with a stride of the whole \
grid. Device atomics on a few hot bins are slow, so count into a threadgroup histogram first \
(`threadgroup atomic_int`, zeroed at the start), then let each bin of it be added to `out` once per \
threadgroup: one device atomic per thread at most.",
        input_names: &["x"],
        output_name: "out",
        header: "constant uint BINS = 16;\n",
        starter: "threadgroup atomic_int bins[BINS];\n\
uint i = thread_position_in_grid.x;\n\
uint local_i = thread_position_in_threadgroup.x;\n\
uint stride = threads_per_grid.x;\n",
        tests: &[
            test("Histogram (Simple)", &[input("x", I32, &[64], Fill::Seeded(18), Random::Ints(0, 16))], &[16], [64, 1, 1], [64, 1, 1]),
            test("Histogram (Strided)", &[input("x", I32, &[1000], Fill::Seeded(1800), Random::Ints(0, 16))], &[16], [128, 1, 1], [64, 1, 1]),
            test("Histogram (Skewed)", &[input("x", I32, &[333], Fill::Seeded(1801), Random::Ints(3, 6))], &[16], [192, 1, 1], [64, 1, 1]),
        ],
        spec: spec2::histogram,
        // One device atomic per thread (a bin per thread, threadgroups of
        // 64 >= 16 bins); zero, count, flush: two barriers.
        targets: Targets { device_atomics: Some(1), barriers: Some(2), ..NO_TARGETS },
        hints: &[
            "Zero the threadgroup bins (thread b stores 0 into bin b), barrier, count with `atomic_fetch_add_explicit` on `bins[x[j]]`, barrier again.",
            "After the second barrier, thread b < BINS loads its bin with `atomic_load_explicit` and adds it to `out[b]` (skip it when 0 if you like).",
            "The loop: `for (uint j = i; j < uint(x_shape[0]); j += stride)`.",
        ],
        chapter: ATOMICS,
        output_dtype: I32,
        atomic_outputs: true,
        tolerance: Tolerance { rtol: 0.0, atol: 0.0 },
        stages: &[],
    },
    Puzzle {
        number: 19,
        slug: "matvec",
        answer_lines: 10,
        title: "Matrix-Vector Atomics",
        kernel_name: "matvec",
        explanation: "Multiply the (M, K) matrix `a` by the vector `x` (NumPy: `a @ x`) when rows are \
long: split each row into chunks of CHUNK = 128 columns and give each chunk its own threadgroup of \
32 threads (one SIMD-group), so that many threadgroups work on one row. Threadgroup (c, r) handles \
chunk c of row r: its threads stride through the chunk, the SIMD-group sums their partial dot \
products with `simd_sum`, and one thread adds the chunk's sum to `out[r]` with a float atomic \
(`out` is `device atomic<float>*`). Rows need not be a multiple of CHUNK. The chunks arrive in any \
order, so the result is compared with a tolerance (1e-4 relative + 1e-3 absolute).",
        input_names: &["a", "x"],
        output_name: "out",
        header: "constant uint CHUNK = 128;\n",
        starter: "uint chunk = threadgroup_position_in_grid.x;\n\
uint row = threadgroup_position_in_grid.y;\n\
uint lane = thread_index_in_simdgroup;\n",
        tests: &[
            test("Matvec (Simple)", &[floats("a", &[4, 128]), floats("x", &[128])], &[4], [32, 4, 1], [32, 1, 1]),
            test("Matvec (Edges)", &[floats("a", &[5, 300]), floats("x", &[300])], &[5], [96, 5, 1], [32, 1, 1]),
            test("Matvec (Long)", &[floats("a", &[3, 1000]), floats("x", &[1000])], &[3], [256, 3, 1], [32, 1, 1]),
        ],
        spec: spec2::matvec,
        // Four columns per thread (128 / 32): 4 of `a` and 4 of `x`; one
        // atomic per SIMD-group, none for plain stores.
        // One atomic per threadgroup (one SIMD-group): an atomic from every
        // thread is 32.
        targets: Targets {
            global_reads: Some(8),
            global_writes: Some(0),
            device_atomics: Some(1),
            threadgroup_device_atomics: Some(1),
            ..NO_TARGETS
        },
        hints: &[
            "The chunk's columns are `chunk * CHUNK + lane`, `+ 32`, `+ 64`, `+ 96`; stop at the end of the row (`a_shape[1]`).",
            "Accumulate in a register, `simd_sum` it, and let lane 0 call `atomic_fetch_add_explicit(&out[row], s, memory_order_relaxed)`.",
        ],
        chapter: ATOMICS,
        output_dtype: F32,
        atomic_outputs: true,
        tolerance: Tolerance { rtol: 1e-4, atol: 1e-3 },
        stages: &[],
    },
    Puzzle {
        number: 20,
        slug: "segment_sum",
        answer_lines: 15,
        title: "Segment Sum",
        kernel_name: "segment_sum",
        explanation: "`ids` assigns each element of `x` to one of 64 segments, and is sorted: the \
elements of a segment are next to each other (some segments are empty). Write each segment's sum \
into `out` (NumPy: `np.bincount(ids, weights=x, minlength=64)`); `out` is `device atomic<float>*`. \
Each thread owns PER_THREAD = 8 consecutive elements (the last thread fewer). Because the ids are \
sorted, a thread can add up a run of equal ids in a register and send one atomic when the id \
changes and one at the end; in these tests every segment that has elements has at least 8, so a \
thread never needs more than 2 atomics. Tolerance: 1e-5 relative + 1e-3 absolute.",
        input_names: &["x", "ids"],
        output_name: "out",
        header: "constant uint PER_THREAD = 8;\n",
        starter: "uint i = thread_position_in_grid.x;\nuint start = i * PER_THREAD;\n",
        tests: &[
            test(
                "Segment Sum (Simple)",
                &[floats("x", &[64]), input("ids", I32, &[64], Fill::Seeded(20), Random::Runs { min: 8, max: 20, ids: 64 })],
                &[64],
                [8, 1, 1],
                [8, 1, 1],
            ),
            test(
                "Segment Sum (Edges)",
                &[
                    input("x", F32, &[1000], Fill::Seeded(2000), Random::Floats(-4.0, 4.0)),
                    input("ids", I32, &[1000], Fill::Seeded(2001), Random::Runs { min: 8, max: 40, ids: 64 }),
                ],
                &[64],
                [128, 1, 1],
                [32, 1, 1],
            ),
        ],
        spec: spec2::segment_sum,
        // Runs of at least 8: a thread's 8 elements span at most 2 segments.
        targets: Targets { global_writes: Some(0), device_atomics: Some(2), ..NO_TARGETS },
        hints: &[
            "Loop j from `start` to `min(start + PER_THREAD, n)`; keep the current id and a running sum.",
            "When `ids[j]` differs from the current id, add the running sum to `out[current]` atomically and start over.",
            "Threads whose `start` is past the end do nothing.",
        ],
        chapter: ATOMICS,
        output_dtype: F32,
        atomic_outputs: true,
        tolerance: SUM_TOLERANCE,
        stages: &[],
    },
    Puzzle {
        number: 21,
        slug: "softmax",
        answer_lines: 14,
        title: "Softmax",
        kernel_name: "softmax",
        explanation: "Softmax of each row of `a`: `out[r][c] = exp(a[r][c]) / sum_j exp(a[r][j])`. One \
SIMD-group (a threadgroup of 32 threads) per row; the threads stride along the row. The inputs are \
large: `exp(100)` is already infinite in float32, so compute it the stable way, subtracting the \
row's maximum first (`exp(a - max)` is at most 1; the quotient does not change). Reductions over \
the row: `simd_max` and `simd_sum`. Tolerance: 1e-4 relative + 1e-6 absolute. An output that is \
`nan` or `inf`? `metal-puzzles debug 21`, then `break nan` and `c`, stops where a thread first made \
one and names the operation and its operands (`exp(121.3) overflows float`); on your own kernels \
`run`/`mlx --check nan` reports where each NaN in the outputs was born.",
        input_names: &["a"],
        output_name: "out",
        header: "",
        starter: "uint row = threadgroup_position_in_grid.y;\nuint lane = thread_index_in_simdgroup;\nuint cols = a_shape[1];\n",
        tests: &[
            test("Softmax (Simple)", &[input("a", F32, &[4, 40], Fill::Arange, Random::Floats(-100.0, 100.0))], &[4, 40], [32, 4, 1], [32, 1, 1]),
            test("Softmax (Edges)", &[input("a", F32, &[3, 100], Fill::Arange, Random::Floats(-100.0, 100.0))], &[3, 100], [32, 3, 1], [32, 1, 1]),
            test("Softmax (Short rows)", &[input("a", F32, &[5, 7], Fill::Arange, Random::Floats(-100.0, 100.0))], &[5, 7], [32, 5, 1], [32, 1, 1]),
            // Every value far below 0: a running maximum that starts at 0
            // instead of -INFINITY makes every exp underflow to 0 (0 / 0).
            test(
                "Softmax (All negative)",
                &[input("a", F32, &[3, 50], Fill::Seeded(2100), Random::Floats(-300.0, -200.0))],
                &[3, 50],
                [32, 3, 1],
                [32, 1, 1],
            ),
        ],
        spec: spec2::softmax,
        // Three passes over a row of up to 4 values per thread (max, sum,
        // write); an online max-and-sum pass needs only two.
        targets: Targets { global_reads: Some(12), global_writes: Some(4), ..NO_TARGETS },
        hints: &[
            "Pass 1: each thread's maximum over its columns, then `simd_max`. Pass 2: the sum of `exp(x - max)`, then `simd_sum`.",
            "Pass 3 writes `exp(x - max) / sum`. Start the maximum at `-INFINITY`, not 0: rows can be all negative.",
        ],
        chapter: ML,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: Tolerance { rtol: 1e-4, atol: 1e-6 },
        stages: &[],
    },
    Puzzle {
        number: 22,
        slug: "rms_norm",
        answer_lines: 9,
        title: "RMS Norm",
        kernel_name: "rms_norm",
        explanation: "RMS normalization of each row of `x`, scaled by the weights `w`: \
`out[r][c] = x[r][c] / sqrt(mean_j(x[r][j]^2) + EPS) * w[c]` (NumPy: \
`x / np.sqrt((x**2).mean(1, keepdims=True) + EPS) * w`). One SIMD-group per row, striding along \
it; `rsqrt` computes `1 / sqrt` in one step. Divide by the number of columns, not by 32. \
Tolerance: 1e-4 relative + 1e-5 absolute.",
        input_names: &["x", "w"],
        output_name: "out",
        header: "constant float EPS = 1e-5;\n",
        starter: "uint row = threadgroup_position_in_grid.y;\nuint lane = thread_index_in_simdgroup;\nuint cols = x_shape[1];\n",
        tests: &[
            test("RMS Norm (Simple)", &[floats("x", &[4, 64]), floats("w", &[64])], &[4, 64], [32, 4, 1], [32, 1, 1]),
            test("RMS Norm (Edges)", &[floats("x", &[3, 100]), floats("w", &[100])], &[3, 100], [32, 3, 1], [32, 1, 1]),
            test("RMS Norm (Short rows)", &[floats("x", &[6, 20]), floats("w", &[20])], &[6, 20], [32, 6, 1], [32, 1, 1]),
            // Rows of zeros: without EPS the scale is 1 / sqrt(0).
            test(
                "RMS Norm (Zero rows)",
                &[input("x", F32, &[4, 40], Fill::Seeded(2200), Random::FloatsZeroRows { lo: -4.0, hi: 4.0, every: 2 }), floats("w", &[40])],
                &[4, 40],
                [32, 4, 1],
                [32, 1, 1],
            ),
        ],
        spec: spec2::rms_norm,
        // Up to 4 columns per thread: x twice (sum of squares, then the
        // output) and w once.
        targets: Targets { global_reads: Some(12), global_writes: Some(4), ..NO_TARGETS },
        hints: &[
            "Sum `x*x` over the thread's columns, `simd_sum` it, and take `rsqrt(total / cols + EPS)`.",
            "Then each thread writes its columns: `x * scale * w`.",
        ],
        chapter: ML,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: Tolerance { rtol: 1e-4, atol: 1e-5 },
        stages: &[],
    },
    Puzzle {
        number: 23,
        slug: "cdist",
        answer_lines: 11,
        title: "Pairwise Distances",
        kernel_name: "cdist",
        explanation: "Euclidean distances between every point of `a` (N points in 3-D) and every point \
of `b` (M points): `out[i][j] = sqrt(sum_k (a[i][k] - b[j][k])^2)` (SciPy's `cdist`). One thread \
per (i, j): x picks j, y picks i, in 8 x 8 threadgroups over a grid rounded up past N and M. Take \
the differences directly: the shortcut `|a|^2 + |b|^2 - 2 a.b` cancels badly when points are close \
and can even go negative under the square root. In the first test `a` and `b` are the same points, \
so the diagonal must be exactly 0; in the third the points lie close together around (1000, 1000, \
1000), where the squared norms are too large for float32 to keep the small distances. Tolerance: 1e-5 relative + 1e-4 absolute.",
        input_names: &["a", "b"],
        output_name: "out",
        header: "",
        starter: "uint j = thread_position_in_grid.x;\nuint i = thread_position_in_grid.y;\n",
        tests: &[
            test(
                "cdist (Same points)",
                &[
                    input("a", F32, &[5, 3], Fill::Seeded(23), Random::Floats(-4.0, 4.0)),
                    input("b", F32, &[5, 3], Fill::Seeded(23), Random::Floats(-4.0, 4.0)),
                ],
                &[5, 5],
                [8, 8, 1],
                [8, 8, 1],
            ),
            test("cdist (Edges)", &[floats("a", &[37, 3]), floats("b", &[29, 3])], &[37, 29], [32, 40, 1], [8, 8, 1]),
            // Close points far from the origin: |a|^2 is about 3e6, where
            // float32 steps by 0.25, so the shortcut through the norms loses
            // the distance; the differences themselves are exact.
            test(
                "cdist (Far from the origin)",
                &[
                    input("a", F32, &[20, 3], Fill::Seeded(2300), Random::Floats(1000.0, 1004.0)),
                    input("b", F32, &[13, 3], Fill::Seeded(2301), Random::Floats(1000.0, 1004.0)),
                ],
                &[20, 13],
                [16, 24, 1],
                [8, 8, 1],
            ),
        ],
        spec: spec2::cdist,
        // Three coordinates of each point, one distance.
        targets: Targets { global_reads: Some(6), global_writes: Some(1), ..NO_TARGETS },
        hints: &[
            "Guard both indices against `a_shape[0]` and `b_shape[0]`; the dimension is `a_shape[1]`.",
            "Accumulate `d * d` for `d = a[i*D + k] - b[j*D + k]`, then `sqrt` once.",
        ],
        chapter: ML,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: Tolerance { rtol: 1e-5, atol: 1e-4 },
        stages: &[],
    },
    Puzzle {
        number: 24,
        slug: "grid_sample",
        answer_lines: 22,
        title: "Grid Sample",
        kernel_name: "grid_sample",
        explanation: "Sample the (H, W) image `img` at P points with bilinear interpolation, as PyTorch's \
`grid_sample` does with `align_corners=False` and zero padding: point p is `grid[p] = (x, y)` in \
[-1, 1] (x across, y down); its pixel coordinates are `px = ((x + 1) * W - 1) / 2` and \
`py = ((y + 1) * H - 1) / 2`. `out[p]` mixes the four pixels around (px, py) with weights \
`(1 - fx)(1 - fy)`, `fx (1 - fy)`, `(1 - fx) fy`, `fx fy`, where fx, fy are the fractional parts; \
pixels outside the image count as 0 (some points lie outside). One thread per point. Tolerance: \
1e-5 relative + 1e-4 absolute.",
        input_names: &["img", "grid"],
        output_name: "out",
        header: "",
        starter: "uint p = thread_position_in_grid.x;\n",
        tests: &[
            test(
                "Grid Sample (Simple)",
                &[floats("img", &[4, 5]), input("grid", F32, &[16, 2], Fill::Seeded(24), Random::Floats(-1.2, 1.2))],
                &[16],
                [16, 1, 1],
                [16, 1, 1],
            ),
            test(
                "Grid Sample (Edges)",
                &[floats("img", &[7, 9]), input("grid", F32, &[100, 2], Fill::Seeded(2400), Random::Floats(-1.2, 1.2))],
                &[100],
                [128, 1, 1],
                [64, 1, 1],
            ),
        ],
        spec: spec2::grid_sample,
        // Two coordinates and four pixels in, one value out.
        targets: Targets { global_reads: Some(6), global_writes: Some(1), ..NO_TARGETS },
        hints: &[
            "`x0 = floor(px)`, `fx = px - x0`; the four pixels are (x0, y0), (x0 + 1, y0), (x0, y0 + 1), (x0 + 1, y0 + 1).",
            "Use signed ints for pixel positions (x0 can be -1) and read a pixel only when 0 <= x < W and 0 <= y < H.",
        ],
        chapter: ML,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: Tolerance { rtol: 1e-5, atol: 1e-4 },
        stages: &[],
    },
    Puzzle {
        number: 25,
        slug: "grid_sample_vjp",
        answer_lines: 21,
        title: "Grid Sample VJP",
        kernel_name: "grid_sample_vjp",
        explanation: "The backward pass of Grid Sample with respect to the image: given the primals \
`img` (only its shape matters here) and `grid`, and the cotangent `cotan` of the output (one value \
per point), compute `out = d(sum_p cotan[p] * sample_p) / d img`: every point sends `cotan[p]` \
times each of its four bilinear weights to the pixel that weight belongs to (pixels outside the \
image are skipped, as zero padding skips them). Several points land on the same pixel, so `out` \
is `device atomic<float>*` and the additions are atomic; their order varies, hence a tolerance \
(1e-5 relative + 1e-4 absolute).",
        input_names: &["img", "grid", "cotan"],
        output_name: "out",
        header: "",
        starter: "uint p = thread_position_in_grid.x;\n",
        tests: &[
            test(
                "Grid Sample VJP (Simple)",
                &[
                    floats("img", &[4, 5]),
                    input("grid", F32, &[16, 2], Fill::Seeded(24), Random::Floats(-1.2, 1.2)),
                    input("cotan", F32, &[16], Fill::Ones, Random::Floats(-4.0, 4.0)),
                ],
                &[4, 5],
                [16, 1, 1],
                [16, 1, 1],
            ),
            test(
                "Grid Sample VJP (Edges)",
                &[
                    floats("img", &[7, 9]),
                    input("grid", F32, &[100, 2], Fill::Seeded(2400), Random::Floats(-1.2, 1.2)),
                    floats("cotan", &[100]),
                ],
                &[7, 9],
                [128, 1, 1],
                [64, 1, 1],
            ),
        ],
        spec: spec2::grid_sample_vjp,
        // Two coordinates and one cotangent in; four atomics at most.
        targets: Targets { global_reads: Some(3), global_writes: Some(0), device_atomics: Some(4), ..NO_TARGETS },
        hints: &[
            "The weights and pixels are exactly the forward pass's; only the direction of data changes.",
            "For each of the four taps inside the image: `atomic_fetch_add_explicit(&out[y * W + x], cotan[p] * weight, memory_order_relaxed)`.",
        ],
        chapter: ML,
        output_dtype: F32,
        atomic_outputs: true,
        tolerance: Tolerance { rtol: 1e-5, atol: 1e-4 },
        stages: &[],
    },
    Puzzle {
        number: 26,
        slug: "attention_row",
        answer_lines: 17,
        title: "Attention Row",
        kernel_name: "attention_row",
        explanation: "One row of attention: the query `q` (D values) against N keys `k` and values `v` \
(both N x D): `out = softmax(k @ q / sqrt(D)) @ v`. One SIMD-group computes it, lane c owning \
feature c (D <= 32; lanes past D hold 0). Read the keys and values only once, with the online \
softmax: keep the running maximum m, the running sum l of `exp(score - m)` and the running output \
`acc`; for each key, the score is a `simd_sum`; when the maximum grows to m', scale l and acc by \
`exp(m - m')` before adding the new key's terms. At the end, `out = acc / l`. Scores are large, so \
exponentials of raw scores overflow. Tolerance: 1e-4 relative + 1e-5 absolute.",
        input_names: &["q", "k", "v"],
        output_name: "out",
        header: "",
        starter: "uint lane = thread_index_in_simdgroup;\nuint d = q_shape[0];\nuint n = k_shape[0];\n",
        tests: &[
            test(
                "Attention Row (Simple)",
                &[floats("q", &[16]), input("k", F32, &[8, 16], Fill::Arange, Random::Floats(-6.0, 6.0)), floats("v", &[8, 16])],
                &[16],
                [32, 1, 1],
                [32, 1, 1],
            ),
            test(
                "Attention Row (Edges)",
                &[
                    input("q", F32, &[24], Fill::Seeded(26), Random::Floats(-6.0, 6.0)),
                    input("k", F32, &[50, 24], Fill::Seeded(2600), Random::Floats(-6.0, 6.0)),
                    floats("v", &[50, 24]),
                ],
                &[24],
                [32, 1, 1],
                [32, 1, 1],
            ),
            // Every score far below 0: a running maximum that starts at 0
            // instead of -INFINITY makes every exp underflow (0 / 0).
            test(
                "Attention Row (Negative scores)",
                &[
                    input("q", F32, &[20], Fill::Seeded(2601), Random::Floats(4.0, 6.0)),
                    input("k", F32, &[30, 20], Fill::Seeded(2602), Random::Floats(-6.0, -4.0)),
                    floats("v", &[30, 20]),
                ],
                &[20],
                [32, 1, 1],
                [32, 1, 1],
            ),
        ],
        spec: spec2::attention_row,
        // One pass: q once, then one key and one value per key (N = 50);
        // a pass for the maximum first would read the keys twice.
        targets: Targets { global_reads: Some(101), global_writes: Some(1), shared_reads: Some(0), shared_writes: Some(0), ..NO_TARGETS },
        hints: &[
            "Score of key j: `simd_sum(lane < d ? q[lane] * k[j * d + lane] : 0) * rsqrt(float(d))` (load q[lane] once, before the loop).",
            "Start with `m = -INFINITY`, `l = 0`, `acc = 0`; then `m2 = max(m, s)`, `c = exp(m - m2)`, `p = exp(s - m2)`, `l = l * c + p`, `acc = acc * c + p * v[j * d + lane]`, `m = m2`.",
        ],
        chapter: ML,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: Tolerance { rtol: 1e-4, atol: 1e-5 },
        stages: &[],
    },
    Puzzle {
        number: 27,
        slug: "simd_matmul",
        answer_lines: 11,
        title: "SIMD-group Matrix Multiply",
        kernel_name: "simd_matmul",
        explanation: "Multiply `a` (M x K) by `b` (K x N) with the SIMD-group matrix unit: a \
`simdgroup_float8x8` is an 8 x 8 tile spread over the 32 threads of a SIMD-group, \
`simdgroup_load(m, ptr, stride)` loads one from a row-major matrix whose rows are `stride` elements \
apart, `simdgroup_multiply_accumulate(d, a, b, c)` computes `d = a * b + c`, and \
`simdgroup_store(m, ptr, stride)` writes it back. Each threadgroup is one SIMD-group and computes \
the output tile at tile column `threadgroup_position_in_grid.x`, tile row `.y`, walking along K \
one 8-wide tile at a time. M, N and K are multiples of 8 (the unit works on whole tiles). \
Tolerance: 1e-5 relative + 1e-3 absolute.",
        input_names: &["a", "b"],
        output_name: "out",
        header: "",
        starter: "uint tile_col = threadgroup_position_in_grid.x;\nuint tile_row = threadgroup_position_in_grid.y;\n",
        tests: &[
            test("SIMD Matmul (Simple)", &[floats("a", &[8, 8]), floats("b", &[8, 8])], &[8, 8], [32, 1, 1], [32, 1, 1]),
            test("SIMD Matmul (Tiles)", &[floats("a", &[16, 24]), floats("b", &[24, 16])], &[16, 16], [64, 2, 1], [32, 1, 1]),
        ],
        spec: crate::spec::matmul,
        // K = 24: three tiles of a and of b (2 elements per thread each),
        // a zero fill, three multiply-accumulates and one store. Loading the
        // zero accumulator from `out` instead of filling it is fine too (2
        // more reads); plain loops read 96 values per thread.
        targets: Targets { global_reads: Some(14), global_writes: Some(2), simd_ops: Some(11), ..NO_TARGETS },
        hints: &[
            "Start from `simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);`.",
            "Tile (r, c) of `a` starts at `a + r * 8 * K + c * 8` with stride K; of `b` at `b + r * 8 * N + c * 8` with stride N.",
        ],
        chapter: ML,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: SUM_TOLERANCE,
        stages: &[],
    },
    Puzzle {
        number: 28,
        slug: "grid_scan",
        answer_lines: 26,
        title: "Scan Across Threadgroups",
        kernel_name: "grid_scan",
        explanation: "An inclusive scan of the whole of `a` (NumPy: `np.cumsum(a)`), longer than any \
threadgroup: threadgroups cannot wait for each other, so it takes three kernels, run one after the \
other on shared buffers. `reduce`: threadgroup g (64 threads) writes the sum of its block \
`a[64g : 64g + 64]` into `partials[g]`. `scan`: one SIMD-group turns `partials` into `offsets`, \
the sum of the blocks before each block (`np.cumsum(partials) - partials`; at most 32 blocks). \
`add_back`: threadgroup g scans its own block and adds `offsets[g]`. Each kernel has its own \
section in this file, under its `// ---- kernel NAME ----` line, and each is checked against its \
own reference, so a wrong stage is named. The last block is short. Tolerance: 1e-4 relative + \
1e-2 absolute (sums of up to 2000 floats).",
        input_names: &["a"],
        output_name: "out",
        header: "",
        starter: "",
        tests: &[
            test("Grid Scan (Book)", &[floats("a", &[200])], &[200], [256, 1, 1], [64, 1, 1]),
            test("Grid Scan (Edges)", &[floats("a", &[1000])], &[1000], [1024, 1, 1], [64, 1, 1]),
            test("Grid Scan (32 Blocks)", &[floats("a", &[2000])], &[2000], [2048, 1, 1], [64, 1, 1]),
        ],
        spec: spec2::cumsum,
        // Each kernel has its own targets (see the stages); these are
        // their loosest.
        targets: Targets::loosest(&GRID_SCAN_STAGES),
        hints: &[
            "`reduce`: `simd_sum` of each SIMD-group's values (0 past the end), lane 0 of each stores it in a `threadgroup float sums[2]`, one barrier, then one thread adds the two.",
            "`scan`: `simd_prefix_exclusive_sum` over `partials[lane]` (0 for lanes past `partials_shape[0]`) is the whole stage.",
            "`add_back`: `simd_prefix_inclusive_sum` within each SIMD-group; the second SIMD-group of a block also adds the first one's total (its lane 31 value, through threadgroup memory and one barrier); then add `offsets[threadgroup_position_in_grid.x]`.",
        ],
        chapter: PIPELINES,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: Tolerance { rtol: 1e-4, atol: 1e-2 },
        stages: &GRID_SCAN_STAGES,
    },
    Puzzle {
        number: 29,
        slug: "radix_pass",
        answer_lines: 38,
        title: "Radix Sort Pass",
        kernel_name: "radix_pass",
        explanation: "One pass of an LSD radix sort: order the keys (uint32) by their 4-bit digit \
`(key >> SHIFT) & 15` (SHIFT = 4, the second pass), keeping keys with equal digits in their input \
order: the pass must be stable, or the next pass would undo this one (NumPy: \
`keys[np.argsort((keys >> 4) & 15, kind='stable')]`). Three kernels over blocks of BLOCK = 64 keys, \
one threadgroup each, on shared buffers. `histogram`: block g counts its digits in threadgroup \
atomics and writes `counts[d][g]` (16 rows, one column per block; flat index `d * blocks + g`). \
`scan`: one threadgroup of 256 threads turns `counts` into `offsets`, the exclusive prefix sum of \
the flattened counts (`np.cumsum(counts) - counts`): where the keys of digit d from block g start \
in the output. `scatter`: each key goes to `offsets[d][g]` plus its rank, the number of keys of the \
same digit before it in its block. Each kernel is checked against its own reference, so a wrong \
stage is named. No order of atomics is promised: the book applies the atomics that the threads of a \
threadgroup run together last thread first, so ranks taken from an atomic counter come out reversed. At most \
1024 keys (16 blocks); the last block is short. Exact comparison.",
        input_names: &["keys"],
        output_name: "out",
        header: "constant uint BLOCK = 64;\nconstant uint BINS = 16;\nconstant uint SHIFT = 4;\n",
        starter: "",
        tests: &[
            test("Radix Pass (Book)", &[input("keys", U32, &[200], Fill::Seeded(29), Random::Ints(0, 256))], &[200], [256, 1, 1], [64, 1, 1]),
            test(
                "Radix Pass (Edges)",
                &[input("keys", U32, &[1000], Fill::Seeded(2900), Random::Ints(0, 1 << 16))],
                &[1000],
                [1024, 1, 1],
                [64, 1, 1],
            ),
            test(
                "Radix Pass (Two digits)",
                &[input("keys", U32, &[333], Fill::Seeded(2901), Random::Ints(48, 80))],
                &[333],
                [384, 1, 1],
                [64, 1, 1],
            ),
        ],
        spec: spec2::radix_pass,
        // Each kernel has its own targets (see the stages); these are
        // their loosest.
        targets: Targets::loosest(&RADIX_STAGES),
        hints: &[
            "`histogram` is puzzle 18 for one block: zero 16 `threadgroup atomic_uint` bins, barrier, one atomic add per key, barrier, and thread d < 16 writes its bin to `counts[d * blocks + g]` (blocks = `(keys_shape[0] + BLOCK - 1) / BLOCK`).",
            "`scan`: `simd_prefix_exclusive_sum` within each SIMD-group, lane 31 of each stores its SIMD-group's total in threadgroup memory, one barrier, then add the totals of the SIMD-groups before yours.",
            "`scatter`: store each thread's digit in a `threadgroup uint digits[BLOCK]` (BINS for threads past the end), one barrier, and count the equal digits at smaller indices: that rank keeps equal keys in order, which an atomic counter does not.",
        ],
        chapter: PIPELINES,
        output_dtype: U32,
        atomic_outputs: false,
        tolerance: Tolerance { rtol: 0.0, atol: 0.0 },
        stages: &RADIX_STAGES,
    },
];

/// Whole blocks of 64 threads covering `n` elements.
fn block_grid(n: usize) -> [u32; 3] {
    [(spec2::scan_blocks(n) * spec2::SCAN_BLOCK) as u32, 1, 1]
}

const BLOCK_TG: [u32; 3] = [spec2::SCAN_BLOCK as u32, 1, 1];

const GRID_SCAN_STAGES: [Stage; 3] = [
    Stage {
        name: "reduce",
        kernel_name: "grid_scan_reduce",
        about: "a (n) -> partials (one per block of 64); grid: whole threadgroups of 64 covering a",
        inputs: &["a"],
        output: "partials",
        output_dtype: F32,
        dispatch: |n| Dispatch { output_shape: vec![spec2::scan_blocks(n)], grid: block_grid(n), threadgroup: BLOCK_TG },
        spec: spec2::block_sums,
        starter: "uint i = thread_position_in_grid.x;\n",
        // One load per thread; the two SIMD-group sums meet in threadgroup
        // memory once (one barrier), and one thread adds them.
        targets: Targets {
            global_reads: Some(1),
            global_writes: Some(1),
            shared_reads: Some(2),
            shared_writes: Some(1),
            barriers: Some(1),
            simd_ops: Some(5),
            ..NO_TARGETS
        },
        diagnose: None,
    },
    Stage {
        name: "scan",
        kernel_name: "grid_scan_partials",
        about: "partials -> offsets (exclusive scan); grid: one SIMD-group of 32 threads",
        inputs: &["partials"],
        output: "offsets",
        output_dtype: F32,
        dispatch: |n| Dispatch { output_shape: vec![spec2::scan_blocks(n)], grid: [32, 1, 1], threadgroup: [32, 1, 1] },
        spec: spec2::exclusive_scan,
        starter: "uint lane = thread_index_in_simdgroup;\n",
        // One partial per lane and one prefix sum: no threadgroup memory.
        targets: Targets {
            global_reads: Some(1),
            global_writes: Some(1),
            shared_reads: Some(0),
            shared_writes: Some(0),
            barriers: Some(0),
            simd_ops: Some(5),
            ..NO_TARGETS
        },
        diagnose: None,
    },
    Stage {
        name: "add_back",
        kernel_name: "grid_scan_add_back",
        about: "a, offsets -> out (n); grid: as reduce",
        inputs: &["a", "offsets"],
        output: "out",
        output_dtype: F32,
        dispatch: |n| Dispatch { output_shape: vec![n], grid: block_grid(n), threadgroup: BLOCK_TG },
        spec: spec2::block_scan_add,
        starter: "uint i = thread_position_in_grid.x;\n",
        // a[i] and the block's offset; the first SIMD-group's total passes
        // to the second through threadgroup memory (one barrier).
        targets: Targets {
            global_reads: Some(2),
            global_writes: Some(1),
            shared_reads: Some(1),
            shared_writes: Some(1),
            barriers: Some(1),
            simd_ops: Some(5),
            ..NO_TARGETS
        },
        diagnose: None,
    },
];

/// Whole blocks of 64 keys.
fn radix_grid(n: usize) -> [u32; 3] {
    [(spec2::radix_blocks(n) * spec2::RADIX_BLOCK) as u32, 1, 1]
}

const RADIX_TG: [u32; 3] = [spec2::RADIX_BLOCK as u32, 1, 1];

/// Threads of puzzle 29's scan: one per cell of `counts` (16 digits x at
/// most 16 blocks).
const RADIX_SCAN_THREADS: u32 = 256;

const RADIX_STAGES: [Stage; 3] = [
    Stage {
        name: "histogram",
        kernel_name: "radix_histogram",
        about: "keys (n) -> counts (16 digits x blocks): counts[d][g] = keys of digit d in block g; grid: whole threadgroups of 64 covering keys",
        inputs: &["keys"],
        output: "counts",
        output_dtype: U32,
        dispatch: |n| Dispatch { output_shape: vec![spec2::RADIX_BINS, spec2::radix_blocks(n)], grid: radix_grid(n), threadgroup: RADIX_TG },
        spec: spec2::radix_counts,
        starter: "uint i = thread_position_in_grid.x;\nuint local_i = thread_position_in_threadgroup.x;\nuint block = threadgroup_position_in_grid.x;\nuint n = keys_shape[0];\nuint blocks = (n + BLOCK - 1) / BLOCK;\n",
        // One key in, one count out (threads d < 16); a block's counts
        // live in threadgroup atomics (zero, add, load: 3 per thread), not
        // in device atomics; zero, count, write: two barriers.
        targets: Targets {
            global_reads: Some(1),
            global_writes: Some(1),
            shared_reads: Some(0),
            shared_writes: Some(0),
            device_atomics: Some(0),
            threadgroup_atomics: Some(3),
            barriers: Some(2),
            ..NO_TARGETS
        },
        diagnose: None,
    },
    Stage {
        name: "scan",
        kernel_name: "radix_scan",
        about: "counts -> offsets (exclusive prefix sum of the flattened counts, same shape); grid: one threadgroup of 256 threads, one per cell",
        inputs: &["counts"],
        output: "offsets",
        output_dtype: U32,
        dispatch: |n| Dispatch {
            output_shape: vec![spec2::RADIX_BINS, spec2::radix_blocks(n)],
            grid: [RADIX_SCAN_THREADS, 1, 1],
            threadgroup: [RADIX_SCAN_THREADS, 1, 1],
        },
        spec: spec2::exclusive_scan,
        starter: "uint i = thread_position_in_threadgroup.x;\nuint lane = thread_index_in_simdgroup;\nuint simdgroup = simdgroup_index_in_threadgroup;\nuint cells = counts_shape[0] * counts_shape[1];\n",
        // One count in, one offset out; SIMD-group prefix sums and at most
        // two barriers (book one's halving scan needs eight); the totals
        // of the 8 SIMD-groups read from threadgroup memory.
        targets: Targets {
            global_reads: Some(1),
            global_writes: Some(1),
            shared_reads: Some(8),
            shared_writes: Some(1),
            barriers: Some(2),
            simd_ops: Some(10),
            ..NO_TARGETS
        },
        diagnose: None,
    },
    Stage {
        name: "scatter",
        kernel_name: "radix_scatter",
        about: "keys, offsets -> out (n): key i of block g, digit d, goes to offsets[d][g] + its rank among the keys of digit d before it in the block; grid: as histogram",
        inputs: &["keys", "offsets"],
        output: "out",
        output_dtype: U32,
        dispatch: |n| Dispatch { output_shape: vec![n], grid: radix_grid(n), threadgroup: RADIX_TG },
        spec: spec2::radix_scatter,
        starter: "uint i = thread_position_in_grid.x;\nuint local_i = thread_position_in_threadgroup.x;\nuint block = threadgroup_position_in_grid.x;\nuint n = keys_shape[0];\nuint blocks = (n + BLOCK - 1) / BLOCK;\n",
        // Its key and its offset in, the key out; the block's digits
        // shared once (one barrier) and the ones before it read back (up
        // to 63); ranks that do not come from atomics.
        targets: Targets {
            global_reads: Some(2),
            global_writes: Some(1),
            shared_reads: Some(63),
            shared_writes: Some(1),
            device_atomics: Some(0),
            threadgroup_atomics: Some(0),
            barriers: Some(1),
            ..NO_TARGETS
        },
        diagnose: Some(spec2::diagnose_unstable_scatter),
    },
];
