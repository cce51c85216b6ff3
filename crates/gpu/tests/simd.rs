//! SIMD-group and quad functions: divergent masks, partial SIMD-groups
//! (a 40-thread threadgroup has a second SIMD-group of 8 lanes), every
//! reduction/scan/shuffle/vote, and simdgroup_matrix tiles.

mod common;
use common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const SENTINEL: u32 = 0xDEAD_BEEF;
const TG: usize = 40;
const GROUPS: usize = 2;
const N: usize = TG * GROUPS;

/// Run `out[i] = EXPR` under `if (COND)` over 2 threadgroups of 40 threads
/// (uint data); lanes that skip keep the sentinel.
fn run_uint(cond: &str, decl: &str, expr: &str, a: &[u32]) -> Vec<u32> {
    let (out, findings) = run_uint_findings(cond, decl, expr, a);
    assert!(findings.is_empty(), "{expr}: {findings:?}");
    out
}

/// [`run_uint`], returning the findings instead of refusing them.
fn run_uint_findings(cond: &str, decl: &str, expr: &str, a: &[u32]) -> (Vec<u32>, Vec<Finding>) {
    let src = format!(
        "{PRELUDE}kernel void k(const device uint* a [[buffer(0)]], device uint* out [[buffer(1)]], uint i [[thread_position_in_grid]], uint t [[thread_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {{\n  uint x = a[i];\n  {decl}\n  if ({cond}) {{\n    out[i] = {expr};\n  }}\n}}\n"
    );
    let k = compile(&src, "k");
    let mut b = bufs(vec![(0, u32s(a)), (1, u32s(&vec![SENTINEL; a.len()]))]);
    let r = run(&k, &threads([a.len() as u32, 1, 1], [TG as u32, 1, 1]), &mut b, &opts(CheckLevel::All));
    (to_u32(&b[&1]), r.findings)
}

/// The SIMD-groups of the dispatch: global index ranges.
fn simdgroups() -> Vec<std::ops::Range<usize>> {
    let mut v = Vec::new();
    for g in 0..GROUPS {
        let base = g * TG;
        let mut s = 0;
        while s < TG {
            v.push(base + s..base + (s + 32).min(TG));
            s += 32;
        }
    }
    v
}

fn active(i: usize, pred: &dyn Fn(usize) -> bool) -> bool {
    pred(i % TG)
}

/// How a lane's result follows from the active values (see `reference`).
type LaneRule<'a> = &'a dyn Fn(&[u32], &[u32], u32) -> u32;

/// Reference for a reduction/scan under a mask: `f(active values of the
/// group, values of active lanes before this one, this value)`.
fn reference(a: &[u32], pred: &dyn Fn(usize) -> bool, f: LaneRule) -> Vec<u32> {
    let mut out = vec![SENTINEL; a.len()];
    for g in simdgroups() {
        let act: Vec<usize> = g.clone().filter(|&i| active(i, pred)).collect();
        let vals: Vec<u32> = act.iter().map(|&i| a[i]).collect();
        for (n, &i) in act.iter().enumerate() {
            out[i] = f(&vals, &vals[..n], a[i]);
        }
    }
    out
}

fn runner() -> TestRunner {
    TestRunner::new(Config { cases: 24, failure_persistence: None, ..Config::default() })
}

fn data() -> impl Strategy<Value = Vec<u32>> {
    proptest::collection::vec(prop_oneof![0u32..8, any::<u32>()], N)
}

/// A lane predicate with its MSL spelling.
type NamedMask = (&'static str, fn(usize) -> bool);

const MASKS: [NamedMask; 3] = [("true", |_| true), ("t % 3 == 0", |t| t % 3 == 0), ("t >= 5 && t != 33", |t| t >= 5 && t != 33)];

#[test]
fn reductions_and_scans_under_masks_and_partial_groups() {
    type F = fn(&[u32], &[u32], u32) -> u32;
    let ops: [(&str, F); 11] = [
        ("simd_sum(x)", |g, _, _| g.iter().fold(0u32, |a, &b| a.wrapping_add(b))),
        ("simd_product(x)", |g, _, _| g.iter().fold(1u32, |a, &b| a.wrapping_mul(b))),
        ("simd_min(x)", |g, _, _| *g.iter().min().unwrap()),
        ("simd_max(x)", |g, _, _| *g.iter().max().unwrap()),
        ("simd_and(x)", |g, _, _| g.iter().fold(!0u32, |a, &b| a & b)),
        ("simd_or(x)", |g, _, _| g.iter().fold(0u32, |a, &b| a | b)),
        ("simd_xor(x)", |g, _, _| g.iter().fold(0u32, |a, &b| a ^ b)),
        ("simd_prefix_inclusive_sum(x)", |_, p, x| p.iter().fold(x, |a, &b| a.wrapping_add(b))),
        ("simd_prefix_exclusive_sum(x)", |_, p, _| p.iter().fold(0u32, |a, &b| a.wrapping_add(b))),
        ("simd_prefix_inclusive_product(x)", |_, p, x| p.iter().fold(x, |a, &b| a.wrapping_mul(b))),
        ("simd_prefix_exclusive_product(x)", |_, p, _| p.iter().fold(1u32, |a, &b| a.wrapping_mul(b))),
    ];
    for (cond, pred) in MASKS {
        for (expr, f) in ops {
            runner()
                .run(&data(), |a| {
                    let got = run_uint(cond, "", expr, &a);
                    let want = reference(&a, &pred, &f);
                    prop_assert_eq!(got, want, "{} under if ({})", expr, cond);
                    Ok(())
                })
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn float_simd_sum_of_small_integers_is_exact() {
    let src = format!(
        "{PRELUDE}kernel void k(const device float* a [[buffer(0)]], device float* out [[buffer(1)]], uint i [[thread_position_in_grid]], uint t [[thread_index_in_threadgroup]]) {{ if (t % 2 == 1) out[i] = simd_sum(a[i]) + simd_max(a[i]) * 1000.0f; }}\n"
    );
    let k = compile(&src, "k");
    let a: Vec<f32> = (0..N).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let mut b = bufs(vec![(0, f32s(&a)), (1, f32s(&vec![-1.0; N]))]);
    let r = run(&k, &threads([N as u32, 1, 1], [TG as u32, 1, 1]), &mut b, &RunOptions::default());
    assert!(r.findings.is_empty());
    let out = to_f32(&b[&1]);
    for g in simdgroups() {
        let act: Vec<usize> = g.clone().filter(|i| (i % TG) % 2 == 1).collect();
        let s: f32 = act.iter().map(|&i| a[i]).sum();
        let m = act.iter().map(|&i| a[i]).fold(f32::NEG_INFINITY, f32::max);
        for i in g {
            let want = if act.contains(&i) { s + m * 1000.0 } else { -1.0 };
            assert_eq!(out[i], want, "thread {i}");
        }
    }
}

#[test]
fn votes_broadcast_first_and_is_first() {
    for (cond, pred) in MASKS {
        runner()
            .run(&data(), |a| {
                // simd_all / simd_any of (x odd) over the active lanes.
                let all = run_uint(cond, "", "simd_all(x % 2 == 1) ? 1u : 0u", &a);
                let any = run_uint(cond, "", "simd_any(x % 2 == 1) ? 1u : 0u", &a);
                let first = run_uint(cond, "", "simd_broadcast_first(x)", &a);
                let isf = run_uint(cond, "", "simd_is_first() ? 1u : 0u", &a);
                let ballot = run_uint(cond, "", "uint(static_cast<ulong>(simd_ballot(x % 2 == 1)))", &a);
                let mask = run_uint(cond, "", "uint(static_cast<ulong>(simd_active_threads_mask()))", &a);
                prop_assert_eq!(all, reference(&a, &pred, &|g, _, _| g.iter().all(|v| v % 2 == 1) as u32));
                prop_assert_eq!(any, reference(&a, &pred, &|g, _, _| g.iter().any(|v| v % 2 == 1) as u32));
                prop_assert_eq!(first, reference(&a, &pred, &|g, _, _| g[0]));
                prop_assert_eq!(isf, reference(&a, &pred, &|_, p, _| p.is_empty() as u32));
                // Bit n of the ballot is lane n of the SIMD-group.
                let mut want_ballot = vec![SENTINEL; N];
                let mut want_mask = vec![SENTINEL; N];
                for g in simdgroups() {
                    let mut bits = 0u32;
                    let mut m = 0u32;
                    for i in g.clone() {
                        if active(i, &pred) {
                            m |= 1 << (i - g.start);
                            if a[i] % 2 == 1 {
                                bits |= 1 << (i - g.start);
                            }
                        }
                    }
                    for i in g {
                        if active(i, &pred) {
                            want_ballot[i] = bits;
                            want_mask[i] = m;
                        }
                    }
                }
                prop_assert_eq!(ballot, want_ballot, "ballot under {}", cond);
                prop_assert_eq!(mask, want_mask, "active mask under {}", cond);
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Shuffles read the `x` of another lane of the same SIMD-group; a source
/// past the 32 lanes leaves the lane's own value, and a lane missing from
/// a partial SIMD-group has no value (undefined: the simulator's poison).
fn shuffle_ref(a: &[u32], src: &dyn Fn(usize, usize) -> Option<usize>) -> Vec<u32> {
    let mut out = vec![SENTINEL; a.len()];
    for g in simdgroups() {
        let n = g.len();
        for i in g.clone() {
            let l = i - g.start;
            out[i] = match src(l, n) {
                Some(s) if s < n => a[g.start + s],
                Some(s) if s < 32 => gpu::undefined::POISON as u32,
                _ => a[i],
            };
        }
    }
    out
}

/// Run a shuffle expected to read missing lanes exactly where `want` has
/// poison: those lanes must get an uninitialized-read finding.
fn run_shuffle(expr: &str, a: &[u32], want: &[u32]) -> Vec<u32> {
    let (out, findings) = run_uint_findings("true", "", expr, a);
    let undefined = want.contains(&(gpu::undefined::POISON as u32));
    let kinds: Vec<&str> = findings.iter().map(|f| f.kind.name()).collect();
    if undefined {
        assert!(kinds.iter().all(|&k| k == "uninitialized-read") && !kinds.is_empty(), "{expr}: {findings:?}");
    } else {
        assert!(findings.is_empty(), "{expr}: {findings:?}");
    }
    out
}

#[test]
fn shuffles_full_and_partial_groups() {
    runner()
        .run(&(data(), 0u32..40), |(a, d)| {
            let d = d as usize;
            // up/down: lanes whose source is outside the group are unchanged
            // (including the missing lanes of the 8-lane SIMD-group).
            let want = shuffle_ref(&a, &|l, _| Some(l + d));
            let down = run_shuffle(&format!("simd_shuffle_down(x, {d}u)"), &a, &want);
            prop_assert_eq!(down, want, "shuffle_down {}", d);
            let want = shuffle_ref(&a, &|l, _| l.checked_sub(d));
            let up = run_shuffle(&format!("simd_shuffle_up(x, {d}u)"), &a, &want);
            prop_assert_eq!(up, want, "shuffle_up {}", d);
            let d32 = d % 32;
            let bc = run_uint("true", "", &format!("simd_broadcast(x, ushort({}))", d32 % 8), &a);
            prop_assert_eq!(bc, shuffle_ref(&a, &|_, _| Some(d32 % 8)), "broadcast");
            let sh = run_uint("true", "", "simd_shuffle(x, ushort((lane * 5 + 3) % 8))", &a);
            prop_assert_eq!(sh, shuffle_ref(&a, &|l, _| Some((l * 5 + 3) % 8)), "shuffle");
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Full 32-lane SIMD-groups: threadgroups of 64.
fn run_full(expr: &str, a: &[u32]) -> Vec<u32> {
    let src = format!(
        "{PRELUDE}kernel void k(const device uint* a [[buffer(0)]], const device uint* f [[buffer(1)]], device uint* out [[buffer(2)]], uint i [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {{ uint x = a[i]; uint y = f[i]; out[i] = {expr}; }}\n"
    );
    let k = compile(&src, "k");
    let fill: Vec<u32> = a.iter().map(|v| v.wrapping_mul(3).wrapping_add(1)).collect();
    let mut b = bufs(vec![(0, u32s(a)), (1, u32s(&fill)), (2, vec![0; a.len() * 4])]);
    let r = run(&k, &threads([a.len() as u32, 1, 1], [64, 1, 1]), &mut b, &RunOptions::default());
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    to_u32(&b[&2])
}

#[test]
fn shuffles_xor_rotate_and_fill_on_full_groups() {
    runner()
        .run(&(proptest::collection::vec(any::<u32>(), 128), 0u32..32), |(a, d)| {
            let d = d as usize;
            let fill: Vec<u32> = a.iter().map(|v| v.wrapping_mul(3).wrapping_add(1)).collect();
            let at = |i: usize, l: usize| (i / 32) * 32 + l;
            let xor = run_full(&format!("simd_shuffle_xor(x, ushort({d}))"), &a);
            let rd = run_full(&format!("simd_shuffle_rotate_down(x, ushort({d}))"), &a);
            let ru = run_full(&format!("simd_shuffle_rotate_up(x, ushort({d}))"), &a);
            let fd = run_full(&format!("simd_shuffle_and_fill_down(x, y, ushort({d}))"), &a);
            let fu = run_full(&format!("simd_shuffle_and_fill_up(x, y, ushort({d}))"), &a);
            for i in 0..128 {
                let l = i % 32;
                prop_assert_eq!(xor[i], a[at(i, l ^ d)], "xor {} lane {}", d, l);
                prop_assert_eq!(rd[i], a[at(i, (l + d) % 32)], "rotate_down {} lane {}", d, l);
                prop_assert_eq!(ru[i], a[at(i, (l + 32 - d) % 32)], "rotate_up {} lane {}", d, l);
                let want = if l + d < 32 { a[at(i, l + d)] } else { fill[at(i, l + d - 32)] };
                prop_assert_eq!(fd[i], want, "fill_down {} lane {}", d, l);
                let want = if l >= d { a[at(i, l - d)] } else { fill[at(i, 32 + l - d)] };
                prop_assert_eq!(fu[i], want, "fill_up {} lane {}", d, l);
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn quad_functions_under_masks() {
    for (cond, pred) in MASKS {
        runner()
            .run(&data(), |a| {
                let sum = run_uint(cond, "", "quad_sum(x)", &a);
                let mx = run_uint(cond, "", "quad_max(x)", &a);
                let pre = run_uint(cond, "", "quad_prefix_exclusive_sum(x)", &a);
                let first = run_uint(cond, "", "quad_broadcast_first(x)", &a);
                let any = run_uint(cond, "", "quad_any(x % 2 == 1) ? 1u : 0u", &a);
                let mut w_sum = vec![SENTINEL; N];
                let mut w_max = vec![SENTINEL; N];
                let mut w_pre = vec![SENTINEL; N];
                let mut w_first = vec![SENTINEL; N];
                let mut w_any = vec![SENTINEL; N];
                for q in (0..N).step_by(4) {
                    let act: Vec<usize> = (q..q + 4).filter(|&i| active(i, &pred)).collect();
                    for (n, &i) in act.iter().enumerate() {
                        w_sum[i] = act.iter().fold(0u32, |s, &j| s.wrapping_add(a[j]));
                        w_max[i] = act.iter().map(|&j| a[j]).max().unwrap();
                        w_pre[i] = act[..n].iter().fold(0u32, |s, &j| s.wrapping_add(a[j]));
                        w_first[i] = a[act[0]];
                        w_any[i] = act.iter().any(|&j| a[j] % 2 == 1) as u32;
                    }
                }
                prop_assert_eq!(sum, w_sum, "quad_sum under {}", cond);
                prop_assert_eq!(mx, w_max, "quad_max under {}", cond);
                prop_assert_eq!(pre, w_pre, "quad_prefix_exclusive_sum under {}", cond);
                prop_assert_eq!(first, w_first, "quad_broadcast_first under {}", cond);
                prop_assert_eq!(any, w_any, "quad_any under {}", cond);
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
    }
    // Quad shuffles on full quads.
    let a: Vec<u32> = (0..N as u32).map(|i| i * 11 + 5).collect();
    let down = run_uint("true", "", "quad_shuffle_down(x, 1u)", &a);
    let up = run_uint("true", "", "quad_shuffle_up(x, 2u)", &a);
    let xor = run_uint("true", "", "quad_shuffle_xor(x, 3u)", &a);
    let bc = run_uint("true", "", "quad_broadcast(x, 2u)", &a);
    for i in 0..N {
        let l = i % 4;
        let q = i - l;
        assert_eq!(down[i], if l + 1 < 4 { a[q + l + 1] } else { a[i] }, "quad_shuffle_down {i}");
        assert_eq!(up[i], if l >= 2 { a[q + l - 2] } else { a[i] }, "quad_shuffle_up {i}");
        assert_eq!(xor[i], a[q + (l ^ 3)], "quad_shuffle_xor {i}");
        assert_eq!(bc[i], a[q + 2], "quad_broadcast {i}");
    }
}

// ------------------------------------------------------- simdgroup_matrix

fn matmul8(a: &[f32], b: &[f32], c: &[f32]) -> Vec<f32> {
    let mut d = vec![0.0; 64];
    for i in 0..8 {
        for j in 0..8 {
            d[i * 8 + j] = c[i * 8 + j] + (0..8).map(|k| a[i * 8 + k] * b[k * 8 + j]).sum::<f32>();
        }
    }
    d
}

fn transpose8(m: &[f32]) -> Vec<f32> {
    (0..64).map(|x| m[(x % 8) * 8 + x / 8]).collect()
}

fn run_matrix(ty: &str, a: &[f32], b: &[f32], c: &[f32], transpose_b: bool) -> Vec<f32> {
    let elem = if ty == "float" { "float" } else { "half" };
    let src = format!(
        "{PRELUDE}kernel void k(const device {elem}* A [[buffer(0)]], const device {elem}* B [[buffer(1)]], const device {elem}* C [[buffer(2)]], device {elem}* D [[buffer(3)]], uint lane [[thread_index_in_simdgroup]]) {{\n  simdgroup_{elem}8x8 a, b, c, d;\n  simdgroup_load(a, A, 16, ulong2(8, 0));\n  simdgroup_load(b, B, 8, ulong2(0, 0), {});\n  simdgroup_load(c, C, 8);\n  simdgroup_multiply_accumulate(d, a, b, c);\n  simdgroup_store(d, D, 8);\n}}\n",
        transpose_b
    );
    let k = compile(&src, "k");
    let enc = |v: &[f32]| -> Vec<u8> {
        if elem == "float" {
            f32s(v)
        } else {
            v.iter().flat_map(|x| half::f16::from_f32(*x).to_bits().to_le_bytes()).collect()
        }
    };
    let sz = if elem == "float" { 4 } else { 2 };
    // A is 8 rows of 16 columns; the tile is its columns 8..16 (origin (x=8, y=0)).
    let mut wide = vec![0.0f32; 128];
    for i in 0..8 {
        for j in 0..8 {
            wide[i * 16 + j] = -99.0;
            wide[i * 16 + 8 + j] = a[i * 8 + j];
        }
    }
    let mut bf = bufs(vec![(0, enc(&wide)), (1, enc(b)), (2, enc(c)), (3, vec![0; 64 * sz])]);
    let r = run(&k, &threads([32, 1, 1], [32, 1, 1]), &mut bf, &RunOptions::default());
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    if elem == "float" {
        to_f32(&bf[&3])
    } else {
        to_u16(&bf[&3]).iter().map(|&h| half::f16::from_bits(h).to_f32()).collect()
    }
}

#[test]
fn simdgroup_matrix_multiply_accumulate_float_and_half() {
    TestRunner::new(Config { cases: 16, failure_persistence: None, ..Config::default() })
        .run(
            &(proptest::collection::vec(-4i32..5, 64), proptest::collection::vec(-4i32..5, 64), proptest::collection::vec(-8i32..9, 64)),
            |(a, b, c)| {
                let a: Vec<f32> = a.iter().map(|&x| x as f32).collect();
                let b: Vec<f32> = b.iter().map(|&x| x as f32).collect();
                let c: Vec<f32> = c.iter().map(|&x| x as f32).collect();
                for ty in ["float", "half"] {
                    // Small integers: every order of summation is exact.
                    prop_assert_eq!(run_matrix(ty, &a, &b, &c, false), matmul8(&a, &b, &c), "{} A*B+C", ty);
                    prop_assert_eq!(run_matrix(ty, &a, &b, &c, true), matmul8(&a, &transpose8(&b), &c), "{} A*B^T+C", ty);
                }
                Ok(())
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn simdgroup_matrix_from_threadgroup_memory_and_filled() {
    let src = format!(
        "{PRELUDE}kernel void k(const device float* A [[buffer(0)]], device float* D [[buffer(1)]], uint t [[thread_index_in_threadgroup]]) {{\n  threadgroup float tile[64];\n  for (uint j = t; j < 64; j += 32) tile[j] = A[j];\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  simdgroup_float8x8 a;\n  simdgroup_load(a, tile, 8);\n  simdgroup_float8x8 two = make_filled_simdgroup_matrix<float, 8, 8>(2.0f);\n  simdgroup_float8x8 d;\n  simdgroup_multiply(d, a, two);\n  simdgroup_store(d, D, 8, ulong2(0, 0), true);\n}}\n"
    );
    let k = compile(&src, "k");
    let a: Vec<f32> = (0..64).map(|i| (i % 9) as f32 - 4.0).collect();
    let mut b = bufs(vec![(0, f32s(&a)), (1, vec![0; 256])]);
    let r = run(&k, &threads([32, 1, 1], [32, 1, 1]), &mut b, &RunOptions::default());
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let two = vec![2.0f32; 64];
    let want = transpose8(&matmul8(&a, &two, &[0.0; 64]));
    assert_eq!(to_f32(&b[&1]), want);
}
