//! Book one's fourteen puzzles, as data, and the whole book (book two is
//! in `book2.rs`).
//!
//! Inputs, shapes, grids, threadgroups, header constants and starter code
//! follow the Metal Puzzles book. Targets come from the book where it states
//! them (Pooling: 1 global read and 1 global write per thread; Dot Product and
//! 1D Convolution: 2 global reads and 1 global write; Matmul: 6 global reads
//! on the full test). The others are derived from the natural solution and
//! marked as such next to the entry.

use crate::book2;
use crate::check::BOOK_ONE_TOLERANCE;
use crate::spec;
use crate::{Fill, InputSpec, Puzzle, Targets, TestCase, BOOK_ONE_RANDOM, NO_TARGETS};
use arrays::DType::{F32, I32};

/// Book one's only chapter.
pub const FOUNDATIONS: &str = "Foundations";

/// The chapters, in order ([`Puzzle::chapter`] is one of them).
pub static CHAPTERS: [&str; 5] = [FOUNDATIONS, book2::SIMD, book2::ATOMICS, book2::ML, book2::PIPELINES];

/// Every puzzle of both books, numbered from 1.
pub static PUZZLES: [Puzzle; BOOK_ONE.len() + book2::BOOK_TWO.len()] = concat(BOOK_ONE, book2::BOOK_TWO);

/// `a` then `b` (N must be their total length).
const fn concat<const A: usize, const B: usize, const N: usize>(a: [Puzzle; A], b: [Puzzle; B]) -> [Puzzle; N] {
    assert!(A + B == N && A > 0);
    let mut out = [a[0]; N];
    let mut k = 0;
    while k < N {
        out[k] = if k < A { a[k] } else { b[k - A] };
        k += 1;
    }
    out
}

const fn arange(name: &'static str, dtype: arrays::DType, shape: &'static [usize]) -> InputSpec {
    InputSpec { name, dtype, shape, fill: Fill::Arange, transpose: false, random: BOOK_ONE_RANDOM }
}

const fn ones(name: &'static str, shape: &'static [usize]) -> InputSpec {
    InputSpec { name, dtype: F32, shape, fill: Fill::Ones, transpose: false, random: BOOK_ONE_RANDOM }
}

const fn targets(gr: Option<u64>, gw: Option<u64>, sr: Option<u64>, sw: Option<u64>) -> Targets {
    Targets { global_reads: gr, global_writes: gw, shared_reads: sr, shared_writes: sw, ..NO_TARGETS }
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

const BOOK_ONE: [Puzzle; 14] = [
    Puzzle {
        number: 1,
        slug: "map",
        answer_lines: 1,
        title: "Map",
        kernel_name: "map",
        explanation: "Write a kernel that takes the vector `a` and writes `a[i] + 10` into `out[i]`. \
The grid has exactly one thread for every element, so each thread handles the element whose \
index is its own position in the grid.",
        input_names: &["a"],
        output_name: "out",
        header: "",
        starter: "uint local_i = thread_position_in_grid.x;\n",
        tests: &[test("Map", &[arange("a", I32, &[4])], &[4], [4, 1, 1], [1, 1, 1])],
        spec: spec::add_ten,
        // Derived: one element in, one element out.
        targets: targets(Some(1), Some(1), Some(0), Some(0)),
        chapter: FOUNDATIONS,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: BOOK_ONE_TOLERANCE,
        stages: &[],
        hints: &[
            "`local_i` already tells the thread which element it owns.",
            "A single assignment from `a` into `out` is the whole kernel; the float output accepts the int input.",
        ],
    },
    Puzzle {
        number: 2,
        slug: "zip",
        answer_lines: 1,
        title: "Zip",
        kernel_name: "zip",
        explanation: "Two vectors `a` and `b` of the same length come in; write their element-wise \
sum into `out`. Again there is one thread per element.",
        input_names: &["a", "b"],
        output_name: "out",
        header: "",
        starter: "uint local_i = thread_position_in_grid.x;\n",
        tests: &[test("Zip", &[arange("a", I32, &[4]), arange("b", I32, &[4])], &[4], [4, 1, 1], [1, 1, 1])],
        spec: spec::add,
        // Derived: one element of each input, one output element.
        targets: targets(Some(2), Some(1), Some(0), Some(0)),
        chapter: FOUNDATIONS,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: BOOK_ONE_TOLERANCE,
        stages: &[],
        hints: &["Same shape as Map, but each thread now reads from both inputs at its own index."],
    },
    Puzzle {
        number: 3,
        slug: "guard",
        answer_lines: 3,
        title: "Guard",
        kernel_name: "guard",
        explanation: "Add 10 to every element of `a` and store the result in `out`, as in Map. This \
time the grid launches more threads than there are elements: the surplus threads must not touch \
memory at all. Any input name with `_shape`, `_strides` or `_ndim` appended (e.g. `a_shape`) is \
passed to the kernel automatically when you use it.",
        input_names: &["a"],
        output_name: "out",
        header: "",
        starter: "uint local_i = thread_position_in_grid.x;\n",
        tests: &[test("Guard", &[arange("a", I32, &[4])], &[4], [8, 1, 1], [1, 1, 1])],
        spec: spec::add_ten,
        // Derived: as Map.
        targets: targets(Some(1), Some(1), Some(0), Some(0)),
        chapter: FOUNDATIONS,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: BOOK_ONE_TOLERANCE,
        stages: &[],
        hints: &[
            "Compare the thread's index with the length of `a` before reading or writing.",
            "`a_shape[0]` is the number of elements of `a` (shape entries are `int`).",
        ],
    },
    Puzzle {
        number: 4,
        slug: "map_2d",
        answer_lines: 5,
        title: "Map 2D",
        kernel_name: "map_2D",
        explanation: "`a` is now a square matrix; add 10 to each entry and write it to `out`. The grid \
is two-dimensional and larger than the matrix in both directions. Device memory is flat: a matrix \
is stored row after row, so you must turn (row, column) into a single offset yourself. The \
matrix's size comes with it: `a_shape[0]` is its number of rows and `a_shape[1]` its number of \
columns (MLX passes `NAME_shape` for any input whose name with `_shape` you use).",
        input_names: &["a"],
        output_name: "out",
        header: "",
        starter: "uint thread_x = thread_position_in_grid.x;\nuint thread_y = thread_position_in_grid.y;\n",
        tests: &[test("Map 2D", &[arange("a", I32, &[2, 2])], &[2, 2], [3, 3, 1], [1, 1, 1])],
        spec: spec::add_ten,
        // Derived: as Map.
        targets: targets(Some(1), Some(1), Some(0), Some(0)),
        chapter: FOUNDATIONS,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: BOOK_ONE_TOLERANCE,
        stages: &[],
        hints: &[
            "Let x pick the column and y the row; guard both against the matrix size.",
            "In row-major order, entry (row, col) of an n-column matrix lives at `row * n + col`.",
        ],
    },
    Puzzle {
        number: 5,
        slug: "broadcast",
        answer_lines: 5,
        title: "Broadcast",
        kernel_name: "broadcast",
        explanation: "`a` is a column (n x 1) and `b` a row (1 x n). Produce the n x n matrix \
`out[row][col] = a[row] + b[col]`, the way array libraries broadcast the two shapes against each \
other. The 2D grid is again bigger than the output.",
        input_names: &["a", "b"],
        output_name: "out",
        header: "",
        starter: "uint thread_x = thread_position_in_grid.x;\nuint thread_y = thread_position_in_grid.y;\n",
        tests: &[test("Broadcast", &[arange("a", I32, &[2, 1]), arange("b", I32, &[1, 2])], &[2, 2], [3, 3, 1], [1, 1, 1])],
        spec: spec::add,
        // Derived: one value of each input per output element.
        targets: targets(Some(2), Some(1), Some(0), Some(0)),
        chapter: FOUNDATIONS,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: BOOK_ONE_TOLERANCE,
        stages: &[],
        hints: &[
            "Which input varies along the rows and which along the columns? Index each with only the coordinate it depends on.",
            "The output's width is the length of `b`, the height the length of `a`.",
        ],
    },
    Puzzle {
        number: 6,
        slug: "threadgroups",
        answer_lines: 3,
        title: "Threadgroups",
        kernel_name: "threadgroups",
        explanation: "Add 10 to each element of `a` again, but the threads are now split into \
threadgroups of 4, fewer than the number of elements. The grid still covers the whole vector (with \
some threads to spare). A thread's global index combines which threadgroup it is in \
(`threadgroup_position_in_grid`), the group size and its position inside the group.",
        input_names: &["a"],
        output_name: "out",
        header: "",
        starter: "uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;\n",
        tests: &[test("Threadgroups", &[arange("a", I32, &[9])], &[9], [12, 1, 1], [4, 1, 1])],
        spec: spec::add_ten,
        // Derived: as Map.
        targets: targets(Some(1), Some(1), Some(0), Some(0)),
        chapter: FOUNDATIONS,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: BOOK_ONE_TOLERANCE,
        stages: &[],
        hints: &["`i` is already the global index; the last threadgroup sticks out past the end of `a`."],
    },
    Puzzle {
        number: 7,
        slug: "threadgroups_2d",
        answer_lines: 6,
        title: "Threadgroups 2D",
        kernel_name: "threadgroups_2D",
        explanation: "The two-dimensional version of the previous puzzle: add 10 to every entry of \
the 5 x 5 matrix `a`. Threadgroups are 3 x 3, smaller than the matrix in both directions, and the \
grid is 6 x 6.",
        input_names: &["a"],
        output_name: "out",
        header: "",
        starter: "uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;\n",
        tests: &[test("Threadgroups 2D", &[ones("a", &[5, 5])], &[5, 5], [6, 6, 1], [3, 3, 1])],
        spec: spec::add_ten,
        // Derived: as Map.
        targets: targets(Some(1), Some(1), Some(0), Some(0)),
        chapter: FOUNDATIONS,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: BOOK_ONE_TOLERANCE,
        stages: &[],
        hints: &[
            "Build the y index exactly the way `i` is built, from the `.y` components.",
            "Guard both indices, then use the row-major offset from Map 2D.",
        ],
    },
    Puzzle {
        number: 8,
        slug: "threadgroup_memory",
        answer_lines: 3,
        title: "Threadgroup Memory",
        kernel_name: "threadgroup_memory",
        explanation: "Add 10 to each element of `a`, staging the values through threadgroup memory: a \
small array every thread of a threadgroup shares, declared in the body with a size fixed at \
compile time (the header defines the constant). After threads write to it, they must meet at \
`threadgroup_barrier(mem_flags::mem_threadgroup)` before any thread reads what another wrote, and \
every thread of the group has to reach that barrier. Threadgroups hold 4 threads; `a` has 8 \
elements, and in the second test 6, so that the last threadgroup sticks out past its end.",
        input_names: &["a"],
        output_name: "out",
        header: "constant uint THREADGROUP_MEM_SIZE = 4;\n",
        starter: "threadgroup float shared[THREADGROUP_MEM_SIZE];\n\
uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;\n\
uint local_i = thread_position_in_threadgroup.x;\n\
\n\
if (i < a_shape[0]) {\n    shared[local_i] = a[i];\n    threadgroup_barrier(mem_flags::mem_threadgroup);\n}\n",
        tests: &[
            test("Threadgroup Memory", &[ones("a", &[8])], &[8], [8, 1, 1], [4, 1, 1]),
            // The last threadgroup sticks out: a barrier inside `if (i < n)`
            // is skipped by threads 6 and 7.
            test("Threadgroup Memory (Short)", &[ones("a", &[6])], &[6], [8, 1, 1], [4, 1, 1]),
        ],
        spec: spec::add_ten,
        // Derived: one value through shared memory (one shared write, one shared read).
        targets: targets(Some(1), Some(1), Some(1), Some(1)),
        chapter: FOUNDATIONS,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: BOOK_ONE_TOLERANCE,
        stages: &[],
        hints: &[
            "The value you need is already in `shared[local_i]`; read it from there, not from `a`.",
            "A barrier inside an `if` is only safe when every thread of the group takes the same branch.",
        ],
    },
    Puzzle {
        number: 9,
        slug: "pooling",
        answer_lines: 9,
        title: "Pooling",
        kernel_name: "pooling",
        explanation: "For each position i, write the sum of `a[i-2]`, `a[i-1]` and `a[i]` into \
`out[i]` (near the start, only the elements that exist). One thread per position, one threadgroup. \
Device memory is slow, so each thread may read `a` only once and write `out` only once: load \
into threadgroup memory and take the neighbours from there.",
        input_names: &["a"],
        output_name: "out",
        header: "constant uint THREADGROUP_MEM_SIZE = 8;\n",
        starter: "threadgroup float shared[THREADGROUP_MEM_SIZE];\n\
uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;\n\
uint local_i = thread_position_in_threadgroup.x;\n",
        tests: &[test("Pooling", &[arange("a", I32, &[8])], &[8], [8, 1, 1], [8, 1, 1])],
        spec: spec::pooling,
        // Book: 1 global read, 1 global write. Derived: 3 shared reads, 1 shared write.
        targets: targets(Some(1), Some(1), Some(3), Some(1)),
        chapter: FOUNDATIONS,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: BOOK_ONE_TOLERANCE,
        stages: &[],
        hints: &[
            "Every thread copies its own element into `shared`, then all of them wait at a barrier.",
            "After the barrier, add up to three neighbours from `shared`; watch the first two positions.",
        ],
    },
    Puzzle {
        number: 10,
        slug: "dot_product",
        answer_lines: 11,
        title: "Dot Product",
        kernel_name: "dot_product",
        explanation: "Compute the dot product of `a` and `b` (the sum of their element-wise \
products) into the single element `out[0]`. One thread per position, one threadgroup. Each thread \
may read each input once and there is one write to `out` per thread at most; how often threads \
touch threadgroup memory does not matter yet.",
        input_names: &["a", "b"],
        output_name: "out",
        header: "constant uint THREADGROUP_MEM_SIZE = 8;\n",
        starter: "threadgroup float shared[THREADGROUP_MEM_SIZE];\n\
uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;\n\
uint local_i = thread_position_in_threadgroup.x;\n",
        tests: &[test("Dot Product", &[arange("a", F32, &[8]), arange("b", F32, &[8])], &[1], [8, 1, 1], [8, 1, 1])],
        spec: spec::dot,
        // Book: 2 global reads, 1 global write; no limit on shared memory.
        targets: targets(Some(2), Some(1), None, None),
        chapter: FOUNDATIONS,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: BOOK_ONE_TOLERANCE,
        stages: &[],
        hints: &[
            "Store each thread's product in `shared`, synchronize, then let one thread add them up.",
            "Only one thread should write `out[0]`; otherwise the writes race.",
        ],
    },
    Puzzle {
        number: 11,
        slug: "1d_conv",
        answer_lines: 23,
        title: "1D Convolution",
        kernel_name: "1D_conv",
        explanation: "Convolve `a` with the short filter `b`: `out[i]` is the sum over j of \
`a[i + j] * b[j]`, leaving out the terms where `i + j` runs past the end of `a`. Solve the general \
case: the second test has more elements than one threadgroup, so a group also needs a few values \
that belong to the next group. The header bounds the filter length (`MAX_CONV`) and the size of a \
shared tile (`THREADGROUP_MAX_CONV_SIZE`). Each thread may do 2 global reads and 1 global write.",
        input_names: &["a", "b"],
        output_name: "out",
        header: "constant uint THREADGROUP_MAX_CONV_SIZE = 12;\nconstant uint MAX_CONV = 4;\n",
        starter: "uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;\n\
uint local_i = thread_position_in_threadgroup.x;\n",
        tests: &[
            test("1D Conv (Simple)", &[arange("a", F32, &[6]), arange("b", F32, &[3])], &[6], [8, 1, 1], [8, 1, 1]),
            test("1D Conv (Full)", &[arange("a", F32, &[15]), arange("b", F32, &[4])], &[15], [16, 1, 1], [8, 1, 1]),
        ],
        spec: spec::conv,
        // Book: 2 global reads, 1 global write; shared memory unlimited.
        targets: targets(Some(2), Some(1), None, None),
        chapter: FOUNDATIONS,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: BOOK_ONE_TOLERANCE,
        stages: &[],
        hints: &[
            "Declare two threadgroup arrays: one for a tile of `a` (group size + MAX_CONV - 1), one for `b`.",
            "Each thread loads its own element of `a`; the threads with spare reads load `b` and the tail of the tile.",
        ],
    },
    Puzzle {
        number: 12,
        slug: "prefix_sum",
        answer_lines: 11,
        title: "Prefix Sum",
        kernel_name: "prefix_sum",
        explanation: "Sum the elements of `a`. When `a` is longer than a threadgroup (8 threads), each \
threadgroup stores the sum of its own 8 elements in `out[group]`. Do it as a parallel reduction in \
threadgroup memory: in every round, half of the remaining partial sums are added onto the other \
half, with a barrier between rounds.",
        input_names: &["a"],
        output_name: "out",
        header: "constant uint THREADGROUP_MEM_SIZE = 8;\n",
        starter: "threadgroup float cache[THREADGROUP_MEM_SIZE];\n\
uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;\n\
uint local_i = thread_position_in_threadgroup.x;\n",
        tests: &[
            test("Prefix Sum (Simple)", &[arange("a", I32, &[8])], &[1], [8, 1, 1], [8, 1, 1]),
            test("Prefix Sum (Full)", &[arange("a", I32, &[15])], &[2], [16, 1, 1], [8, 1, 1]),
        ],
        spec: spec::prefix_sum,
        // Derived: one global read per element, one write per group.
        targets: targets(Some(1), Some(1), None, None),
        chapter: FOUNDATIONS,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: BOOK_ONE_TOLERANCE,
        stages: &[],
        hints: &[
            "Threads past the end of `a` should put 0 into `cache` so the rounds need no special case.",
            "Rounds with stride 1, 2, 4 (or 4, 2, 1): a thread adds `cache[local_i + stride]` when it is still active.",
        ],
    },
    Puzzle {
        number: 13,
        slug: "axis_sum",
        answer_lines: 13,
        title: "Axis Sum",
        kernel_name: "axis_sum",
        explanation: "`a` is a batch of rows; write the sum of each row into `out[row][0]`. The grid's \
y dimension selects the row (one threadgroup per row), and the 8 threads of a group reduce that row \
together in threadgroup memory as in Prefix Sum.",
        input_names: &["a"],
        output_name: "out",
        header: "constant uint THREADGROUP_MEM_SIZE = 8;\n",
        starter: "threadgroup float cache[THREADGROUP_MEM_SIZE];\n\
uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;\n\
uint local_i = thread_position_in_threadgroup.x;\n\
uint batch = threadgroup_position_in_grid.y;\n",
        tests: &[test("Axis Sum", &[arange("a", I32, &[4, 6])], &[4, 1], [8, 4, 1], [8, 1, 1])],
        spec: spec::axis_sum,
        // Derived: one global read per element, one write per row.
        targets: targets(Some(1), Some(1), None, None),
        chapter: FOUNDATIONS,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: BOOK_ONE_TOLERANCE,
        stages: &[],
        hints: &[
            "Row `batch` starts at `batch * a_shape[1]` in `a`.",
            "Reduce exactly as in Prefix Sum, then thread 0 of the group writes the row's total.",
        ],
    },
    Puzzle {
        number: 14,
        slug: "matmul",
        answer_lines: 14,
        title: "Matrix Multiply",
        kernel_name: "matmul",
        explanation: "Multiply the square matrices `a` and `b` into `out`. Threadgroups are 3 x 3 and \
so are the two shared tiles, so for the 8 x 8 test a threadgroup cannot hold the operands at once: \
walk along the shared dimension one tile at a time, load a tile of `a` and a tile of `b` into \
threadgroup memory, synchronize, accumulate the partial dot products, and synchronize again before \
the tiles are overwritten. The full test can be done with 6 global reads per thread.",
        input_names: &["a", "b"],
        output_name: "out",
        header: "constant uint THREADGROUP_MEM_SIZE = 3;\n",
        starter: "threadgroup float a_shared[THREADGROUP_MEM_SIZE][THREADGROUP_MEM_SIZE];\n\
threadgroup float b_shared[THREADGROUP_MEM_SIZE][THREADGROUP_MEM_SIZE];\n\
\n\
uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;\n\
uint j = threadgroup_position_in_grid.y * threads_per_threadgroup.y + thread_position_in_threadgroup.y;\n\
\n\
uint local_i = thread_position_in_threadgroup.x;\n\
uint local_j = thread_position_in_threadgroup.y;\n",
        tests: &[
            test(
                "Matmul (Simple)",
                &[
                    arange("a", F32, &[2, 2]),
                    InputSpec { name: "b", dtype: F32, shape: &[2, 2], fill: Fill::Arange, transpose: true, random: BOOK_ONE_RANDOM },
                ],
                &[2, 2],
                [3, 3, 1],
                [3, 3, 1],
            ),
            test(
                "Matmul (Full)",
                &[
                    arange("a", F32, &[8, 8]),
                    InputSpec { name: "b", dtype: F32, shape: &[8, 8], fill: Fill::Arange, transpose: true, random: BOOK_ONE_RANDOM },
                ],
                &[8, 8],
                [9, 9, 1],
                [3, 3, 1],
            ),
        ],
        spec: spec::matmul,
        // Book: 6 global reads on the full test (3 tiles x 2 operands). Derived: 1 write.
        targets: targets(Some(6), Some(1), None, None),
        chapter: FOUNDATIONS,
        output_dtype: F32,
        atomic_outputs: false,
        tolerance: BOOK_ONE_TOLERANCE,
        stages: &[],
        hints: &[
            "Start with the simple test, where one tile covers the whole matrix; then loop over tiles.",
            "Two barriers per tile: after loading (before reading the tiles) and after using them (before the next load).",
        ],
    },
];
