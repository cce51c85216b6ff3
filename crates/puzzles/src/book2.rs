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
use crate::{Fill, InputSpec, Puzzle, Random, Targets, TestCase, Tolerance, NO_TARGETS};
use arrays::DType::{F32, I32};

pub const SIMD: &str = "SIMD-groups";
pub const ATOMICS: &str = "Atomics";

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

pub const BOOK_TWO: [Puzzle; 6] = [
    Puzzle {
        number: 15,
        slug: "simd_sum",
        title: "SIMD Sum",
        kernel_name: "simd_sum",
        explanation: "The threads of a threadgroup run in SIMD-groups of 32 that execute in lock-step, \
and the threads of one SIMD-group can combine their registers directly: `simd_sum(v)` returns the \
sum of `v` over the active threads of the SIMD-group, to every one of them, with no threadgroup \
memory and no barrier. Write into `out[k]` the sum of the k-th block of 32 elements of `a` (the \
last block may be short). The grid is rounded up to whole threadgroups of 64, so threads past the \
end of `a` exist and must contribute nothing. Random tests use floats: the order of additions \
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
    },
    Puzzle {
        number: 16,
        slug: "simd_scan",
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
    },
    Puzzle {
        number: 17,
        slug: "threadgroup_reduce",
        title: "Threadgroup Reduce",
        kernel_name: "threadgroup_reduce",
        explanation: "Sum each threadgroup's 256 elements of `a` into `out[group]`, in two levels: every \
SIMD-group reduces its 32 values with `simd_sum`, one thread of each writes the partial sum into \
threadgroup memory, all threads meet at a single barrier, and then the first SIMD-group reduces the \
partials (there are `simdgroups_per_threadgroup` of them) with `simd_sum` again. Compare Prefix Sum \
(puzzle 12): there, eight rounds of halving needed a barrier each. The last threadgroup reaches \
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
        // One partial written and read per thread at most, one barrier, two simd_sums.
        targets: Targets {
            global_reads: Some(1),
            global_writes: Some(1),
            shared_reads: Some(1),
            shared_writes: Some(1),
            barriers: Some(1),
            simd_ops: Some(2),
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
    },
    Puzzle {
        number: 18,
        slug: "histogram",
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
    },
    Puzzle {
        number: 19,
        slug: "matvec",
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
        targets: Targets { global_reads: Some(8), global_writes: Some(0), device_atomics: Some(1), ..NO_TARGETS },
        hints: &[
            "The chunk's columns are `chunk * CHUNK + lane`, `+ 32`, `+ 64`, `+ 96`; stop at the end of the row (`a_shape[1]`).",
            "Accumulate in a register, `simd_sum` it, and let lane 0 call `atomic_fetch_add_explicit(&out[row], s, memory_order_relaxed)`.",
        ],
        chapter: ATOMICS,
        output_dtype: F32,
        atomic_outputs: true,
        tolerance: Tolerance { rtol: 1e-4, atol: 1e-3 },
    },
    Puzzle {
        number: 20,
        slug: "segment_sum",
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
    },
];
