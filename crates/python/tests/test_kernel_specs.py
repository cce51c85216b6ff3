"""`metal-puzzles test` with expected values written as NumPy expressions
(evaluated by this Python, which has NumPy)."""

import os
import subprocess
import sys


SRC = """#include <metal_stdlib>
using namespace metal;
kernel void saxpy(device const float* x [[buffer(0)]], device const float* y [[buffer(1)]],
                  device float* out [[buffer(2)]], constant float& a [[buffer(3)]],
                  uint i [[thread_position_in_grid]]) {
    out[i] = a * x[i] + y[i];
}
"""

SPEC = """file = "saxpy.metal"
rtol = 1e-6

[[test]]
name = "saxpy"
kernel = "saxpy"
grid = [300]
threadgroup = [64]
seed = 3
inputs = { x = "rand(300):float32", y = "arange(300):float32", out = "zeros(300):float32", a = "0.5:f32" }
expect = { out = { expr = "0.5 * x + y" } }

[[test]]
name = "wrong expectation"
kernel = "saxpy"
grid = [4]
threadgroup = [4]
inputs = { x = "ones(4):float32", y = "ones(4):float32", out = "zeros(4):float32", a = "2:f32" }
expect = { out = "np.full(4, 4.0)" }
"""


def test_numpy_expressions(tmp_path, cli):
    (tmp_path / "saxpy.metal").write_text(SRC)
    (tmp_path / "saxpy.test.toml").write_text(SPEC)
    env = dict(os.environ, METAL_PUZZLES_PYTHON=sys.executable, NO_COLOR="1")
    r = subprocess.run([cli, "test", str(tmp_path)], capture_output=True, text=True, env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "saxpy.test.toml::saxpy ... ok" in r.stdout, r.stdout
    assert "wrong expectation ... FAILED" in r.stdout, r.stdout
    assert "out[0] is 3, expected 4" in r.stdout and "(expected from `np.full(4, 4.0)`)" in r.stdout, r.stdout
    assert r.stdout.rstrip().endswith("1 passed, 1 failed"), r.stdout
