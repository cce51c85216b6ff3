//! Every mistake a puzzle's text or hints name fails the puzzle: the book's
//! tests have the edge that exposes it (issue 24, item 9). Each test takes
//! the reference solution, makes the named mistake, and says how it fails
//! (a failing test, a sanitizer finding, or a missed target). Mistakes
//! tested elsewhere: the cdist shortcut and the radix digit without its
//! mask (book_two.rs), a missing guard or barrier (broken.rs).

mod common;
use common::*;
use puzzles::CheckResult;

/// The reference solution with `from` replaced by `to` (which must occur).
fn mistake(slug: &str, from: &str, to: &str) -> CheckResult {
    let body = solution(slug);
    assert!(body.contains(from), "{slug}: `{from}` is not in the reference solution");
    check(slug, &body.replacen(from, to, 1))
}

/// Fails a test (the first failing one is named `test`), with no finding needed.
fn fails_test(r: &CheckResult, test: &str) {
    let text = puzzles::render::human(r, false);
    assert!(!r.passed && !r.solved(), "{text}");
    let t = r.first_failure().unwrap_or_else(|| panic!("no failing test:\n{text}"));
    assert!(t.name.starts_with(test), "expected `{test}` to fail first, not `{}`:\n{text}", t.name);
}

fn has_finding(r: &CheckResult, kind: &str) {
    assert!(!r.passed && !r.solved(), "{}", puzzles::render::human(r, false));
    assert!(kinds(r).contains(&kind), "expected a {kind} finding: {:?}", kinds(r));
}

fn misses_target(r: &CheckResult, what: &str) {
    let text = puzzles::render::human(r, false);
    assert!(r.passed && !r.solved(), "{text}");
    assert!(text.contains(what), "expected `{what}` in:\n{text}");
}

#[test]
fn the_reference_solutions_still_pass_the_new_edges() {
    for slug in ["threadgroup_memory", "softmax", "rms_norm", "matvec", "attention_row"] {
        let r = check(slug, solution(slug));
        assert!(r.solved(), "{slug}:\n{}", puzzles::render::human(&r, false));
    }
}

// ---- book one -----------------------------------------------------------

#[test]
fn threadgroup_memory_barrier_inside_the_if() {
    // Hint 2: a barrier inside an `if` is only safe when every thread takes it.
    let body = "threadgroup float shared[THREADGROUP_MEM_SIZE];\n\
uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;\n\
uint local_i = thread_position_in_threadgroup.x;\n\
if (i < uint(a_shape[0])) {\n    shared[local_i] = a[i];\n    threadgroup_barrier(mem_flags::mem_threadgroup);\n    out[i] = shared[local_i] + 10;\n}\n";
    let r = check("threadgroup_memory", body);
    has_finding(&r, "barrier-divergence");
}

#[test]
fn threadgroup_memory_reading_a_instead_of_shared() {
    // Hint 1: the value is in `shared[local_i]`; reading `a` again is over target.
    let r = mistake("threadgroup_memory", "out[i] = shared[local_i] + 10;", "out[i] = a[i] + 10;");
    misses_target(&r, "Global Reads: 2 per thread, target ≤ 1");
    // The advice names the cell read twice and says to keep it in a register.
    let text = puzzles::render::human(&r, false);
    assert!(text.contains("It reads the same cell again: a[0] 2 times (lines ") && text.contains("local variable"), "{text}");
}

#[test]
fn pooling_without_care_for_the_first_positions() {
    // Hint 2: watch the first two positions.
    let body = solution("pooling");
    let r = check("pooling", &body.replace("if (local_i >= 1)", "if (true)").replace("if (local_i >= 2)", "if (true)"));
    assert!(!r.passed, "{}", puzzles::render::human(&r, false));
}

#[test]
fn dot_product_every_thread_writes_the_total() {
    // Hint 2: only one thread should write out[0]; otherwise the writes race.
    let body = solution("dot_product");
    let guard = body.lines().find(|l| l.contains("if (local_i == 0)")).expect("a guard on thread 0");
    let r = check("dot_product", &body.replacen(guard, "if (true) {", 1));
    assert!(!r.solved(), "{}", puzzles::render::human(&r, false));
    assert!(kinds(&r).contains(&"data-race") || !r.passed, "{:?}", kinds(&r));
}

#[test]
fn prefix_sum_threads_past_the_end_leave_the_cache_alone() {
    // Hint 1: threads past the end of `a` must put 0 into `cache`.
    let body = solution("prefix_sum");
    let line = body.lines().find(|l| l.contains("cache[local_i] =")).expect("the load into cache");
    let r = check("prefix_sum", &body.replacen(line, "if (i < uint(a_shape[0])) { cache[local_i] = a[i]; }", 1));
    assert!(!r.passed, "{}", puzzles::render::human(&r, false));
}

#[test]
fn axis_sum_row_offset_without_the_row_length() {
    // Hint 1: row `batch` starts at `batch * a_shape[1]`.
    let r = mistake("axis_sum", "a[batch * cols + i]", "a[batch + i]");
    fails_test(&r, "Axis Sum");
}

// ---- book two -----------------------------------------------------------

#[test]
fn simd_sum_every_lane_writes() {
    // Hint 2: only one thread per block (lane 0) writes the result.
    let r = mistake("simd_sum", "if (lane == 0 && i < n)", "if (i < n)");
    assert!(!r.solved(), "{}", puzzles::render::human(&r, false));
}

#[test]
fn simd_scan_shuffles_without_the_lane_check() {
    // Hint 2: add the shuffled value only when `lane >= d`.
    let body = "uint i = thread_position_in_grid.x;\nuint lane = thread_index_in_simdgroup;\n\
float s = i < uint(a_shape[0]) ? a[i] : 0.0f;\n\
for (ushort d = 1; d < 32; d *= 2) { s += simd_shuffle_up(s, d); }\n\
if (i < uint(a_shape[0])) out[i] = s;\n";
    let r = check("simd_scan", body);
    fails_test(&r, "SIMD Scan (Simple)");
}

#[test]
fn simd_scan_lanes_past_the_end_read_a() {
    // Hint 3: lanes past the end take part with a 0, they do not load.
    let r = mistake("simd_scan", "i < n ? a[i] : 0.0f", "a[i]");
    has_finding(&r, "out-of-bounds");
}

#[test]
fn threadgroup_reduce_partials_past_the_last_simdgroup() {
    // Hint 1: lanes past the last SIMD-group load 0, not partials[l].
    let r = mistake("threadgroup_reduce", "lane < simdgroups_per_threadgroup ? partials[lane] : 0.0f", "partials[lane]");
    has_finding(&r, "uninitialized-read");
}

#[test]
fn threadgroup_reduce_barrier_inside_an_if() {
    // Hint 2: the barrier must be reached by every thread.
    let r = mistake(
        "threadgroup_reduce",
        "threadgroup_barrier(mem_flags::mem_threadgroup);",
        "if (i < uint(a_shape[0])) { threadgroup_barrier(mem_flags::mem_threadgroup); }",
    );
    has_finding(&r, "barrier-divergence");
}

#[test]
fn histogram_without_the_stride_loop() {
    // Hint 3: the grid is smaller than `x`; each thread walks it with a stride.
    let r = mistake("histogram", "j += stride", "j += uint(x_shape[0])");
    fails_test(&r, "Histogram (Strided)");
}

#[test]
fn matvec_one_atomic_per_thread() {
    // Hint 2: simd_sum first, then one atomic per SIMD-group.
    let r = mistake(
        "matvec",
        "float s = simd_sum(acc);\nif (lane == 0) {\n    atomic_fetch_add_explicit(&out[row], s, memory_order_relaxed);\n}",
        "atomic_fetch_add_explicit(&out[row], acc, memory_order_relaxed);",
    );
    misses_target(&r, "Dev Atomics/TG: 32 per thread, target ≤ 1");
}

#[test]
fn matvec_chunks_past_the_end_of_the_row() {
    // Hint 1: stop at the end of the row (`a_shape[1]`).
    let r = mistake("matvec", "uint end = min(cols, (chunk + 1) * CHUNK);", "uint end = (chunk + 1) * CHUNK;");
    has_finding(&r, "out-of-bounds");
}

#[test]
fn segment_sum_one_atomic_per_element() {
    // Hint 2: add a run's sum when the id changes, not every element.
    let r = mistake("segment_sum", "run += x[j];", "atomic_fetch_add_explicit(&out[ids[j]], x[j], memory_order_relaxed);");
    // (The runs are then added as well: wrong and over target.)
    assert!(!r.solved(), "{}", puzzles::render::human(&r, false));
}

#[test]
fn segment_sum_threads_past_the_end() {
    // Hint 3: threads whose start is past the end do nothing.
    let r = mistake("segment_sum", "if (start < n) {", "{");
    has_finding(&r, "out-of-bounds");
}

#[test]
fn softmax_max_starting_at_zero() {
    // Hint 2: start the maximum at -INFINITY, not 0: rows can be all negative.
    let r = mistake("softmax", "float m = -INFINITY;", "float m = 0.0f;");
    fails_test(&r, "Softmax (All negative)");
}

#[test]
fn softmax_without_subtracting_the_max() {
    // The text: exp(100) is already infinite in float32.
    let body = solution("softmax").replace("exp(x[c] - m)", "exp(x[c])");
    let r = check("softmax", &body);
    fails_test(&r, "Softmax (Simple)");
}

#[test]
fn rms_norm_without_eps() {
    // The formula adds EPS under the square root: rows of zeros need it.
    let r = mistake("rms_norm", "/ float(cols) + EPS)", "/ float(cols))");
    fails_test(&r, "RMS Norm (Zero rows)");
}

#[test]
fn rms_norm_divided_by_32() {
    // The text: divide by the number of columns, not by 32.
    let r = mistake("rms_norm", "/ float(cols) + EPS)", "/ 32.0f + EPS)");
    fails_test(&r, "RMS Norm (Simple)");
}

#[test]
fn cdist_without_the_guards() {
    // Hint 1: guard both indices.
    let r = mistake("cdist", "if (i < n && j < m) {", "{");
    has_finding(&r, "out-of-bounds");
}

#[test]
fn grid_sample_unsigned_pixel_positions() {
    // Hint 2: use signed ints for pixel positions (x0 can be -1).
    let body = solution("grid_sample").replace("int x = int(x0) + dx;", "uint x = uint(x0) + dx;").replace("x >= 0 && ", "");
    let r = check("grid_sample", &body);
    assert!(!r.passed, "{}", puzzles::render::human(&r, false));
}

#[test]
fn grid_sample_reading_pixels_outside_the_image() {
    // Hint 2: read a pixel only when it is inside the image.
    let r = mistake("grid_sample", "if (x >= 0 && y >= 0 && x < w && y < h) {", "{");
    assert!(!r.passed, "{}", puzzles::render::human(&r, false));
}

#[test]
fn grid_sample_vjp_scattering_outside_the_image() {
    // The text: pixels outside the image are skipped.
    let r = mistake("grid_sample_vjp", "if (x >= 0 && y >= 0 && x < w && y < h) {", "{");
    has_finding(&r, "out-of-bounds");
}

#[test]
fn attention_row_max_starting_at_zero() {
    // Hint 2: start with m = -INFINITY.
    let r = mistake("attention_row", "float m = -INFINITY;", "float m = 0.0f;");
    fails_test(&r, "Attention Row (Negative scores)");
}

#[test]
fn attention_row_loading_q_in_the_loop() {
    // Hint 1: load q[lane] once, before the loop.
    let r = mistake("attention_row", "qc * k[j * d + lane]", "q[lane] * k[j * d + lane]");
    misses_target(&r, "Global Reads: 151 per thread, target ≤ 101");
}

#[test]
fn grid_scan_lanes_past_the_partials() {
    // Hint 2: 0 for lanes past `partials_shape[0]`.
    let r = mistake("grid_scan", "lane < blocks ? partials[lane] : 0.0f", "partials[lane]");
    has_finding(&r, "out-of-bounds");
}

#[test]
fn radix_scatter_ranks_from_an_atomic_counter() {
    // Hint 3: a rank from an atomic counter does not keep equal keys in order.
    let body = solution("radix_pass");
    let from = "    uint rank = 0;\n    for (uint j = 0; j < local_i; j++) {\n        rank += digits[j] == d ? 1u : 0u;\n    }\n";
    assert!(body.contains(from));
    let body = body
        .replace("threadgroup uint digits[BLOCK];", "threadgroup atomic_uint counter[BINS + 1];")
        .replace("digits[local_i] = d;", "if (local_i <= BINS) { atomic_store_explicit(&counter[local_i], 0u, memory_order_relaxed); }")
        .replace(from, "    uint rank = atomic_fetch_add_explicit(&counter[d], 1u, memory_order_relaxed);\n");
    let r = check("radix_pass", &body);
    assert!(!r.passed, "{}", puzzles::render::human(&r, false));
    assert!(r.explanations.iter().any(|e| e.contains("not stable")), "{:?}", r.explanations);
}
