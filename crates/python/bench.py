#!/usr/bin/env python3
"""How long a puzzle-sized kernel call takes from Python, end to end
(argument conversion, the simulator, outputs back as NumPy arrays).

Usage: python crates/python/bench.py [CALLS]   (after `pip install .`)
Prints the median and the 90th percentile per call in milliseconds.
The target is under 2 ms per call (build with `pip install .`, a release build).
"""
import sys
import time

import numpy as np

from metal_puzzles import compile_shader
from metal_puzzles.fast import metal_kernel

CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 300


def timed(fn):
    for _ in range(5):
        fn()
    times = []
    for _ in range(CALLS):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2] * 1e3, times[int(len(times) * 0.9)] * 1e3


def main():
    # Puzzle 14's size: a 4x4 tiled matmul over 3x3 tiles... and puzzle 1's map.
    map_k = metal_kernel("map", ["a"], ["out"], "uint i = thread_position_in_grid.x;\nout[i] = a[i] + 10;")
    a = np.arange(4, dtype=np.int32)
    cases = {
        "map (4 threads)": lambda: map_k(inputs=[a], grid=(4, 1, 1), threadgroup=(1, 1, 1), output_shapes=[(4,)],
                                         output_dtypes=[np.float32], init_value=0),
    }
    dot = metal_kernel("dot", ["a", "b"], ["out"], """
threadgroup float shared[8];
uint i = thread_position_in_grid.x;
shared[i] = a[i] * b[i];
threadgroup_barrier(mem_flags::mem_threadgroup);
for (uint s = 4; s > 0; s /= 2) {
    if (i < s) { shared[i] += shared[i + s]; }
    threadgroup_barrier(mem_flags::mem_threadgroup);
}
if (i == 0) { out[0] = shared[0]; }
""")
    x = np.arange(8, dtype=np.float32)
    cases["dot product (8 threads, barriers)"] = lambda: dot(
        inputs=[x, x], grid=(8, 1, 1), threadgroup=(8, 1, 1), output_shapes=[(1,)], output_dtypes=[np.float32])
    lib = compile_shader("""
kernel void add(const device float* a [[buffer(0)]], device float* out [[buffer(1)]],
                uint i [[thread_position_in_grid]]) { out[i] = a[i] + 10; }
""")
    out = np.zeros(8, np.float32)
    cases["compile_shader add (8 threads)"] = lambda: lib.add(x, out)
    for name, fn in cases.items():
        median, p90 = timed(fn)
        print(f"{name:36} median {median:6.3f} ms   p90 {p90:6.3f} ms")


if __name__ == "__main__":
    main()
