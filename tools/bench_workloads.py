#!/usr/bin/env python3
"""Time real library kernels and growth curves on the simulator, both engines.

Usage: tools/bench_workloads.py --candle DIR [--bin PATH] [--reps N] [--quick]

--candle is candle's `candle-metal-kernels/src/metal_src` folder (read from
there, never copied here). Workloads, each at a few sizes:
  softmax   candle's softmax_f32 (reduce.metal), one threadgroup per row
  rms_norm  candle's rmsnorm_f32 (reduce.metal), one threadgroup per row
  gemm      MLX's steel GEMM as vendored in candle (mlx_gemm.metal), 32x32x16 tiles
  q8_0_mv   candle's (ggml's) kernel_mul_mv_q8_0_f32 (quantized.metal)
and a growth curve: an element-wise map (our own kernel text) from 16k to
16M threads. Every run writes its outputs, which are checked against NumPy
before its time counts. For each (workload, size) it prints the dispatch's
median time per unit (ns) interpreted with --check none, with --engine jit
and --check none, and interpreted with --check all, plus the speed-up of
the compiled tier. A unit is one output element (one multiply-add for gemm
and the mat-vec, one thread for map). Needs numpy.
"""
import argparse
import math
import pathlib
import re
import subprocess
import sys
import tempfile

import numpy as np

from run_library_kernels import GEMM_PARAMS, q8_0_blocks

MAP = """#include <metal_stdlib>
using namespace metal;
kernel void map(const device float* a [[buffer(0)]], device float* out [[buffer(1)]],
                constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = a[i] * 0.5f + 1.0f;
}
"""


class Run:
    """One launch: file, kernel, grid, threadgroup, arguments, extra flags,
    the outputs and their NumPy values, the tolerance and the unit count."""

    def __init__(self, file, kernel, grid, tg, args, flags, want, units, tol=1e-4):
        self.file, self.kernel, self.grid, self.tg = file, kernel, grid, tg
        self.args, self.flags, self.want, self.units, self.tol = args, flags, want, units, tol


def softmax(rng, root, rows, cols):
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    args = {"src_numel": np.array([rows * cols], np.uint32), "el_per_block": np.array([cols], np.uint32),
            "src": x, "dst": np.zeros_like(x)}
    return Run(root / "reduce.metal", "softmax_f32", [rows], [256], args, ["--dispatch", "threadgroups"],
               {"dst": (e / e.sum(1, keepdims=True)).astype(np.float32)}, rows * cols)


def rms_norm(rng, root, rows, cols):
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    alpha = rng.random(cols).astype(np.float32)
    eps = 1e-5
    ref = x / np.sqrt((x.astype(np.float64) ** 2).mean(1, keepdims=True) + eps) * alpha
    args = {"src_numel": np.array([rows * cols], np.uint32), "el_per_block": np.array([cols], np.uint32),
            "src": x, "dst": np.zeros_like(x), "alpha": alpha, "eps": np.array([eps], np.float32)}
    return Run(root / "reduce.metal", "rmsnorm_f32", [rows], [256], args, ["--dispatch", "threadgroups"],
               {"dst": ref.astype(np.float32)}, rows * cols)


def gemm(rng, root, n):
    m = k = n
    a = rng.standard_normal((1, m, k)).astype(np.float32)
    b = rng.standard_normal((1, k, n)).astype(np.float32)
    p = np.zeros(1, GEMM_PARAMS)
    p[0] = (m, n, k, k, n, n, math.ceil(n / 32), math.ceil(m / 32), a[0].size, b[0].size, m * n, 0, k // 16, 1)
    flags = ["--dispatch", "threadgroups"]
    for key, val in {"has_batch": "false", "use_out_source": "false", "do_axpby": "false",
                     "align_M": str(m % 32 == 0).lower(), "align_N": str(n % 32 == 0).lower(),
                     "align_K": str(k % 16 == 0).lower(), "do_gather": "false"}.items():
        flags += ["--constant", f"{key}={val}"]
    want = (a[0].astype(np.float64) @ b[0].astype(np.float64)).astype(np.float32)[None]
    return Run(root / "mlx_gemm.metal", "gemm_nn_f32_f32_32_32_16_2_2", [math.ceil(n / 32), math.ceil(m / 32), 1],
               [32, 2, 2], {"A": a, "B": b, "D": np.zeros((1, m, n), np.float32), "params": p}, flags,
               {"D": want}, m * n * k)


def q8_0_mv(rng, root, n, k):
    raw, w = q8_0_blocks(rng, n, k)
    x = rng.standard_normal((1, k)).astype(np.float32)
    i64 = lambda v: np.array([v], np.int64)
    u64 = lambda v: np.array([v], np.uint64)
    args = {"src0": raw, "src1": x, "dst": np.zeros((1, n), np.float32),
            "ne00": i64(k), "ne01": i64(n), "ne02": i64(1), "nb00": u64(0), "nb01": u64(0), "nb02": u64(0),
            "ne10": i64(k), "ne11": i64(1), "ne12": i64(1), "nb10": u64(0), "nb11": u64(0), "nb12": u64(0),
            "ne0": i64(n), "ne1": i64(1), "r2": np.array([1], np.uint32), "r3": np.array([1], np.uint32)}
    return Run(root / "quantized.metal", "kernel_mul_mv_q8_0_f32", [math.ceil(n / 8), 1, 1], [8, 8, 1], args,
               ["--dispatch", "threadgroups"], {"dst": (x.astype(np.float64) @ w.T.astype(np.float64)).astype(np.float32)}, n * k)


def map_run(rng, tmp, n):
    src = tmp / "map.metal"
    src.write_text(MAP)
    a = rng.random(n, dtype=np.float32)
    args = {"a": a, "out": np.zeros(n, np.float32), "n": np.array([n], np.uint32)}
    return Run(src, "map", [n], [256], args, [], {"out": a * np.float32(0.5) + np.float32(1.0)}, n, tol=0)


def time_run(binp, run, tmp, check, engine, reps):
    """The dispatch's median seconds, or an error text; outputs are checked."""
    out = tmp / "out"
    out.mkdir(exist_ok=True)
    cmd = [binp, "run", str(run.file), "--kernel", run.kernel, "--grid", ",".join(map(str, run.grid)),
           "--threadgroup", ",".join(map(str, run.tg)), "--check", check, "--engine", engine,
           "--bench", str(reps), "--out", str(out)] + run.flags
    for name, arr in run.args.items():
        path = tmp / f"in_{name}.npy"
        if not path.exists():
            np.save(path, arr)
        cmd += ["--arg", f"{name}=@{path}"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    m = re.search(r"kernel_seconds_median=([0-9.eE+-]+)", p.stdout)
    if not m:
        lines = [l for l in (p.stderr or p.stdout).splitlines() if l.strip()]
        return None, f"exit {p.returncode}: {lines[0][:120] if lines else ''}"
    for name, want in run.want.items():
        got = np.load(out / f"{name}.npy").reshape(want.shape)
        if not np.allclose(got, want, rtol=run.tol, atol=run.tol):
            return None, f"`{name}` differs from NumPy (max |diff| {np.abs(got - want).max():.3g})"
    compiled = "runs interpreted" not in p.stderr
    return float(m.group(1)), None if compiled or engine != "jit" else "interpreted"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--candle", type=pathlib.Path, required=True)
    ap.add_argument("--bin", default="target/release/metal-puzzles")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="the smallest size of each workload only")
    o = ap.parse_args()
    rng = np.random.default_rng(5)
    plan = [("softmax", lambda t, r=r, c=c: softmax(rng, o.candle, r, c), f"{r}x{c}") for r, c in ((64, 1024), (1024, 4096))]
    plan += [("rms_norm", lambda t, r=r, c=c: rms_norm(rng, o.candle, r, c), f"{r}x{c}") for r, c in ((64, 1024), (1024, 4096))]
    plan += [("gemm", lambda t, n=n: gemm(rng, o.candle, n), f"{n}^3") for n in (128, 512)]
    plan += [("q8_0_mv", lambda t, n=n, k=k: q8_0_mv(rng, o.candle, n, k), f"{n}x{k}") for n, k in ((512, 1024), (4096, 4096))]
    plan += [("map", lambda t, n=n: map_run(rng, t, n), f"{n}") for n in (1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24)]
    if o.quick:
        seen = set()
        plan = [p for p in plan if not (p[0] in seen or seen.add(p[0]))]
    print(f"{'workload':9} {'size':>10} {'interp none':>12} {'jit none':>12} {'speed-up':>9} {'interp all':>12}   (ns per unit)")
    failed = False
    for name, make, size in plan:
        with tempfile.TemporaryDirectory() as d:
            tmp = pathlib.Path(d)
            run = make(tmp)
            cells = []
            for check, engine in (("none", "interp"), ("none", "jit"), ("all", "interp")):
                secs, err = time_run(o.bin, run, tmp, check, engine, o.reps)
                if secs is None:
                    failed = True
                    print(f"  {name} {size} --check {check} --engine {engine}: {err}", file=sys.stderr)
                cells.append((secs and secs / run.units * 1e9, err))
        f = lambda c: "-" if c[0] is None else f"{c[0]:.3g}" + ("*" if c[1] == "interpreted" else "")
        up = cells[0][0] / cells[1][0] if cells[0][0] and cells[1][0] else None
        print(f"{name:9} {size:>10} {f(cells[0]):>12} {f(cells[1]):>12} {(f'{up:.2f}x' if up else '-'):>9} {f(cells[2]):>12}")
    print("* the compiled tier refused the kernel (e.g. SIMD-group functions): it ran interpreted")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
