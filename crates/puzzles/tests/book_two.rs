//! Book two: chapters, the new score columns, tolerances and randomized
//! edges, reference scores, other correct approaches, and deliberately
//! wrong solutions whose verdict and finding are asserted.

mod common;
use common::*;
use puzzles::{Random, CHAPTERS, PUZZLES};

fn human(r: &puzzles::CheckResult) -> String {
    puzzles::render::human(r, false)
}

/// Passes every test with no finding, but misses a target.
fn assert_over_target(r: &puzzles::CheckResult, missed: &str) {
    let text = human(r);
    assert!(r.passed && !r.targets_met && !r.solved(), "{text}");
    assert!(text.contains("Not solved yet: the tests pass, but the kernel misses a target."), "{text}");
    assert!(text.contains(missed), "expected `{missed}` in:\n{text}");
}

fn assert_solved(r: &puzzles::CheckResult) {
    assert!(r.solved(), "{}", human(r));
    assert!(r.findings.is_empty(), "{:?}", kinds(r));
}

#[test]
fn chapters_are_contiguous_and_in_order() {
    let mut seen: Vec<&str> = Vec::new();
    for p in PUZZLES.iter() {
        assert!(CHAPTERS.contains(&p.chapter), "{}: unknown chapter {}", p.slug, p.chapter);
        if seen.last() != Some(&p.chapter) {
            assert!(!seen.contains(&p.chapter), "{}: chapter {} is split", p.slug, p.chapter);
            seen.push(p.chapter);
        }
    }
    assert_eq!(seen, CHAPTERS.to_vec(), "every chapter has puzzles, in CHAPTERS order");
    assert!(PUZZLES[..14].iter().all(|p| p.chapter == CHAPTERS[0]));
    assert_eq!(puzzles::find("simd_sum").unwrap().chapter, "SIMD-groups");
    assert_eq!(puzzles::find("histogram").unwrap().chapter, "Atomics");
}

#[test]
fn book_two_tests_have_edge_threadgroups_and_float_values() {
    for p in PUZZLES.iter().filter(|p| p.number >= 15) {
        // Some test's data does not fill whole threadgroups.
        let edge = p.tests.iter().any(|t| {
            let n = t.inputs[0].shape.last().copied().unwrap_or(1) as u32;
            !n.is_multiple_of(t.threadgroup[0]) || !t.grid[0].is_multiple_of(t.threadgroup[0])
        });
        assert!(edge, "{}: every test fills whole threadgroups", p.slug);
        assert!(p.tests.len() >= 2, "{}", p.slug);
        // Random float inputs really are fractional (sums depend on order).
        for (name, _, seed, inputs) in puzzles::check::runs(p) {
            if seed.is_none() {
                continue;
            }
            for (spec, a) in p.tests[0].inputs.iter().zip(&inputs) {
                if let Random::Floats(..) = spec.random {
                    assert!(a.to_f64_vec().iter().any(|v| v.fract() != 0.0), "{name}: {}", spec.name);
                }
            }
        }
    }
}

#[test]
fn sorted_runs_are_sorted_runs_of_at_least_the_minimum() {
    let p = puzzles::find("segment_sum").unwrap();
    for (name, case, _, inputs) in puzzles::check::runs(p) {
        let ids = inputs[1].to_f64_vec();
        assert!(ids.windows(2).all(|w| w[0] <= w[1]), "{name}: sorted");
        assert!(ids.iter().all(|&v| (0.0..64.0).contains(&v)), "{name}: in range");
        // Every run but the last has at least `min` elements.
        let Random::Runs { min, .. } = p.tests[case].inputs[1].random else { panic!("runs") };
        let mut runs = Vec::new();
        let mut len = 1;
        for w in ids.windows(2) {
            if w[0] == w[1] {
                len += 1;
            } else {
                runs.push(len);
                len = 1;
            }
        }
        assert!(runs.iter().all(|&l| l >= min), "{name}: {runs:?}");
    }
}

#[test]
fn reference_scores() {
    let score = |slug| check(slug, solution(slug)).score.columns();
    // [global r, global w, shared r, shared w, device atomics, tg atomics, barriers, simd, device atomics per tg]
    assert_eq!(score("simd_sum"), [1, 1, 0, 0, 0, 0, 0, 1, 0]);
    assert_eq!(score("simd_scan"), [1, 1, 0, 0, 0, 0, 0, 1, 0]);
    assert_eq!(score("threadgroup_reduce"), [1, 1, 1, 1, 0, 0, 1, 2, 0]);
    let h = score("histogram");
    assert_eq!((h[4], h[6]), (1, 2), "{h:?}");
    assert_eq!(score("matvec"), [8, 0, 0, 0, 1, 0, 0, 1, 1]);
    assert_eq!(score("segment_sum")[4], 2);
}

#[test]
fn score_columns_appear_only_where_targets_are_set() {
    let r = check("simd_sum", solution("simd_sum"));
    let text = human(&r);
    // Seven columns: stacked, one row per column, so that 80 columns hold them.
    assert!(text.contains("   | Barriers      |     0 |  ≤ 0 ✓ |") && text.contains("   | SIMD Ops      |     1 |  ≤ 5 ✓ |"), "{text}");
    assert!(!text.contains("Dev Atomics") && text.lines().all(|l| l.chars().count() <= 80), "{text}");
    let j = puzzles::render::json(&r);
    assert_eq!(j["score"]["simd_ops"], 1);
    assert_eq!(j["targets"]["simd_ops"], 5);
    assert!(j["score"].get("device_atomics").is_none());
    // Book one keeps exactly its four columns, in text and JSON.
    let r = check("map", solution("map"));
    assert!(!human(&r).contains("SIMD Ops"));
    let j = puzzles::render::json(&r);
    for part in ["score", "targets"] {
        let keys: Vec<&String> = j[part].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["global_reads", "global_writes", "shared_reads", "shared_writes"], "{part}");
    }
}

// ---- SIMD-groups ------------------------------------------------------------

#[test]
fn simd_sum_alternatives_and_mistakes() {
    // A shuffle tree instead of simd_sum is correct too, and within target.
    let tree = "uint i = thread_position_in_grid.x;\nuint lane = thread_index_in_simdgroup;\n\
float s = i < uint(a_shape[0]) ? a[i] : 0.0f;\n\
for (ushort d = 16; d > 0; d /= 2) { s += simd_shuffle_xor(s, d); }\n\
if (lane == 0 && i < uint(a_shape[0])) { out[i / 32] = s; }\n";
    let r = check("simd_sum", tree);
    assert_solved(&r);
    assert_eq!(r.score.simd_ops, 5);

    // No guard: the threads past the end read outside `a`.
    let body = solution("simd_sum").replace("i < n ? a[i] : 0.0f", "a[i]");
    let r = check("simd_sum", &body);
    assert!(!r.passed);
    assert!(kinds(&r).contains(&"out-of-bounds"), "{:?}", kinds(&r));

    // Staged through threadgroup memory: right, but not the point.
    let staged = "threadgroup float t[64];\nuint i = thread_position_in_grid.x;\nuint l = thread_position_in_threadgroup.x;\n\
t[l] = i < uint(a_shape[0]) ? a[i] : 0.0f;\nthreadgroup_barrier(mem_flags::mem_threadgroup);\n\
if (l % 32 == 0 && i < uint(a_shape[0])) { float s = 0; for (uint k = 0; k < 32; k++) s += t[l + k]; out[i / 32] = s; }\n";
    assert_over_target(&check("simd_sum", staged), "Shared Writes: 1 per thread, target ≤ 0");
}

#[test]
fn simd_scan_alternatives_and_mistakes() {
    let shuffles = "uint i = thread_position_in_grid.x;\nuint lane = thread_index_in_simdgroup;\n\
float s = i < uint(a_shape[0]) ? a[i] : 0.0f;\n\
for (ushort d = 1; d < 32; d *= 2) { float up = simd_shuffle_up(s, d); if (lane >= d) s += up; }\n\
if (i < uint(a_shape[0])) out[i] = s;\n";
    assert_solved(&check("simd_scan", shuffles));

    // Exclusive instead of inclusive: every cell misses its own element.
    let body = solution("simd_scan").replace("inclusive", "exclusive");
    let r = check("simd_scan", &body);
    assert!(!r.passed && r.findings.is_empty());
    assert_eq!(r.first_failure().unwrap().name, "SIMD Scan (Simple)");
    assert!(
        r.explanations[0].starts_with("out[0] = 0, expected 0") || r.explanations[0].starts_with("out[1] = 0, expected 1"),
        "{:?}",
        r.explanations
    );
}

#[test]
fn threadgroup_reduce_mistakes() {
    // Without the barrier SIMD-group 0 reads partials others have not written.
    let body = solution("threadgroup_reduce").replace("threadgroup_barrier(mem_flags::mem_threadgroup);", "");
    let r = check("threadgroup_reduce", &body);
    assert!(!r.passed);
    assert!(kinds(&r).contains(&"data-race"), "{:?}", kinds(&r));

    // Shuffle trees at both levels are fine too.
    let trees = solution("threadgroup_reduce")
        .replace("float s = simd_sum(i < uint(a_shape[0]) ? a[i] : 0.0f);", "float s = i < uint(a_shape[0]) ? a[i] : 0.0f;\nfor (ushort d = 16; d > 0; d /= 2) s += simd_shuffle_down(s, d);")
        .replace("float total = simd_sum(lane < simdgroups_per_threadgroup ? partials[lane] : 0.0f);", "float total = lane < simdgroups_per_threadgroup ? partials[lane] : 0.0f;\n    for (ushort d = 16; d > 0; d /= 2) total += simd_shuffle_down(total, d);");
    assert!(trees.contains("simd_shuffle_down(total"), "{trees}");
    let r = check("threadgroup_reduce", &trees);
    assert_solved(&r);
    assert_eq!(r.score.simd_ops, 10);

    // Book one's halving tree: correct, but eight barriers.
    let tree = "threadgroup float cache[256];\nuint i = thread_position_in_grid.x;\nuint l = thread_position_in_threadgroup.x;\n\
cache[l] = i < uint(a_shape[0]) ? a[i] : 0.0f;\nthreadgroup_barrier(mem_flags::mem_threadgroup);\n\
for (uint h = 128; h > 0; h /= 2) { if (l < h) cache[l] += cache[l + h]; threadgroup_barrier(mem_flags::mem_threadgroup); }\n\
if (l == 0) out[threadgroup_position_in_grid.x] = cache[0];\n";
    assert_over_target(&check("threadgroup_reduce", tree), "Barriers: 9 per thread, target ≤ 1");
}

// ---- Atomics ----------------------------------------------------------------

#[test]
fn histogram_mistakes() {
    // Straight to device atomics: right counts, one device atomic per element.
    let direct = "uint i = thread_position_in_grid.x;\nuint stride = threads_per_grid.x;\n\
for (uint j = i; j < uint(x_shape[0]); j += stride) { atomic_fetch_add_explicit(&out[x[j]], 1, memory_order_relaxed); }\n";
    assert_over_target(&check("histogram", direct), "Dev Atomics: 8 per thread, target ≤ 1");

    // Plain `+=` on threadgroup counters: threads of a group race.
    let racy = "threadgroup int bins[BINS];\nuint i = thread_position_in_grid.x;\nuint l = thread_position_in_threadgroup.x;\n\
if (l < BINS) bins[l] = 0;\nthreadgroup_barrier(mem_flags::mem_threadgroup);\n\
for (uint j = i; j < uint(x_shape[0]); j += threads_per_grid.x) { bins[x[j]] += 1; }\n\
threadgroup_barrier(mem_flags::mem_threadgroup);\n\
if (l < BINS) atomic_fetch_add_explicit(&out[l], bins[l], memory_order_relaxed);\n";
    let r = check("histogram", racy);
    assert!(!r.passed);
    assert!(kinds(&r).contains(&"data-race"), "{:?}", kinds(&r));
}

#[test]
fn matvec_mistakes() {
    // An atomic per product: four per thread.
    let body = solution("matvec")
        .replace(
            "acc += a[row * cols + c] * x[c];",
            "atomic_fetch_add_explicit(&out[row], a[row * cols + c] * x[c], memory_order_relaxed);",
        )
        .replace("float s = simd_sum(acc);\nif (lane == 0) {\n    atomic_fetch_add_explicit(&out[row], s, memory_order_relaxed);\n}\n", "");
    assert_over_target(&check("matvec", &body), "Dev Atomics: 4 per thread, target ≤ 1");

    // The chunk's end not clamped to the row: the last chunk reads past the
    // end of `x` (the simulator reads 0 there, so only the sanitizer sees it).
    let body = solution("matvec").replace("uint end = min(cols, (chunk + 1) * CHUNK);", "uint end = (chunk + 1) * CHUNK;");
    let r = check("matvec", &body);
    assert!(!r.passed, "{}", human(&r));
    assert!(human(&r).starts_with("Failed Tests. (every output matches, but the sanitizer reported errors below)"));
    let f = &r.findings[0];
    assert_eq!((f.finding.kind.name(), f.test.as_str()), ("out-of-bounds", "Matvec (Edges)"));
    assert!(f.finding.message.contains("out-of-bounds read of `x`"), "{}", f.finding.message);
}

#[test]
fn segment_sum_mistakes() {
    // One atomic per element.
    let per_element = "uint i = thread_position_in_grid.x;\nuint start = i * PER_THREAD;\n\
for (uint j = start; j < min(uint(x_shape[0]), start + PER_THREAD); j++) { atomic_fetch_add_explicit(&out[ids[j]], x[j], memory_order_relaxed); }\n";
    assert_over_target(&check("segment_sum", per_element), "Dev Atomics: 8 per thread, target ≤ 2");

    // Forgets to flush when the id changes: the run before is added to the
    // next segment.
    let body = solution("segment_sum").replace(
        "            atomic_fetch_add_explicit(&out[current], run, memory_order_relaxed);\n            current = ids[j];\n            run = 0.0f;\n",
        "            current = ids[j];\n",
    );
    let r = check("segment_sum", &body);
    assert!(!r.passed && r.findings.is_empty());
    assert!(!r.explanations.is_empty());
}

// ---- ML kernels -------------------------------------------------------------

#[test]
fn softmax_without_the_maximum_overflows() {
    let body = solution("softmax").replace("exp(x[c] - m)", "exp(x[c])");
    let r = check("softmax", &body);
    assert!(!r.passed && r.findings.is_empty());
    let t = r.first_failure().unwrap();
    assert_eq!(t.name, "Softmax (Simple)");
    // exp(159) is inf in float32: inf / inf.
    assert!(t.yours.as_ref().unwrap().to_f64_vec().iter().any(|v| v.is_nan()), "{}", human(&r));
}

#[test]
fn rms_norm_dividing_by_the_simd_width_is_wrong() {
    let body = solution("rms_norm").replace("/ float(cols)", "/ 32.0f");
    let r = check("rms_norm", &body);
    assert!(!r.passed && r.findings.is_empty());
    assert_eq!(r.first_failure().unwrap().name, "RMS Norm (Simple)");
    assert!(!r.explanations.is_empty());
}

#[test]
fn unguarded_ml_kernels_are_caught_by_the_sanitizer() {
    // cdist without the guard: threads past N and M read past a and b.
    let body = solution("cdist").replace("if (i < n && j < m) {", "{");
    let r = check("cdist", &body);
    assert!(!r.passed);
    assert!(kinds(&r).contains(&"out-of-bounds"), "{:?}", kinds(&r));
    // Bilinear taps outside the image read (or add) outside it.
    for slug in ["grid_sample", "grid_sample_vjp"] {
        let body = solution(slug).replace("if (x >= 0 && y >= 0 && x < w && y < h) {", "{");
        let r = check(slug, &body);
        assert!(!r.passed, "{slug}");
        assert!(kinds(&r).contains(&"out-of-bounds"), "{slug}: {:?}", kinds(&r));
    }
}

#[test]
fn attention_two_passes_miss_the_target_and_no_maximum_overflows() {
    // A first pass for the maximum: every key is read twice.
    let two_pass = "uint lane = thread_index_in_simdgroup;\nuint d = q_shape[0];\nuint n = k_shape[0];\n\
float qc = lane < d ? q[lane] : 0.0f;\nfloat scale = rsqrt(float(d));\nfloat m = -INFINITY;\n\
for (uint j = 0; j < n; j++) { m = max(m, simd_sum(lane < d ? qc * k[j * d + lane] : 0.0f) * scale); }\n\
float l = 0.0f;\nfloat acc = 0.0f;\n\
for (uint j = 0; j < n; j++) {\n\
    float e = exp(simd_sum(lane < d ? qc * k[j * d + lane] : 0.0f) * scale - m);\n\
    l += e;\n    acc += lane < d ? e * v[j * d + lane] : 0.0f;\n}\n\
if (lane < d) out[lane] = acc / l;\n";
    assert_over_target(&check("attention_row", two_pass), "Global Reads: 151 per thread, target ≤ 101");

    // Plain exponentials of the scores overflow on the book's inputs.
    let body = solution("attention_row").replace("float c = exp(m - m2);", "float c = 1.0f;").replace("exp(s - m2)", "exp(s)");
    let r = check("attention_row", &body);
    assert!(!r.passed);
    assert_eq!(r.first_failure().unwrap().name, "Attention Row (Simple)");
}

#[test]
fn simd_matmul_scalar_loops_miss_the_target() {
    // Each lane computes its two cells of the tile with plain loops.
    let scalar = "uint tile_col = threadgroup_position_in_grid.x;\nuint tile_row = threadgroup_position_in_grid.y;\n\
uint lane = thread_index_in_simdgroup;\nuint K = a_shape[1];\nuint N = b_shape[1];\n\
for (uint e = 2 * lane; e < 2 * lane + 2; e++) {\n\
    uint r = tile_row * 8 + e / 8;\n    uint c = tile_col * 8 + e % 8;\n    float acc = 0.0f;\n\
    for (uint t = 0; t < K; t++) acc += a[r * K + t] * b[t * N + c];\n    out[r * N + c] = acc;\n}\n";
    assert_over_target(&check("simd_matmul", scalar), "Global Reads: 96 per thread, target ≤ 14");

    // The accumulator loaded from `out` instead of made with
    // `make_filled_simdgroup_matrix`: MLX does not clear outputs (no
    // `init_value`), so it starts from garbage.
    let body = solution("simd_matmul").replace(
        "simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);",
        "simdgroup_float8x8 acc;\nsimdgroup_load(acc, out + tile_row * 8 * N + tile_col * 8, N);",
    );
    assert!(body.contains("simdgroup_load(acc"), "{body}");
    let r = check("simd_matmul", &body);
    assert!(!r.passed);
    assert!(kinds(&r).contains(&"uninitialized-read"), "{:?}", kinds(&r));

    // b's tile taken with a's stride: wrong once K differs from N.
    let body = solution("simd_matmul")
        .replace("simdgroup_load(tb, b + t * N + tile_col * 8, N);", "simdgroup_load(tb, b + t * N + tile_col * 8, K);");
    let r = check("simd_matmul", &body);
    assert!(!r.passed);
    assert_eq!(r.first_failure().unwrap().name, "SIMD Matmul (Tiles)");
}

#[test]
fn book_two_diagrams_draw_every_test_within_2400_pixels() {
    let mut too_big = Vec::new();
    for p in PUZZLES.iter().filter(|p| p.number >= 15) {
        let text = file_with(p.slug, solution(p.slug));
        for case in 0..p.tests.len() {
            let shown = puzzles::show::trace_test(p, &p.file_name(), &text, case, None).expect("traced run");
            assert!(shown.findings.is_empty(), "{}: {:?}", p.slug, shown.findings);
            assert!(shown.trace.events.iter().any(|e| e.write), "{} test {case}: no writes traced", p.slug);
            let doc = diagram::render_svg(&shown.spec, &shown.trace);
            let size = |key: &str| -> f64 {
                doc.split(&format!("{key}=\"")).nth(1).and_then(|s| s.split('"').next()).and_then(|s| s.parse().ok()).unwrap()
            };
            let (w, h) = (size("width"), size("height"));
            if w > 2400.0 || h > 2400.0 {
                too_big.push(format!("{} test {}: {w} x {h}", p.slug, case + 1));
            }
        }
    }
    assert!(too_big.is_empty(), "{too_big:?}");
}

#[test]
fn histogram_over_target_report() {
    // The whole human report: book two's columns appear where targets are set.
    let direct = "uint i = thread_position_in_grid.x;\nuint stride = threads_per_grid.x;\n\
for (uint j = i; j < uint(x_shape[0]); j += stride) { atomic_fetch_add_explicit(&out[x[j]], 1, memory_order_relaxed); }\n";
    insta::assert_snapshot!(human(&check("histogram", direct)));
}

// ---- Pipelines: puzzle 28, a scan across threadgroups in three kernels ----

/// The reference file with one stage's section replaced.
fn grid_scan_with(stage: &str, body: &str) -> String {
    let marker = format!("// ---- kernel {stage} ----\n");
    let start = GRID_SCAN.find(&marker).expect("section") + marker.len();
    let end = GRID_SCAN[start..].find("// ---- kernel ").map_or(GRID_SCAN.len(), |e| start + e);
    format!("{}{body}\n{}", &GRID_SCAN[..start], &GRID_SCAN[end..])
}

fn check_grid_scan(text: &str) -> puzzles::CheckResult {
    puzzles::check(puzzles::find("grid_scan").unwrap(), text)
}

#[test]
fn grid_scan_is_a_pipeline_solved_by_the_reference() {
    let p = puzzles::find("28").unwrap();
    assert_eq!((p.slug, p.chapter), ("grid_scan", "Pipelines"));
    let names: Vec<&str> = p.stages.iter().map(|s| s.name).collect();
    assert_eq!(names, ["reduce", "scan", "add_back"]);
    // Sizes that leave the last threadgroup short, and one with the full 32 blocks.
    let sizes: Vec<usize> = p.tests.iter().map(|t| t.inputs[0].shape[0]).collect();
    assert_eq!(sizes, [200, 1000, 2000]);
    assert!(sizes.iter().all(|n| n % 64 != 0));
    let r = check_grid_scan(GRID_SCAN);
    assert_solved(&r);
    // One score per kernel; the puzzle's score is their maximum.
    let stage_names: Vec<&str> = r.stage_scores.iter().map(|(n, _)| *n).collect();
    assert_eq!(stage_names, ["reduce", "scan", "add_back"]);
    let reduce = r.stage_scores[0].1;
    assert_eq!((reduce.global_reads, reduce.global_writes, reduce.shared_reads, reduce.barriers, reduce.simd_ops), (1, 1, 2, 1, 1));
    let add_back = r.stage_scores[2].1;
    assert_eq!((add_back.global_reads, add_back.shared_reads, add_back.barriers), (2, 1, 1));
    assert_eq!(r.score, r.stage_scores.iter().map(|(_, s)| *s).reduce(puzzles::Score::max).unwrap());
    let text = human(&r);
    assert!(text.contains("# Kernel 1 of 3: reduce") && text.contains("# Kernel 3 of 3: add_back"), "{text}");
    let j = puzzles::render::json(&r);
    assert_eq!(j["stages"][1]["name"], "scan");
    assert_eq!(j["stages"][2]["score"]["global_reads"], 2);
}

#[test]
fn grid_scan_other_correct_approaches_pass() {
    // A serial scan of the partials by one thread: correct, but it reads
    // every partial (the target asks for one SIMD-group prefix sum).
    let serial = "if (thread_index_in_simdgroup == 0) {\n    float s = 0.0f;\n    for (uint g = 0; g < uint(partials_shape[0]); g++) {\n        offsets[g] = s;\n        s += partials[g];\n    }\n}\n";
    let r = check_grid_scan(&grid_scan_with("scan", serial));
    assert_over_target(&r, "Global Reads");
    // Sections in another order than the stages run: still run in the puzzle's order.
    let add_back_start = GRID_SCAN.find("// ---- kernel add_back").unwrap();
    let reordered = format!("{}\n{}", &GRID_SCAN[add_back_start..], &GRID_SCAN[..add_back_start]);
    assert_solved(&check_grid_scan(&reordered));
}

#[test]
fn grid_scan_wrong_scan_stage_is_named() {
    // Inclusive instead of exclusive: block g gets its own sum added twice.
    let wrong = "uint lane = thread_index_in_simdgroup;\nuint blocks = partials_shape[0];\nfloat s = simd_prefix_inclusive_sum(lane < blocks ? partials[lane] : 0.0f);\nif (lane < blocks) {\n    offsets[lane] = s;\n}\n";
    let r = check_grid_scan(&grid_scan_with("scan", wrong));
    assert!(!r.passed && r.error.is_none() && r.findings.is_empty(), "{}", human(&r));
    let why = &r.explanations;
    assert!(why[0].starts_with("stage 2 (scan) is wrong in `Grid Scan (Book)`: 4 of 4 cells of `offsets` differ"), "{why:?}");
    assert!(why[0].contains("stage 1 (reduce), which matched"), "{why:?}");
    // a = arange(200): block 0 sums 0..63 = 2016; offsets[0] must be 0.
    assert_eq!(why[1], "offsets[0] is 2016, expected 0");
    // The failing test shows the stage's output against its reference.
    let t = r.first_failure().unwrap();
    assert_eq!(t.yours.as_ref().unwrap().shape, vec![4]);
    let text = human(&r);
    assert!(text.contains("Why (each kernel checked against its own reference):"), "{text}");
}

#[test]
fn grid_scan_wrong_reduce_and_add_back_are_named() {
    // Forgets the second SIMD-group of each block (the short last block has none).
    let half = "threadgroup float sums[2];\nuint i = thread_position_in_grid.x;\nfloat s = simd_sum(i < uint(a_shape[0]) ? a[i] : 0.0f);\nif (thread_index_in_threadgroup == 0) {\n    partials[threadgroup_position_in_grid.x] = s;\n}\n";
    let r = check_grid_scan(&grid_scan_with("reduce", half));
    assert!(
        r.explanations[0].starts_with("stage 1 (reduce) is wrong in `Grid Scan (Book)`: 3 of 4 cells of `partials`"),
        "{:?}",
        r.explanations
    );
    assert!(r.explanations[0].contains("the puzzle's inputs"));
    // 0 + 1 + ... + 31 = 496 of 2016.
    assert_eq!(r.explanations[1], "partials[0] is 496, expected 2016");
    // Scans each block but forgets the offsets: block 0 is right, the rest are not.
    let no_offsets = "threadgroup float first_total[1];\nuint i = thread_position_in_grid.x;\nfloat s = simd_prefix_inclusive_sum(i < uint(a_shape[0]) ? a[i] : 0.0f);\nif (simdgroup_index_in_threadgroup == 0 && thread_index_in_simdgroup == 31) {\n    first_total[0] = s;\n}\nthreadgroup_barrier(mem_flags::mem_threadgroup);\nif (simdgroup_index_in_threadgroup == 1) {\n    s += first_total[0];\n}\nif (i < uint(a_shape[0])) {\n    out[i] = s;\n}\n";
    let r = check_grid_scan(&grid_scan_with("add_back", no_offsets));
    let why = &r.explanations;
    assert!(why[0].starts_with("stage 3 (add_back) is wrong in `Grid Scan (Book)`: 136 of 200 cells of `out`"), "{why:?}");
    assert!(why[0].contains("stages 1 (reduce), 2 (scan), which matched"), "{why:?}");
    // out[64] = 2016 + 64 (the first block's total plus a[64]).
    assert_eq!(why[1], "out[64] is 64, expected 2080");
}

#[test]
fn grid_scan_edge_block_overrun_is_found() {
    // No guard on the last, short block: reads past the end of `a`.
    let unguarded = "threadgroup float sums[2];\nuint i = thread_position_in_grid.x;\nfloat s = simd_sum(a[i]);\nif (thread_index_in_simdgroup == 0) {\n    sums[simdgroup_index_in_threadgroup] = s;\n}\nthreadgroup_barrier(mem_flags::mem_threadgroup);\nif (thread_index_in_threadgroup == 0) {\n    partials[threadgroup_position_in_grid.x] = sums[0] + sums[1];\n}\n";
    let r = check_grid_scan(&grid_scan_with("reduce", unguarded));
    assert!(!r.passed);
    assert!(r.findings.iter().any(|f| f.finding.is_error), "{}", human(&r));
    let text = human(&r);
    assert!(text.contains("28_grid_scan.metal:4:"), "the finding points at the reduce section's line:\n{text}");
}

#[test]
fn grid_scan_file_layout_errors_name_the_line() {
    let p = puzzles::find("grid_scan").unwrap();
    // A missing section.
    let only_two = &GRID_SCAN[..GRID_SCAN.find("// ---- kernel add_back").unwrap()];
    let r = puzzles::check(p, only_two);
    assert_eq!(
        r.error.as_deref(),
        Some("28_grid_scan.metal: no `// ---- kernel add_back ----` line: each of this puzzle's kernels (reduce, scan, add_back) needs its own section under such a line")
    );
    assert!(!r.passed && r.tests.is_empty());
    // An unknown one.
    let r = puzzles::check(p, &GRID_SCAN.replace("kernel scan ", "kernel prefix "));
    assert_eq!(
        r.error.as_deref(),
        Some("28_grid_scan.metal:13:1: puzzle 28 has no kernel `prefix` (its kernels, in order: reduce, scan, add_back)")
    );
    // Twice the same.
    let r = puzzles::check(p, &GRID_SCAN.replace("kernel scan ", "kernel reduce "));
    assert_eq!(r.error.as_deref(), Some("28_grid_scan.metal:13:1: a second `kernel reduce` section (the first is on line 1)"));
    // Code outside any section.
    let r = puzzles::check(p, &format!("// notes\nuint x = 1;\n{GRID_SCAN}"));
    assert_eq!(
        r.error.as_deref(),
        Some("28_grid_scan.metal:2:1: code before the first `// ---- kernel NAME ----` line belongs to no kernel")
    );
    // A compile error is reported at its line in the file.
    let r = puzzles::check(p, &GRID_SCAN.replace("float before = ", "float before = nope + "));
    let text = human(&r);
    assert!(r.error.is_some() && text.contains("28_grid_scan.metal:16:"), "{text}");
}

#[test]
fn grid_scan_starter_lists_every_kernel() {
    let p = puzzles::find("grid_scan").unwrap();
    let starter = p.starter_file();
    for s in p.stages {
        assert!(starter.lines().any(|l| l == s.marker()), "{starter}");
    }
    let r = puzzles::check(p, &starter);
    assert!(r.error.is_none() && !r.passed, "{:?}", r.error);
    assert!(r.explanations[0].starts_with("stage 1 (reduce) is wrong"), "{:?}", r.explanations);
}

// ---- Pipelines: puzzle 29, one pass of a radix sort -------------------------

/// The reference sections with one stage's section replaced.
fn radix_with(stage: &str, body: &str) -> String {
    let all = solution("radix_pass");
    let marker = format!("// ---- kernel {stage} ----\n");
    let start = all.find(&marker).expect("section") + marker.len();
    let end = all[start..].find("// ---- kernel ").map_or(all.len(), |e| start + e);
    radix_file(&format!("{}{body}\n{}", &all[..start], &all[end..]))
}

fn check_radix(text: &str) -> puzzles::CheckResult {
    puzzles::check(puzzles::find("radix_pass").unwrap(), text)
}

#[test]
fn radix_pass_is_a_pipeline_solved_by_the_reference() {
    let p = puzzles::find("29").unwrap();
    assert_eq!((p.slug, p.chapter), ("radix_pass", "Pipelines"));
    let names: Vec<&str> = p.stages.iter().map(|s| s.name).collect();
    assert_eq!(names, ["histogram", "scan", "scatter"]);
    let sizes: Vec<usize> = p.tests.iter().map(|t| t.inputs[0].shape[0]).collect();
    assert!(sizes.iter().all(|n| n % 64 != 0), "{sizes:?}");
    let r = check_radix(&radix_file(solution("radix_pass")));
    assert_solved(&r);
    // Per kernel: [global r, global w, shared r, shared w, device atomics, tg atomics, barriers, simd, device atomics per tg]
    let scores: Vec<[u64; 9]> = r.stage_scores.iter().map(|(_, s)| s.columns()).collect();
    assert_eq!(scores[0], [1, 1, 0, 0, 0, 3, 2, 0, 0]);
    assert_eq!(scores[1], [1, 1, 7, 1, 0, 0, 1, 1, 0]);
    assert_eq!(scores[2], [2, 1, 63, 1, 0, 0, 1, 0, 0]);
    // The book's test sorts its keys by digit, equal digits in input order.
    let t = &r.tests[0];
    let (keys, out) = (t.inputs[0].to_f64_vec(), t.yours.as_ref().unwrap().to_f64_vec());
    let digit = |k: f64| ((k as u32) >> 4) & 15;
    assert!(out.windows(2).all(|w| digit(w[0]) <= digit(w[1])));
    for d in 0..16 {
        let a: Vec<f64> = keys.iter().copied().filter(|&k| digit(k) == d).collect();
        let b: Vec<f64> = out.iter().copied().filter(|&k| digit(k) == d).collect();
        assert_eq!(a, b, "digit {d}");
    }
}

#[test]
fn radix_pass_targets_are_judged_per_kernel() {
    let p = puzzles::find("radix_pass").unwrap();
    // The puzzle's targets are the loosest of its kernels'.
    assert_eq!(p.targets, puzzles::Targets::loosest(p.stages));
    assert_eq!(p.targets.threadgroup_atomics, Some(3));
    // A scan that reads two counts per thread is within the puzzle-wide
    // global-read target (2, the scatter's) but over the scan's own (1).
    let twice = "threadgroup uint totals[8];\nuint i = thread_position_in_threadgroup.x;\nuint lane = thread_index_in_simdgroup;\nuint simdgroup = simdgroup_index_in_threadgroup;\nuint cells = counts_shape[0] * counts_shape[1];\nuint c = i < cells ? counts[i] : 0u;\nuint again = i < cells ? counts[i] : 0u;\nuint before = simd_prefix_exclusive_sum(c);\nif (lane == 31) {\n    totals[simdgroup] = before + again;\n}\nthreadgroup_barrier(mem_flags::mem_threadgroup);\nuint base = 0;\nfor (uint k = 0; k < simdgroup; k++) {\n    base += totals[k];\n}\nif (i < cells) {\n    offsets[i] = base + before;\n}\n";
    let r = check_radix(&radix_with("scan", twice));
    assert!(r.passed && !r.targets_met, "{}", human(&r));
    assert!(p.targets.met_by(r.score), "within the puzzle-wide targets");
    let text = human(&r);
    assert!(text.contains("Kernel 2 of 3 (scan): Global Reads: 2 per thread, target ≤ 1"), "{text}");
    assert!(text.contains("# Kernel 2 of 3: scan"), "{text}");
    let j = puzzles::render::json(&r);
    assert_eq!(j["stages"][1]["targets"]["global_reads"], 1);
    assert_eq!(j["stages"][1]["targets_met"], false);
    assert_eq!(j["stages"][0]["targets_met"], true);
    assert_eq!(j["stages"][2]["targets"]["shared_reads"], 63);
}

#[test]
fn radix_wrong_histogram_is_named() {
    // Counts laid out block-major (g * 16 + d) instead of digit-major.
    let all = solution("radix_pass");
    let body = all.replace("counts[local_i * blocks + block]", "counts[block * BINS + local_i]");
    let r = check_radix(&radix_file(&body));
    assert!(!r.passed && r.findings.is_empty(), "{}", human(&r));
    let why = &r.explanations;
    assert!(why[0].starts_with("stage 1 (histogram) is wrong in `Radix Pass (Book)`"), "{why:?}");
    assert!(why[0].contains("of `counts` differ") && why[0].contains("the puzzle's inputs"), "{why:?}");
    assert!(why.last().unwrap().contains("later stages did not run"), "{why:?}");
    // Plain `+=` on threadgroup counters: a data race.
    let racy = all
        .replace("threadgroup atomic_uint bins[BINS];", "threadgroup uint bins[BINS];")
        .replace("atomic_store_explicit(&bins[local_i], 0u, memory_order_relaxed);", "bins[local_i] = 0;")
        .replace(
            "atomic_fetch_add_explicit(&bins[(keys[i] >> SHIFT) & (BINS - 1)], 1u, memory_order_relaxed);",
            "bins[(keys[i] >> SHIFT) & (BINS - 1)] += 1;",
        )
        .replace("atomic_load_explicit(&bins[local_i], memory_order_relaxed)", "bins[local_i]");
    let r = check_radix(&radix_file(&racy));
    assert!(!r.passed);
    assert!(kinds(&r).contains(&"data-race"), "{:?}", kinds(&r));
}

#[test]
fn radix_wrong_scan_is_named() {
    // Each SIMD-group scanned on its own: the totals of earlier SIMD-groups
    // are never added, so cells from 32 on are wrong (the Book test has 4
    // blocks: 64 cells).
    let local = "uint i = thread_position_in_threadgroup.x;\nuint cells = counts_shape[0] * counts_shape[1];\nuint c = i < cells ? counts[i] : 0u;\nuint before = simd_prefix_exclusive_sum(c);\nif (i < cells) {\n    offsets[i] = before;\n}\n";
    let r = check_radix(&radix_with("scan", local));
    assert!(!r.passed && r.findings.is_empty(), "{}", human(&r));
    let why = &r.explanations;
    assert!(why[0].starts_with("stage 2 (scan) is wrong in `Radix Pass (Book)`"), "{why:?}");
    assert!(why[0].contains("stage 1 (histogram), which matched"), "{why:?}");
    assert!(why[1].starts_with("offsets[32] is 0, expected "), "{why:?}");
}

#[test]
fn radix_unstable_scatter_is_caught() {
    // The classic bug: ranks from an atomic counter per digit, started at
    // the block's offsets. Every key lands in its digit's range, but equal
    // digits come out in the order the atomics ran.
    let atomic = "threadgroup atomic_uint next[BINS];\nuint i = thread_position_in_grid.x;\nuint local_i = thread_position_in_threadgroup.x;\nuint block = threadgroup_position_in_grid.x;\nuint n = keys_shape[0];\nuint blocks = (n + BLOCK - 1) / BLOCK;\nif (local_i < BINS) {\n    atomic_store_explicit(&next[local_i], offsets[local_i * blocks + block], memory_order_relaxed);\n}\nthreadgroup_barrier(mem_flags::mem_threadgroup);\nif (i < n) {\n    uint key = keys[i];\n    uint pos = atomic_fetch_add_explicit(&next[(key >> SHIFT) & (BINS - 1)], 1u, memory_order_relaxed);\n    out[pos] = key;\n}\n";
    let r = check_radix(&radix_with("scatter", atomic));
    // Exploring other schedules shows the ranks depend on the order.
    assert!(!r.passed && kinds(&r) == ["data-race"], "{}", human(&r));
    assert!(r.findings[0].finding.message.contains("depends on the order"), "{}", human(&r));
    let why = &r.explanations;
    assert!(why[0].starts_with("stage 3 (scatter) is wrong in `Radix Pass (Book)`"), "{why:?}");
    assert!(why[0].contains("stages 1 (histogram), 2 (scan), which matched"), "{why:?}");
    assert!(
        why[1].contains("keys with equal digits are out of their input order") && why[1].contains("the scatter is not stable"),
        "{why:?}"
    );
    // A scatter that ignores the digit and keeps the keys where they were
    // is wrong too, but not for stability.
    let copy = "uint i = thread_position_in_grid.x;\nif (i < uint(keys_shape[0])) {\n    out[i] = keys[i];\n}\n";
    let r = check_radix(&radix_with("scatter", copy));
    assert!(r.explanations[0].starts_with("stage 3 (scatter) is wrong"), "{:?}", r.explanations);
    assert!(!r.explanations[1].contains("not stable"), "{:?}", r.explanations);
    // Ranks counted from device memory instead of threadgroup memory:
    // right, but a read of every earlier key.
    let serial = "uint i = thread_position_in_grid.x;\nuint block = threadgroup_position_in_grid.x;\nuint n = keys_shape[0];\nuint blocks = (n + BLOCK - 1) / BLOCK;\nif (i < n) {\n    uint key = keys[i];\n    uint d = (key >> SHIFT) & (BINS - 1);\n    uint rank = 0;\n    for (uint j = block * BLOCK; j < i; j++) {\n        rank += ((keys[j] >> SHIFT) & (BINS - 1)) == d ? 1u : 0u;\n    }\n    out[offsets[d * blocks + block] + rank] = key;\n}\n";
    let r = check_radix(&radix_with("scatter", serial));
    assert_over_target(&r, "Kernel 3 of 3 (scatter): Global Reads: 65 per thread, target ≤ 2");
}

#[test]
fn radix_digit_without_the_mask_fails_on_wide_keys() {
    // `key >> SHIFT` alone is the digit only for keys below 256.
    let body = solution("radix_pass").replace("(keys[i] >> SHIFT) & (BINS - 1)", "keys[i] >> SHIFT");
    let r = check_radix(&radix_file(&body));
    assert!(!r.passed, "{}", human(&r));
    assert!(r.first_failure().unwrap().name.starts_with("Radix Pass (Edges)"), "{}", human(&r));
    assert!(r.findings.iter().any(|f| f.finding.kind.name() == "out-of-bounds"), "{:?}", kinds(&r));
}

#[test]
fn cdist_shortcut_through_the_norms_is_caught() {
    // |a|^2 + |b|^2 - 2 a.b: exact on the diagonal of the first test, close
    // enough for points near the origin, but it loses small distances
    // between points far from it.
    let body = solution("cdist").replace(
        "    float s = 0.0f;\n    for (uint k = 0; k < dims; k++) {\n        float d = a[i * dims + k] - b[j * dims + k];\n        s += d * d;\n    }\n    out[i * m + j] = sqrt(s);",
        "    float aa = 0.0f;\n    float bb = 0.0f;\n    float ab = 0.0f;\n    for (uint k = 0; k < dims; k++) {\n        float x = a[i * dims + k];\n        float y = b[j * dims + k];\n        aa += x * x;\n        bb += y * y;\n        ab += x * y;\n    }\n    out[i * m + j] = sqrt(max(aa + bb - 2.0f * ab, 0.0f));",
    );
    assert!(body.contains("2.0f * ab"), "{body}");
    let r = check("cdist", &body);
    assert!(!r.passed && r.findings.is_empty(), "{}", human(&r));
    assert_eq!(r.first_failure().unwrap().name, "cdist (Far from the origin)");
    assert!(!r.explanations.is_empty());
}
