#!/usr/bin/env python3
"""Run instantiated kernels of third-party Metal libraries and compare with NumPy.

Usage: tools/run_library_kernels.py [--candle DIR] [--pytorch ROOT] [--bin PATH] [--only TEXT] [--show]

--candle is candle's `candle-metal-kernels/src/metal_src` folder; --pytorch is
a folder laid out like the PyTorch repository (it holds
`aten/src/ATen/native/mps/kernels/*.metal` and `c10/metal/*.h`, and is given
to `run` as `-I`). The libraries' sources are read from those folders, never
from this repository. What this file holds is ours: for each kernel, the
arguments a host would bind (sizes, strides, generated inputs), the dispatch,
and a NumPy reference of what the kernel computes. Needs numpy.

Prints one table row per kernel (library, kernel, what it computes, the
largest difference from NumPy, verdict) and exits 1 if any kernel fails.
Rows marked skipped (a source that cannot be compiled as stored), MISMATCH
(runs, disagrees with NumPy, investigated) or LIBRARY FINDING (the
simulator's checks report a defect of the library's kernel) do not fail.
`--only TEXT` runs the kernels whose name contains TEXT; `--show` prints
each `run` command.
"""
import argparse
import copy
import math
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

RNG = np.random.default_rng(7)
SHOW = False  # --show: print each `run` command (inputs stay in a temporary folder)


def u64(x):
    return np.asarray(x, dtype=np.uint64)


def i64(x):
    return np.asarray(x, dtype=np.int64)


def scalar(v, dtype):
    return np.asarray([v], dtype=dtype)


def checked(case, who, text, note):
    """The same launch with the simulator's default checks, which stop it:
    a row recording why `case` itself runs with --check none/memory."""
    c = copy.copy(case)
    flags, it = [], iter(case.flags)
    for f in it:
        if f == "--check":
            next(it)
        else:
            flags.append(f)
    c.flags = flags
    what = case.what
    for level in ("none", "memory"):
        what = what.replace(f" (--check {level})", "").replace(f"; --check {level})", ")")
    c.what = what + ", all checks"
    c.finding = [(who, text, note)]
    return c


def per_thread(dtype, n):
    """candle's elementwise kernels: each thread handles ceil(8 / sizeof(T))
    elements, `step` apart, so the grid is ceil(n / W) threads."""
    w = math.ceil(8 / np.dtype(dtype).itemsize)
    return math.ceil(n / w)


class Case:
    def __init__(self, lib, file, kernel, what, grid, tg, args, outputs, ref, tol=(1e-5, 1e-6), flags=(),
                 skip=None, mismatch=None, canon=None, finding=None, needs=None):
        self.lib, self.file, self.kernel, self.what = lib, file, kernel, what
        self.grid, self.tg, self.args, self.outputs = grid, tg, args, outputs
        self.ref, self.tol, self.flags = ref, tol, list(flags)
        # skip: why the kernel is not run. mismatch: a known, investigated
        # disagreement with NumPy (a finding, not a reference to tune).
        self.skip, self.mismatch = skip, mismatch
        # canon: maps the outputs (name -> array) to a canonical form where
        # the kernel's order is unspecified (e.g. slots taken by atomics).
        self.canon = canon
        # finding: (who, text, note), or a list of them, for a run that the
        # simulator's checks stop, investigated: who is "library" (a defect
        # of the library's kernel) or "simulator" (a false report of ours);
        # the error must contain `text`; the first that matches is shown.
        self.finding = [finding] if isinstance(finding, tuple) else (finding or [])
        # needs: (text, note): a simulator whose error contains `text` cannot
        # run this kernel yet; the row is then skipped with `note`.
        self.needs = needs


def candle_cases():
    n = 37
    x = RNG.standard_normal(n).astype(np.float32)
    y = RNG.standard_normal(n).astype(np.float32)
    cases = []
    cases.append(Case("candle", "unary.metal", "exp_f32", "unary exp (functor template, W elements per thread)",
                      [per_thread(np.float32, n)], [8],
                      {"dim": u64([n]), "input": x, "output": np.zeros(n, np.float32)},
                      ["output"], lambda a: [np.exp(a["input"])]))
    xt = RNG.standard_normal((5, 6)).astype(np.float32)
    cases.append(Case("candle", "unary.metal", "neg_f32_strided", "unary neg on a transposed view",
                      [30], [16],
                      {"dim": u64([30]), "num_dims": u64([2]), "dims": u64([6, 5]), "strides": u64([1, 6]),
                       "input": xt, "output": np.zeros(30, np.float32)},
                      ["output"], lambda a: [-(a["input"].T.reshape(-1))]))
    cases.append(Case("candle", "binary.metal", "badd_f32", "binary add",
                      [per_thread(np.float32, n)], [8],
                      {"dim": u64([n]), "left": x, "right": y, "output": np.zeros(n, np.float32)},
                      ["output"], lambda a: [a["left"] + a["right"]]))
    cases.append(Case("candle", "binary.metal", "bmul_f32", "binary mul",
                      [per_thread(np.float32, n)], [8],
                      {"dim": u64([n]), "left": x, "right": y, "output": np.zeros(n, np.float32)},
                      ["output"], lambda a: [a["left"] * a["right"]]))
    cases.append(Case("candle", "affine.metal", "affine_f32", "affine x*mul+add",
                      [per_thread(np.float32, n)], [8],
                      {"dim": u64([n]), "mul": scalar(1.5, np.float32), "add": scalar(-0.25, np.float32),
                       "input": x, "output": np.zeros(n, np.float32)},
                      ["output"], lambda a: [a["input"] * np.float32(1.5) + np.float32(-0.25)]))
    cases.append(Case("candle", "cast.metal", "cast_f32_f16", "cast float32 -> float16",
                      [per_thread(np.float32, n)], [8],
                      {"dim": u64([n]), "input": x, "output": np.zeros(n, np.float16)},
                      ["output"], lambda a: [a["input"].astype(np.float16)], tol=(0, 0)))
    src = RNG.standard_normal((3, 7, 4)).astype(np.float32)
    ids = np.array([6, 0, 3, 3, 1], np.uint32)
    cases.append(Case("candle", "indexing.metal", "is_u32_f32", "index_select along dim 1",
                      [3 * 5 * 4], [32],
                      {"dst_size": u64([60]), "left_size": u64([3]), "src_dim_size": u64([7]), "right_size": u64([4]),
                       "ids_size": u64([5]), "contiguous": np.array([True]), "src_dims": u64([3, 7, 4]),
                       "src_strides": u64([28, 4, 1]), "input": src, "input_ids": ids,
                       "output": np.zeros((3, 5, 4), np.float32)},
                      ["output"], lambda a: [np.take(a["input"], a["input_ids"].astype(np.int64), axis=1)], tol=(0, 0)))
    gids = RNG.integers(0, 7, size=(3, 5, 4)).astype(np.uint32)
    cases.append(Case("candle", "indexing.metal", "gather_u32_f32", "gather along dim 1",
                      [60], [32],
                      {"dst_size": u64([60]), "left_size": u64([3]), "src_dim_size": u64([7]), "right_size": u64([4]),
                       "ids_size": u64([5]), "input": src, "input_ids": gids, "output": np.zeros((3, 5, 4), np.float32)},
                      ["output"], lambda a: [np.take_along_axis(a["input"], a["input_ids"].astype(np.int64), axis=1)],
                      tol=(0, 0)))
    rows, ncols, pad = 3, 13, 16
    xs = RNG.permutation(rows * ncols).astype(np.float32).reshape(rows, ncols)
    cases.append(Case("candle", "sort.metal", "asort_asc_f32", "argsort (bitonic, threadgroup buffer)",
                      [pad, rows], [pad, 1],
                      {"x": xs, "dst": np.zeros((rows, ncols), np.uint32), "ncols": i64([ncols]), "ncols_pad": i64([pad])},
                      ["dst"], lambda a: [np.argsort(a["x"], axis=1).astype(np.uint32)], tol=(0, 0),
                      flags=["--threadgroup-memory", f"0={pad * 4}"]))
    xd = RNG.standard_normal((2, 21)).astype(np.float16)
    cases.append(Case("candle", "sort.metal", "asort_desc_f16", "argsort descending, half (bitonic, 32 padded slots)",
                      [32, 2], [32, 1],
                      {"x": xd, "dst": np.zeros((2, 21), np.uint32), "ncols": i64([21]), "ncols_pad": i64([32])},
                      ["dst"], lambda a: [np.argsort(-a["x"].astype(np.float32), axis=1, kind="stable").astype(np.uint32)],
                      tol=(0, 0), flags=["--threadgroup-memory", "0=128"]))
    cases.append(Case("candle", "fill.metal", "fill_f32", "fill",
                      [n], [16],
                      {"out": np.zeros(n, np.float32), "value": scalar(2.5, np.float32), "numel": u64([n])},
                      ["out"], lambda a: [np.full(n, 2.5, np.float32)], tol=(0, 0)))
    cond = (RNG.random(n) > 0.5).astype(np.uint8)
    cases.append(Case("candle", "ternary.metal", "where_u8_f32", "where (function constants for contiguity)",
                      [per_thread(np.float32, n)], [8],
                      {"numel": u64([n]), "num_dims": u64([1]), "dims": u64([n]), "strides": u64([1]),
                       "strides_t": u64([1]), "strides_f": u64([1]), "ids": cond, "t": x, "f": y,
                       "out": np.zeros(n, np.float32)},
                      ["out"], lambda a: [np.where(a["ids"] != 0, a["t"], a["f"])], tol=(0, 0),
                      flags=["--constant", "IDS_CONTIGUOUS=true", "--constant", "T_CONTIGUOUS=true",
                             "--constant", "F_CONTIGUOUS=true"]))
    img = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)

    def up_ref(a):
        out = np.zeros((2, 3, 8, 10), np.float32)
        for w in range(8):
            for h in range(10):
                sw = min(int(np.float32(w) * np.float32(0.5)), 3)
                sh = min(int(np.float32(h) * np.float32(0.5)), 4)
                out[:, :, w, h] = a["src"][:, :, sw, sh]
        return [out]

    cases.append(Case("candle", "conv.metal", "upsample_nearest2d_f32", "nearest upsampling x2",
                      [2 * 3 * 8 * 10], [64],
                      {"w_out": u64([8]), "h_out": u64([10]), "w_scale": scalar(0.5, np.float32),
                       "h_scale": scalar(0.5, np.float32), "dims": u64([2, 3, 4, 5]), "strides": u64([60, 20, 5, 1]),
                       "src": img, "dst": np.zeros((2, 3, 8, 10), np.float32)},
                      ["dst"], up_ref, tol=(0, 0)))
    cases += candle_elementwise_cases()
    cases += candle_conv_cases()
    cases += candle_index_sort_cases()
    cases += candle_gemv_cases()
    cases += candle_gemm_cases()
    cases += candle_sdpa_cases()
    cases += candle_reduce_cases()
    cases += candle_quantized_cases()
    return cases


def q8_0_blocks(rng, rows, k):
    """ggml's q8_0: per 32 weights a half scale d and 32 int8 quants (34
    bytes); weight = d * q. Returns the raw bytes and the float weights."""
    nb = k // 32
    d = (rng.random((rows, nb)) * 0.04 + 0.01).astype(np.float16)
    q = rng.integers(-127, 128, (rows, nb, 32)).astype(np.int8)
    blocks = np.zeros((rows, nb), np.dtype([("d", "<f2"), ("qs", "i1", 32)]))
    blocks["d"], blocks["qs"] = d, q
    w = (d.astype(np.float32)[:, :, None] * q.astype(np.float32)).reshape(rows, k)
    return blocks.view(np.uint8).reshape(-1), w


def q4_0_blocks(rng, rows, k):
    """ggml's q4_0: per 32 weights a half scale d and 16 bytes of 4-bit
    quants (18 bytes), byte j holding weight j (low nibble) and j + 16
    (high nibble); weight = d * (q - 8)."""
    nb = k // 32
    d = (rng.random((rows, nb)) * 0.04 + 0.01).astype(np.float16)
    q = rng.integers(0, 16, (rows, nb, 32)).astype(np.uint8)
    blocks = np.zeros((rows, nb), np.dtype([("d", "<f2"), ("qs", "u1", 16)]))
    blocks["d"], blocks["qs"] = d, q[:, :, :16] | (q[:, :, 16:] << 4)
    w = (d.astype(np.float32)[:, :, None] * (q.astype(np.float32) - 8)).reshape(rows, k)
    return blocks.view(np.uint8).reshape(-1), w


def candle_quantized_cases():
    """candle's quantized.metal (ggml's kernels): matrix-vector products of
    block-quantized weights, dispatched as candle's host code does —
    threadgroups of 8 x 8 threads (two simdgroups of four rows each), one per
    8 rows, per input vector and per batch. kernel_mul_mv_id_* (mixture of
    experts: `ids` picks the weight matrix of each token's slots) are
    instantiated as `kernel_mul_mv_id<mmv_fn<impl>>`, the wrapper chosen
    among overloaded templates by the function type of `impl`."""
    # Their own generator: the other cases' inputs stay as they were.
    rng = np.random.default_rng(11)
    cases = []
    n, k, m = 24, 128, 3
    x = rng.standard_normal((m, k)).astype(np.float32)
    for fmt, make in (("q8_0", q8_0_blocks), ("q4_0", q4_0_blocks)):
        raw, w = make(rng, n, k)
        args = {"src0": raw, "src1": x, "dst": np.zeros((m, n), np.float32),
                "ne00": i64([k]), "ne01": i64([n]), "ne02": i64([1]), "nb00": u64([0]), "nb01": u64([0]),
                "nb02": u64([0]), "ne10": i64([k]), "ne11": i64([m]), "ne12": i64([1]), "nb10": u64([0]),
                "nb11": u64([0]), "nb12": u64([0]), "ne0": i64([n]), "ne1": i64([m]),
                "r2": scalar(1, np.uint32), "r3": scalar(1, np.uint32)}
        cases.append(Case("candle", "quantized.metal", f"kernel_mul_mv_{fmt}_f32",
                          f"{fmt} mat-vec {n}x{k} weights, {m} vectors",
                          [math.ceil(n / 8), m, 1], [8, 8, 1], args, ["dst"],
                          lambda a, w=w: [(a["src1"].astype(np.float64) @ w.T.astype(np.float64)).astype(np.float32)],
                          tol=(1e-4, 1e-4), flags=["--dispatch", "threadgroups"]))
    # Mixture of experts: 3 weight matrices, 2 tokens with 2 slots each.
    n_as, tokens, slots = 3, 2, 2
    ids = np.array([[2, 0], [1, 2]], np.int32)
    xs = rng.standard_normal((tokens, 1, k)).astype(np.float32)
    def f16_rows(rng, rows, k):
        w = rng.standard_normal((rows, k)).astype(np.float16)
        return w.reshape(-1).view(np.uint8), w.astype(np.float32)
    # f16 goes through the other `mmv_fn` overload (kernel_mul_mv_impl's
    # function type): one threadgroup of one simdgroup per row.
    # bsize: bytes per 32 weights.
    for fmt, make, bsize in (("q8_0", q8_0_blocks, 34), ("q4_0", q4_0_blocks, 18), ("f16", f16_rows, 64)):
        raws, ws = zip(*(make(rng, n, k) for _ in range(n_as)))
        nb01 = k // 32 * bsize
        # `device const char *` buffers take their bytes as int8.
        args = {"src0s": np.concatenate(raws).view(np.int8), "src1": xs.reshape(-1).view(np.int8),
                "dst": np.zeros((tokens, slots, n), np.float32), "ids": ids.reshape(-1).view(np.int8), "nei0": i64([slots]), "nei1": i64([tokens]), "nbi1": u64([slots * 4]),
                "ne00": i64([k]), "ne01": i64([n]), "ne02": i64([n_as]), "nb00": u64([2 if fmt == "f16" else bsize]),
                "nb01": u64([nb01]), "nb02": u64([n * nb01]), "ne10": i64([k]), "ne11": i64([1]),
                "ne12": i64([tokens]), "ne13": i64([1]), "nb10": u64([4]), "nb11": u64([k * 4]),
                "nb12": u64([k * 4]), "ne0": i64([n]), "ne1": i64([slots]), "nb1": u64([n * 4])}

        def moe_ref(a, ws=ws):
            out = np.zeros((tokens, slots, n), np.float64)
            for t in range(tokens):
                for s in range(slots):
                    out[t, s] = ws[ids[t, s]].astype(np.float64) @ xs[t, 0].astype(np.float64)
            return [out.astype(np.float32)]
        cases.append(Case("candle", "quantized.metal", f"kernel_mul_mv_id_{fmt}_f32",
                          f"{fmt} mixture-of-experts mat-vec ({n_as} experts, {tokens} tokens x {slots} slots)",
                          [n, 1, tokens * slots] if fmt == "f16" else [math.ceil(n / 8), 1, tokens * slots],
                          [32, 1, 1] if fmt == "f16" else [8, 8, 1], args, ["dst"], moe_ref,
                          tol=(1e-4, 1e-4), flags=["--dispatch", "threadgroups", "--threadgroup-memory", "0=4096"]))
    return cases


def candle_reduce_cases():
    """candle's reduce.metal: one threadgroup per output row of el_per_block
    contiguous elements; loads stride by the block size, then a tree in
    threadgroup memory (reduce_switch picks the shared size from the
    threadgroup size). Needs reference members (`constant T& n;` in a
    struct), which simulators before main's 4e693f3 refuse."""
    needs = ("reference members", "this simulator cannot compile reduce.metal yet (reference members)")
    cases = []
    rows, cols = 3, 100
    x = (RNG.standard_normal((rows, cols)) * 2).astype(np.float32)
    x[1, 37] = 9.5  # a clear maximum
    x[2, 5] = -9.5
    base = {"src_numel": scalar(rows * cols, np.uint32), "num_dims": scalar(2, np.uint32),
            "dims": np.array([rows, cols], np.uint32), "el_per_block": scalar(cols, np.uint32), "src": x}
    # Max<float>/Min<float> combine with an overload calling metal::fast::max
    # (fast::min): a one-line kernel calling fast::max is refused ("not a
    # function of the Metal standard library"), but in reduce.metal the call
    # is accepted and the float reductions return 0 (main at 4f402e1);
    # fast_max_u32 (plain max) is right.
    fast_minmax = ("Max<float>/Min<float>'s overload calling metal::fast::max/min yields 0 in the simulator "
                   "(a kernel calling fast::max directly is refused as not in the standard library)")
    for name, out_dtype, ref, tol, what in (
            ("fast_sum_f32", np.float32, lambda a: a["src"].astype(np.float64).sum(1), (1e-5, 1e-5), "sum of rows"),
            ("fast_max_f32", np.float32, lambda a: a["src"].max(1), (0, 0), "max of rows"),
            ("fast_min_f32", np.float32, lambda a: a["src"].min(1), (0, 0), "min of rows"),
            ("fast_argmax_f32", np.uint32, lambda a: a["src"].argmax(1), (0, 0), "argmax of rows (value, index pairs)"),
            ("fast_argmin_f32", np.uint32, lambda a: a["src"].argmin(1), (0, 0), "argmin of rows")):
        cases.append(Case("candle", "reduce.metal", name, what + " (100 elements, 32 threads)",
                          [rows], [32], dict(base, dst=np.zeros(rows, out_dtype)),
                          ["dst"], lambda a, ref=ref, dt=out_dtype: [np.asarray(ref(a)).astype(dt)], tol=tol,
                          flags=["--dispatch", "threadgroups"], needs=needs,
                          mismatch=fast_minmax if name in ("fast_max_f32", "fast_min_f32") else None))
    cases.append(Case("candle", "reduce.metal", "softmax_f32", "softmax of rows (100 elements, 64 threads)",
                      [rows], [64],
                      {"src_numel": scalar(rows * cols, np.uint32), "el_per_block": scalar(cols, np.uint32), "src": x,
                       "dst": np.zeros_like(x)},
                      ["dst"], lambda a: [softmax_ref(a["src"], 1, False)], tol=(1e-5, 1e-7),
                      flags=["--dispatch", "threadgroups"], needs=needs,
                      finding=("library", "data race (read-after-write) on `argument`",
                               "candle's block_reducer (64 threads and more) writes `shared[tid]` and reads "
                               "`shared[tid + 32]` across `threadgroup_barrier(mem_flags::mem_none)`, which the "
                               "Metal specification makes an execution barrier only; `mem_threadgroup` is needed")))
    return cases


def candle_steel_attention_cases():
    """MLX's steel attention (full prefill) as vendored in candle: BQ = BK =
    32 tiles, head dim 64, 4 simdgroups; threadgroups (query blocks, heads,
    batch). Unaligned lengths; causal with the queries at the end of the
    keys (qL_off = kL - qL); GQA 2:1. Like the GEMM, unchecked."""
    cases = []
    bsz, heads, kv_heads, ql, kl, d = 1, 4, 2, 40, 50, 64
    q = RNG.standard_normal((bsz, heads, ql, d)).astype(np.float32)
    kk = RNG.standard_normal((bsz, kv_heads, kl, d)).astype(np.float32)
    v = RNG.standard_normal((bsz, kv_heads, kl, d)).astype(np.float32)
    scale = 1 / math.sqrt(d)
    pt = np.dtype([("B", np.int32), ("H", np.int32), ("D", np.int32), ("qL", np.int32), ("kL", np.int32),
                   ("gqa_factor", np.int32), ("scale", np.float32), ("softcapping", np.float32), ("NQ", np.int32),
                   ("NK", np.int32), ("NQ_aligned", np.int32), ("NK_aligned", np.int32), ("qL_rem", np.int32),
                   ("kL_rem", np.int32), ("qL_off", np.int32), ("Q_strides", np.int64, (3,)), ("K_strides", np.int64, (3,)),
                   ("V_strides", np.int64, (3,)), ("O_strides", np.int64, (3,))], align=True)
    p = np.zeros(1, pt)
    p[0] = (bsz, heads, d, ql, kl, heads // kv_heads, scale, 1.0, math.ceil(ql / 32), math.ceil(kl / 32), ql // 32,
            kl // 32, ql % 32, kl % 32, kl - ql, [heads * ql * d, ql * d, d], [kv_heads * kl * d, kl * d, d],
            [kv_heads * kl * d, kl * d, d], [heads * ql * d, ql * d, d])

    def ref(a, causal):
        out = np.zeros((bsz, heads, ql, d))
        for h in range(heads):
            kv = h // (heads // kv_heads)
            sc = scale * (a["Q"][0, h].astype(np.float64) @ a["K"][0, kv].T)
            if causal:
                sc = np.where(np.arange(kl)[None, :] <= np.arange(ql)[:, None] + (kl - ql), sc, -np.inf)
            w = np.exp(sc - sc.max(1, keepdims=True))
            out[0, h] = (w / w.sum(1, keepdims=True)) @ a["V"][0, kv]
        return [out.astype(np.float32)]

    for causal in (False, True):
        flags = ["--dispatch", "threadgroups", "--check", "none", "--constant", "align_Q=false", "--constant",
                 "align_K=false", "--constant", "has_mask=false", "--constant", f"do_causal={str(causal).lower()}"]
        cases.append(Case("candle", "scaled_dot_product_attention.metal",
                          "steel_attention_float32_bq32_bk32_bd64_wm4_wn1_maskfloat32",
                          f"steel attention, 40 queries x 50 keys, GQA 4:2" + (", causal" if causal else "")
                          + " (--check none)",
                          [math.ceil(ql / 32), heads, bsz], [32, 4, 1],
                          {"Q": q, "K": kk, "V": v, "O": np.zeros((bsz, heads, ql, d), np.float32), "params": p},
                          ["O"], lambda a, c=causal: ref(a, c), tol=(1e-4, 1e-5), flags=flags))
    return cases


def candle_sdpa_cases():
    """MLX's sdpa_vector (one query token per head) as vendored in candle:
    a threadgroup of 32 simdgroups per query head, each simdgroup walking
    every 32nd key with an online softmax, then a threadgroup combine."""
    cases = []
    heads, kv_heads, n, d = 4, 2, 45, 64
    q = RNG.standard_normal((heads, d)).astype(np.float32)
    kk = RNG.standard_normal((kv_heads, n, d)).astype(np.float32)
    v = RNG.standard_normal((kv_heads, n, d)).astype(np.float32)
    mask = RNG.random((heads, n)) < 0.7
    scale = 1 / math.sqrt(d)

    def ref(a, masked):
        out = np.zeros((heads, d), np.float64)
        for h in range(heads):
            kv = h // (heads // kv_heads)
            sc = scale * (a["keys"][kv].astype(np.float64) @ a["queries"][h])
            if masked:
                sc = np.where(a["mask"][h], sc, -np.inf)
            w = np.exp(sc - sc.max())
            out[h] = (w / w.sum()) @ a["values"][kv]
        return [out.astype(np.float32)]

    for masked in (False, True):
        args = {"queries": q, "keys": kk, "values": v, "out": np.zeros((heads, d), np.float32),
                "gqa_factor": scalar(heads // kv_heads, np.int32), "N": scalar(n, np.int32),
                "k_stride": u64([n * d]), "v_stride": u64([n * d]), "scale": scalar(scale, np.float32),
                "softcapping": scalar(1.0, np.float32)}
        if masked:
            args.update({"mask": mask, "mask_seq_stride": scalar(1, np.int32), "mask_head_stride": scalar(n, np.int32)})
        cases.append(Case("candle", "scaled_dot_product_attention.metal", "sdpa_vector_float_64",
                          f"attention of one query per head, 45 keys, GQA 4:2" + (", boolean mask" if masked else ""),
                          [1, heads, 1], [1024],
                          args, ["out"], lambda a, m=masked: ref(a, m), tol=(1e-5, 1e-6),
                          flags=["--dispatch", "threadgroups", "--constant", f"sdpa_vector_has_mask={str(masked).lower()}"]))
    cases += candle_steel_attention_cases()
    # The two-pass variant: 32 blocks per head, block b taking keys
    # 8b..8b+7 (+ 256 t); pass 1 writes each block's max score, sum of
    # exp(score - max) and unnormalized sum of exp(score - max) * v (empty
    # blocks: max -1e9, zeros); pass 2 combines them.
    n2 = 300
    k2 = RNG.standard_normal((kv_heads, n2, d)).astype(np.float32)
    v2 = RNG.standard_normal((kv_heads, n2, d)).astype(np.float32)

    def partials(qs, ks, vs):
        outp = np.zeros((heads, 32, d), np.float64)
        sums = np.zeros((heads, 32))
        maxs = np.full((heads, 32), -1e9)
        for h in range(heads):
            kv = h // (heads // kv_heads)
            sc = scale * (ks[kv].astype(np.float64) @ qs[h])
            for b in range(32):
                keys = [j for j in range(n2) if (j % 256) // 8 == b]
                if keys:
                    m = sc[keys].max()
                    e = np.exp(sc[keys] - m)
                    maxs[h, b], sums[h, b], outp[h, b] = m, e.sum(), e @ vs[kv][keys]
        return outp.astype(np.float32), sums.astype(np.float32), maxs.astype(np.float32)

    cases.append(Case("candle", "scaled_dot_product_attention.metal", "sdpa_vector_2pass_1_float_64",
                      "attention pass 1: per-block max, sum and partial output (300 keys, 32 blocks; --check memory)",
                      [1, heads, 32], [256],
                      {"queries": q, "keys": k2, "values": v2, "out": np.zeros((heads, 32, d), np.float32),
                       "sums": np.zeros((heads, 32), np.float32), "maxs": np.zeros((heads, 32), np.float32),
                       "gqa_factor": scalar(heads // kv_heads, np.int32), "N": scalar(n2, np.int32),
                       "k_stride": u64([n2 * d]), "v_stride": u64([n2 * d]), "scale": scalar(scale, np.float32),
                       "softcapping": scalar(1.0, np.float32)},
                      ["out", "sums", "maxs"], lambda a: list(partials(a["queries"], a["keys"], a["values"])),
                      tol=(1e-5, 1e-5),
                      flags=["--dispatch", "threadgroups", "--constant", "sdpa_vector_has_mask=false", "--check", "memory"]))
    cases.append(checked(cases[-1], "library", "data-race",
                         "all 32 lanes of simdgroup 0 store the block's sum and max (`if (simd_gid == 0)`, equal values)"))
    po, ps, pm = partials(q, k2, v2)

    def combine(a):
        m = a["maxs"].astype(np.float64)
        f = np.exp(m - m.max(1, keepdims=True))
        return [((a["partials"] * f[..., None]).sum(1) / (a["sums"] * f).sum(1, keepdims=True)).astype(np.float32)]

    cases.append(Case("candle", "scaled_dot_product_attention.metal", "sdpa_vector_2pass_2_float_64",
                      "attention pass 2: combine the 32 block partials",
                      [1, heads, 1], [1024],
                      {"partials": po, "sums": ps, "maxs": pm, "out": np.zeros((heads, d), np.float32)},
                      ["out"], combine, tol=(1e-5, 1e-6), flags=["--dispatch", "threadgroups"]))
    return cases


# MLX's GEMMParams and GEMMAddMMParams (steel/gemm/params.h), as candle binds them.
GEMM_PARAMS = np.dtype([("M", np.int32), ("N", np.int32), ("K", np.int32), ("lda", np.int32), ("ldb", np.int32),
                        ("ldd", np.int32), ("tiles_n", np.int32), ("tiles_m", np.int32), ("batch_stride_a", np.uint64),
                        ("batch_stride_b", np.uint64), ("batch_stride_d", np.uint64), ("swizzle_log", np.int32),
                        ("gemm_k_iterations_aligned", np.int32), ("batch_ndim", np.int32)], align=True)
GEMM_ADDMM_PARAMS = np.dtype([("ldc", np.int32), ("fdc", np.int32), ("batch_stride_c", np.uint64),
                              ("alpha", np.float32), ("beta", np.float32)], align=True)


def candle_gemm_cases():
    """MLX's steel GEMM as vendored in candle (mlx_gemm.metal), 32x32x16
    tiles, 2x2 simdgroups: threadgroups (tiles_n, tiles_m, batch) of (32, 2, 2).

    Run with --check none: the sanitizer reports `thread mma_t mma_op(...)`
    and the two loaders' direct-initializations as reads of uninitialized
    memory (the simulator copies the constructed temporary, members the
    constructor leaves unset and padding included: a false positive of
    ours), and without use_out_source the epilogue functors still read
    alpha/beta through the unbound `addmm_params` (MLX reads a null buffer,
    values unused)."""
    cases = []
    pt, at = GEMM_PARAMS, GEMM_ADDMM_PARAMS

    def gemm_case(ta, tb, m, n, kk, batch, addmm):
        a = RNG.standard_normal((batch, kk, m) if ta else (batch, m, kk)).astype(np.float32)
        b = RNG.standard_normal((batch, n, kk) if tb else (batch, kk, n)).astype(np.float32)
        c = RNG.standard_normal((batch, m, n)).astype(np.float32)
        p = np.zeros(1, pt)
        p[0] = (m, n, kk, m if ta else kk, kk if tb else n, n, math.ceil(n / 32), math.ceil(m / 32),
                a[0].size, b[0].size, m * n, 0, kk // 16, 1)
        ap = np.zeros(1, at)
        ap[0] = (n, 1, m * n, 0.5, -2.0)
        consts = {"has_batch": "false", "use_out_source": str(addmm).lower(), "do_axpby": str(addmm).lower(),
                  "align_M": str(m % 32 == 0).lower(), "align_N": str(n % 32 == 0).lower(),
                  "align_K": str(kk % 16 == 0).lower(), "do_gather": "false"}
        flags = ["--dispatch", "threadgroups", "--check", "none"]
        for key, val in consts.items():
            flags += ["--constant", f"{key}={val}"]

        def ref(args):
            aa = args["A"].astype(np.float64)
            bb = args["B"].astype(np.float64)
            prod = (aa.transpose(0, 2, 1) if ta else aa) @ (bb.transpose(0, 2, 1) if tb else bb)
            if addmm:
                prod = 0.5 * prod - 2.0 * args["C"]
            return [prod.astype(np.float32)]

        name = f"gemm_{'t' if ta else 'n'}{'t' if tb else 'n'}_f32_f32_32_32_16_2_2"
        what = f"steel GEMM {m}x{n}x{kk}, batch {batch}" + (", D = 0.5 A@B - 2 C (axpby)" if addmm else "") + \
            (", unaligned M/N/K" if m % 32 or n % 32 or kk % 16 else ", aligned") + " (--check none)"
        # Buffers behind a false function constant do not exist for the run.
        args = {"A": a, "B": b, "D": np.zeros((batch, m, n), np.float32), "params": p}
        if addmm:
            args.update({"C": c, "addmm_params": ap})
        return Case("candle", "mlx_gemm.metal", name, what, [math.ceil(n / 32), math.ceil(m / 32), batch], [32, 2, 2],
                    args, ["D"], ref, tol=(1e-4, 1e-4), flags=flags)

    cases.append(gemm_case(False, False, 50, 40, 37, 2, False))
    cases.append(gemm_case(True, False, 45, 70, 20, 1, False))
    cases.append(gemm_case(False, True, 64, 64, 48, 2, True))
    cases.append(gemm_case(True, True, 33, 31, 17, 1, True))
    twin = checked(cases[0], "simulator", "`initializer` is read before this thread wrote it",
                   "false report: `thread mma_t mma_op(...)` is copied from a temporary whose unset members "
                   "(and padding) count as read (fixed on main after 4e693f3)")
    twin.finding.append(("library", "read through a null pointer",
                         "without use_out_source the epilogue functors still read alpha/beta through the unbound "
                         "addmm_params (values unused)"))
    cases.append(twin)
    return cases


def candle_gemv_cases():
    """MLX's gemv as vendored in candle: out = alpha * mat @ vec + beta * bias
    (axpby1) or mat @ vec, batched over the grid's z (threadgroups dispatch).

    Sizes are whole blocks on purpose. gemv clamps the last block's rows
    back in range, so with 50 rows two threadgroups write the same outputs
    (reported as a write-after-write race); gemv_t has a threadgroup_barrier
    inside `if (out_col < out_vec_size)`, divergent unless N fills every
    threadgroup. With BN > 1, gemv's reduction barrier sits inside
    `if (thrN == 0)` (one lane per simdgroup reaches it): those run with
    --check none."""
    cases = []
    batch, m, kdim = 2, 64, 300
    mat = RNG.standard_normal((batch, m, kdim)).astype(np.float32)
    vec = RNG.standard_normal((batch, kdim)).astype(np.float32)
    bias = RNG.standard_normal((batch, m)).astype(np.float32)

    def gemv_args(mat, vec, bias, out_size, ld, alpha, beta):
        return {"mat": mat, "in_vec": vec, "bias": bias, "out_vec": np.zeros((batch, out_size), np.float32),
                "in_vec_size": scalar(vec.shape[1], np.int32), "out_vec_size": scalar(out_size, np.int32),
                "matrix_ld": scalar(ld, np.int32), "alpha": scalar(alpha, np.float32), "beta": scalar(beta, np.float32),
                "batch_ndim": scalar(1, np.int32), "batch_shape": np.array([batch], np.int32),
                "vector_batch_stride": i64([vec.shape[1]]), "matrix_batch_stride": i64([mat[0].size]),
                "bias_batch_stride": i64([out_size]), "bias_stride": scalar(1, np.int32)}

    # (BM, BN, SM, SN, TM, TN): rows per threadgroup = BM * SM * TM.
    for bm, bn, sm, sn, tm, tn, axpby in ((4, 1, 1, 32, 4, 4, 1), (1, 8, 1, 32, 4, 4, 0), (1, 1, 8, 4, 4, 4, 1)):
        name = f"gemv_float32_bm{bm}_bn{bn}_sm{sm}_sn{sn}_tm{tm}_tn{tn}_nc0_axpby{axpby}"
        rows = bm * sm * tm
        ref = (lambda a: [(np.float32(1.5) * np.einsum("bmk,bk->bm", a["mat"].astype(np.float64), a["in_vec"])
                           + np.float32(-0.5) * a["bias"]).astype(np.float32)]) if axpby else \
            (lambda a: [np.einsum("bmk,bk->bm", a["mat"].astype(np.float64), a["in_vec"]).astype(np.float32)])
        cases.append(Case("candle", "gemv.metal", name,
                          f"gemv {m}x{kdim}, batch {batch}" + (", alpha/beta/bias" if axpby else "")
                          + (f" (reduction over {bn} simdgroups; --check none)" if bn > 1 else ""),
                          [math.ceil(m / rows), 1, batch], [32, bn, bm],
                          gemv_args(mat, vec, bias, m, kdim, 1.5, -0.5),
                          ["out_vec"], ref, tol=(1e-4, 1e-4), flags=["--dispatch", "threadgroups", "--check", "none"] if bn > 1 else ["--dispatch", "threadgroups"]))
        if bn > 1:
            cases.append(checked(cases[-1], "library", "barrier-divergence",
                                 "MLX's gemv reduction calls threadgroup_barrier inside `if (thrN == 0)`"))
    # gemv_t: vec (K) x mat (K, N) -> (N).
    kt, nt = 70, 256
    matt = RNG.standard_normal((batch, kt, nt)).astype(np.float32)
    vect = RNG.standard_normal((batch, kt)).astype(np.float32)
    biast = RNG.standard_normal((batch, nt)).astype(np.float32)
    for bm, bn, sm, sn, tm, tn in ((1, 2, 8, 4, 4, 4), (1, 16, 8, 4, 4, 4)):
        name = f"gemv_t_float32_bm{bm}_bn{bn}_sm{sm}_sn{sn}_tm{tm}_tn{tn}_nc0_axpby1"
        cols = bn * sn * tn
        cases.append(Case("candle", "gemv.metal", name, f"gemv_t {kt}x{nt} (vec @ mat), batch {batch}, alpha/beta/bias",
                          [math.ceil(nt / cols), 1, batch], [32, bn, bm],
                          gemv_args(matt, vect, biast, nt, nt, 0.75, 2.0),
                          ["out_vec"],
                          lambda a: [(np.float32(0.75) * np.einsum("bkn,bk->bn", a["mat"].astype(np.float64), a["in_vec"])
                                      + np.float32(2.0) * a["bias"]).astype(np.float32)],
                          tol=(1e-4, 1e-4), flags=["--dispatch", "threadgroups"]))
    return cases


def candle_index_sort_cases():
    cases = []
    # scatter / scatter_add / index_add along dim 1 of a (3, 6, 4) output:
    # one thread per (left, right) pair walks the dim; an index equal to the
    # type's maximum is skipped.
    left, src_dim, dst_dim, right = 3, 5, 6, 4
    src = RNG.standard_normal((left, src_dim, right)).astype(np.float32)
    base = RNG.standard_normal((left, dst_dim, right)).astype(np.float32)
    sa_ids = RNG.integers(0, dst_dim, size=(left, src_dim, right)).astype(np.uint32)
    sa_ids[0, 2, 1] = sa_ids[2, 4, 3] = 0xFFFFFFFF

    def scatter_add_ref(a):
        out = a["output"].astype(np.float64)
        for (l, j, r), idx in np.ndenumerate(a["input_ids"]):
            if idx != 0xFFFFFFFF:
                out[l, idx, r] += a["input"][l, j, r]
        return [out.astype(np.float32)]

    common = {"dst_size": u64([left * right]), "left_size": u64([left]), "src_dim_size": u64([src_dim]),
              "right_size": u64([right]), "dst_dim_size": u64([dst_dim])}
    cases.append(Case("candle", "indexing.metal", "sa_u32_f32", "scatter_add along dim 1 (u32::MAX ids skipped)",
                      [left * right], [8],
                      dict(common, input=src, input_ids=sa_ids, output=base.copy()),
                      ["output"], scatter_add_ref, tol=(1e-6, 1e-6)))
    # scatter with a distinct destination per source element (a permutation
    # of 5 of the 6 slots), so the result does not depend on write order.
    s_ids = np.stack([np.stack([RNG.permutation(dst_dim)[:src_dim] for _ in range(right)], axis=1)
                      for _ in range(left)]).astype(np.int64)

    def scatter_ref(a):
        out = a["output"].copy()
        np.put_along_axis(out, a["input_ids"], a["input"], axis=1)
        return [out]

    cases.append(Case("candle", "indexing.metal", "s_i64_f32", "scatter along dim 1, i64 ids",
                      [left * right], [8],
                      dict(common, input=src, input_ids=s_ids, output=base.copy()),
                      ["output"], scatter_ref, tol=(0, 0)))
    ia_ids = np.array([4, 0, 4, 2, 255], np.uint8)

    def index_add_ref(a):
        out = a["output"].astype(np.float64)
        for j, idx in enumerate(a["input_ids"]):
            if idx != 255:
                out[:, idx] += a["input"][:, j]
        return [out.astype(np.float32)]

    cases.append(Case("candle", "indexing.metal", "ia_u8_f32", "index_add along dim 1 (repeated ids, u8::MAX skipped)",
                      [left * right], [8],
                      dict(common, ids_dim_size=u64([5]), input=src, input_ids=ia_ids, output=base.copy()),
                      ["output"], index_add_ref, tol=(1e-6, 1e-6)))
    # where(cond, t, f) with cond broadcast along rows and t a transposed view:
    # strided index paths (function constants false).
    rows, cols = 5, 7
    cond = (RNG.random(cols) > 0.5).astype(np.uint8)
    tt = RNG.standard_normal((cols, rows)).astype(np.float32)
    ff = RNG.standard_normal((rows, cols)).astype(np.float32)
    cases.append(Case("candle", "ternary.metal", "where_u8_f32", "where, broadcast cond and transposed t (strided paths)",
                      [per_thread(np.float32, rows * cols)], [8],
                      {"numel": u64([rows * cols]), "num_dims": u64([2]), "dims": u64([rows, cols]),
                       "strides": u64([0, 1]), "strides_t": u64([1, rows]), "strides_f": u64([cols, 1]),
                       "ids": cond, "t": tt, "f": ff, "out": np.zeros((rows, cols), np.float32)},
                      ["out"], lambda a: [np.where(a["ids"][None, :] != 0, a["t"].T, a["f"])], tol=(0, 0),
                      flags=["--constant", "IDS_CONTIGUOUS=false", "--constant", "T_CONTIGUOUS=false",
                             "--constant", "F_CONTIGUOUS=true"]))
    # MLX's block merge sort (vendored in candle): one threadgroup of 128
    # threads x 8 values sorts each row of up to 1024, padding with +inf.
    nrows, length = 3, 700
    xs = np.stack([RNG.permutation(length) for _ in range(nrows)]).astype(np.float32) * 0.5 - 100
    sort_args = {"inp": xs, "size_sorted_axis": scalar(length, np.int32), "in_stride_sorted_axis": scalar(1, np.int32),
                 "out_stride_sorted_axis": scalar(1, np.int32), "in_stride_segment_axis": scalar(length, np.int32),
                 "out_stride_segment_axis": scalar(length, np.int32)}
    # Without ARG_SORT the merge still swaps the uninitialized thread_idxs and
    # reads `tgp_idxs` (nullptr) + offset, values it never stores; the
    # sanitizer rightly reports both, so the value sorts run unchecked.
    unchecked = ["--dispatch", "threadgroups", "--check", "none"]
    cases.append(Case("candle", "mlx_sort.metal", "c_block_sort_float32_float32_bn128_tn8",
                      "MLX block merge sort of rows (700 of 1024 slots; --check none)",
                      [1, nrows], [128, 1],
                      dict(sort_args, out=np.zeros((nrows, length), np.float32)),
                      ["out"], lambda a: [np.sort(a["inp"], axis=1)], tol=(0, 0), flags=unchecked))
    cases.append(checked(cases[-1], "library", "uninitialized-read",
                         "value-only sort swaps never-written thread_idxs and reads through a null tgp_idxs (dead values)"))
    cases.append(Case("candle", "mlx_sort.metal", "carg_block_sort_float32_uint32_bn128_tn8",
                      "MLX block merge argsort of rows",
                      [1, nrows], [128, 1],
                      dict(sort_args, out=np.zeros((nrows, length), np.uint32)),
                      ["out"], lambda a: [np.argsort(a["inp"], axis=1).astype(np.uint32)], tol=(0, 0),
                      flags=["--dispatch", "threadgroups"]))
    # The same sort on a non-contiguous batch: rows of a (2, 3, 100) array
    # sorted along its last axis, rows addressed through nc_shape/nc_strides.
    xi = RNG.integers(-1000, 1000, size=(2, 3, 100)).astype(np.int64)
    cases.append(Case("candle", "mlx_sort.metal", "nc_block_sort_int64_int64_bn128_tn8",
                      "MLX block sort, int64, rows addressed by elem_to_loc (--check none)",
                      [1, 6], [128, 1],
                      {"inp": xi, "out": np.zeros((2, 3, 100), np.int64), "size_sorted_axis": scalar(100, np.int32),
                       "in_stride_sorted_axis": scalar(1, np.int32), "out_stride_sorted_axis": scalar(1, np.int32),
                       "nc_dim": scalar(2, np.int32), "nc_shape": np.array([2, 3], np.int32),
                       "in_nc_strides": i64([300, 100]), "out_nc_strides": i64([300, 100])},
                      ["out"], lambda a: [np.sort(a["inp"], axis=2)], tol=(0, 0), flags=unchecked))
    return cases


def metal_round(v):
    """Metal's round(): halfway cases away from zero."""
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def erf64(v):
    return np.vectorize(math.erf)(np.asarray(v, np.float64))


def candle_elementwise_cases():
    cases = []
    n = 45
    x = np.concatenate([RNG.uniform(-6, 6, n - 9), [0.5, 1.5, 2.5, -2.5, -0.5, 0.0, 5.5, -7.25, 3.0]]).astype(np.float32)
    pos = np.abs(x) + np.float32(0.1)
    x64 = x.astype(np.float64)
    tanh_gelu = 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64 ** 3)))
    unary = (
        ("gelu_erf", x, x64 * (1 + erf64(x64 / math.sqrt(2))) / 2, (1e-5, 1e-6), "GELU (erf by A&S 7.1.26)"),
        ("gelu", x, np.where(x64 > 5, x64, tanh_gelu), (1e-5, 1e-6), "GELU, tanh approximation"),
        ("silu", x, x64 / (1 + np.exp(-x64)), (1e-6, 1e-6), "SiLU"),
        ("relu", x, np.maximum(x64, 0), (0, 0), "ReLU"),
        ("sigmoid", x, 1 / (1 + np.exp(-x64)), (1e-6, 1e-7), "sigmoid"),
        ("tanh", x, np.tanh(x64), (1e-6, 1e-7), "tanh (precise)"),
        ("erf", x, erf64(x64), (0, 3e-7), "erf (A&S 7.1.26, |err| < 1.5e-7)"),
        ("round", x, metal_round(x64), (0, 0), "round, halves away from zero"),
        ("sign", x, np.sign(x64), (0, 0), "sign"),
        ("sqrt", pos, np.sqrt(pos.astype(np.float64)), (1e-6, 0), "sqrt"),
        ("log", pos, np.log(pos.astype(np.float64)), (1e-6, 1e-7), "log"),
        ("recip", pos, 1 / pos.astype(np.float64), (1e-6, 0), "reciprocal"),
        ("sin", x, np.sin(x64), (1e-6, 1e-6), "sin"),
        ("floor", x, np.floor(x64), (0, 0), "floor"),
    )
    for name, inp, want, tol, what in unary:
        cases.append(Case("candle", "unary.metal", f"{name}_f32", what, [per_thread(np.float32, n)], [8],
                          {"dim": u64([n]), "input": inp, "output": np.zeros(n, np.float32)},
                          ["output"], lambda a, want=want: [want.astype(np.float32)], tol=tol))
    xh = x.astype(np.float16)
    cases.append(Case("candle", "unary.metal", "silu_f16", "SiLU on half (4 elements a thread)",
                      [per_thread(np.float16, n)], [8],
                      {"dim": u64([n]), "input": xh, "output": np.zeros(n, np.float16)},
                      ["output"], lambda a: [(a["input"].astype(np.float64) / (1 + np.exp(-a["input"].astype(np.float64))))
                                             .astype(np.float16)], tol=(2e-3, 2e-3)))
    xt = RNG.standard_normal((4, 3, 5)).astype(np.float32)
    cases.append(Case("candle", "unary.metal", "sqr_f32_strided", "square of a permuted 3-D view",
                      [60], [16],
                      {"dim": u64([60]), "num_dims": u64([3]), "dims": u64([5, 4, 3]), "strides": u64([1, 15, 5]),
                       "input": xt, "output": np.zeros((5, 4, 3), np.float32)},
                      ["output"], lambda a: [a["input"].transpose(2, 0, 1) ** 2], tol=(0, 0)))
    src = RNG.standard_normal((6, 9)).astype(np.float32)

    def copy2d_ref(a):
        out = a["output"].copy()
        out[:, :5] = a["input"][:, :5]
        return [out]

    cases.append(Case("candle", "unary.metal", "copy2d_f32", "copy2d: a (6, 5) block between row strides 9 and 10",
                      [6, 5], [6, 5],
                      {"d1": i64([6]), "d2": i64([5]), "src_s": i64([9]), "dst_s": i64([10]), "input": src,
                       "output": np.full((6, 10), -1.0, np.float32)},
                      ["output"], copy2d_ref, tol=(0, 0)))
    cases.append(Case("candle", "unary.metal", "const_set_f32_strided", "const_set on every other column",
                      [12], [8],
                      {"dim": u64([12]), "num_dims": u64([2]), "dims": u64([4, 3]), "strides": u64([6, 2]),
                       "input": scalar(7.5, np.float32), "output": np.zeros((4, 6), np.float32)},
                      ["output"], lambda a: [np.tile(np.array([7.5, 0], np.float32), (4, 3))], tol=(0, 0)))
    # Binary variants: broadcasting through strides, and scalar operands.
    l = RNG.standard_normal((4, 6)).astype(np.float32)
    r_row = RNG.standard_normal(6).astype(np.float32)
    r_col = RNG.standard_normal(4).astype(np.float32)
    bcommon = {"dim": u64([24]), "num_dims": u64([2]), "dims": u64([4, 6])}
    w = per_thread(np.float32, 24)
    cases.append(Case("candle", "binary.metal", "bsub_f32_strided", "sub, both broadcast (row - column)",
                      [w], [8],
                      dict(bcommon, left_strides=u64([0, 1]), right_strides=u64([1, 0]), left=r_row, right=r_col,
                           output=np.zeros((4, 6), np.float32)),
                      ["output"], lambda a: [a["left"][None, :] - a["right"][:, None]], tol=(0, 0)))
    cases.append(Case("candle", "binary.metal", "bdiv_f32_rstrided", "div, right operand broadcast along rows",
                      [w], [8],
                      dict(bcommon, left_strides=u64([6, 1]), right_strides=u64([0, 1]), left=l, right=r_row,
                           output=np.zeros((4, 6), np.float32)),
                      ["output"], lambda a: [a["left"] / a["right"][None, :]], tol=(0, 0)))
    cases.append(Case("candle", "binary.metal", "bmaximum_f32_cs", "maximum with a scalar right operand",
                      [w], [8],
                      dict(bcommon, left_strides=u64([6, 1]), right_strides=u64([0, 0]), left=l,
                           right=scalar(0.25, np.float32), output=np.zeros((4, 6), np.float32)),
                      ["output"], lambda a: [np.maximum(a["left"], np.float32(0.25))], tol=(0, 0)))
    cases.append(Case("candle", "binary.metal", "lt_f32_lss", "less-than, transposed left vs scalar (bool output)",
                      [w], [8],
                      dict(bcommon, left_strides=u64([1, 4]), right_strides=u64([0, 0]), left=l.reshape(6, 4),
                           right=scalar(0.0, np.float32), output=np.zeros((4, 6), np.bool_)),
                      ["output"], lambda a: [a["left"].T < 0], tol=(0, 0)))
    li = RNG.integers(-9, 9, size=24).astype(np.int64)
    ri = RNG.integers(1, 5, size=24).astype(np.int64)
    cases.append(Case("candle", "binary.metal", "bmul_i64", "mul, int64 (1 element a thread)",
                      [per_thread(np.int64, 24)], [8],
                      {"dim": u64([24]), "left": li, "right": ri, "output": np.zeros(24, np.int64)},
                      ["output"], lambda a: [a["left"] * a["right"]], tol=(0, 0)))
    cases.append(Case("candle", "binary.metal", "eq_u32", "equality of u32 (bool output)",
                      [per_thread(np.uint32, 24)], [8],
                      {"dim": u64([24]), "left": (li % 3).astype(np.uint32), "right": (ri % 3).astype(np.uint32),
                       "output": np.zeros(24, np.bool_)},
                      ["output"], lambda a: [a["left"] == a["right"]], tol=(0, 0)))
    # affine.metal's powf and elu, and affine on a strided view.
    cases.append(Case("candle", "affine.metal", "powf_f32", "powf x^1.7 of positives",
                      [per_thread(np.float32, n)], [8],
                      {"dim": u64([n]), "mul": scalar(1.7, np.float32), "input": pos, "output": np.zeros(n, np.float32)},
                      ["output"], lambda a: [(a["input"].astype(np.float64) ** np.float64(np.float32(1.7))).astype(np.float32)],
                      tol=(1e-6, 0)))
    cases.append(Case("candle", "affine.metal", "elu_f32", "ELU, alpha 0.8",
                      [per_thread(np.float32, n)], [8],
                      {"dim": u64([n]), "mul": scalar(0.8, np.float32), "input": x, "output": np.zeros(n, np.float32)},
                      ["output"],
                      lambda a: [np.where(a["input"] > 0, a["input"], np.float32(0.8) * np.expm1(a["input"].astype(np.float64)))
                                 .astype(np.float32)], tol=(1e-6, 1e-7)))
    cases += candle_cast_cases()
    cases.append(Case("candle", "affine.metal", "affine_f32_strided", "affine of a transposed view (fma)",
                      [24], [8],
                      {"dim": u64([24]), "num_dims": u64([2]), "dims": u64([6, 4]), "strides": u64([1, 6]),
                       "mul": scalar(-2.0, np.float32), "add": scalar(0.5, np.float32), "input": l.reshape(4, 6),
                       "output": np.zeros((6, 4), np.float32)},
                      ["output"], lambda a: [(a["input"].T.astype(np.float64) * -2 + 0.5).astype(np.float32)], tol=(0, 0)))
    return cases


def to_half(x):
    with np.errstate(over="ignore"):  # 65520 and up round to inf, as intended
        return np.asarray(x).astype(np.float16)


def bf16_bits(x):
    """float32 -> bfloat16 bit pattern, rounding to nearest even."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def candle_cast_cases():
    cases = []
    n = 24
    # Exact ties at bit 16 (both parities), ordinary values, large and tiny.
    ties = (np.array([0x3F808000, 0x3F818000, 0xC0408000, 0x40490FDB], np.uint32)).view(np.float32)
    x = np.concatenate([ties, RNG.standard_normal(n - 8) * 100, [1e30, -3e-30, 65504.0, 0.0]]).astype(np.float32)
    cases.append(Case("candle", "cast.metal", "cast_f32_bf16", "cast float32 -> bfloat16 (ties to even; bits compared)",
                      [per_thread(np.float32, n)], [8],
                      {"dim": u64([n]), "input": x, "output": np.zeros(n, np.uint16)},
                      ["output"], lambda a: [bf16_bits(a["input"])], tol=(0, 0)))
    bf = bf16_bits(RNG.standard_normal(n) * 10)
    cases.append(Case("candle", "cast.metal", "cast_bf16_f32", "cast bfloat16 -> float32 (exact)",
                      [per_thread(np.uint16, n)], [8],
                      {"dim": u64([n]), "input": bf, "output": np.zeros(n, np.float32)},
                      ["output"], lambda a: [(a["input"].astype(np.uint32) << 16).view(np.float32)], tol=(0, 0)))
    xf = (RNG.standard_normal(n) * 1000).astype(np.float32)
    cases.append(Case("candle", "cast.metal", "cast_f32_i64", "cast float32 -> int64 (toward zero)",
                      [per_thread(np.float32, n)], [8],
                      {"dim": u64([n]), "input": xf, "output": np.zeros(n, np.int64)},
                      ["output"], lambda a: [np.trunc(a["input"]).astype(np.int64)], tol=(0, 0)))
    xi = np.concatenate([RNG.integers(-2 ** 40, 2 ** 40, n - 2), [2 ** 24 + 1, -(2 ** 53) - 1]]).astype(np.int64)
    cases.append(Case("candle", "cast.metal", "cast_i64_f32", "cast int64 -> float32 (rounded to nearest)",
                      [per_thread(np.int64, n)], [8],
                      {"dim": u64([n]), "input": xi, "output": np.zeros(n, np.float32)},
                      ["output"], lambda a: [a["input"].astype(np.float32)], tol=(0, 0)))
    xu = RNG.integers(0, 70000, n).astype(np.uint32)
    cases.append(Case("candle", "cast.metal", "cast_u32_f16", "cast uint32 -> float16 (65520+ become inf)",
                      [per_thread(np.uint32, n)], [8],
                      {"dim": u64([n]), "input": xu, "output": np.zeros(n, np.float16)},
                      ["output"], lambda a: [to_half(a["input"])], tol=(0, 0)))
    xt = RNG.standard_normal((3, 4)).astype(np.float16)
    cases.append(Case("candle", "cast.metal", "cast_f16_f32_strided", "cast float16 -> float32 of a transposed view",
                      [12], [8],
                      {"dim": u64([12]), "num_dims": u64([2]), "dims": u64([4, 3]), "strides": u64([1, 4]), "input": xt,
                       "output": np.zeros((4, 3), np.float32)},
                      ["output"], lambda a: [a["input"].T.astype(np.float32)], tol=(0, 0)))
    return cases


def conv_transpose_ref(x, w, stride, padding, dilation, out_len):
    """conv_transpose over the trailing axes: input position i and kernel tap
    t land on output i * stride + t * dilation - padding."""
    nd = x.ndim - 2
    out = np.zeros((x.shape[0], w.shape[1]) + tuple(out_len), np.float64)
    for pos in np.ndindex(*x.shape[2:]):
        for tap in np.ndindex(*w.shape[2:]):
            o = tuple(p * stride + t * dilation - padding for p, t in zip(pos, tap))
            if all(0 <= oi < n for oi, n in zip(o, out_len)):
                sl = (slice(None), slice(None)) + o
                out[sl] += x[(slice(None), slice(None)) + pos].astype(np.float64) @ w[(slice(None), slice(None)) + tap]
    assert nd == len(out_len)
    return out.astype(x.dtype)


def candle_conv_cases():
    cases = []
    # candle's conv2d lowers to im2col: dst is (b, h_out, w_out, c_in, h_k, w_k).
    x = RNG.standard_normal((2, 3, 5, 6)).astype(np.float32)
    hk, wk, stride, pad, dil = 3, 2, 2, 1, 1
    ho, wo = (5 + 2 * pad - dil * (hk - 1) - 1) // stride + 1, (6 + 2 * pad - dil * (wk - 1) - 1) // stride + 1
    numel = 2 * ho * wo * 3 * hk * wk

    def im2col_ref(a):
        xp = np.pad(a["src"], ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        out = np.zeros((2, ho, wo, 3, hk, wk), np.float32)
        for i in range(ho):
            for j in range(wo):
                out[:, i, j] = xp[:, :, i * stride:i * stride + hk, j * stride:j * stride + wk]
        return [out]

    cases.append(Case("candle", "conv.metal", "im2col_f32", "im2col for conv2d (3x2 kernel, stride 2, padding 1)",
                      [numel + 5], [64],
                      {"dst_numel": u64([numel]), "h_out": u64([ho]), "w_out": u64([wo]), "h_k": u64([hk]),
                       "w_k": u64([wk]), "stride": u64([stride]), "padding": u64([pad]), "dilation": u64([dil]),
                       "src_dims": u64([2, 3, 5, 6]), "src_strides": u64([90, 30, 6, 1]), "src": x,
                       "dst": np.zeros((2, ho, wo, 3, hk, wk), np.float32)},
                      ["dst"], im2col_ref, tol=(0, 0)))
    # conv1d's im2col with dilation 2 on a transposed (b, c, l) view.
    x1 = RNG.standard_normal((2, 9, 3)).astype(np.float32)  # stored (b, l, c)
    lk, st1, pd1, dl1 = 3, 1, 2, 2
    lo = (9 + 2 * pd1 - dl1 * (lk - 1) - 1) // st1 + 1
    n1 = 2 * lo * 3 * lk

    def im2col1d_ref(a):
        v = np.pad(a["src"].transpose(0, 2, 1), ((0, 0), (0, 0), (pd1, pd1)))
        out = np.zeros((2, lo, 3, lk), np.float32)
        for i in range(lo):
            out[:, i] = v[:, :, i * st1:i * st1 + dl1 * (lk - 1) + 1:dl1]
        return [out]

    cases.append(Case("candle", "conv.metal", "im2col1d_f32", "im2col for conv1d (dilation 2, strided view)",
                      [n1], [32],
                      {"dst_numel": u64([n1]), "l_out": u64([lo]), "l_k": u64([lk]), "stride": u64([st1]),
                       "padding": u64([pd1]), "dilation": u64([dl1]), "src_dims": u64([2, 3, 9]),
                       "src_strides": u64([27, 1, 3]), "src": x1, "dst": np.zeros((2, lo, 3, lk), np.float32)},
                      ["dst"], im2col1d_ref, tol=(0, 0)))
    # conv_transpose1d via col2im1d: src (b, l_in, c_out, k) -> dst (b, c_out, l_out).
    li, co, ks, s1 = 5, 3, 4, 2
    lout = (li - 1) * s1 + ks
    cols = RNG.standard_normal((2, li, co, ks)).astype(np.float32)

    def col2im1d_ref(a):
        out = np.zeros((2, co, lout), np.float64)
        for i in range(li):
            out[:, :, i * s1:i * s1 + ks] += a["src"][:, i]
        return [out.astype(np.float32)]

    cases.append(Case("candle", "conv.metal", "col2im1d_f32", "col2im1d (overlapping taps summed)",
                      [2 * co * lout], [16],
                      {"dst_el": u64([2 * co * lout]), "l_out": u64([lout]), "l_in": u64([li]), "c_out": u64([co]),
                       "k_size": u64([ks]), "stride": u64([s1]), "src": cols, "dst": np.zeros((2, co, lout), np.float32)},
                      ["dst"], col2im1d_ref, tol=(1e-6, 1e-6)))
    # conv_transpose1d and 2d: kernels are (c_in, c_out, k...).
    xs = RNG.standard_normal((2, 3, 6)).astype(np.float32)
    ws = RNG.standard_normal((3, 4, 3)).astype(np.float32)
    ct_stride, ct_pad, ct_dil = 2, 1, 2
    ct_out = (6 - 1) * ct_stride - 2 * ct_pad + ct_dil * (3 - 1) + 1
    cases.append(Case("candle", "conv.metal", "conv_transpose1d_f32", "conv_transpose1d (stride 2, padding 1, dilation 2)",
                      [2 * 4 * ct_out], [32],
                      {"l_out": u64([ct_out]), "stride": u64([ct_stride]), "padding": u64([ct_pad]),
                       "out_padding": u64([0]), "dilation": u64([ct_dil]), "src_dims": u64([2, 3, 6]),
                       "src_strides": u64([18, 6, 1]), "k_dims": u64([3, 4, 3]), "k_strides": u64([12, 3, 1]),
                       "src": xs, "k": ws, "dst": np.zeros((2, 4, ct_out), np.float32)},
                      ["dst"], lambda a: [conv_transpose_ref(a["src"], a["k"], ct_stride, ct_pad, ct_dil, (ct_out,))],
                      tol=(1e-5, 1e-5)))
    x2 = RNG.standard_normal((1, 2, 3, 4)).astype(np.float32)
    w2 = RNG.standard_normal((2, 3, 3, 2)).astype(np.float32)
    h2o, w2o = (3 - 1) * 2 - 2 + (3 - 1) + 1, (4 - 1) * 2 - 2 + (2 - 1) + 1
    cases.append(Case("candle", "conv.metal", "conv_transpose2d_f32", "conv_transpose2d (stride 2, padding 1)",
                      [3 * h2o * w2o], [32],
                      {"w_out": u64([w2o]), "h_out": u64([h2o]), "stride": u64([2]), "padding": u64([1]),
                       "out_padding": u64([0]), "dilation": u64([1]), "input_dims": u64([1, 2, 3, 4]),
                       "input_stride": u64([24, 12, 4, 1]), "k_dims": u64([2, 3, 3, 2]), "k_stride": u64([18, 6, 2, 1]),
                       "src": x2, "k": w2, "dst": np.zeros((1, 3, h2o, w2o), np.float32)},
                      ["dst"], lambda a: [conv_transpose_ref(a["src"], a["k"], 2, 1, 1, (h2o, w2o))], tol=(1e-5, 1e-5)))
    # Pooling: the kernel's `w` is dims[2] and `h` dims[3]; windows (2, 3), strides (2, 1).
    xp = RNG.standard_normal((2, 3, 7, 8)).astype(np.float32)
    k2, k3, s2, s3 = 2, 3, 2, 1
    o2, o3 = (7 - k2) // s2 + 1, (8 - k3) // s3 + 1

    def pool_ref(a, red):
        out = np.zeros((2, 3, o2, o3), np.float32)
        for i in range(o2):
            for j in range(o3):
                out[:, :, i, j] = red(a["src"][:, :, i * s2:i * s2 + k2, j * s3:j * s3 + k3], axis=(2, 3))
        return [out]

    for name, red in (("max_pool2d_f32", np.max), ("avg_pool2d_f32", np.mean)):
        cases.append(Case("candle", "conv.metal", name, name.split("_f32")[0].replace("_", " ") + " (2x3 window, strides 2, 1)",
                          [2 * 3 * o2 * o3], [32],
                          {"w_k": u64([k2]), "h_k": u64([k3]), "w_s": u64([s2]), "h_s": u64([s3]),
                           "src_dims": u64([2, 3, 7, 8]), "src_s": u64([168, 56, 8, 1]), "src": xp,
                           "dst": np.zeros((2, 3, o2, o3), np.float32)},
                          ["dst"], lambda a, red=red: pool_ref(a, red), tol=(1e-6, 1e-6)))
    # F.interpolate(x, size=(5, 9), mode="bilinear"), candle's own index math.
    xb = RNG.standard_normal((2, 2, 3, 4)).astype(np.float32)
    bo_h, bo_w = 5, 9

    def bilinear_ref(a, align):
        def axis(o, i):
            if align:
                s = np.float32(i - 1) / np.float32(o - 1) * np.arange(o, dtype=np.float32)
            else:
                s = np.float32(i) / np.float32(o) * (np.arange(o, dtype=np.float32) + np.float32(0.5)) - np.float32(0.5)
            s = np.maximum(s, 0)
            i0 = np.floor(s).astype(np.int64)
            return i0, np.minimum(i0 + 1, i - 1), (s - i0).astype(np.float32)

        y0, y1, ty = axis(bo_h, 3)
        x0, x1, tx = axis(bo_w, 4)
        src = a["src"]
        top = src[:, :, y0][:, :, :, x0] * (1 - tx) + src[:, :, y0][:, :, :, x1] * tx
        bot = src[:, :, y1][:, :, :, x0] * (1 - tx) + src[:, :, y1][:, :, :, x1] * tx
        return [(top * (1 - ty)[:, None] + bot * ty[:, None]).astype(np.float32)]

    for align in (False, True):
        cases.append(Case("candle", "conv.metal", "upsample_bilinear2d_f32", f"bilinear upsampling, align_corners={align}",
                          [2 * 2 * bo_h * bo_w], [64],
                          {"w_out": u64([bo_w]), "h_out": u64([bo_h]), "align_corners": np.array([align]),
                           "has_scale_h": np.array([False]), "scale_h_factor": scalar(0, np.float32),
                           "has_scale_w": np.array([False]), "scale_w_factor": scalar(0, np.float32),
                           "src_dims": u64([2, 2, 3, 4]), "src_s": u64([24, 12, 4, 1]), "src": xb,
                           "dst": np.zeros((2, 2, bo_h, bo_w), np.float32)},
                          ["dst"], lambda a, align=align: bilinear_ref(a, align), tol=(1e-5, 1e-6)))
    return cases


def pytorch_cases():
    k = "aten/src/ATen/native/mps/kernels/"
    cases = []
    n = 21
    cases.append(Case("pytorch", k + "RangeFactories.metal", "arange_float_i32", "arange (constant array<float, 2>&)",
                      [n], [8],
                      {"out": np.zeros(n, np.float32), "se": np.array([-2.0, 0.25], np.float32), "stride": scalar(1, np.int32)},
                      ["out"], lambda a: [np.float32(-2.0) + np.float32(0.25) * np.arange(n, dtype=np.float32)]))
    cases.append(Case("pytorch", k + "RangeFactories.metal", "linspace_float_i64", "linspace, both ends exact",
                      [n], [8],
                      {"out": np.zeros(n, np.float32), "v": np.array([1.0, 0.15, 4.0], np.float32),
                       "p": np.array([n, 1], np.int64)},
                      ["out"], lambda a: [np.linspace(1.0, 4.0, n).astype(np.float32)]))
    cases.append(Case("pytorch", k + "Eye.metal", "eye_float", "eye (2-D grid)",
                      [5, 4], [5, 4],
                      {"output": np.full((4, 5), 7, np.float32), "stride0": i64([5]), "stride1": i64([1])},
                      ["output"], lambda a: [np.eye(4, 5, dtype=np.float32)], tol=(0, 0)))
    cases.append(Case("pytorch", k + "ConstantKernel.metal", "fill_scalar_dense_int", "fill",
                      [n], [8],
                      {"out": np.zeros(n, np.int32), "fill_val": scalar(-9, np.int32)},
                      ["out"], lambda a: [np.full(n, -9, np.int32)], tol=(0, 0)))
    m = np.arange(12, dtype=np.float32).reshape(3, 4) * 1.5

    def strided_fill_ref(a):
        out = a["out"].copy()
        out[:, ::2] = 3.5
        return [out]

    cases.append(Case("pytorch", k + "ConstantKernel.metal", "fill_scalar_strided_float", "fill every other column",
                      [2, 3], [2, 3],
                      {"out": m.copy(), "fill_val": scalar(3.5, np.float32), "sizes": i64([3, 2]),
                       "strides": i64([4, 2]), "ndim": scalar(2, np.uint32)},
                      ["out"], strided_fill_ref, tol=(0, 0)))
    r = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    cases.append(Case("pytorch", k + "Roll.metal", "roll_float", "roll over two dims",
                      [60], [32],
                      {"input": r, "output": np.zeros((3, 4, 5), np.float32), "sizes": i64([3, 4, 5]),
                       "in_strides": i64([20, 5, 1]), "out_strides": i64([20, 5, 1]), "shifts": i64([1, 0, 2]),
                       "ndim": scalar(3, np.uint32), "numel": np.array([60], np.uint64)},
                      ["output"], lambda a: [np.roll(a["input"], (1, 2), axis=(0, 2))], tol=(0, 0)))
    r2 = RNG.standard_normal((4, 6)).astype(np.float32)
    cases.append(Case("pytorch", k + "Roll.metal", "roll_2d_float", "roll 2-D (constant long2&)",
                      [6, 4], [6, 4],
                      {"input": r2, "output": np.zeros((4, 6), np.float32), "sizes": i64([4, 6]), "shifts": i64([3, 1])},
                      ["output"], lambda a: [np.roll(a["input"], (3, 1), axis=(0, 1))], tol=(0, 0)))
    v = RNG.standard_normal(n).astype(np.float32)
    cases.append(Case("pytorch", k + "Copy.metal", "copy_neg_dense_float_float", "unary functor via REGISTER_UNARY_OP",
                      [n], [8],
                      {"output": np.zeros(n, np.float32), "input": v},
                      ["output"], lambda a: [-a["input"]], tol=(0, 0),
                      skip="the stored Copy.metal is newer than its stored header (REGISTER_UNARY_OP_CAST is not defined)"))
    t = RNG.integers(-50, 50, size=(4, 5)).astype(np.int32)
    cases.append(Case("pytorch", k + "Copy.metal", "copy_identity_strided_int_int", "strided copy = transpose",
                      [20], [8],
                      {"output": np.zeros((4, 5), np.int32), "input": t, "sizes": i64([4, 5]),
                       "input_strides": i64([1, 4]), "output_strides": i64([5, 1]), "ndim": scalar(2, np.uint32)},
                      ["output"], lambda a: [a["input"].reshape(5, 4).T], tol=(0, 0),
                      skip="the stored Copy.metal is newer than its stored header (REGISTER_UNARY_OP_CAST is not defined)"))
    c = RNG.standard_normal((n, 2)).astype(np.float32)
    cases.append(Case("pytorch", k + "Copy.metal", "copy_conj_dense_float2_float2", "complex conj (enable_if on is_complex_v)",
                      [n], [8],
                      {"output": np.zeros((n, 2), np.float32), "input": c},
                      ["output"], lambda a: [a["input"] * np.array([1, -1], np.float32)], tol=(0, 0),
                      skip="the stored Copy.metal is newer than its stored header (REGISTER_UNARY_OP_CAST is not defined)"))
    h = RNG.standard_normal(n).astype(np.float16)
    cases.append(Case("pytorch", k + "Copy.metal", "copy_neg_dense_half_half", "unary functor on half",
                      [n], [8],
                      {"output": np.zeros(n, np.float16), "input": h},
                      ["output"], lambda a: [-a["input"]], tol=(0, 0),
                      skip="the stored Copy.metal is newer than its stored header (REGISTER_UNARY_OP_CAST is not defined)"))
    cases.append(Case("pytorch", k + "TriangularOps.metal", "triu_indices_long", "triu_indices(5, 5)",
                      [15], [8],
                      {"tensor": np.zeros((2, 15), np.int64), "col_offset": i64([0]), "m_first_row": i64([5]),
                       "col": i64([5]), "rectangle_size": i64([0]), "triu_size": i64([15])},
                      ["tensor"], lambda a: [np.stack(np.triu_indices(5)).astype(np.int64)], tol=(0, 0)))
    reps = np.array([2, 0, 3, 1], np.int32)
    cases.append(Case("pytorch", k + "Repeat.metal", "repeat_interleave_int32_t", "repeat_interleave",
                      [4], [4],
                      {"repeat_ptr": reps, "cumsum_ptr": np.cumsum(reps).astype(np.int64),
                       "result_ptr": np.zeros(6, np.int32)},
                      ["result_ptr"], lambda a: [np.repeat(np.arange(4, dtype=np.int32), a["repeat_ptr"])], tol=(0, 0)))
    fx = np.array([8.0, -0.75, 1.0, 3.0, 0.0, 1e-3, -96.5], np.float32)

    def frexp_ref(a):
        m, e = np.frexp(a["input"])
        return [m.astype(np.float32), e.astype(np.int32)]

    cases.append(Case("pytorch", k + "Frexp.metal", "frexp_kernel_float", "frexp (exponent through a pointer)",
                      [7], [7],
                      {"input": fx, "mantissa": np.zeros(7, np.float32), "exponent": np.zeros(7, np.int32)},
                      ["mantissa", "exponent"], frexp_ref, tol=(0, 0)))
    cases += softmax_cases(k)
    cases += search_and_count_cases(k)
    cases += cat_and_amp_cases(k)
    cases += im2col_renorm_cases(k)
    cases += more_pytorch_cases(k)
    return cases


def tril_params(row, col, offset):
    """The host's arguments for tril_indices(row, col, offset): the rows that
    hold 1..col entries form a trapezoid, the rest a full rectangle."""
    m_first_row = min(col, 1 + offset) if offset > 0 else int(row + offset > 0)
    m_last_row = max(0, min(col, row + offset))
    n_row_all = max(0, min(row, row + offset))
    n_row_trapezoid = m_last_row - m_first_row + 1
    trapezoid = (m_first_row + m_last_row) * n_row_trapezoid // 2
    size = trapezoid + max(0, n_row_all - n_row_trapezoid) * col
    return dict(row_offset=max(0, -offset), m_first_row=m_first_row, trapezoid_size=trapezoid, tril_size=size)


def upsample_params(in_shape, out_shape, scales):
    """UpsampleParams<5>: four ulong[5], float[3] scales (x, y, z), bool."""
    t = np.dtype([("input_strides", np.uint64, (5,)), ("input_sizes", np.uint64, (5,)),
                  ("output_strides", np.uint64, (5,)), ("output_sizes", np.uint64, (5,)),
                  ("scales", np.float32, (3,)), ("align_corners", np.bool_)], align=True)
    p = np.zeros(1, t)
    p["input_sizes"][0], p["output_sizes"][0] = in_shape, out_shape
    p["input_strides"][0] = np.array(np.zeros(in_shape).strides) // 8
    p["output_strides"][0] = np.array(np.zeros(out_shape).strides) // 8
    p["scales"][0] = scales
    return p


def more_pytorch_cases(k):
    cases = []
    for row, col, off in ((5, 4, 0), (6, 4, 1), (5, 4, -1)):
        tp = tril_params(row, col, off)
        size = tp["tril_size"]
        cases.append(Case("pytorch", k + "TriangularOps.metal", "tril_indices_long",
                          f"tril_indices({row}, {col}, {off}) (trapezoid + rectangle)",
                          [size], [8],
                          {"tensor": np.zeros((2, size), np.int64), "row_offset": i64([tp["row_offset"]]),
                           "m_first_row": i64([tp["m_first_row"]]), "col": i64([col]),
                           "trapezoid_size": i64([tp["trapezoid_size"]]), "tril_size": i64([size])},
                          ["tensor"], lambda a, row=row, col=col, off=off: [np.stack(np.tril_indices(row, off, col)).astype(np.int64)],
                          tol=(0, 0)))
    gx = np.concatenate([RNG.uniform(0.05, 12, 30), RNG.uniform(-4.9, -0.1, 8), [1.0, 2.0, 0.5, 30.0]]).astype(np.float32)
    px = np.concatenate([RNG.uniform(0.1, 30, 20), [0.5, 1.0, 2.5]]).astype(np.float32)
    tx = np.concatenate([px, RNG.uniform(-4.9, -0.1, 6)]).astype(np.float32)
    cases.append(Case("pytorch", k + "Gamma.metal", "trigamma_float_float", "trigamma (recurrence, asymptotic; reflection below 0)",
                      [tx.size], [16],
                      {"input": tx, "output": np.zeros(tx.size, np.float32)},
                      ["output"], lambda a: [np.array([trigamma64(float(v)) for v in a["input"]], np.float32)],
                      # Below 0 the kernel takes sin(M_PI_F * x) in float32: pi * x is off by
                      # ~|x| * 1e-7 rad, which pi^2 / sin^2 amplifies by 2 |cot(pi x)|.
                      tol=(5e-6, 1e-7)))
    for order in (2, 3):
        cases.append(Case("pytorch", k + "Gamma.metal", "polygamma_float_float",
                          f"polygamma, order {order} (Hurwitz zeta)", [px.size], [16],
                          {"input": px, "output": np.zeros(px.size, np.float32), "order": i64([order])},
                          ["output"],
                          lambda a, n=order: [np.array([(-1) ** (n + 1) * math.factorial(n) * hurwitz_zeta(n + 1, float(v))
                                                        for v in a["input"]], np.float32)], tol=(2e-6, 0)))
    # digamma for x > 0 shifts x to >= 10 and adds Cephes' asymptotic series,
    # but multiplies Cephes' coefficients (listed highest power first, for
    # polevl) by z^0..z^6, i.e. in reverse order: about +1e-6 too large
    # (4-5 ulp near x = 10; 1.1e-6 instead of ~0 at the root 1.4616).
    dx = np.array([10.01, 10.25, 10.5, 11.0, 12.0, 1.4616321, 3.7, 0.75, 25.0], np.float32)
    cases.append(Case("pytorch", k + "Gamma.metal", "digamma_float_float", "digamma for x > 0 (asymptotic series)",
                      [dx.size], [16],
                      {"input": dx, "output": np.zeros(dx.size, np.float32)},
                      ["output"], lambda a: [np.array([digamma64(float(v)) for v in a["input"]], np.float32)],
                      tol=(0, 5e-7),
                      mismatch="the kernel's calc_digamma_positive_domain applies Cephes' DIGAMMA_COEF in reverse order "
                               "(pow(z, i) * COEF[i] where Cephes' polevl means COEF[6 - i]); its output equals that "
                               "formula evaluated in float32, the right order agrees to 1 ulp"))
    cases.append(Case("pytorch", k + "Gamma.metal", "lgamma_float_float", "lgamma (c10::metal::log_gamma), incl. x < 0",
                      [gx.size], [16],
                      {"input": gx, "output": np.zeros(gx.size, np.float32)},
                      ["output"], lambda a: [np.array([math.lgamma(float(v)) for v in a["input"]], np.float32)],
                      tol=(1e-5, 1e-5)))
    # torch.histc(x, bins=7, min=-2, max=2): one thread per element, long counts
    # through c10::metal::AtomicType<long> (two 32-bit atomics).
    hx = np.concatenate([RNG.uniform(-2.5, 2.5, 90), [-2.0, 2.0, 0.0]]).astype(np.float32)
    nbins, lo, hi = 7, np.float32(-2.0), np.float32(2.0)

    def histc_ref(a):
        x = a["input"]
        inside = (x >= lo) & (x <= hi)
        b = np.floor((x[inside] - lo) * np.float32(nbins) / (hi - lo)).astype(np.int64)
        # The long counts are bound as the atomic_uint pairs the kernel sees.
        return [np.bincount(np.clip(b, 0, nbins - 1), minlength=nbins).astype(np.int64).view(np.uint32)]

    for variant, grid, tg, extra, flags in (
            ("global", hx.size, 16, {}, []),
            ("threadgroup", 32, 16, {"total_threads": scalar(32, np.uint32)}, ["--threadgroup-memory", f"0={nbins * 4}"])):
        cases.append(Case("pytorch", k + "HistogramKernel.metal", f"histc_atomic_{variant}_dense_float",
                          f"histc, {variant} atomics" + (" (grid-stride loop, threadgroup atomic_uint)" if extra else ""),
                          [grid], [tg],
                          dict({"input": hx, "counts": np.zeros(2 * nbins, np.uint32), "offsets": np.zeros(1, np.uint32),
                                "num_elements": scalar(hx.size, np.uint32), "num_bins": i64([nbins]),
                                "bin_edges": np.linspace(lo, hi, nbins + 1).astype(np.float32)}, **extra),
                          ["counts"], histc_ref, tol=(0, 0), flags=flags))
    # torch.histogramdd of 12 points in 2-D, unweighted (weight_stride -1),
    # each point's own row of local_out; offsets index the (12, 2) input.
    pts = RNG.uniform(-1.2, 1.2, (12, 2)).astype(np.float32)
    e0 = np.array([-1.0, -0.3, 0.2, 1.0], np.float32)
    e1 = np.array([-1.1, 0.0, 1.1], np.float32)
    nb2 = (e0.size - 1) * (e1.size - 1)

    def hist2d_ref(a):
        p = a["input_"].reshape(12, 2)
        rows = [np.histogramdd(p[i:i + 1], bins=[e0, e1])[0].reshape(-1) for i in range(12)]
        return [np.asarray(rows, np.float32).reshape(-1)]

    # The host's helper: element offsets of a strided (3, 4) view (strides 1, 3).
    cases.append(Case("pytorch", k + "HistogramKernel.metal", "kernel_index_offset", "element offsets of a strided view",
                      [12], [8],
                      {"strides": np.array([1, 3], np.uint32), "data_offsets": np.zeros(12, np.uint32),
                       "iter_shape": np.array([3, 4], np.uint32), "num_dimensions": scalar(2, np.uint32)},
                      ["data_offsets"],
                      lambda a: [(np.arange(3)[:, None] * 1 + np.arange(4)[None, :] * 3).reshape(-1).astype(np.uint32)],
                      tol=(0, 0)))
    cases.append(Case("pytorch", k + "HistogramKernel.metal", "histogramdd_float", "2-D histogram, unweighted",
                      [12], [8],
                      {"input_": pts, "weight": np.zeros(1, np.float32), "local_out": np.zeros(12 * nb2, np.float32),
                       "offsets": np.arange(24, dtype=np.uint32), "num_dims": np.array([2], np.uint64),
                       "bin_seq": np.concatenate([e0, e1]), "num_bin_edges": i64([e0.size, e1.size]),
                       "local_out_strides": i64([nb2, e1.size - 1, 1]), "algorithm": np.array([2], np.uint8),
                       "weight_stride": i64([-1])},
                      ["local_out"], hist2d_ref, tol=(0, 0)))
    # nn.LayerNorm over rows of 100: one threadgroup of 32 per row, 4 reads a thread.
    lx = RNG.standard_normal((3, 100)).astype(np.float32) * 2 + 0.5
    lw = RNG.standard_normal(100).astype(np.float32)
    lb = RNG.standard_normal(100).astype(np.float32)

    def ln_ref(a):
        x = a["input"].astype(np.float64)
        mu = x.mean(1, keepdims=True)
        rstd = 1 / np.sqrt(x.var(1, keepdims=True) + 1e-5)
        return [((x - mu) * rstd * a["weight"] + a["bias"]).astype(np.float32),
                mu.reshape(-1).astype(np.float32), rstd.reshape(-1).astype(np.float32)]

    cases.append(Case("pytorch", k + "LayerNorm.metal", "layer_norm_single_row_float", "layer norm of rows, mean and rstd",
                      [96], [32],
                      {"input": lx, "output": np.zeros_like(lx), "meanOut": np.zeros(3, np.float32),
                       "rstdTensor": np.zeros(3, np.float32), "axis_size": scalar(100, np.uint32),
                       "epsilon": scalar(1e-5, np.float32), "use_weight": scalar(1, np.int32),
                       "use_bias": scalar(1, np.int32), "weight": lw, "bias": lb},
                      ["output", "meanOut", "rstdTensor"], ln_ref, tol=(1e-4, 1e-5)))
    cases += upsample_cases(k)
    cases += embedding_cases(k)
    cases += distance_cases(k)
    cases += norm_cases(k)
    cases += compare_cases(k)
    cases += activation_special_cases(k)
    cases += pad_cases(k)
    cases += pooling_cases(k)
    cases += log_softmax_cases(k)
    cases += softmax_kernel_cases(k)
    cases += softmax_kernel2_cases(k)
    cases += factory_cases(k)
    cases += unique_segment_cases(k)
    cases += coalesce_cases(k)
    cases += grid_sampler_cases(k)
    cases += ctc_cases(k)
    cases += linalg_cases(k)
    cases += attention_cases(k)
    return cases


def attention_cases(k):
    """Attention.metal's sdpa_vector (after MLX): a threadgroup of 32
    simdgroups per (batch * head, query), keys strided by 32 per simdgroup,
    online softmax, then a threadgroup combine."""
    bsz, heads, kv_heads, ql, n, d = 2, 4, 2, 3, 45, 64
    q = RNG.standard_normal((bsz, heads, ql, d)).astype(np.float32)
    kk = RNG.standard_normal((bsz, kv_heads, n, d)).astype(np.float32)
    v = RNG.standard_normal((bsz, kv_heads, n, d)).astype(np.float32)
    mask = RNG.random((bsz * heads, ql, n)) < 0.75
    scale = 1 / math.sqrt(d)

    def ref(a, masked):
        out = np.zeros((bsz, heads, ql, d))
        for b, h in np.ndindex(bsz, heads):
            kv = h // (heads // kv_heads)
            sc = scale * (a["queries"][b, h].astype(np.float64) @ a["keys"][b, kv].T)
            if masked:
                sc = np.where(a["mask"][b * heads + h], sc, -np.inf)
            w = np.exp(sc - sc.max(1, keepdims=True))
            out[b, h] = (w / w.sum(1, keepdims=True)) @ a["values"][b, kv]
        return [out.astype(np.float32)]

    cases = []
    for masked in (False, True):
        cases.append(Case("pytorch", k + "Attention.metal", "sdpa_vector_float_64_64",
                          "SDPA, 3 queries per head, 45 keys, GQA 4:2, batch 2" + (", boolean mask" if masked else ""),
                          [bsz * heads, ql, 1], [1024],
                          {"queries": q, "keys": kk, "values": v, "out": np.zeros((bsz, heads, ql, d), np.float32),
                           "gqa_factor": scalar(heads // kv_heads, np.uint32), "N": scalar(n, np.uint32),
                           "qkv_head_strides": np.array([ql * d, n * d, n * d, 0], np.uint32),
                           "qkv_seq_strides": np.array([d, d, d, 0], np.uint32), "scale": scalar(scale, np.float32),
                           "mask": mask, "mask_strides": np.array([ql * n, 1, n, 0], np.uint32),
                           "has_mask": np.array([masked]),
                           "qkv_batch_strides_heads": np.array([heads * ql * d, kv_heads * n * d, kv_heads * n * d, heads],
                                                               np.uint32)},
                          ["out"], lambda a, m=masked: ref(a, m), tol=(1e-5, 1e-6), flags=["--dispatch", "threadgroups"]))
    # The tiled `attention` kernel: 32-query tiles, key tiles of 32 (one
    # batch, two heads sharing one KV head: it is slow to simulate).
    ql2, n2 = 40, 45
    q2 = RNG.standard_normal((1, 2, ql2, d)).astype(np.float32)
    k2 = RNG.standard_normal((1, 1, n2, d)).astype(np.float32)
    v2 = RNG.standard_normal((1, 1, n2, d)).astype(np.float32)

    def ref2(a):
        out = np.zeros((1, 2, ql2, d))
        for h in range(2):
            sc = scale * (a["Q"][0, h].astype(np.float64) @ a["K"][0, 0].T)
            w = np.exp(sc - sc.max(1, keepdims=True))
            out[0, h] = (w / w.sum(1, keepdims=True)) @ a["V"][0, 0]
        return [out.astype(np.float32)]

    cases.append(Case("pytorch", k + "Attention.metal", "attention_float_bq32_bk32_bd64_wm4_wn1",
                      "tiled attention, 40 queries x 45 keys, 2 heads on 1 KV head",
                      [math.ceil(ql2 / 32), 2, 1], [32, 4, 1],
                      {"Q": q2, "K": k2, "V": v2, "O": np.zeros((1, 2, ql2, d), np.float32),
                       "qL": scalar(ql2, np.uint32), "kL": scalar(n2, np.uint32), "gqa_factor": scalar(2, np.uint32),
                       "scale": scalar(scale, np.float32), "NK": scalar(math.ceil(n2 / 32), np.uint32),
                       "Q_strides": np.array([2 * ql2 * d, ql2 * d, d, 0], np.uint32),
                       "K_strides": np.array([n2 * d, n2 * d, d, 0], np.uint32),
                       "V_strides": np.array([n2 * d, n2 * d, d, 0], np.uint32),
                       "O_strides": np.array([2 * ql2 * d, ql2 * d, d, 0], np.uint32)},
                      ["O"], ref2, tol=(1e-5, 1e-6), flags=["--dispatch", "threadgroups"]))
    return cases


def linalg_cases(k):
    """LinearAlgebra.metal's tiled (16 x 16 threadgroup tiles) matmuls for
    integer and small cases, strides in elements as (row, column) pairs."""
    cases = []
    m, kk, n = 20, 33, 24
    a = RNG.integers(-9, 9, size=(m, kk)).astype(np.int32)
    b = RNG.integers(-9, 9, size=(n, kk)).astype(np.int32).T  # a transposed (K, N) view
    bias = RNG.integers(-50, 50, size=(m, n)).astype(np.int32)
    grid = [math.ceil(n / 16) * 16, math.ceil(m / 16) * 16]
    cases.append(Case("pytorch", k + "LinearAlgebra.metal", "matmul_int", "int matmul 20x33 @ 33x24 (B a transposed view)",
                      grid, [16, 16],
                      {"mat1Data": a, "mat2Data": np.ascontiguousarray(b.T), "outputData": np.zeros((m, n), np.int32),
                       "strides": u64([[kk, 1], [1, kk], [n, 1]]), "sizes": np.array([m, kk, n, 0], np.uint32)},
                      ["outputData"], lambda args: [(args["mat1Data"].astype(np.int64) @ args["mat2Data"].T).astype(np.int32)],
                      tol=(0, 0)))
    af = RNG.standard_normal((m, kk)).astype(np.float32)
    bf = RNG.standard_normal((kk, n)).astype(np.float32)
    cf = RNG.standard_normal((m, n)).astype(np.float32)
    cases.append(Case("pytorch", k + "LinearAlgebra.metal", "addmm_float", "addmm: 0.5 * A @ B + 2 * C",
                      grid, [16, 16],
                      {"mat1Data": af, "mat2Data": bf, "outputData": np.zeros((m, n), np.float32), "biasData": cf,
                       "alpha_beta": np.array([0.5, 2.0], np.float32),
                       "strides": u64([[kk, 1], [n, 1], [n, 1], [n, 1]]), "sizes": np.array([m, kk, n, 0], np.uint32)},
                      ["outputData"],
                      lambda args: [(0.5 * (args["mat1Data"].astype(np.float64) @ args["mat2Data"]) + 2 * args["biasData"])
                                    .astype(np.float32)], tol=(1e-5, 1e-5)))
    # torch.bmm: strides[0..2] mat1 (col, row, batch), [3..5] mat2, [6..8] out.
    bt = 3
    ab = RNG.standard_normal((bt, 10, 19)).astype(np.float32)
    bb = RNG.standard_normal((bt, 19, 7)).astype(np.float32)
    cases.append(Case("pytorch", k + "LinearAlgebra.metal", "naive_bmm_float", "bmm 3 x (10x19 @ 19x7)",
                      [1, 1, bt], [16, 16, 1],
                      {"mat1Data": ab, "mat2Data": bb, "outputData": np.zeros((bt, 10, 7), np.float32),
                       "strides": u64([1, 19, 190, 1, 7, 133, 1, 7, 70]), "sizes": np.array([10, 19, 7, bt], np.uint32)},
                      ["outputData"], lambda args: [(args["mat1Data"].astype(np.float64) @ args["mat2Data"]).astype(np.float32)],
                      tol=(1e-5, 1e-5), flags=["--dispatch", "threadgroups"]))
    # torch.linalg.cholesky's diagonal-block step on a whole 20 x 20 matrix
    # (one block, k = 0), two batches, 256 threads: the lower variant reads
    # A column-major, factors the lower triangle in threadgroup memory and
    # writes the tile back (upper triangle untouched).
    nn = 20
    spd = []
    for _ in range(2):
        g = RNG.standard_normal((nn, nn))
        spd.append(g @ g.T + nn * np.eye(nn))
    spd = np.array(spd, np.float32)

    def chol_ref(args):
        out = []
        for a_ in args["A"].astype(np.float64):
            tile = a_.T  # read column-major
            tile = np.tril(np.linalg.cholesky(tile)) + np.triu(tile, 1)
            out.append(tile.T)
        return [np.array(out, np.float32), np.zeros(2, np.int32)]

    cases.append(Case("pytorch", k + "LinearAlgebra.metal", "factorDiagonalBlockL",
                      "Cholesky of a 20x20 SPD block in threadgroup memory, 2 batches (--check memory)",
                      [2, 1, 1], [16, 16, 1],
                      {"A": spd.copy(), "info": np.zeros(2, np.int32), "N": scalar(nn, np.uint32),
                       "NB": scalar(32, np.uint32), "k": scalar(0, np.uint32)},
                      ["A", "info"], chol_ref, tol=(1e-4, 1e-5), flags=["--dispatch", "threadgroups", "--check", "memory"]))
    cases.append(checked(cases[-1], "library", "data-race",
                         "blockReduceSum's first 8 lanes all store their simd_sum to sharedScratch[0] (equal values)"))
    # Not positive definite (a -1 on the diagonal at 3): thread 0 records
    # info = 4 and returns, the other 255 threads go on to the next barrier.
    npd = np.eye(nn, dtype=np.float32)[None].copy()
    npd[0, 3, 3] = -1.0
    cases.append(Case("pytorch", k + "LinearAlgebra.metal", "factorDiagonalBlockL",
                      "Cholesky step of a non-positive-definite block (info = 4)",
                      [1, 1, 1], [16, 16, 1],
                      {"A": npd, "info": np.zeros(1, np.int32), "N": scalar(nn, np.uint32), "NB": scalar(32, np.uint32),
                       "k": scalar(0, np.uint32)},
                      ["info"], lambda args: [np.array([4], np.int32)], tol=(0, 0),
                      flags=["--dispatch", "threadgroups", "--check", "memory"],
                      finding=("library", "barrier-divergence",
                               "on a non-positive pivot thread 0 sets info and returns inside the loop while the "
                               "other threads wait at the next threadgroup_barrier (a hang or undefined on a GPU)")))
    # torch.linalg.lu_factor's pivots (1-based) to a permutation, per batch.
    piv = np.array([[3, 3, 4, 4], [1, 4, 3, 4]], np.int64)
    up = np.zeros(1, np.dtype([("perm_batch_stride", np.uint32), ("pivots_batch_stride", np.uint32), ("dim_size", np.uint32)]))
    up[0] = (4, 4, 4)

    def perm_ref(args):
        out = []
        for row in args["pivots"]:
            p = list(range(4))
            for i, j in enumerate(row - 1):
                p[i], p[j] = p[j], p[i]
            out.append(p)
        return [np.array(out, np.int32)]

    cases.append(Case("pytorch", k + "LinearAlgebra.metal", "unpack_pivots_int_long",
                      "LU pivots (long) to permutations (int), 2 batches",
                      [2], [2],
                      {"perm": np.tile(np.arange(4, dtype=np.int32), (2, 1)), "pivots": piv, "params": up},
                      ["perm"], perm_ref, tol=(0, 0)))
    return cases


def ctc_alpha_ref(lp, targets, in_lens, tg_lens, blank, max_tl):
    """CTC forward variables (Graves et al. 2006, eq. 6-8) in log space:
    log_alpha (batch, T, 2 * max_target + 1), -inf outside the valid region,
    and the negative log likelihood."""
    bsz, tmax, _ = lp.shape
    la = np.full((bsz, tmax, 2 * max_tl + 1), -np.inf)
    nll = np.zeros(bsz)
    for b in range(bsz):
        tl, il = tg_lens[b], in_lens[b]
        ext = [blank if s % 2 == 0 else targets[b][s // 2] for s in range(2 * tl + 1)]
        la[b, 0, 0] = lp[b, 0, blank]
        if tl:
            la[b, 0, 1] = lp[b, 0, ext[1]]
        for t in range(1, il):
            for s in range(2 * tl + 1):
                terms = [la[b, t - 1, s]]
                if s > 0:
                    terms.append(la[b, t - 1, s - 1])
                if s > 1 and ext[s - 2] != ext[s]:
                    terms.append(la[b, t - 1, s - 2])
                la[b, t, s] = np.logaddexp.reduce(terms) + lp[b, t, ext[s]]
        ends = [la[b, il - 1, 2 * tl]] + ([la[b, il - 1, 2 * tl - 1]] if tl else [])
        nll[b] = -np.logaddexp.reduce(ends)
    return la, nll


def ctc_cases(k):
    """nn.CTCLoss forward: log_alpha over (time, extended target), one
    threadgroup row (y) per batch item, threads over s. The time loop
    reads the neighbours' log_alpha[t - 1] in device memory after a
    threadgroup_barrier(mem_flags::mem_none) (ported from __syncthreads);
    the simulator's race check accepts that barrier as ordering device
    memory, so nothing is reported here."""
    bsz, tmax, nc, blank = 2, 7, 5, 0
    logits = RNG.standard_normal((tmax, bsz, nc))
    lp = (logits - np.log(np.exp(logits).sum(-1, keepdims=True))).astype(np.float32)  # (T, N, C) as torch
    targets = np.array([[1, 3, 3], [2, 4, 0]], np.int64)
    tg_lens = np.array([3, 2], np.int64)
    in_lens = np.array([7, 5], np.int64)
    max_tl = 3
    width = 2 * max_tl + 1

    def ref(a):
        la, nll = ctc_alpha_ref(a["log_probs_data"].transpose(1, 0, 2).astype(np.float64), targets, in_lens, tg_lens,
                                blank, max_tl)
        return [la.astype(np.float32), nll.astype(np.float32)]

    args = {"log_alpha_data": np.zeros((bsz, tmax, width), np.float32), "log_probs_data": lp,
            "input_lengths": in_lens, "max_input_length": i64([tmax]), "targets_data": targets,
            "target_lengths": tg_lens, "max_target_length": i64([max_tl]),
            "neg_log_likelihood_data": np.zeros(bsz, np.float32),
            "lp_input_stride": i64([bsz * nc]), "lp_batch_stride": i64([nc]), "lp_char_stride": i64([1]),
            "la_batch_stride": i64([tmax * width]), "la_input_stride": i64([width]), "la_target_stride": i64([1]),
            "tg_batch_offsets": i64([0, 3]), "tg_target_stride": i64([1]), "batch_size": i64([bsz]),
            "BLANK": i64([blank])}
    return [Case("pytorch", k + "LossCTC.metal", "ctc_loss_log_alpha_mps_kernel",
                 "CTC loss forward: log_alpha and NLL (targets 3 and 2, input lengths 7 and 5)",
                 [1, 1], [8, 2], args, ["log_alpha_data", "neg_log_likelihood_data"], ref, tol=(1e-5, 1e-5),
                 flags=["--dispatch", "threadgroups"])]


def grid_sample_3d_ref(x, grid, mode, padding, align):
    """F.grid_sample on 5-D input: grid (N, D', H', W', 3) holds (x, y, z)
    in [-1, 1]; padding 0 zeros, 1 border; out-of-range corners add nothing."""
    n, c, d, h, w = x.shape
    out = np.zeros((n, c) + grid.shape[1:4], np.float64)

    def unnorm(v, size):
        v = v.astype(np.float64)
        return (v + 1) / 2 * (size - 1) if align else ((v + 1) * size - 1) / 2

    for b in range(n):
        for (i, j, l) in np.ndindex(*grid.shape[1:4]):
            gx, gy, gz = grid[b, i, j, l]
            ix, iy, iz = unnorm(gx, w), unnorm(gy, h), unnorm(gz, d)
            if padding == 1:
                ix, iy, iz = np.clip(ix, 0, w - 1), np.clip(iy, 0, h - 1), np.clip(iz, 0, d - 1)
            if mode == 1:
                cx, cy, cz = int(np.rint(ix)), int(np.rint(iy)), int(np.rint(iz))
                if 0 <= cx < w and 0 <= cy < h and 0 <= cz < d:
                    out[b, :, i, j, l] = x[b, :, cz, cy, cx]
                continue
            x0, y0, z0 = int(np.floor(ix)), int(np.floor(iy)), int(np.floor(iz))
            for dz, dy, dx in np.ndindex(2, 2, 2):
                cx, cy, cz = x0 + dx, y0 + dy, z0 + dz
                wt = (ix - x0 if dx else 1 - (ix - x0)) * (iy - y0 if dy else 1 - (iy - y0)) * \
                    (iz - z0 if dz else 1 - (iz - z0))
                if 0 <= cx < w and 0 <= cy < h and 0 <= cz < d:
                    out[b, :, i, j, l] += wt * x[b, :, cz, cy, cx]
    return out.astype(np.float32)


def grid_sampler_cases(k):
    """F.grid_sample, 5-D: one thread per (w_out, d_out * h_out, n * c)."""
    cases = []
    x = RNG.standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
    grid = RNG.uniform(-1.15, 1.15, (2, 3, 2, 4, 3)).astype(np.float32)
    out_shape = (2, 3, 3, 2, 4)

    def strides(shape):
        return u64(np.array(np.zeros(shape).strides) // 8)

    base = {"inputData": x, "gridData": grid, "input_sizes": u64(x.shape), "output_sizes": u64(out_shape),
            "input_strides": strides(x.shape), "output_strides": strides(out_shape), "grid_strides": strides(grid.shape)}
    for mode, padding, align, what in ((0, 0, False, "trilinear, zeros padding"),
                                       (1, 0, True, "nearest, zeros padding, align_corners"),
                                       (0, 1, True, "trilinear, border padding, align_corners")):
        args = dict(base, outputData=np.zeros(out_shape, np.float32), interpolation_mode=scalar(mode, np.int32),
                    padding_mode=scalar(padding, np.int32), align_corners=np.array([align]))
        ref = (lambda a, m=mode, p=padding, al=align: [grid_sample_3d_ref(a["inputData"], a["gridData"], m, p, al)])
        cases.append(Case("pytorch", k + "GridSampler3D.metal", "grid_sampler_3d_float", f"grid_sample 3-D, {what}",
                          [4, 6, 6], [4, 6, 1], args, ["outputData"], ref, tol=(1e-5, 1e-6),
                          finding=("library", "out-of-bounds read of `inputData`",
                                   "with border/reflection padding the kernel reads all 8 corners unchecked, so a "
                                   "coordinate clipped to the last index reads one past it (weight 0; a NaN there "
                                   "would poison the result)") if padding else None))
    # The same border-padding launch unchecked: the values agree.
    cases.append(Case("pytorch", k + "GridSampler3D.metal", "grid_sampler_3d_float",
                      "grid_sample 3-D, trilinear, border padding (--check none)",
                      [4, 6, 6], [4, 6, 1], dict(args), ["outputData"], ref, tol=(1e-5, 1e-6), flags=["--check", "none"]))
    return cases


def coalesce_cases(k):
    """Sparse coalesce: the first thread of each run of equal sorted indices
    sums its run and takes an output slot from an atomic counter, so the
    slot order is unspecified: outputs are compared sorted by index."""
    idx = np.sort(RNG.integers(0, 15, size=30)).astype(np.uint64)
    vals = RNG.standard_normal(30).astype(np.float32)
    uniq = np.unique(idx)

    def canon(outs):
        n = int(outs["unique_count"].reshape(-1)[0])
        order = np.argsort(outs["out_indices"][:n], kind="stable")
        return {"out_indices": outs["out_indices"][:n][order], "out_values": outs["out_values"][:n][order],
                "unique_count": outs["unique_count"]}

    def ref(a):
        sums = np.array([a["in_values"][a["in_indices"] == u].astype(np.float64).sum() for u in uniq], np.float32)
        return [uniq, sums, np.array([uniq.size], np.uint32)]

    return [Case("pytorch", k + "Sparse.metal", "coalesce_kernel_float", "sparse coalesce (atomic output slots, compared sorted)",
                 [30], [8],
                 {"in_indices": idx, "in_values": vals, "out_indices": np.zeros(30, np.uint64),
                  "out_values": np.zeros(30, np.float32), "nnz": scalar(30, np.uint32),
                  "unique_count": np.zeros(1, np.uint32)},
                 ["out_indices", "out_values", "unique_count"], ref, tol=(1e-6, 1e-6), canon=canon)]


def unique_segment_cases(k):
    cases = []
    # torch.unique(x, return_inverse=True, return_counts=True) after a sort:
    # boundaries mask, emit (fed NumPy's inclusive scan of the mask), counts,
    # inverse.
    x = RNG.integers(0, 12, size=40).astype(np.float32)
    order = np.argsort(x, kind="stable")
    srt = x[order]
    mask = np.concatenate([[1], (srt[1:] != srt[:-1]).astype(np.int32)]).astype(np.int32)
    scan = np.cumsum(mask).astype(np.int32)
    uniq, first, counts = np.unique(srt, return_index=True, return_counts=True)
    nu = uniq.size
    cases.append(Case("pytorch", k + "Unique.metal", "unique_mark_boundaries_float", "unique: group boundaries of sorted values",
                      [40], [16],
                      {"sorted": srt, "mask": np.zeros(40, np.int32), "numel": np.array([40], np.uint64)},
                      ["mask"], lambda a: [np.concatenate([[1], (a["sorted"][1:] != a["sorted"][:-1])]).astype(np.int32)],
                      tol=(0, 0)))
    cases.append(Case("pytorch", k + "Unique.metal", "unique_emit_float_32", "unique: values and first positions",
                      [40], [16],
                      {"sorted": srt, "mask": mask, "scan": scan, "unique_values": np.zeros(nu, np.float32),
                       "bound_pos": np.zeros(nu, np.int64), "numel": np.array([40], np.uint64)},
                      ["unique_values", "bound_pos"],
                      lambda a: [np.unique(a["sorted"]), np.unique(a["sorted"], return_index=True)[1].astype(np.int64)],
                      tol=(0, 0)))
    cases.append(Case("pytorch", k + "Unique.metal", "unique_counts", "unique: counts from first positions",
                      [nu], [8],
                      {"bound_pos": first.astype(np.int64), "counts": np.zeros(nu, np.int64),
                       "num_unique": np.array([nu], np.uint64), "numel": np.array([40], np.uint64)},
                      ["counts"], lambda a: [np.diff(np.append(a["bound_pos"], 40)).astype(np.int64)], tol=(0, 0)))
    cases.append(Case("pytorch", k + "Unique.metal", "unique_inverse_32", "unique: inverse indices through the sort permutation",
                      [40], [16],
                      {"sort_idx": order.astype(np.int64), "scan": scan, "inverse": np.zeros(40, np.int64),
                       "numel": np.array([40], np.uint64)},
                      ["inverse"], lambda _a: [np.unique(x, return_inverse=True)[1].astype(np.int64)], tol=(0, 0)))
    # torch.searchsorted(sorted_sequence, values, sorter=...): boundaries
    # unsorted in memory, read through the sorter permutation; 2-D, per row.
    bd = RNG.standard_normal((3, 8)).astype(np.float32)
    sorter = np.argsort(bd, axis=1).astype(np.int64)
    vals = RNG.standard_normal((3, 5)).astype(np.float32)
    vals[1, 2] = np.sort(bd[1])[3]

    def sorter_ref(a, side):
        return [np.stack([np.searchsorted(a["data_bd"][r][sorter[r]], a["data_in"][r], side=side) for r in range(3)])
                .astype(np.int64)]

    for right, side in ((0, "left"), (1, "right")):
        cases.append(Case("pytorch", k + "Bucketization.metal", "searchsorted_float_long_sorter",
                          f"searchsorted with sorter, 2-D boundaries, side={side}",
                          [16, 1], [16, 1],
                          {"data_in": vals, "data_bd": bd, "data_out": np.zeros((3, 5), np.int64), "idim_in": i64([5]),
                           "idim_bd": i64([8]), "numel_in": i64([15]), "right": i64([right]),
                           "is_1d_boundaries": i64([0]), "data_sort": sorter.reshape(-1)},
                          ["data_out"], lambda a, side=side: sorter_ref(a, side), tol=(0, 0)))
    # torch.segment_reduce(data (2, 7, 3), reduce, lengths (2, 3), axis=1).
    data = RNG.standard_normal((2, 7, 3)).astype(np.float32)
    data[1, 5, 2] = np.nan
    lengths = np.array([[2, 0, 5], [3, 3, 1]], np.int32)
    cums = np.concatenate([np.zeros((2, 1), np.int32), np.cumsum(lengths, 1)], 1).astype(np.int32)

    def seg_ref(a, fn, empty):
        out = np.zeros((2, 3, 3), np.float64)
        for o in range(2):
            for sgi in range(3):
                seg = a["values_data"][o, cums[o, sgi]:cums[o, sgi + 1]].astype(np.float64)
                out[o, sgi] = fn(seg, axis=0) if seg.shape[0] else empty
        return [out.astype(np.float32)]

    for rtype, name, fn, empty in ((3, "sum", np.sum, 0.0), (0, "max", np.max, -np.inf), (4, "prod", np.prod, 1.0)):
        cases.append(Case("pytorch", k + "SegmentReduce.metal", "segment_reduce_forward_float",
                          f"segment_reduce {name} over dim 1 (an empty segment; NaN propagates)",
                          [2 * 3 * 3], [8],
                          {"output_data": np.zeros((2, 3, 3), np.float32), "values_data": data,
                           "lengths_cumsum_data": cums, "lengths_data": lengths, "segment_count": i64([3]),
                           "outer_offset": i64([2]), "inner_offset": i64([3]), "data_size_axis": i64([7]),
                           "reduction_type": scalar(rtype, np.int32), "initial_value": scalar(0, np.float32),
                           "is_initial_set": np.array([False])},
                          ["output_data"], lambda a, fn=fn, empty=empty: seg_ref(a, fn, empty), tol=(1e-5, 1e-6)))
    return cases


def softmax_kernel_cases(k):
    """Softmax.metal's contiguous-row kernels (rows of dim_size, one
    threadgroup a row) and the per-thread online strided one. -inf entries
    take safe_exp_diff's zero."""
    cases = []
    a4 = (RNG.standard_normal((3, 256)) * 2).astype(np.float32)
    a4[1, 7] = -np.inf
    cases.append(Case("pytorch", k + "Softmax.metal", "softmax_single_pass_float_4", "softmax, rows of 256 = 64 threads x 4 reads",
                      [3], [64],
                      {"input": a4, "output": np.zeros_like(a4), "dim_size": scalar(256, np.uint32)},
                      ["output"], lambda a: [softmax_ref(a["input"], 1, False)], tol=(1e-5, 1e-7),
                      flags=["--dispatch", "threadgroups"]))
    # softmax_looped reads whole strides of tptg * 4 (no tail) and reduces
    # all 32 scratch slots: rows of 8192 with 1024 threads.
    a1 = (RNG.standard_normal((2, 1000)) * 3).astype(np.float32)
    a8 = (RNG.standard_normal((2, 8192)) * 3).astype(np.float32)
    for name, tg, arr in (("softmax_looped_float", 1024, a8), ("softmax_general_float", 96, a1)):
        cases.append(Case("pytorch", k + "Softmax.metal", name, f"softmax, rows of {arr.shape[1]}, {tg} threads",
                          [2], [tg],
                          {"input": arr, "output": np.zeros_like(arr), "dim_size": scalar(arr.shape[1], np.uint32)},
                          ["output"], lambda a: [softmax_ref(a["input"], 1, False)], tol=(1e-5, 1e-8),
                          flags=["--dispatch", "threadgroups"]))
    x = RNG.standard_normal((4, 6, 5)).astype(np.float32)
    x[2, 3, 1] = -np.inf
    cases.append(Case("pytorch", k + "Softmax.metal", "softmax_strided_outer_float",
                      "softmax over dim 1 of (4, 6, 5), online max/sum per thread",
                      [20], [8],
                      {"input": x, "output": np.zeros_like(x), "params": np.array([6, 5, 5, 20], np.uint32),
                       "ndim_other": scalar(2, np.uint32), "sizes_other": np.array([4, 5], np.uint32),
                       "input_strides_other": np.array([30, 1], np.uint32),
                       "output_strides_other": np.array([30, 1], np.uint32)},
                      ["output"], lambda a: [softmax_ref(a["input"], 1, False)], tol=(1e-5, 1e-7)))
    return cases


def softmax2_params(axis, sa, sb, sc, outer_sizes, oa, ob, oc):
    """SoftMaxKernel.h's SoftmaxParams: six uints and four uint[15]."""
    t = np.dtype([("axis_size", np.uint32), ("ndim", np.uint32), ("stride_a", np.uint32), ("stride_b", np.uint32),
                  ("stride_c", np.uint32), ("num_chunks", np.uint32), ("outer_sizes", np.uint32, (15,)),
                  ("outer_strides_a", np.uint32, (15,)), ("outer_strides_b", np.uint32, (15,)),
                  ("outer_strides_c", np.uint32, (15,))])
    p = np.zeros(1, t)
    p["axis_size"], p["ndim"], p["stride_a"], p["stride_b"], p["stride_c"] = axis, len(outer_sizes) + 1, sa, sb, sc
    for name, vals in (("outer_sizes", outer_sizes), ("outer_strides_a", oa), ("outer_strides_b", ob),
                       ("outer_strides_c", oc)):
        p[name][0, :len(vals)] = vals
    return p


def softmax_kernel2_cases(k):
    """SoftMaxKernel.metal: one threadgroup a row, 4 values a thread, rows
    addressed through outer sizes/strides (a: input, b: output, c: grad)."""
    cases = []
    # Softmax over dim 0 of a (50, 3) tensor: three rows of stride 3.
    x = RNG.standard_normal((50, 3)).astype(np.float32)
    cases.append(Case("pytorch", k + "SoftMaxKernel.metal", "softmax_forward_single_row_float",
                      "softmax over dim 0 (strided reads, contiguous writes)",
                      [3], [16],
                      {"input": x, "output": np.zeros((3, 50), np.float32),
                       "params": softmax2_params(50, 3, 1, 1, [3], [1], [50], [50])},
                      ["output"], lambda a: [softmax_ref(a["input"].T, 1, False)], tol=(1e-5, 1e-7),
                      flags=["--dispatch", "threadgroups"]))
    # Backward of softmax (dx = y * (dy - sum(dy * y))) and of log_softmax
    # (dx = dy - exp(y) * sum(dy)) over rows of 64, contiguous. Rows are
    # whole multiples of 4 * 16: with a tail, the softmax backward builds
    # `result` from y_vals/dy_vals entries it never loaded (values then
    # unused), which the sanitizer reports.
    y = softmax_ref(RNG.standard_normal((4, 64)).astype(np.float32), 1, False)
    dy = RNG.standard_normal((4, 64)).astype(np.float32)
    p = softmax2_params(64, 1, 1, 1, [4], [64], [64], [64])
    cases.append(Case("pytorch", k + "SoftMaxKernel.metal", "softmax_backward_single_row_float", "softmax backward, rows of 64",
                      [4], [16],
                      {"grad_output": dy, "output": y, "grad_input": np.zeros_like(y), "params": p},
                      ["grad_input"],
                      lambda a: [(a["output"] * (a["grad_output"] - (a["grad_output"].astype(np.float64) * a["output"])
                                                 .sum(1, keepdims=True))).astype(np.float32)],
                      tol=(1e-5, 1e-6), flags=["--dispatch", "threadgroups"]))
    ly = softmax_ref(RNG.standard_normal((4, 64)).astype(np.float32), 1, True)
    cases.append(Case("pytorch", k + "SoftMaxKernel.metal", "log_softmax_backward_single_row_float",
                      "log_softmax backward, rows of 64",
                      [4], [16],
                      {"grad_output": dy, "output": ly, "grad_input": np.zeros_like(ly), "params": p},
                      ["grad_input"],
                      lambda a: [(a["grad_output"] - np.exp(a["output"].astype(np.float64))
                                  * a["grad_output"].astype(np.float64).sum(1, keepdims=True)).astype(np.float32)],
                      tol=(1e-5, 1e-6), flags=["--dispatch", "threadgroups"]))
    return cases


def int_linspace_ref(start, end, steps):
    """torch.linspace for integer dtypes: the exact value from the nearer
    end (start for i < steps / 2), truncated toward zero."""
    from fractions import Fraction
    out = []
    for i in range(steps):
        if i < steps // 2:
            v = start + Fraction((end - start) * i, steps - 1)
        else:
            v = end - Fraction((end - start) * (steps - 1 - i), steps - 1)
        out.append(math.trunc(v))
    return np.array(out, np.int64)


def factory_cases(k):
    cases = []
    for start, end, steps in ((-7, 20, 10), (100, -3, 7), (-(2 ** 40), 2 ** 41 + 5, 9)):
        dist = abs(end - start)
        params = np.array([np.int64(start).view(np.uint64), np.int64(end).view(np.uint64),
                           dist // (steps - 1), dist % (steps - 1)], np.uint64)
        cases.append(Case("pytorch", k + "RangeFactories.metal", "linspace_integral_long_i64",
                          f"integer linspace({start}, {end}, {steps}) (exact, from the nearer end)",
                          [steps], [8],
                          {"out": np.zeros(steps, np.int64), "params": params, "p": i64([steps, 1])},
                          ["out"], lambda a, se=(start, end, steps): [int_linspace_ref(*se)], tol=(0, 0)))
    cases.append(Case("pytorch", k + "RangeFactories.metal", "arange_long_i32", "arange(-5, step 3) into every other element",
                      [10], [8],
                      {"out": np.full(20, 99, np.int64), "se": i64([-5, 3]), "stride": scalar(2, np.int32)},
                      ["out"], lambda a: [np.where(np.arange(20) % 2 == 0, -5 + 3 * (np.arange(20) // 2), 99).astype(np.int64)],
                      tol=(0, 0)))
    # arange into a transposed (3, 4) view of a (4, 3) buffer: sizes and
    # strides innermost first, the thread index is the view's linear index.
    cases.append(Case("pytorch", k + "RangeFactories.metal", "arange_strided_float", "arange into a transposed view",
                      [12], [8],
                      {"out": np.zeros((4, 3), np.float32), "se": np.array([1.5, -0.25], np.float32),
                       "ndim": scalar(2, np.int32), "sizes": i64([4, 3]), "strides": i64([3, 1])},
                      ["out"], lambda a: [(np.float32(1.5) + np.float32(-0.25) * np.arange(12, dtype=np.float32)).reshape(3, 4).T],
                      tol=(0, 0)))
    cases.append(Case("pytorch", k + "RangeFactories.metal", "linspace_strided_float", "linspace into a transposed view",
                      [12], [8],
                      {"out": np.zeros((4, 3), np.float32), "v": np.array([-1.0, 3.0 / 11, 2.0], np.float32),
                       "steps": scalar(12, np.uint32), "ndim": scalar(2, np.int32), "sizes": i64([4, 3]),
                       "strides": i64([3, 1])},
                      ["out"], lambda a: [np.linspace(-1, 2, 12).astype(np.float32).reshape(3, 4).T], tol=(1e-6, 1e-7)))
    cases.append(Case("pytorch", k + "Eye.metal", "eye_diag_float", "eye, diagonal only (pre-zeroed output)",
                      [4], [4],
                      {"output": np.zeros((4, 6), np.float32), "diag_stride": i64([7])},
                      ["output"], lambda a: [np.eye(4, 6, dtype=np.float32)], tol=(0, 0)))
    reps = np.array([3, 0, 1, 4, 2], np.int64)
    cases.append(Case("pytorch", k + "Repeat.metal", "repeat_interleave_int64_t", "repeat_interleave, int64 repeats",
                      [5], [8],
                      {"repeat_ptr": reps, "cumsum_ptr": np.cumsum(reps), "result_ptr": np.zeros(reps.sum(), np.int64)},
                      ["result_ptr"], lambda a: [np.repeat(np.arange(5, dtype=np.int64), a["repeat_ptr"])], tol=(0, 0)))
    # CrossOp.metal: per-thread byte offsets into void* buffers; the vectors
    # lie along dim 0 of (3, 6) tensors (element stride 6).
    u = RNG.standard_normal((3, 6)).astype(np.float32)
    w = RNG.standard_normal((3, 6)).astype(np.float32)
    offs = np.stack([np.arange(6) * 4] * 3, axis=1).astype(np.uint32)
    cases.append(Case("pytorch", k + "CrossOp.metal", "cross_float", "cross along dim 0 (uint3 byte offsets, void*)",
                      [6], [8],
                      {"input_": u.view(np.uint8), "other_": w.view(np.uint8), "out_": np.zeros((3, 6), np.float32).view(np.uint8),
                       "offsets": np.concatenate([offs, np.zeros((6, 1), np.uint32)], axis=1),
                       "outStride": i64([6]), "inputStride": i64([6]), "otherStride": i64([6])},
                      ["out_"],
                      lambda a: [np.cross(a["input_"].view(np.float32).reshape(3, 6), a["other_"].view(np.float32).reshape(3, 6),
                                          axis=0)],
                      tol=(1e-6, 1e-6)))
    return cases


def log_softmax_params(dim_size, num_rows, inner, chunk, n_chunks, sizes, strides, dim, idx=np.uint32):
    """LogSoftmax.h's LogSoftmaxParams<index_t>."""
    t = np.dtype([("dim_size", idx), ("num_rows", idx), ("inner_size", idx), ("chunk_size", idx), ("n_chunks", idx),
                  ("ndim", np.uint32), ("dim", np.uint32), ("sizes", idx, (16,)), ("strides", idx, (16,))], align=True)
    p = np.zeros(1, t)
    for name, val in zip(("dim_size", "num_rows", "inner_size", "chunk_size", "n_chunks", "ndim", "dim"),
                         (dim_size, num_rows, inner, chunk, n_chunks, len(sizes), dim)):
        p[name] = val
    p["sizes"][0, :len(sizes)] = sizes
    p["strides"][0, :len(strides)] = strides
    return p


def log_softmax_cases(k):
    cases = []
    # Contiguous rows, one simdgroup a row (2 rows per threadgroup of 64).
    x = (RNG.standard_normal((5, 70)) * 3).astype(np.float32)
    cases.append(Case("pytorch", k + "LogSoftmax.metal", "log_softmax_row_float_u32", "log_softmax of rows, simdgroup a row",
                      [3], [64],
                      {"input": x, "output": np.zeros_like(x), "params": log_softmax_params(70, 5, 1, 0, 0, [5, 70], [70, 1], 1)},
                      ["output"], lambda a: [softmax_ref(a["input"], 1, True)], tol=(1e-5, 1e-5),
                      flags=["--dispatch", "threadgroups"]))
    # The split path for long rows: per-chunk (max, sum exp) partials, then
    # a finalize pass (fed here with NumPy's partials).
    rows, dim, chunk = 2, 3000, 1024
    n_chunks = math.ceil(dim / chunk)
    lx = (RNG.standard_normal((rows, dim)) * 4).astype(np.float32)
    lp = log_softmax_params(dim, rows, 1, chunk, n_chunks, [rows, dim], [dim, 1], 1)

    def partials(v):
        out = np.zeros((rows, n_chunks, 2), np.float32)
        for ci in range(n_chunks):
            seg = v[:, ci * chunk:(ci + 1) * chunk].astype(np.float64)
            m = seg.max(1)
            out[:, ci, 0], out[:, ci, 1] = m, np.exp(seg - m[:, None]).sum(1)
        return out

    cases.append(Case("pytorch", k + "LogSoftmax.metal", "log_softmax_partial_float_u32",
                      "log_softmax split path: chunk (max, sum exp) partials",
                      [n_chunks, rows], [128, 1],
                      {"input": lx, "partials": np.zeros((rows, n_chunks, 2), np.float32), "params": lp},
                      ["partials"], lambda a: [partials(a["input"])], tol=(1e-5, 1e-5),
                      flags=["--dispatch", "threadgroups"]))
    cases.append(Case("pytorch", k + "LogSoftmax.metal", "log_softmax_finalize_float_u32",
                      "log_softmax split path: combine partials and write",
                      [n_chunks, rows], [128, 1],
                      {"input": lx, "output": np.zeros_like(lx), "partials": partials(lx), "params": lp},
                      ["output"], lambda a: [softmax_ref(a["input"], 1, True)], tol=(1e-5, 1e-5),
                      flags=["--dispatch", "threadgroups"]))
    # The general kernel: dim 1 of a transposed (5, 8) view (dim stride 5),
    # and dim 1 of a contiguous (3, 7, 4) tensor (inner size 4); tree
    # reduction over tptg.y in threadgroup memory, output contiguous.
    t = RNG.standard_normal((8, 5)).astype(np.float32)
    cases.append(Case("pytorch", k + "LogSoftmax.metal", "log_softmax_float_u32", "log_softmax of a transposed view (strided rows)",
                      [1, 5], [1, 16],
                      {"input": t, "output": np.zeros((5, 8), np.float32),
                       "params": log_softmax_params(8, 5, 1, 0, 0, [5, 8], [1, 5], 1)},
                      ["output"], lambda a: [softmax_ref(a["input"].T, 1, True)], tol=(1e-5, 1e-5),
                      flags=["--dispatch", "threadgroups"]))
    y = RNG.standard_normal((3, 7, 4)).astype(np.float32)
    cases.append(Case("pytorch", k + "LogSoftmax.metal", "log_softmax_float_u64", "log_softmax over the middle dim (u64 indices)",
                      [1, 3], [4, 8],
                      {"input": y, "output": np.zeros_like(y),
                       "params": log_softmax_params(7, 12, 4, 0, 0, [3, 7, 4], [28, 4, 1], 1, np.uint64)},
                      ["output"], lambda a: [softmax_ref(a["input"], 1, True)], tol=(1e-5, 1e-5),
                      flags=["--dispatch", "threadgroups"]))
    return cases


def pooling_cases(k):
    cases = []
    # nn.AdaptiveAvgPool2d((3, 4)) of (2, 3, 7, 10): bin i covers
    # [floor(i * in / out), ceil((i + 1) * in / out)).
    n, c, h, w, oh, ow = 2, 3, 7, 10, 3, 4
    x = RNG.standard_normal((n, c, h, w)).astype(np.float32)
    pt = np.dtype([("B", np.int64), ("C", np.int64), ("input_height", np.int64), ("input_width", np.int64),
                   ("output_height", np.int64), ("output_width", np.int64), ("input_strides", np.int64, (4,)),
                   ("output_strides", np.int64, (4,))])
    params = np.zeros(1, pt)
    params[0] = (n, c, h, w, oh, ow, [c * h * w, h * w, w, 1], [c * oh * ow, oh * ow, ow, 1])

    def bins(o, i):
        return [(j * i // o, -(-(j + 1) * i // o)) for j in range(o)]

    def adaptive_ref(a):
        out = np.zeros((n, c, oh, ow), np.float32)
        for yi, (y0, y1) in enumerate(bins(oh, h)):
            for xi, (x0, x1) in enumerate(bins(ow, w)):
                out[:, :, yi, xi] = a["input"][:, :, y0:y1, x0:x1].astype(np.float64).mean(axis=(2, 3))
        return [out]

    cases.append(Case("pytorch", k + "AdaptivePooling.metal", "adaptive_avg_pool2d_forward_float",
                      "adaptive avg pool 7x10 -> 3x4 (overlapping bins)",
                      [n * c * oh * ow], [16],
                      {"input": x, "output": np.zeros((n, c, oh, ow), np.float32), "params": params},
                      ["output"], adaptive_ref, tol=(1e-5, 1e-6)))
    go = RNG.standard_normal((n, c, oh, ow)).astype(np.float32)

    def adaptive_bwd_ref(a):
        gi = np.zeros((n, c, h, w), np.float64)
        for yi, (y0, y1) in enumerate(bins(oh, h)):
            for xi, (x0, x1) in enumerate(bins(ow, w)):
                gi[:, :, y0:y1, x0:x1] += a["grad_output"][:, :, yi:yi + 1, xi:xi + 1] / ((y1 - y0) * (x1 - x0))
        return [gi.astype(np.float32)]

    cases.append(Case("pytorch", k + "AdaptivePooling.metal", "adaptive_avg_pool2d_backward_float",
                      "adaptive avg pool backward (one thread per input element)",
                      [n * c * h * w], [32],
                      {"grad_output": go, "grad_input": np.zeros((n, c, h, w), np.float32), "params": params},
                      ["grad_input"], adaptive_bwd_ref, tol=(1e-5, 1e-6)))
    # nn.AvgPool3d(kernel (2, 3, 3), stride (1, 2, 2), padding (0, 1, 1)),
    # count_include_pad True and False.
    v = RNG.standard_normal((1, 2, 3, 5, 6)).astype(np.float32)
    kd, kh, kw, sd, sh, sw, pd, ph, pw = 2, 3, 3, 1, 2, 2, 0, 1, 1
    od, oh3, ow3 = (3 + 2 * pd - kd) // sd + 1, (5 + 2 * ph - kh) // sh + 1, (6 + 2 * pw - kw) // sw + 1

    def avg3d_ref(a, include_pad):
        xp = np.pad(a["input"].astype(np.float64), ((0, 0), (0, 0), (pd, pd), (ph, ph), (pw, pw)))
        ones = np.pad(np.ones(v.shape), ((0, 0), (0, 0), (pd, pd), (ph, ph), (pw, pw)))
        out = np.zeros((1, 2, od, oh3, ow3))
        for i, j, l in np.ndindex(od, oh3, ow3):
            sl = (slice(None), slice(None), slice(i * sd, i * sd + kd), slice(j * sh, j * sh + kh), slice(l * sw, l * sw + kw))
            cnt = kd * kh * kw if include_pad else ones[sl].sum(axis=(2, 3, 4))
            out[:, :, i, j, l] = xp[sl].sum(axis=(2, 3, 4)) / cnt
        return [out.astype(np.float32)]

    dims = {"batch_size": 1, "channels": 2, "input_depth": 3, "input_height": 5, "input_width": 6,
            "output_depth": od, "output_height": oh3, "output_width": ow3, "kernel_depth": kd, "kernel_height": kh,
            "kernel_width": kw, "stride_depth": sd, "stride_height": sh, "stride_width": sw, "padding_depth": pd,
            "padding_height": ph, "padding_width": pw}
    for include_pad in (1, 0):
        args = {"output": np.zeros((1, 2, od, oh3, ow3), np.float32), "input": v}
        args.update({key: scalar(val, np.int32) for key, val in dims.items()})
        args.update({"count_include_pad": scalar(include_pad, np.int32), "divisor_override": scalar(0, np.int32)})
        cases.append(Case("pytorch", k + "Pooling3D.metal", "avg_pool3d_float",
                          f"avg pool 3-D with padding, count_include_pad={bool(include_pad)}",
                          [2 * od * oh3 * ow3 + 3], [16], args,
                          ["output"], lambda a, ip=include_pad: avg3d_ref(a, ip), tol=(1e-5, 1e-6)))
    # Its backward: each input element gathers grad / pool size from every
    # window that covers it.
    gout = RNG.standard_normal((1, 2, od, oh3, ow3)).astype(np.float32)

    def avg3d_bwd_ref(a, include_pad):
        ones = np.pad(np.ones(v.shape), ((0, 0), (0, 0), (pd, pd), (ph, ph), (pw, pw)))
        gp = np.zeros(ones.shape)
        for i, j, l in np.ndindex(od, oh3, ow3):
            sl = (slice(None), slice(None), slice(i * sd, i * sd + kd), slice(j * sh, j * sh + kh), slice(l * sw, l * sw + kw))
            cnt = kd * kh * kw if include_pad else ones[sl].sum(axis=(2, 3, 4))[:, :, None, None, None]
            gp[sl] += a["grad_output"][:, :, i:i + 1, j:j + 1, l:l + 1] / cnt
        return [gp[:, :, pd:pd + 3, ph:ph + 5, pw:pw + 6].astype(np.float32)]

    for include_pad in (1, 0):
        args = {"grad_input": np.zeros(v.shape, np.float32), "grad_output": gout}
        args.update({key: scalar(val, np.int32) for key, val in dims.items()})
        args.update({"count_include_pad": scalar(include_pad, np.int32), "divisor_override": scalar(0, np.int32)})
        cases.append(Case("pytorch", k + "Pooling3D.metal", "avg_pool3d_backward_float",
                          f"avg pool 3-D backward, count_include_pad={bool(include_pad)}",
                          [v.size], [32], args,
                          ["grad_input"], lambda a, ip=include_pad: avg3d_bwd_ref(a, ip), tol=(1e-5, 1e-6)))
    return cases


def pad_params(in_shape, out_shape, left, ndim, idx_dtype):
    """Pad.h's PadParams<idx_t> for an (N, C, [D,] [H,] W) tensor: sizes and
    left pads innermost first (W, H, D); strides W, H, D, channel, batch."""
    t = np.dtype([("input_sizes", idx_dtype, (3,)), ("output_sizes", idx_dtype, (3,)), ("left_pad", idx_dtype, (3,)),
                  ("input_strides", idx_dtype, (5,)), ("output_strides", idx_dtype, (5,)), ("channels", idx_dtype)],
                 align=True)
    p = np.zeros(1, t)

    def inner(shape):
        sp = list(reversed(shape[2:])) + [1] * (3 - ndim)
        st = list(reversed(np.array(np.zeros(shape).strides) // 8))
        strides = st[:ndim] + [0] * (3 - ndim) + st[ndim:ndim + 2]
        return sp, strides

    p["input_sizes"][0], p["input_strides"][0] = inner(in_shape)
    p["output_sizes"][0], p["output_strides"][0] = inner(out_shape)
    p["left_pad"][0] = list(left) + [0] * (3 - len(left))
    p["channels"] = in_shape[1]
    return p


def pad_cases(k):
    cases = []
    ilp = 4  # c10::metal::ILP_PER_THREAD: each thread writes 4 outputs, grid.x apart.
    # F.pad(x, (3, 2, 1, 2), mode="reflect" / "replicate") of (2, 3, 4, 5).
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    (wl, wr), (hl, hr) = (3, 2), (1, 2)
    out_shape = (2, 3, 4 + hl + hr, 5 + wl + wr)
    for mode, np_mode in (("reflection", "reflect"), ("replication", "edge")):
        cases.append(Case("pytorch", k + "ReplicationPad.metal", f"{mode}_pad2d_forward_float_i32",
                          f"{mode} pad 2-D (PadParams, {ilp} outputs a thread)",
                          [math.ceil(out_shape[3] / ilp), out_shape[2], 6], [2, 4, 2],
                          {"input": x, "output": np.zeros(out_shape, np.float32),
                           "params": pad_params(x.shape, out_shape, (wl, hl), 2, np.int32)},
                          ["output"], lambda a, m=np_mode: [np.pad(a["input"], ((0, 0), (0, 0), (hl, hr), (wl, wr)), mode=m)],
                          tol=(0, 0)))
    # Backward of the 3-D replication pad: each input element sums the
    # gradients of the output positions it was copied to.
    v = RNG.standard_normal((1, 2, 3, 3, 4)).astype(np.float32)
    pads = ((1, 2), (2, 0), (1, 1))  # (d, h, w)
    vo = tuple(s + a + b for s, (a, b) in zip(v.shape[2:], pads))
    gout = RNG.standard_normal((1, 2) + vo).astype(np.float32)

    def rep_pad3d_bwd_ref(a):
        g = np.zeros(v.shape, np.float64)
        idx = [np.clip(np.arange(o) - p[0], 0, n - 1) for o, p, n in zip(vo, pads, v.shape[2:])]
        for (dz, dy, dx) in np.ndindex(*vo):
            g[:, :, idx[0][dz], idx[1][dy], idx[2][dx]] += a["grad_output"][:, :, dz, dy, dx]
        return [g.astype(np.float32)]

    cases.append(Case("pytorch", k + "ReplicationPad.metal", "replication_pad3d_backward_float_i64",
                      "replication pad 3-D backward (gathers its gradients, no atomics)",
                      [1, 3, 3 * 2], [1, 3, 2],
                      {"grad_output": gout, "grad_input": np.zeros_like(v),
                       "params": pad_params(v.shape, gout.shape, (pads[2][0], pads[1][0], pads[0][0]), 3, np.int64)},
                      ["grad_input"], rep_pad3d_bwd_ref, tol=(1e-6, 1e-6)))
    # constant_pad_nd_dense: (2, 3, 4, 5) padded by (w 2/1, h 0/3, d(=channels) 1/1).
    c = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    co = (2, 5, 7, 8)
    cp = np.zeros(1, np.dtype([("input_sizes", np.uint32, (3,)), ("output_sizes", np.uint32, (3,)),
                               ("left_pad", np.uint32, (3,))]))
    cp["input_sizes"][0], cp["output_sizes"][0], cp["left_pad"][0] = [5, 4, 3], [8, 7, 5], [2, 0, 1]
    # reflection pad 1-D (i64 indices) and 3-D.
    r1 = RNG.standard_normal((2, 3, 7)).astype(np.float32)
    cases.append(Case("pytorch", k + "ReplicationPad.metal", "reflection_pad1d_forward_float_i64", "reflection pad 1-D, pads (4, 5)",
                      [math.ceil(16 / ilp), 1, 6], [4, 1, 2],
                      {"input": r1, "output": np.zeros((2, 3, 16), np.float32),
                       "params": pad_params(r1.shape, (2, 3, 16), (4,), 1, np.int64)},
                      ["output"], lambda a: [np.pad(a["input"], ((0, 0), (0, 0), (4, 5)), mode="reflect")], tol=(0, 0)))
    r3 = RNG.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    o3 = (1, 2, 3 + 2 + 1, 4 + 1 + 3, 5 + 3 + 2)
    cases.append(Case("pytorch", k + "ReplicationPad.metal", "reflection_pad3d_forward_float_i32",
                      "reflection pad 3-D, pads (w 3/2, h 1/3, d 2/1)",
                      [math.ceil(o3[4] / ilp), o3[3], o3[2] * 2], [2, 4, 2],
                      {"input": r3, "output": np.zeros(o3, np.float32),
                       "params": pad_params(r3.shape, o3, (3, 1, 2), 3, np.int32)},
                      ["output"], lambda a: [np.pad(a["input"], ((0, 0), (0, 0), (2, 1), (1, 3), (3, 2)), mode="reflect")],
                      tol=(0, 0)))
    # constant_pad_nd (general): ndim dims innermost first, a transposed input
    # and padding on an outer dim; threads (x over dim 0 with ILP, y over the rest).
    cg = RNG.standard_normal((4, 3)).astype(np.float32)  # the view is cg.T, (3, 4)
    go = (5, 7)  # F.pad(cg.T, (2, 1, 0, 2))
    ct = np.dtype([("output_sizes", np.uint32, (16,)), ("input_sizes", np.uint32, (16,)),
                   ("input_strides", np.uint32, (16,)), ("output_strides", np.uint32, (16,)),
                   ("left_pad", np.uint32, (16,)), ("ndim", np.uint32)])
    cpp = np.zeros(1, ct)
    cpp["output_sizes"][0, :2], cpp["input_sizes"][0, :2] = [7, 5], [4, 3]
    cpp["input_strides"][0, :2], cpp["output_strides"][0, :2] = [3, 1], [1, 7]
    cpp["left_pad"][0, :2], cpp["ndim"] = [2, 0], 2
    cases.append(Case("pytorch", k + "ReplicationPad.metal", "constant_pad_nd_float_u32",
                      "constant_pad_nd of a transposed view (fill 0.5)",
                      [2, 5], [2, 5],
                      {"input": cg, "output": np.zeros(go, np.float32), "params": cpp, "fill_value": scalar(0.5, np.float32)},
                      ["output"], lambda a: [np.pad(a["input"].T, ((0, 2), (2, 1)), constant_values=0.5)], tol=(0, 0)))
    cases.append(Case("pytorch", k + "ReplicationPad.metal", "constant_pad_nd_dense_float",
                      "constant pad of the three inner dims (fill -1.5)",
                      [2, 7, 2 * 5], [2, 7, 1],
                      {"input": c, "output": np.zeros(co, np.float32), "params": cp, "fill_value": scalar(-1.5, np.float32)},
                      ["output"], lambda a: [np.pad(a["input"], ((0, 0), (1, 1), (0, 3), (2, 1)), constant_values=-1.5)],
                      tol=(0, 0)))
    # replication_pad1d with a negative right pad (crops).
    r = RNG.standard_normal((2, 3, 6)).astype(np.float32)
    pl, pr = 3, -2
    wo = 6 + pl + pr

    def rep1d_ref(a):
        idx = np.clip(np.arange(wo) - pl, 0, 5)
        return [a["input"][:, :, idx]]

    cases.append(Case("pytorch", k + "ReplicationPad.metal", "replication_pad1d_forward_float",
                      "replication pad 1-D, pads (3, -2)",
                      [wo, 3, 2], [wo, 3, 1],
                      {"input": r, "output": np.zeros((2, 3, wo), np.float32),
                       "sizes_pad": np.array([6, wo, pl, pr], np.int32)},
                      ["output"], rep1d_ref, tol=(0, 0)))
    g1 = RNG.standard_normal((2, 3, wo)).astype(np.float32)

    def rep1d_bwd_ref(a):
        out = np.zeros((2, 3, 6), np.float64)
        for j, i in enumerate(np.clip(np.arange(wo) - pl, 0, 5)):
            out[:, :, i] += a["grad_output"][:, :, j]
        return [out.astype(np.float32)]

    cases.append(Case("pytorch", k + "ReplicationPad.metal", "replication_pad1d_backward_float",
                      "replication pad 1-D backward, pads (3, -2)",
                      [6, 3, 2], [6, 3, 1],
                      {"grad_output": g1, "grad_input": np.zeros((2, 3, 6), np.float32),
                       "sizes_pad": np.array([6, wo, pl, pr], np.int32)},
                      ["grad_input"], rep1d_bwd_ref, tol=(1e-6, 1e-6)))
    return cases


BERNOULLI_2K = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6]


def hurwitz_zeta(s, a):
    """zeta(s, a) for s > 1, a > 0 in float64: direct terms up to a >= 30,
    then Euler-Maclaurin with seven Bernoulli terms."""
    total = 0.0
    while a < 30:
        total += a ** -s
        a += 1
    total += a ** (1 - s) / (s - 1) + 0.5 * a ** -s
    for j, b in enumerate(BERNOULLI_2K, start=1):
        rising = math.prod(s + t for t in range(2 * j - 1))
        total += b / math.factorial(2 * j) * rising * a ** (-s - 2 * j + 1)
    return total


def digamma64(v):
    """psi(x) for x > 0: recurrence up to x >= 20, then the asymptotic
    series ln x - 1/(2x) - sum B_2k / (2k x^2k)."""
    total = 0.0
    while v < 20:
        total -= 1 / v
        v += 1
    return total + math.log(v) - 0.5 / v - sum(b / (2 * j * v ** (2 * j)) for j, b in enumerate(BERNOULLI_2K, start=1))


def trigamma64(v):
    if v > 0:
        return hurwitz_zeta(2, v)
    return math.pi ** 2 / math.sin(math.pi * v) ** 2 - hurwitz_zeta(2, 1 - v)  # reflection


def bessel_i1(x):
    """Modified Bessel function I1 by its power series, in float64."""
    x = np.asarray(x, np.float64)
    term = x / 2
    total = term.copy()
    for kk in range(1, 80):
        term = term * (x / 2) ** 2 / (kk * (kk + 1))
        total += term
    return total


def activation_special_cases(k):
    cases = []
    x = np.concatenate([RNG.uniform(-5, 5, 40), [-3.0, 3.0, -0.5, 0.5, 0.0]]).astype(np.float32)
    n = x.size
    lam = np.float32(0.5)
    unary_alpha = (
        ("hardshrink", lambda v: np.where((v >= -lam) & (v <= lam), 0, v)),
        ("softshrink", lambda v: np.where(v > lam, v - lam, np.where(v < -lam, v + lam, 0))),
        ("leaky_relu", lambda v: np.where(v >= 0, v, v * lam)),
    )
    for name, fn in unary_alpha:
        cases.append(Case("pytorch", k + "ActivationKernel.metal", f"{name}_dense_float_float_float",
                          f"{name} (alpha = 0.5)", [n], [16],
                          {"output": np.zeros(n, np.float32), "input": x, "alpha": scalar(lam, np.float32)},
                          ["output"], lambda a, fn=fn: [fn(a["input"]).astype(np.float32)], tol=(0, 0)))
    three, six = np.float32(3), np.float32(6)
    unary = (
        ("hardsigmoid", lambda v: np.minimum(np.maximum(v + three, 0), six) / six),
        ("hardswish", lambda v: v * (np.minimum(np.maximum(v + three, 0), six) / six)),
    )
    for name, fn in unary:
        cases.append(Case("pytorch", k + "ActivationKernel.metal", f"{name}_dense_float_float", name, [n], [16],
                          {"output": np.zeros(n, np.float32), "input": x},
                          ["output"], lambda a, fn=fn: [fn(a["input"]).astype(np.float32)], tol=(1e-6, 1e-7)))
    g = RNG.standard_normal(n).astype(np.float32)
    cases.append(Case("pytorch", k + "ActivationKernel.metal", "hardswish_backward_dense_float_float",
                      "hardswish backward (binary functor)", [n], [16],
                      {"out": np.zeros(n, np.float32), "input": g, "other": x},
                      ["out"],
                      lambda a: [np.where(a["other"] <= -3, 0, np.where(a["other"] >= 3, a["input"],
                                          a["input"] * (a["other"] / three + np.float32(0.5)))).astype(np.float32)],
                      tol=(1e-6, 1e-7)))
    cases.append(Case("pytorch", k + "ActivationKernel.metal", "leaky_relu_backward_dense_float_float_float",
                      "leaky_relu backward (binary functor with alpha)", [n], [16],
                      {"out": np.zeros(n, np.float32), "input": g, "other": x, "alpha": scalar(0.01, np.float32)},
                      ["out"], lambda a: [np.where(a["other"] >= 0, a["input"], a["input"] * np.float32(0.01))], tol=(0, 0)))
    bcast = RNG.standard_normal(5).astype(np.float32)
    cases.append(Case("pytorch", k + "ActivationKernel.metal", "softshrink_backward_dense_broadcast_float_float_float",
                      "softshrink backward, self broadcast (tid % numel)", [n], [16],
                      {"out": np.zeros(n, np.float32), "input": g, "broadcast": bcast, "broadcast_numel": i64([5]),
                       "alpha": scalar(lam, np.float32)},
                      ["out"],
                      lambda a: [np.where(np.abs(np.resize(a["broadcast"], n)) > lam, a["input"], 0).astype(np.float32)],
                      tol=(0, 0)))
    # Special functions of c10/metal/special_math.h.
    sx = np.concatenate([RNG.uniform(-12, 12, 30), [0.0, 1e-3, -7.5, 20.0]]).astype(np.float32)
    cases.append(Case("pytorch", k + "SpecialOps.metal", "i0_float_float", "modified Bessel I0", [sx.size], [16],
                      {"output": np.zeros(sx.size, np.float32), "input": sx},
                      ["output"], lambda a: [np.i0(a["input"].astype(np.float64)).astype(np.float32)], tol=(2e-6, 1e-6)))
    cases.append(Case("pytorch", k + "SpecialOps.metal", "i1_float_float", "modified Bessel I1", [sx.size], [16],
                      {"output": np.zeros(sx.size, np.float32), "input": sx},
                      ["output"], lambda a: [bessel_i1(a["input"]).astype(np.float32)], tol=(2e-6, 1e-6)))
    cases.append(Case("pytorch", k + "SpecialOps.metal", "spherical_bessel_j0_float_float", "spherical Bessel j0 = sin(x)/x",
                      [sx.size], [16],
                      {"output": np.zeros(sx.size, np.float32), "input": sx},
                      ["output"],
                      lambda a: [np.where(a["input"] == 0, 1, np.sin(a["input"].astype(np.float64))
                                          / np.where(a["input"] == 0, 1, a["input"])).astype(np.float32)],
                      tol=(1e-5, 1e-6)))
    ex = np.array([0.0, 1.0, 0.5, 2.0, 1e-20, -1.0, np.nan, np.inf, 0.3], np.float32)

    def entr_ref(a):
        v = a["input"].astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(v > 0, -v * np.log(v), np.where(v == 0, 0.0, -np.inf))
        r = np.where(np.isnan(v), np.nan, r)
        return [r.astype(np.float32)]

    cases.append(Case("pytorch", k + "SpecialOps.metal", "entr_float_float", "entr = -x ln x (0 at 0, -inf below, NaN kept)",
                      [ex.size], [16],
                      {"output": np.zeros(ex.size, np.float32), "input": ex},
                      ["output"], entr_ref, tol=(1e-6, 1e-7)))
    return cases


def compare_cases(k):
    cases = []
    # torch.isin: one threadgroup of 128 per (element, chunk of the test
    # set); simd_or and threadgroup reduction, atomic OR into a uint per element.
    el = RNG.integers(0, 400, size=25).astype(np.int32)
    test = RNG.integers(0, 400, size=300).astype(np.int32)
    chunks = 3
    it = np.dtype([("numel_elements", np.uint32), ("numel_test", np.uint32), ("num_chunks", np.uint32)])
    ip = np.zeros(1, it)
    ip[0] = (el.size, test.size, chunks)
    cases.append(Case("pytorch", k + "TensorCompare.metal", "isin_int", "isin (threadgroup per element and chunk, atomic OR)",
                      [el.size * chunks], [128],
                      {"elements": el, "test_elements": test, "out": np.zeros(el.size, np.uint32), "params": ip},
                      ["out"], lambda a: [np.isin(a["elements"], a["test_elements"]).astype(np.uint32)], tol=(0, 0),
                      flags=["--dispatch", "threadgroups"]))
    hits = np.isin(el, test).astype(np.uint32) * RNG.integers(1, 4, size=el.size).astype(np.uint32)
    cases.append(Case("pytorch", k + "TensorCompare.metal", "isin_apply_invert", "isin's second pass, invert=True",
                      [el.size], [8],
                      {"counts": hits, "out": np.zeros(el.size, np.bool_), "invert": np.array([True])},
                      ["out"], lambda a: [a["counts"] == 0], tol=(0, 0)))
    sorted_test = np.unique(RNG.standard_normal(40).astype(np.float32))
    probe = np.concatenate([sorted_test[::3], RNG.standard_normal(10).astype(np.float32), [np.inf]]).astype(np.float32)
    st = np.dtype([("numel_test", np.uint32), ("invert", np.bool_)], align=True)
    sp = np.zeros(1, st)
    sp[0] = (sorted_test.size, False)
    cases.append(Case("pytorch", k + "TensorCompare.metal", "isin_sorted_float", "isin against a sorted test set (binary search)",
                      [probe.size], [8],
                      {"elements": probe, "sorted_test": sorted_test, "out": np.zeros(probe.size, np.bool_), "params": sp},
                      ["out"], lambda a: [np.isin(a["elements"], a["sorted_test"])], tol=(0, 0)))
    # torch.clamp: NaN propagates (c10::metal::min/max), min > max gives max.
    cx = RNG.standard_normal(30).astype(np.float32) * 3
    cx[[3, 11]] = np.nan
    lo = RNG.standard_normal(30).astype(np.float32) - 1
    hi = RNG.standard_normal(30).astype(np.float32) + 1
    hi[5] = lo[5] - 1
    cases.append(Case("pytorch", k + "TensorCompare.metal", "clamp_dense_float_float", "clamp by tensors (NaN propagates)",
                      [30], [8],
                      {"out": np.zeros(30, np.float32), "input": cx, "other1": lo, "other2": hi},
                      ["out"], lambda a: [np.minimum(np.maximum(a["input"], a["other1"]), a["other2"])], tol=(0, 0)))
    cp = np.zeros(1, np.dtype([("min", np.float32), ("max", np.float32)]))
    cp[0] = (-1.25, 2.0)
    cases.append(Case("pytorch", k + "TensorCompare.metal", "clamp_scalar_dense_float_float_ClampScalarParams_float",
                      "clamp by scalars (struct alpha)",
                      [30], [8],
                      {"output": np.zeros(30, np.float32), "input": cx, "alpha": cp},
                      ["output"], lambda a: [np.minimum(np.maximum(a["input"], np.float32(-1.25)), np.float32(2.0))],
                      tol=(0, 0)))
    ci = RNG.integers(-20, 20, size=(4, 6)).astype(np.int32)
    cases.append(Case("pytorch", k + "TensorCompare.metal", "clamp_min_scalar_strided_int_int_int",
                      "clamp(min=-3) of a transposed int view (strided)",
                      [24], [8],
                      {"output": np.zeros((6, 4), np.int32), "input": ci, "sizes": i64([6, 4]),
                       "input_strides": i64([1, 6]), "output_strides": i64([4, 1]), "ndim": scalar(2, np.uint32),
                       "alpha": scalar(-3, np.int32)},
                      ["output"], lambda a: [np.maximum(a["input"].T, -3)], tol=(0, 0)))
    fx = np.array([np.inf, -np.inf, 0.0, np.nan, 3.4e38, -1.0], np.float32)
    for name, fn in (("isposinf", np.isposinf), ("isneginf", np.isneginf)):
        cases.append(Case("pytorch", k + "TensorCompare.metal", f"{name}_dense_bool_float", name,
                          [fx.size], [8],
                          {"output": np.zeros(fx.size, np.bool_), "input": fx},
                          ["output"], lambda a, fn=fn: [fn(a["input"])], tol=(0, 0)))
    return cases


def norm_cases(k):
    cases = []
    # nn.GroupNorm(3, 6) on (2, 6, 5, 9): one threadgroup per (n, group) of
    # 2 * 45 contiguous elements, threads read blocks of 4, threadgroup_sum2.
    n, c, groups, hw = 2, 6, 3, 45
    x = (RNG.standard_normal((n, c, 5, 9)) * 1.5 + 0.3).astype(np.float32)
    gamma = RNG.standard_normal(c).astype(np.float32)
    beta = RNG.standard_normal(c).astype(np.float32)
    gt = np.dtype([("HxW", np.uint32), ("num_groups", np.uint32), ("channels_per_group", np.uint32),
                   ("elements_per_group", np.uint32), ("C", np.uint32), ("N_times_HxW", np.uint32), ("eps", np.float32)])
    params = np.zeros(1, gt)
    params[0] = (hw, groups, c // groups, c // groups * hw, c, n * hw, 1e-5)

    def gn_ref(a, affine):
        xg = a["X"].reshape(n * groups, -1).astype(np.float64)
        mu = xg.mean(1)
        rstd = 1 / np.sqrt(xg.var(1) + 1e-5)
        y = ((xg - mu[:, None]) * rstd[:, None]).reshape(n, c, 5, 9)
        if affine:
            y = y * a["gamma"][None, :, None, None] + a["beta"][None, :, None, None]
        return [y.astype(np.float32), mu.astype(np.float32), rstd.astype(np.float32)]

    for name, tg, affine in (("group_norm_float_float_float_float_uint32_t", 32, True),
                             ("group_norm_float_float_void_void_uint32_t", 64, False)):
        cases.append(Case("pytorch", k + "GroupNorm.metal", name,
                          f"group norm, {groups} groups" + (", affine" if affine else ", no affine (void* gamma/beta)")
                          + f", {tg} threads a group",
                          [n * groups], [tg],
                          {"Y": np.zeros_like(x), "mean": np.zeros(n * groups, np.float32),
                           "rstd": np.zeros(n * groups, np.float32), "X": x,
                           "gamma": gamma if affine else np.zeros(1, np.uint8),
                           "beta": beta if affine else np.zeros(1, np.uint8), "params": params},
                          ["Y", "mean", "rstd"], lambda a, affine=affine: gn_ref(a, affine), tol=(1e-4, 1e-5),
                          flags=["--dispatch", "threadgroups"]))
    # Rows of 1000: the looped layer / RMS norms, threads stride over the row.
    # The layer norm runs with the 1024 threads PyTorch launches it with: its
    # final simd_sum reads all 32 slots of local_sums but only slots of
    # existing simdgroups are written, so fewer threads read garbage.
    rows, axis = 2, 1000
    lx = (RNG.standard_normal((rows, axis)) * 0.8 - 0.2).astype(np.float32)
    lw = RNG.standard_normal(axis).astype(np.float32)
    lb = RNG.standard_normal(axis).astype(np.float32)

    def ln_ref(a):
        xx = a["input"].astype(np.float64)
        mu = xx.mean(1, keepdims=True)
        rstd = 1 / np.sqrt(xx.var(1, keepdims=True) + 1e-5)
        return [((xx - mu) * rstd * a["weight"] + a["bias"]).astype(np.float32),
                mu.reshape(-1).astype(np.float32), rstd.reshape(-1).astype(np.float32)]

    cases.append(Case("pytorch", k + "LayerNorm.metal", "layer_norm_looped_float", "layer norm, looped over rows of 1000 (1024 threads)",
                      [rows], [1024],
                      {"input": lx, "output": np.zeros_like(lx), "meanOut": np.zeros(rows, np.float32),
                       "rstdTensor": np.zeros(rows, np.float32), "axis_size": scalar(axis, np.uint32),
                       "epsilon": scalar(1e-5, np.float32), "use_weight": scalar(1, np.int32),
                       "use_bias": scalar(1, np.int32), "weight": lw, "bias": lb},
                      ["output", "meanOut", "rstdTensor"], ln_ref, tol=(1e-4, 1e-5),
                      flags=["--dispatch", "threadgroups"]))
    cases.append(Case("pytorch", k + "RMSNorm.metal", "rms_norm_looped_float", "RMS norm, looped over rows of 1000 (64 threads)",
                      [rows], [64],
                      {"x": lx, "w": lw, "out": np.zeros_like(lx), "eps": scalar(1e-5, np.float32),
                       "axis_size": scalar(axis, np.uint32), "w_stride": scalar(1, np.uint32)},
                      ["out"],
                      lambda a: [(a["w"] * (a["x"] / np.sqrt((a["x"].astype(np.float64) ** 2).mean(1, keepdims=True) + 1e-5))
                                  .astype(np.float32)).astype(np.float32)],
                      tol=(1e-5, 1e-5), flags=["--dispatch", "threadgroups"]))
    return cases


def distance_cases(k):
    cases = []
    # torch.pdist(x, p): one thread per pair i < j, in condensed (row-major
    # upper triangle) order; mode 0..4 = p 0, 1, 2, inf, general.
    n, m = 7, 5
    x = RNG.standard_normal((n, m)).astype(np.float32)
    x[4, 2] = x[1, 2]  # an exact zero difference
    iu, ju = np.triu_indices(n, 1)

    def pdist_ref(a, p):
        d = np.abs(a["self"][iu].astype(np.float64) - a["self"][ju])
        if p == 0:
            r = (d != 0).sum(1)
        elif p == np.inf:
            r = d.max(1)
        else:
            r = (d ** p).sum(1) ** (1 / p)
        return [r.astype(np.float32)]

    for p, mode in ((2.0, 2), (1.0, 1), (np.inf, 3), (3.0, 4), (0.0, 0)):
        cases.append(Case("pytorch", k + "Distance.metal", "pdist_forward_float", f"pdist, p={p:g} (mode {mode})",
                          [iu.size], [8],
                          {"result": np.zeros(iu.size, np.float32), "self": x, "n": i64([n]), "m": i64([m]),
                           "p": scalar(p, np.float32), "mode": i64([mode])},
                          ["result"], lambda a, p=p: pdist_ref(a, p), tol=(1e-5, 1e-6)))
    # pdist backward, p = 2 and p = 3: each (pair, column) thread writes the
    # pair's gradient for x_i and its negation for x_j into rows of a
    # (n - 1, n, m) buffer that the host sums over its first axis.
    combs = iu.size
    g = RNG.standard_normal(combs).astype(np.float32)

    def pdist_bwd_ref(a, p):
        xs = a["self"].astype(np.float64)
        diff = xs[iu] - xs[ju]
        dist = a["dist"].astype(np.float64)[:, None]
        gk = a["grad"].astype(np.float64)[:, None]
        res = diff * np.abs(diff) ** (p - 2) * gk / dist ** (p - 1)
        out = np.zeros((n - 1, n, m))
        out[ju - iu - 1, iu] = res
        out[n - 2 - iu, ju] = -res
        return [out.astype(np.float32)]

    for p, mode in ((2.0, 2), (3.0, 4)):
        dist = pdist_ref({"self": x}, p)[0]
        cases.append(Case("pytorch", k + "Distance.metal", "pdist_backward_float", f"pdist backward, p={p:g}",
                          [combs * m], [32],
                          {"buffer": np.full((n - 1, n, m), 9.0, np.float32), "grad": g, "self": x, "dist": dist,
                           "grad_stride": i64([1]), "n": i64([n]), "m": i64([m]), "combs": i64([combs]),
                           "p": scalar(p, np.float32), "mode": i64([mode])},
                          ["buffer"], lambda a, p=p: pdist_bwd_ref(a, p), tol=(1e-4, 1e-5)))
    # torch.cdist(x1, x2, p) backward w.r.t. x1: threadgroups of TG_C threads
    # over the feature dim (padded), one per (b, i); grad / cdist^(p-1) staged
    # per tile of j in threadgroup memory.
    bsz, pp, rr, dd = 2, 5, 40, 6
    x1 = RNG.standard_normal((bsz, pp, dd)).astype(np.float32)
    x2 = RNG.standard_normal((bsz, rr, dd)).astype(np.float32)
    x2[1, 3, 2] = x1[1, 0, 2]
    gr = RNG.standard_normal((bsz, pp, rr)).astype(np.float32)
    pt = np.dtype([("B", np.int64), ("P", np.int64), ("R", np.int64), ("D", np.int64), ("p_minus_1", np.float32)],
                  align=True)

    def cdist_of(p):
        d = np.abs(x1[:, :, None, :] - x2[:, None, :, :])
        if p == np.inf:
            return d.max(-1)
        return ((d.astype(np.float64) ** p).sum(-1) ** (1 / p)).astype(np.float32)

    def cdist_bwd_ref(a, p):
        d = a["x1"][:, :, None, :].astype(np.float64) - a["x2"][:, None, :, :]
        cd = a["cdist"].astype(np.float64)[..., None]
        g = a["grad"].astype(np.float64)[..., None]
        sgn = np.sign(d)
        if p == 1:
            t = g * sgn
        elif p == np.inf:
            t = g * sgn * (np.abs(d).astype(np.float32) == a["cdist"][..., None])
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                t = np.where(cd == 0, 0, g / cd ** (p - 1)) * sgn * np.abs(d) ** (p - 1)
        return [t.sum(2).astype(np.float32)]

    for p, kind, tgc in ((2.0, 2, 32), (1.0, 0, 32), (np.inf, 1, 32), (3.0, 2, 128)):
        params = np.zeros(1, pt)
        params["B"], params["P"], params["R"], params["D"] = bsz, pp, rr, dd
        params["p_minus_1"] = p - 1 if np.isfinite(p) else 0
        cases.append(Case("pytorch", k + "Cdist.metal", f"cdist_backward_float_p{kind}_tg{tgc}",
                          f"cdist backward, p={p:g} (tiles of {tgc} in threadgroup memory)",
                          [tgc, pp, bsz], [tgc, 1, 1],
                          {"x1": x1, "x2": x2, "grad": gr, "cdist": cdist_of(p), "out": np.zeros_like(x1),
                           "params": params},
                          ["out"], lambda a, p=p: cdist_bwd_ref(a, p), tol=(1e-4, 1e-5)))
    return cases


def upsample_cases(k):
    cases = []
    # F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=False/True).
    x = RNG.standard_normal((2, 3, 3, 4)).astype(np.float32)
    oh, ow = 5, 7

    def bilinear_ref(src, oh, ow, align):
        n, c, h, w = src.shape

        def axis(o, i):
            if align:
                s = np.float32((i - 1) / (o - 1)) * np.arange(o, dtype=np.float32)
            else:
                s = np.float32(i / o) * (np.arange(o, dtype=np.float32) + np.float32(0.5)) - np.float32(0.5)
                s = np.maximum(s, 0)
            i0 = np.floor(s).astype(np.int64)
            return i0, np.minimum(i0 + 1, i - 1), (s - i0).astype(np.float32)

        y0, y1, ty = axis(oh, h)
        x0, x1, tx = axis(ow, w)
        top = src[:, :, y0][:, :, :, x0] * (1 - tx) + src[:, :, y0][:, :, :, x1] * tx
        bot = src[:, :, y1][:, :, :, x0] * (1 - tx) + src[:, :, y1][:, :, :, x1] * tx
        return (top * (1 - ty)[:, None] + bot * ty[:, None]).astype(np.float32)

    for align in (False, True):
        sc = [(4 - 1) / (ow - 1), (3 - 1) / (oh - 1)] if align else [4 / ow, 3 / oh]
        cases.append(Case("pytorch", k + "UpSample.metal", "upsample_bilinear2d_float",
                          f"bilinear upsampling 3x4 -> 5x7, align_corners={align}",
                          [oh * ow], [16],
                          {"inputData": x, "outputData": np.zeros((2, 3, oh, ow), np.float32),
                           "input_strides": u64([36, 12, 4, 1]), "output_strides": u64([3 * oh * ow, oh * ow, ow, 1]),
                           "input_sizes": i64([2, 3, 3, 4]), "output_sizes": i64([2, 3, oh, ow]),
                           "scales": np.array(sc, np.float32), "align_corners": np.array([align])},
                          ["outputData"], lambda a, align=align: [bilinear_ref(a["inputData"], oh, ow, align)],
                          tol=(1e-5, 1e-6)))
    # F.interpolate(v, size=(4, 5, 7), mode="nearest" / "nearest-exact") of a
    # (2, 2, 3, 2, 4) volume: one thread per output voxel, looping over N and C.
    v = RNG.standard_normal((2, 2, 3, 2, 4)).astype(np.float32)
    out_shape = (2, 2, 4, 5, 7)
    scales = [4 / 7, 2 / 5, 3 / 4]

    def nearest_ref(src, exact):
        def axis(o, i):
            s = np.float32(i / o)
            d = np.arange(o, dtype=np.float32)
            idx = np.floor((d + np.float32(0.5)) * s if exact else d * s).astype(np.int64)
            return np.minimum(idx, i - 1)

        zi, yi, xi = axis(4, 3), axis(5, 2), axis(7, 4)
        return src[:, :, zi][:, :, :, yi][:, :, :, :, xi]

    cases += upsample_linear_cases(k, v, out_shape)
    # Nearest 3-D backward: every output voxel adds its gradient to its
    # source voxel with an atomic float add.
    gv = RNG.standard_normal(out_shape).astype(np.float32)

    def nearest_bwd_ref(a):
        def axis(o, i):
            return np.minimum(np.floor(np.arange(o, dtype=np.float32) * np.float32(i / o)).astype(np.int64), i - 1)

        zi, yi, xi = axis(4, 3), axis(5, 2), axis(7, 4)
        gi = np.zeros(v.shape)
        for i, j, l in np.ndindex(4, 5, 7):
            gi[:, :, zi[i], yi[j], xi[l]] += a["gradOutputData"][:, :, i, j, l]
        return [gi.astype(np.float32)]

    cases.append(Case("pytorch", k + "UpSample.metal", "upsample_nearest_3d_backward_float",
                      "nearest 3-D upsampling backward (atomic float adds)",
                      [4 * 5 * 7], [32],
                      {"gradInputData": np.zeros(v.shape, np.float32), "gradOutputData": gv,
                       "params": upsample_params(v.shape, out_shape, scales)},
                      ["gradInputData"], nearest_bwd_ref, tol=(1e-5, 1e-6)))
    for name, exact in (("upsample_nearest_3d_float", False), ("upsample_nearest_exact_3d_float", True)):
        cases.append(Case("pytorch", k + "UpSample.metal", name,
                          f"{'nearest-exact' if exact else 'nearest'} 3-D upsampling (UpsampleParams struct)",
                          [4 * 5 * 7], [32],
                          {"inputData": v, "outputData": np.zeros(out_shape, np.float32),
                           "params": upsample_params(v.shape, out_shape, scales)},
                          ["outputData"], lambda a, exact=exact: [nearest_ref(a["inputData"], exact)], tol=(0, 0)))
    return cases


def lin_axis(o, i, align):
    """Source index pair and weight of PyTorch's linear interpolation along
    one axis (float32 scale, source clamped at 0 without align_corners)."""
    d = np.arange(o, dtype=np.float32)
    if align:
        s = np.float32((i - 1) / (o - 1)) * d
    else:
        s = np.maximum(np.float32(i / o) * (d + np.float32(0.5)) - np.float32(0.5), 0)
    i0 = np.floor(s).astype(np.int64)
    return i0, np.minimum(i0 + 1, i - 1), (s - i0).astype(np.float32)


def upsample_linear_cases(k, v, out_shape):
    """Trilinear (forward and atomic backward) and linear 1-D upsampling."""
    cases = []
    od, oh, ow = out_shape[2:]

    def tri_weights(align):
        return [lin_axis(o, i, align) for o, i in zip(out_shape[2:], v.shape[2:])]

    def tri_ref(a, align):
        src = a["inputData"].astype(np.float64)
        out = np.zeros(out_shape)
        (z0, z1, tz), (y0, y1, ty), (x0, x1, tx) = tri_weights(align)
        for i, j, l in np.ndindex(od, oh, ow):
            acc = 0
            for zi, wz in ((z0[i], 1 - tz[i]), (z1[i], tz[i])):
                for yi, wy in ((y0[j], 1 - ty[j]), (y1[j], ty[j])):
                    for xi, wx in ((x0[l], 1 - tx[l]), (x1[l], tx[l])):
                        acc = acc + float(wz) * float(wy) * float(wx) * src[:, :, zi, yi, xi]
            out[:, :, i, j, l] = acc
        return [out.astype(np.float32)]

    def tri_bwd_ref(a, align):
        g = a["gradOutputData"].astype(np.float64)
        gi = np.zeros(v.shape)
        (z0, z1, tz), (y0, y1, ty), (x0, x1, tx) = tri_weights(align)
        for i, j, l in np.ndindex(od, oh, ow):
            for zi, wz in ((z0[i], 1 - tz[i]), (z1[i], tz[i])):
                for yi, wy in ((y0[j], 1 - ty[j]), (y1[j], ty[j])):
                    for xi, wx in ((x0[l], 1 - tx[l]), (x1[l], tx[l])):
                        gi[:, :, zi, yi, xi] += float(wz) * float(wy) * float(wx) * g[:, :, i, j, l]
        return [gi.astype(np.float32)]

    gout = RNG.standard_normal(out_shape).astype(np.float32)
    for align in (False, True):
        sc = [(i - 1) / (o - 1) if align else i / o for o, i in zip(out_shape[:1:-1], v.shape[:1:-1])]
        params = upsample_params(v.shape, out_shape, sc)
        params["align_corners"] = align
        cases.append(Case("pytorch", k + "UpSample.metal", "upsample_trilinear_float",
                          f"trilinear upsampling 3x2x4 -> 4x5x7, align_corners={align}",
                          [od * oh * ow], [32],
                          {"inputData": v, "outputData": np.zeros(out_shape, np.float32), "params": params},
                          ["outputData"], lambda a, al=align: tri_ref(a, al), tol=(1e-5, 1e-6)))
        cases.append(Case("pytorch", k + "UpSample.metal", "upsample_trilinear_backward_float",
                          f"trilinear upsampling backward (atomic float adds), align_corners={align}",
                          [od * oh * ow], [32],
                          {"gradInputData": np.zeros(v.shape, np.float32), "gradOutputData": gout, "params": params},
                          ["gradInputData"], lambda a, al=align: tri_bwd_ref(a, al), tol=(1e-5, 1e-5)))
    # F.interpolate(x, size=(6, 9), mode="bicubic"): Keys' cubic convolution
    # (A = -0.75) over 4 x 4 taps, indices clamped to the image.
    xb = RNG.standard_normal((1, 2, 4, 5)).astype(np.float32)

    def cubic_w(t):
        a_ = -0.75
        x1, x2 = t + 1, 1 - t
        return [((a_ * x1 - 5 * a_) * x1 + 8 * a_) * x1 - 4 * a_, ((a_ + 2) * t - (a_ + 3)) * t * t + 1,
                ((a_ + 2) * x2 - (a_ + 3)) * x2 * x2 + 1, ((a_ * (x2 + 1) - 5 * a_) * (x2 + 1) + 8 * a_) * (x2 + 1) - 4 * a_]

    def bicubic_ref(a, align):
        src = a["inputData"].astype(np.float64)
        out = np.zeros((1, 2, 6, 9))

        def taps(o, i, d):
            sc = np.float32((i - 1) / (o - 1)) if align else np.float32(i / o)
            r = sc * np.float32(d) if align else sc * (np.float32(d) + np.float32(0.5)) - np.float32(0.5)
            base = int(np.floor(r))
            return [min(max(base - 1 + m, 0), i - 1) for m in range(4)], cubic_w(float(r - base))

        for yo, xo in np.ndindex(6, 9):
            ys, wy = taps(6, 4, yo)
            xs, wx = taps(9, 5, xo)
            out[:, :, yo, xo] = sum(wy[p] * wx[q] * src[:, :, ys[p], xs[q]] for p in range(4) for q in range(4))
        return [out.astype(np.float32)]

    for align in (False, True):
        sc = [4 / 8, 3 / 5] if align else [5 / 9, 4 / 6]
        cases.append(Case("pytorch", k + "UpSample.metal", "upsample_bicubic2d_float",
                          f"bicubic upsampling 4x5 -> 6x9, align_corners={align}",
                          [54], [16],
                          {"inputData": xb, "outputData": np.zeros((1, 2, 6, 9), np.float32),
                           "input_strides": u64([40, 20, 5, 1]), "output_strides": u64([108, 54, 9, 1]),
                           "input_sizes": i64([1, 2, 4, 5]), "output_sizes": i64([1, 2, 6, 9]),
                           "scales": np.array(sc, np.float32), "align_corners": np.array([align])},
                          ["outputData"], lambda a, al=align: bicubic_ref(a, al), tol=(1e-5, 1e-5)))
    # F.interpolate(x, size=11, mode="linear") of (2, 3, 4).
    x1 = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    i0, i1, t = lin_axis(11, 4, False)
    cases.append(Case("pytorch", k + "UpSample.metal", "upsample_linear1d_float", "linear 1-D upsampling 4 -> 11",
                      [11], [8],
                      # ulong3 / long3 take 32 bytes: a fourth, unused lane.
                      {"inputData": x1, "outputData": np.zeros((2, 3, 11), np.float32), "input_strides": u64([12, 4, 1, 0]),
                       "output_strides": u64([33, 11, 1, 0]), "input_sizes": i64([2, 3, 4, 0]),
                       "output_sizes": i64([2, 3, 11, 0]),
                       "scales": np.array([4 / 11, 0], np.float32), "align_corners": np.array([False])},
                      ["outputData"],
                      lambda a: [(a["inputData"][..., i0] * (1 - t) + a["inputData"][..., i1] * t).astype(np.float32)],
                      tol=(1e-6, 1e-6)))
    return cases


def embedding_bag_cases(k):
    """nn.EmbeddingBag forward: one thread per (bag, feature) walks its bag's
    indices; mode 0 sum (with per-sample weights, no padding_idx), 1 mean,
    2 max. Every feature thread of a bag writes the same offset2bag and
    bag_size entries (a write-after-write race of equal values), so these run
    with --check memory."""
    cases = []
    nw, feat = 10, 4
    weight = RNG.standard_normal((nw, feat)).astype(np.float32)
    ind = np.array([3, 7, 2, 7, 0, 9, 2, 5, 5, 1, 8], np.int32)
    offs = np.array([0, 3, 4, 8], np.int32)
    psw = RNG.random(ind.size).astype(np.float32)
    pad = 2
    pt = np.dtype([("weight_strides", np.uint32, (2,)), ("output_strides", np.uint32, (2,)),
                   ("max_indices_strides", np.uint32, (2,)), ("use_per_sample_weights", np.bool_),
                   ("per_sample_weights_stride", np.uint32), ("num_indices", np.uint32), ("num_bags", np.uint32),
                   ("feature_size", np.uint32), ("num_weights", np.uint32), ("mode", np.int32),
                   ("padding_idx", np.int64)], align=True)
    bags = np.split(np.arange(ind.size), offs[1:])

    def bag_ref(a, mode, pad):
        out = np.zeros((offs.size, feat), np.float32)
        maxi = np.zeros((offs.size, feat), np.int32)
        sizes = np.zeros(offs.size, np.int32)
        for b, pos in enumerate(bags):
            keep = [p for p in pos if ind[p] != pad]
            sizes[b] = len(keep)
            rows = a["weight"][ind[keep]].astype(np.float64)
            if mode == 0:
                out[b] = (rows * a["per_sample_weights"][keep, None]).sum(0)
            elif mode == 1:
                out[b] = rows.mean(0) if keep else 0
            else:
                out[b] = rows.max(0)
                maxi[b] = ind[keep][rows.argmax(0)]
        o2b = np.concatenate([np.full(len(pos), b, np.int32) for b, pos in enumerate(bags)])
        return [out, o2b, sizes] + ([maxi] if mode == 2 else [])

    for mode, what in ((0, "sum with per-sample weights"), (1, "mean, padding_idx 2 skipped"), (2, "max and argmax")):
        params = np.zeros(1, pt)
        params["weight_strides"], params["output_strides"], params["max_indices_strides"] = [feat, 1], [feat, 1], [feat, 1]
        params["use_per_sample_weights"], params["per_sample_weights_stride"] = mode == 0, 1
        params["num_indices"], params["num_bags"], params["feature_size"], params["num_weights"] = ind.size, offs.size, feat, nw
        params["mode"], params["padding_idx"] = mode, (pad if mode else -1)
        outs = ["output", "offset2bag", "bag_size"] + (["max_indices"] if mode == 2 else [])
        cases.append(Case("pytorch", k + "EmbeddingBag.metal", "embedding_bag_float_int", f"embedding bag, {what} (--check memory)",
                          [offs.size * feat], [8],
                          {"weight": weight, "indices": ind, "offsets": offs, "per_sample_weights": psw,
                           "output": np.zeros((offs.size, feat), np.float32), "offset2bag": np.zeros(ind.size, np.int32),
                           "bag_size": np.zeros(offs.size, np.int32), "max_indices": np.zeros((offs.size, feat), np.int32),
                           "params": params},
                          outs, lambda a, mode=mode: bag_ref(a, mode, pad if mode else -1), tol=(1e-5, 1e-6),
                          flags=["--check", "memory"]))
    cases.append(checked(cases[-1], "library", "data-race",
                         "every feature thread of a bag writes the same offset2bag/bag_size entries (equal values)"))
    # Backward: one thread per (index, feature) for sum/mean, per (bag,
    # feature) for max; atomic float adds into the weight gradient. Its
    # inputs (offset2bag, bag_size, max_indices) are NumPy's forward.
    gout = RNG.standard_normal((offs.size, feat)).astype(np.float32)
    o2b = np.concatenate([np.full(len(pos), b, np.int32) for b, pos in enumerate(bags)])
    sizes_pad = np.array([sum(ind[p] != pad for p in pos) for pos in bags], np.int32)
    sizes_all = np.array([len(pos) for pos in bags], np.int32)
    maxi = bag_ref({"weight": weight, "per_sample_weights": psw}, 2, pad)[3]
    bt = np.dtype([("weight_grad_strides", np.uint32, (2,)), ("output_grad_strides", np.uint32, (2,)),
                   ("max_indices_strides", np.uint32, (2,)), ("use_per_sample_weights", np.bool_),
                   ("per_sample_weights_stride", np.uint32), ("feature_size", np.uint32), ("mode", np.int32),
                   ("padding_idx", np.int64)], align=True)

    def bwd_ref(a, mode, padding):
        g = np.zeros((nw, feat))
        if mode == 2:
            for b in range(offs.size):
                if a["bag_size"][b]:
                    for f in range(feat):
                        g[a["max_indices"][b, f], f] += a["output_grad"][b, f]
        else:
            for i, (w, b) in enumerate(zip(ind, o2b)):
                if a["bag_size"][b] and w != padding:
                    scale_ = a["per_sample_weights"][i] if mode == 0 else 1 / a["bag_size"][b]
                    g[w] += a["output_grad"][b] * scale_
        return [g.astype(np.float32)]

    for mode, what, sizes, padding in ((0, "sum with per-sample weights", sizes_all, -1),
                                       (1, "mean, padding_idx 2", sizes_pad, pad), (2, "max", sizes_pad, pad)):
        bp = np.zeros(1, bt)
        bp["weight_grad_strides"], bp["output_grad_strides"], bp["max_indices_strides"] = [feat, 1], [feat, 1], [feat, 1]
        bp["use_per_sample_weights"], bp["per_sample_weights_stride"], bp["feature_size"] = mode == 0, 1, feat
        bp["mode"], bp["padding_idx"] = mode, padding
        cases.append(Case("pytorch", k + "EmbeddingBag.metal", "embedding_bag_backward_float_int",
                          f"embedding bag backward, {what} (atomic adds)",
                          [(offs.size if mode == 2 else ind.size) * feat], [8],
                          {"output_grad": gout, "indices": ind, "offset2bag": o2b, "bag_size": sizes,
                           "max_indices": maxi, "per_sample_weights": psw, "weight_grad": np.zeros((nw, feat), np.float32),
                           "params": bp},
                          ["weight_grad"], lambda a, m=mode, p=padding: bwd_ref(a, m, p), tol=(1e-5, 1e-6)))
    pt2 = np.dtype([("output_grad_strides", np.uint32, (2,)), ("weight_strides", np.uint32, (2,)),
                    ("per_sample_weights_grad_stride", np.uint32), ("feature_size", np.uint32), ("padding_idx", np.int64)],
                   align=True)
    pp = np.zeros(1, pt2)
    pp["output_grad_strides"], pp["weight_strides"] = [feat, 1], [feat, 1]
    pp["per_sample_weights_grad_stride"], pp["feature_size"], pp["padding_idx"] = 1, feat, pad
    cases.append(Case("pytorch", k + "EmbeddingBag.metal", "embedding_bag_per_sample_weights_backward_float_int",
                      "embedding bag: gradient of the per-sample weights (padding_idx 2 gets 0)",
                      [ind.size * feat], [8],
                      {"output_grad": gout, "weight": weight, "indices": ind, "offset2bag": o2b,
                       "per_sample_weights_grad": np.zeros(ind.size, np.float32), "params": pp},
                      ["per_sample_weights_grad"],
                      lambda a: [np.where(ind != pad, (a["weight"][ind].astype(np.float64) * a["output_grad"][o2b]).sum(1), 0)
                                 .astype(np.float32)], tol=(1e-5, 1e-6)))
    return cases


def embedding_cases(k):
    cases = []
    # nn.Embedding(9, 5, padding_idx=2, scale_grad_by_freq=True) backward for
    # (4, 3) indices: one pass counts each index, the next adds every
    # gradient row, divided by its index's count, with float atomics.
    ind = RNG.integers(0, 9, size=(4, 3)).astype(np.int64)
    ind[1, 1] = ind[3, 0] = 2
    ind[0, 2] = ind[2, 2] = ind[3, 2] = 5
    feat = 5
    grad = RNG.standard_normal((4, 3, feat)).astype(np.float32)
    t = np.dtype([("outer_sizes", np.uint32, (16,)), ("grad_outer_strides", np.uint32, (16,)),
                  ("indices_strides", np.uint32, (16,)), ("grad_feature_stride", np.uint32),
                  ("outer_ndim", np.uint32), ("feature_size", np.uint32), ("padding_idx", np.int64),
                  ("scale_grad_by_freq", np.bool_)], align=True)
    params = np.zeros(1, t)
    params["outer_sizes"][0, :2] = [4, 3]
    params["grad_outer_strides"][0, :2] = [3 * feat, feat]
    params["indices_strides"][0, :2] = [3, 1]
    params["grad_feature_stride"], params["outer_ndim"], params["feature_size"] = 1, 2, feat
    params["padding_idx"], params["scale_grad_by_freq"] = 2, True
    counts = np.bincount(ind.reshape(-1), minlength=9).astype(np.uint32)
    counts[2] = 0

    cases.append(Case("pytorch", k + "Embedding.metal", "embedding_dense_backward_count_long_32",
                      "embedding backward: index counts (skips padding_idx)",
                      [12], [8],
                      {"indices": ind, "counts": np.zeros(9, np.uint32), "params": params},
                      ["counts"],
                      lambda a: [np.bincount(a["indices"][a["indices"] != 2], minlength=9).astype(np.uint32)], tol=(0, 0)))

    def emb_bwd_ref(a):
        out = np.zeros((9, feat), np.float64)
        for i, g in zip(a["indices"].reshape(-1), a["grad"].reshape(-1, feat)):
            if i != 2:
                out[i] += g / a["counts"][i]
        return [out.astype(np.float32)]

    cases += embedding_bag_cases(k)
    cases.append(Case("pytorch", k + "Embedding.metal", "embedding_dense_backward_float_long_32",
                      "embedding backward, scale_grad_by_freq (atomic float adds)",
                      [12 * feat], [16],
                      {"grad": grad, "indices": ind, "counts": counts, "grad_weight": np.zeros((9, feat), np.float32),
                       "params": params},
                      ["grad_weight"], emb_bwd_ref, tol=(1e-5, 1e-6)))
    return cases


def im2col_ref(x, kh, kw, ph, pw, sh, sw, dh, dw):
    n, c, h, w = x.shape
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, c * kh * kw, oh * ow), x.dtype)
    for ci in range(c):
        for ky in range(kh):
            for kx in range(kw):
                row = (ci * kh + ky) * kw + kx
                for oy in range(oh):
                    for ox in range(ow):
                        iy, ix = oy * sh - ph + ky * dh, ox * sw - pw + kx * dw
                        if 0 <= iy < h and 0 <= ix < w:
                            out[:, row, oy * ow + ox] = x[:, ci, iy, ix]
    return out


def im2col_renorm_cases(k):
    cases = []
    # torch.nn.functional.unfold: 2x3 kernel, padding (1, 0), stride (1, 2), dilation 1.
    x = RNG.standard_normal((2, 2, 4, 5)).astype(np.float32)
    kh, kw, ph, pw, sh, sw = 2, 3, 1, 0, 1, 2
    oh, ow = (4 + 2 * ph - kh) // sh + 1, (5 + 2 * pw - kw) // sw + 1
    rows, length = 2 * kh * kw, oh * ow
    # Index vectors are (w, h, channel, batch): uint4/int4 for `_u32`,
    # ulong4/long4 for `_u64`; output_strides.w is the output width.
    for suffix, ut, st in (("u32", np.uint32, np.int32), ("u64", np.uint64, np.int64)):
        cases.append(Case("pytorch", k + "Im2Col.metal", f"im2col_float_{suffix}",
                          f"im2col / unfold with padding and stride ({suffix} indices)",
                          [length, 2, 2], [length, 2, 1],
                          {"inputData": x, "outputData": np.full((2, rows, length), 9.0, np.float32),
                           "kernel_dilation": np.array([kw, kh, 1, 1], np.uint32),
                           "padding_stride": np.array([pw, ph, sw, sh], np.int32),
                           "input_strides": np.array([1, 5, 20, 40], ut),
                           "output_strides": np.array([1, length, rows * length, ow], ut),
                           "input_sizes": np.array([5, 4, 2, 2], st)},
                          ["outputData"], lambda a: [im2col_ref(a["inputData"], kh, kw, ph, pw, sh, sw, 1, 1)],
                          tol=(0, 0)))
    # Dilation 2 on a half image, 3x2 kernel, stride 1, padding (2, 1).
    xh = RNG.standard_normal((1, 3, 6, 5)).astype(np.float16)
    dkh, dkw, dph, dpw, ddh, ddw = 3, 2, 2, 1, 2, 2
    doh, dow = 6 + 2 * dph - ddh * (dkh - 1), 5 + 2 * dpw - ddw * (dkw - 1)
    cases.append(Case("pytorch", k + "Im2Col.metal", "im2col_half_u32", "im2col with dilation 2, half",
                      [doh * dow, 3, 1], [8, 3, 1],
                      {"inputData": xh, "outputData": np.full((1, 3 * dkh * dkw, doh * dow), 9.0, np.float16),
                       "kernel_dilation": np.array([dkw, dkh, ddw, ddh], np.uint32),
                       "padding_stride": np.array([dpw, dph, 1, 1], np.int32),
                       "input_strides": np.array([1, 5, 30, 90], np.uint32),
                       "output_strides": np.array([1, doh * dow, 3 * dkh * dkw * doh * dow, dow], np.uint32),
                       "input_sizes": np.array([5, 6, 3, 1], np.int32)},
                      ["outputData"], lambda a: [im2col_ref(a["inputData"], dkh, dkw, dph, dpw, 1, 1, ddh, ddw)],
                      tol=(0, 0)))
    # torch.nn.functional.fold of the same geometry sums overlapping patches.
    cols = RNG.standard_normal((2, rows, length)).astype(np.float32)

    def fold_ref(a):
        img = np.zeros((2, 2, 4, 5), np.float64)
        for ci in range(2):
            for ky in range(kh):
                for kx in range(kw):
                    row = (ci * kh + ky) * kw + kx
                    for oy in range(oh):
                        for ox in range(ow):
                            iy, ix = oy * sh - ph + ky, ox * sw - pw + kx
                            if 0 <= iy < 4 and 0 <= ix < 5:
                                img[:, ci, iy, ix] += a["data_col"][:, row, oy * ow + ox]
        return [img.astype(np.float32)]

    # One thread per image element of every batch (a few spare threads return).
    cases.append(Case("pytorch", k + "Col2Im.metal", "col2im_kernel_float", "col2im / fold (sums overlaps)",
                      [2 * 2 * 4 * 5 + 3], [16],
                      {"data_col": cols, "data_im": np.zeros((2, 2, 4, 5), np.float32),
                       "col_batch_stride": scalar(rows * length, np.uint32), "nbatch": scalar(2, np.uint32),
                       "channels": scalar(2, np.uint32), "height": scalar(4, np.uint32), "width": scalar(5, np.uint32),
                       "kernel_h": scalar(kh, np.uint32), "kernel_w": scalar(kw, np.uint32),
                       "pad_h": scalar(ph, np.uint32), "pad_w": scalar(pw, np.uint32),
                       "stride_h": scalar(sh, np.uint32), "stride_w": scalar(sw, np.uint32),
                       "dilation_h": scalar(1, np.uint32), "dilation_w": scalar(1, np.uint32),
                       "height_col": scalar(oh, np.uint32), "width_col": scalar(ow, np.uint32),
                       "im_batch_stride": scalar(40, np.uint32)},
                      ["data_im"], fold_ref, tol=(1e-5, 1e-6)))
    # x.unfold(0, size=4, step=3) of a length-14 x has 4 windows; its
    # backward adds each window's gradient back where the window came from.
    size, step, n = 4, 3, 14
    windows = (n - size) // step + 1
    gin = RNG.standard_normal((windows, size)).astype(np.float32)

    def unfold_bwd_ref(a):
        out = np.zeros(n, np.float64)
        for w in range(windows):
            out[w * step:w * step + size] += a["grad_in"][w]
        return [out.astype(np.float32)]

    cases.append(Case("pytorch", k + "UnfoldBackward.metal", "unfold_backward_float", "unfold backward (overlapping windows)",
                      [n], [8],
                      {"grad_in": gin, "grad_out": np.zeros(n, np.float32), "input_strides": i64([size, 1]),
                       "output_sizes": i64([n]), "output_strides": i64([1]),
                       "dim_size_step_ndim": np.array([0, size, step, 1], np.uint32)},
                      ["grad_out"], unfold_bwd_ref, tol=(1e-6, 1e-6)))
    # Row i of out gets sum_j in[i, j] * coeff[i, j] added; offsets are in bytes.
    m, kk = 6, 5
    lin = RNG.standard_normal((m, kk)).astype(np.float32)
    coeff = RNG.standard_normal((m, kk)).astype(np.float32)
    base = RNG.standard_normal(m).astype(np.float32)
    cases.append(Case("pytorch", k + "FunctionOfAMatrixUtils.metal", "compute_linear_combination_float_u32",
                      "linear combination through void* byte offsets",
                      [m], [8],
                      {"out_ptr": base.view(np.uint8), "in_ptr": lin.view(np.uint8), "coeff_ptr": coeff.view(np.uint8),
                       "sizes": i64([m]),
                       "out_strides": i64([4]), "in_strides": i64([4 * kk]), "coeff_strides": i64([4 * kk]),
                       "params": np.array([1, 1, kk, 1], np.int32)},
                      ["out_ptr"],
                      lambda a: [(a["out_ptr"].view(np.float32)
                                  + (a["in_ptr"].view(np.float32).reshape(m, kk).astype(np.float64)
                                     * a["coeff_ptr"].view(np.float32).reshape(m, kk)).sum(axis=1)).astype(np.float32)],
                      tol=(1e-5, 1e-5)))
    # torch.histogram: each thread adds its element's weight to its own row
    # of `local_out` (the host sums the rows afterwards).
    edges = np.array([-2.0, -1.0, -0.25, 0.5, 1.5, 3.0], np.float32)
    hx = np.array([-1.7, 0.1, 2.2, -0.6, 0.7, 1.1, -3.5, 0.4, 2.9, -0.9], np.float32)
    hw = RNG.random(hx.size).astype(np.float32)
    nb = edges.size - 1

    def hist_rows_ref(a):
        rows = [np.histogram(a["input_"][i:i + 1], bins=a["bin_seq"], weights=a["weight"][i:i + 1])[0]
                for i in range(hx.size)]
        return [np.asarray(rows, np.float32).reshape(-1)]

    cases.append(Case("pytorch", k + "HistogramKernel.metal", "histogramdd_float", "weighted histogram, binary search",
                      [hx.size], [8],
                      {"input_": hx, "weight": hw, "local_out": np.zeros(hx.size * nb, np.float32),
                       "offsets": np.arange(hx.size, dtype=np.uint32), "num_dims": np.array([1], np.uint64),
                       "bin_seq": edges, "num_bin_edges": i64([edges.size]), "local_out_strides": i64([nb, 1]),
                       "algorithm": np.array([2], np.uint8), "weight_stride": i64([1])},
                      ["local_out"], hist_rows_ref, tol=(0, 0)))
    # One threadgroup of 16 threads per row, 4 reads each.
    rx = RNG.standard_normal((3, 40)).astype(np.float32)
    rw = RNG.standard_normal(40).astype(np.float32)
    cases.append(Case("pytorch", k + "RMSNorm.metal", "rms_norm_float", "RMS norm of rows (simd_sum + threadgroup)",
                      [48], [16],
                      {"x": rx, "w": rw, "out": np.zeros_like(rx), "eps": scalar(1e-5, np.float32),
                       "axis_size": scalar(40, np.uint32), "w_stride": scalar(1, np.uint32)},
                      ["out"],
                      lambda a: [(a["w"] * a["x"] / np.sqrt((a["x"].astype(np.float64) ** 2).mean(1, keepdims=True) + 1e-5))
                                 .astype(np.float32)],
                      tol=(1e-5, 1e-6)))
    norms = np.abs(RNG.standard_normal(10)).astype(np.float32) * 2
    cases.append(Case("pytorch", k + "RenormKernel.metal", "renorm_float", "renorm scale factors",
                      [10], [8],
                      {"norm": norms, "factor": np.zeros(10, np.float32), "maxnorm": scalar(1.5, np.float32)},
                      ["factor"],
                      lambda a: [np.where(a["norm"] > 1.5, np.float32(1.5) / (a["norm"] + np.float32(1e-7)), 1).astype(np.float32)],
                      tol=(1e-6, 0)))
    return cases


def cat_and_amp_cases(k):
    cases = []
    # torch.cat([a, b], dim=1) launches `cat_large` once per input; this is
    # b's launch, writing columns 3..4 of the (2, 5) output that a's launch
    # already filled.
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    b = RNG.standard_normal((2, 2)).astype(np.float32)
    out = np.full((2, 5), -7.0, np.float32)
    out[:, :3] = a
    shared_t = np.dtype([("ndim", np.int32), ("cat_dim", np.int32),
                         ("output_strides", np.int64, (16,)), ("output_sizes", np.int64, (16,))])
    input_t = np.dtype([("cat_dim_offset", np.int64), ("input_element_offset", np.int64),
                        ("input_strides", np.int64, (16,)), ("input_sizes", np.int64, (16,))])
    shared = np.zeros(1, shared_t)
    shared["ndim"], shared["cat_dim"] = 2, 1
    shared["output_strides"][0, :2] = [5, 1]
    shared["output_sizes"][0, :2] = [2, 5]
    inp = np.zeros(1, input_t)
    inp["cat_dim_offset"], inp["input_element_offset"] = 3, 0
    inp["input_strides"][0, :2] = [2, 1]
    inp["input_sizes"][0, :2] = [2, 2]
    cases.append(Case("pytorch", k + "Shape.metal", "cat_large_int64_t_float_float", "cat along dim 1 (second input's launch)",
                      [4], [4],
                      {"input": b, "output": out, "shared_params": shared, "input_params": inp},
                      ["output"], lambda _a, a=a, b=b: [np.concatenate([a, b], axis=1)], tol=(0, 0)))
    g = RNG.standard_normal(24).astype(np.float32)
    g[5] = np.inf
    cases.append(Case("pytorch", k + "Amp.metal", "ampNonFiniteCheckAndUnscaleSingle_float", "AMP unscale + non-finite flag",
                      [24], [8],
                      {"data": g, "foundInf": np.zeros(1, np.float32), "invScale": scalar(0.125, np.float32)},
                      ["data", "foundInf"],
                      lambda a: [a["data"] * np.float32(0.125), np.array([float(not np.isfinite(a["data"]).all())], np.float32)],
                      tol=(0, 0)))
    # GradScaler.update: back off on an inf, grow after `interval` clean steps.
    for found, tracker, what in ((1.0, 5, "inf found: back off"), (0.0, 1, "clean step, tracker reaches the interval: grow"),
                                 (0.0, 0, "clean step: count")):
        def upd_ref(a, found=found, tracker=tracker):
            scale_, g = np.float32(1024.0), tracker
            if found:
                return [np.array([scale_ * np.float32(0.5)], np.float32), np.array([0], np.int32)]
            g += 1
            if g >= 2:
                return [np.array([scale_ * np.float32(2.0)], np.float32), np.array([0], np.int32)]
            return [np.array([scale_], np.float32), np.array([g], np.int32)]

        cases.append(Case("pytorch", k + "Amp.metal", "ampUpdateScale_float", f"AMP scale update, {what}",
                          [1], [1],
                          {"scale": scalar(1024.0, np.float32), "growth_tracker": scalar(tracker, np.int32),
                           "foundInf": scalar(found, np.float32), "scaleGrowthFactor": scalar(2.0, np.float32),
                           "scaleBackoffFactor": scalar(0.5, np.float32), "growthInterval": scalar(2, np.int32)},
                          ["scale", "growth_tracker"], upd_ref, tol=(0, 0)))
    return cases


def search_and_count_cases(k):
    cases = []
    bd = np.sort(RNG.standard_normal(9)).astype(np.float32)
    q = np.concatenate([RNG.standard_normal(20), bd[[0, 4, 8]]]).astype(np.float32)
    for right, side in ((0, "left"), (1, "right")):
        cases.append(Case("pytorch", k + "Bucketization.metal", "searchsorted_float_long",
                          f"searchsorted, side={side} (binary search)",
                          [32, 1], [32, 1],
                          {"data_in": q, "data_bd": bd, "data_out": np.zeros(q.size, np.int64),
                           "idim_in": i64([q.size]), "idim_bd": i64([bd.size]), "numel_in": i64([q.size]),
                           "right": i64([right]), "is_1d_boundaries": i64([1])},
                          ["data_out"], lambda a, side=side: [np.searchsorted(a["data_bd"], a["data_in"], side=side)],
                          tol=(0, 0)))
    u = RNG.standard_normal((7, 3)).astype(np.float32)
    w = RNG.standard_normal((7, 3)).astype(np.float32)
    cases.append(Case("pytorch", k + "CrossKernel.metal", "cross_dense_float", "cross product of rows",
                      [7], [8],
                      {"out": np.zeros((7, 3), np.float32), "input": u, "other": w, "dim_stride": scalar(1, np.uint32)},
                      ["out"], lambda a: [np.cross(a["input"], a["other"])], tol=(1e-6, 1e-6)))
    idx = RNG.integers(0, 6, size=40).astype(np.int32)
    cases.append(Case("pytorch", k + "Bincount.metal", "bincount_unweighted_int", "bincount (device atomics)",
                      [40], [16],
                      {"indices": idx, "counts": np.zeros(6, np.uint32), "indices_stride": i64([1])},
                      ["counts"], lambda a: [np.bincount(a["indices"], minlength=6).astype(np.uint32)], tol=(0, 0)))
    wt = RNG.standard_normal(40).astype(np.float32)
    cases.append(Case("pytorch", k + "Bincount.metal", "bincount_widen_uint_to_long", "bincount: widen uint counts to long",
                      [6], [8],
                      {"counts": np.array([0, 7, 4294967295, 3, 1, 2], np.uint32), "output": np.zeros(6, np.int64)},
                      ["output"], lambda a: [a["counts"].astype(np.int64)], tol=(0, 0)))
    cases.append(Case("pytorch", k + "Bincount.metal", "bincount_weighted_float_long", "weighted bincount (atomic float)",
                      [40], [16],
                      {"indices": idx.astype(np.int64), "weights": wt, "output": np.zeros(6, np.float32),
                       "indices_stride": i64([1]), "weights_stride": i64([1])},
                      ["output"],
                      lambda a: [np.bincount(a["indices"], weights=a["weights"].astype(np.float64), minlength=6).astype(np.float32)],
                      tol=(1e-5, 1e-5)))
    return cases


def softmax_params(dim_size, num_rows, inner_size, sizes, strides, dim):
    """SoftMax.h's SoftmaxParams<uint>: five index fields, ndim, dim, then
    sizes and strides padded to max_ndim (16), all 32-bit."""
    p = np.zeros(5 + 2 + 32, np.uint32)
    p[0:5] = [dim_size, num_rows, inner_size, 0, 0]
    p[5:7] = [len(sizes), dim]
    p[7:7 + len(sizes)] = sizes
    p[23:23 + len(strides)] = strides
    return p


def softmax_ref(x, axis, log):
    m = x.max(axis=axis, keepdims=True)
    e = np.exp(x.astype(np.float64) - m)
    s = e.sum(axis=axis, keepdims=True)
    return (x - m - np.log(s) if log else e / s).astype(x.dtype)


def softmax_cases(k):
    cases = []
    # Contiguous rows: one simdgroup per row, two rows per threadgroup of 64.
    x = RNG.standard_normal((5, 37)).astype(np.float32)
    cases.append(Case("pytorch", k + "SoftMax.metal", "softmax_row_float_u32", "softmax over rows (simd_max/simd_sum)",
                      [192], [64],
                      {"input": x, "output": np.zeros_like(x), "params": softmax_params(37, 5, 1, [5, 37], [37, 1], 1)},
                      ["output"], lambda a: [softmax_ref(a["input"], 1, False)]))
    h = RNG.standard_normal((3, 50)).astype(np.float16)
    cases.append(Case("pytorch", k + "SoftMax.metal", "log_softmax_row_half_u32", "log_softmax over rows, half",
                      [128], [64],
                      {"input": h, "output": np.zeros_like(h), "params": softmax_params(50, 3, 1, [3, 50], [50, 1], 1)},
                      ["output"], lambda a: [softmax_ref(a["input"].astype(np.float32), 1, True).astype(np.float16)],
                      tol=(2e-3, 2e-3)))
    # dim 0 of a (6, 10) array: the general kernel, tree reduction in threadgroup memory.
    y = RNG.standard_normal((6, 10)).astype(np.float32)
    cases.append(Case("pytorch", k + "SoftMax.metal", "softmax_float_u32", "softmax over dim 0 (strided, threadgroup tree)",
                      [16, 8], [16, 8],
                      {"input": y, "output": np.zeros_like(y), "params": softmax_params(6, 10, 10, [6, 10], [10, 1], 0)},
                      ["output"], lambda a: [softmax_ref(a["input"], 0, False)]))
    # dropout_fwd draws Philox uniforms in [0, 1): with p = 0 every element is
    # kept (scale 1) and with p = 1 none is, whatever the random stream.
    xin = RNG.standard_normal(30).astype(np.float32)
    for p_drop in (0.0, 1.0):
        cases.append(Case("pytorch", k + "Dropout.metal", "dropout_fwd_float", f"dropout forward, p = {p_drop:g} (any seed)",
                          [8], [8],
                          {"output": np.full(30, 9.0, np.float32), "mask": np.zeros(30, np.bool_), "input": xin,
                           "params": np.array([1 - p_drop, 1.0 if p_drop == 0 else 0.0], np.float32),
                           "seed_base_offset": i64([1234567, 89]), "numel": scalar(30, np.uint32)},
                          ["output", "mask"],
                          lambda a, p_drop=p_drop: [a["input"] if p_drop == 0 else np.zeros(30, np.float32),
                                                    np.full(30, p_drop == 0)], tol=(0, 0)))
    gout = RNG.standard_normal(30).astype(np.float32)
    keep = RNG.random(30) < 0.7
    cases.append(Case("pytorch", k + "Dropout.metal", "dropout_bwd_float", "dropout backward (bool mask)",
                      [30], [16],
                      {"grad_input": np.zeros(30, np.float32), "grad_output": gout, "mask": keep,
                       "scale": scalar(1 / 0.7, np.float32)},
                      ["grad_input"],
                      lambda a: [np.where(a["mask"], a["grad_output"] * np.float32(1 / 0.7), 0).astype(np.float32)],
                      tol=(0, 0)))
    return cases


# `--engine` for every run (None: the binary's default).
ENGINE = None


def run_case(case, root, bin_path, includes, tmp):
    inputs = {}
    cmd = [bin_path, "run", str(root / case.file), "--kernel", case.kernel,
           "--grid", ",".join(map(str, case.grid)), "--threadgroup", ",".join(map(str, case.tg)),
           "--out", str(tmp)] + case.flags + (["--engine", ENGINE] if ENGINE else [])
    for inc in includes:
        cmd += ["-I", str(inc)]
    for name, arr in case.args.items():
        path = tmp / f"in_{name}.npy"
        np.save(path, arr)
        inputs[name] = arr
        cmd += ["--arg", f"{name}=@{path}"]
    if SHOW:
        print(" ".join(cmd), file=sys.stderr)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        lines = [l for l in (p.stderr or p.stdout).splitlines() if l.strip()]
        return None, "exit %d: %s" % (p.returncode, lines[0][:150] if lines else "")
    worst = 0.0
    outs = {name: np.load(tmp / f"{name}.npy") for name in case.outputs}
    if case.canon:
        outs = case.canon(outs)
    for name, want in zip(case.outputs, case.ref(inputs)):
        got = outs[name]
        want = np.asarray(want)
        if got.dtype == np.uint8 and want.dtype != np.uint8:
            # A `void*` buffer is bound and written back as raw bytes.
            got = got.view(want.dtype)
        if got.shape != want.shape or got.dtype != want.dtype:
            got = got.reshape(want.shape).astype(want.dtype) if got.size == want.size else got
        if got.size != want.size:
            return None, f"`{name}` has {got.size} elements, expected {want.size}"
        g64, w64 = got.astype(np.float64), want.astype(np.float64)
        with np.errstate(invalid="ignore"):  # inf - inf where both are inf
            # NaN where NumPy has NaN is a match.
            diff = np.where((g64 == w64) | (np.isnan(g64) & np.isnan(w64)), 0.0, np.abs(g64 - w64))
        d = float(diff.max()) if diff.size else 0.0
        worst = d if math.isnan(d) or math.isnan(worst) else max(worst, d)  # a stray NaN shows as nan
        rtol, atol = case.tol
        if not np.allclose(g64, w64, rtol=rtol, atol=atol, equal_nan=True):
            return worst, f"`{name}` differs from NumPy (max |diff| {worst:.3g})"
    return worst, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--candle", type=pathlib.Path)
    ap.add_argument("--pytorch", type=pathlib.Path)
    ap.add_argument("--bin", default="target/release/metal-puzzles")
    ap.add_argument("--only", metavar="TEXT", help="run only kernels whose name contains TEXT")
    ap.add_argument("--show", action="store_true", help="print each run's command line")
    ap.add_argument("--engine", choices=["interp", "jit", "auto"],
                    help="pass --engine to every run (jit: the compiled tier wherever a case runs with --check none)")
    args = ap.parse_args()
    global ENGINE
    ENGINE = args.engine
    plan = []
    if args.candle:
        plan += [(c, args.candle, []) for c in candle_cases()]
    if args.pytorch:
        # PyTorch compiles its kernels with both the repository root (for
        # <c10/metal/…>) and aten/src (for <ATen/native/mps/kernels/…>).
        plan += [(c, args.pytorch, [args.pytorch, args.pytorch / "aten" / "src"]) for c in pytorch_cases()]
    global SHOW
    SHOW = args.show
    if args.only:
        plan = [entry for entry in plan if args.only in entry[0].kernel]
    if not plan:
        ap.error("give --candle DIR and/or --pytorch ROOT (and an --only that matches)")
    print("| library | kernel | what | max abs diff | result |")
    print("|---|---|---|---:|---|")
    failed = skipped = known = 0
    for case, root, inc in plan:
        if case.skip:
            skipped += 1
            print(f"| {case.lib} | `{case.kernel}` | {case.what} | — | skipped: {case.skip} |")
            continue
        with tempfile.TemporaryDirectory() as d:
            worst, err = run_case(case, root, args.bin, inc, pathlib.Path(d))
        found = [f for f in case.finding if err and f[1] in err]
        if err is None:
            verdict = "matches NumPy" + (" (known mismatch no longer seen)" if case.mismatch or case.finding else "")
        elif case.needs and worst is None and case.needs[0] in err:
            skipped += 1
            print(f"| {case.lib} | `{case.kernel}` | {case.what} | — | skipped: {case.needs[1]} ({err}) |")
            continue
        elif found:
            known += 1
            verdict = f"{found[0][0].upper()} FINDING: {err}; {found[0][2]}"
        elif case.mismatch and worst is not None:
            # Runs, and disagrees as already investigated: reported, not failed.
            known += 1
            verdict = f"MISMATCH: {err}; {case.mismatch}"
        else:
            failed += 1
            verdict = "FAIL: " + err
        shown = "—" if worst is None else f"{worst:.3g}"
        print(f"| {case.lib} | `{case.kernel}` | {case.what} | {shown} | {verdict} |")
    passed = len(plan) - failed - skipped - known
    print(f"\n{passed} passed, {failed} failed, {known} known mismatches or findings, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
