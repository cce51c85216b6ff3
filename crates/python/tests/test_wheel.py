"""The wheel: `maturin build` gives one abi3 manylinux wheel that installs
into a fresh virtual environment (no Rust on PATH) with the `metal-puzzles`
command and `python -m metal_puzzles`, and runs kernels."""

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

SHADER = """
import metal_puzzles as mp, numpy as np
lib = mp.compile_shader("kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) { y[i] = i * 2; }")
y = np.zeros(4, dtype=np.float32)
lib.k(y, threads=4)
assert y.tolist() == [0, 2, 4, 6], y
print("ran")
"""


@pytest.mark.skipif(os.environ.get("METAL_PUZZLES_SKIP_WHEEL") == "1", reason="METAL_PUZZLES_SKIP_WHEEL=1")
def test_wheel_builds_installs_and_runs(tmp_path):
    maturin = shutil.which("maturin") or str(Path(sys.executable).parent / "maturin")
    out = tmp_path / "dist"
    # The dev profile keeps the test quick (it reuses `maturin develop`'s build); releases use --release.
    build = subprocess.run([maturin, "build", "--out", str(out), "--quiet"], cwd=ROOT, capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    wheels = list(out.glob("*.whl"))
    assert len(wheels) == 1, wheels
    name = wheels[0].name
    assert "-cp39-abi3-" in name and "manylinux" in name, name

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    # The outer pip installs into the fresh environment (numpy from the index or pip's cache).
    inst = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet",
                           "--disable-pip-version-check", str(wheels[0])], capture_output=True, text=True)
    assert inst.returncode == 0, inst.stdout + inst.stderr

    # No Rust toolchain on PATH: only the environment's bin and the system's.
    env = {"PATH": f"{env_dir / 'bin'}{os.pathsep}/usr/bin:/bin", "HOME": str(tmp_path), "NO_COLOR": "1"}
    run = subprocess.run([str(py), "-c", SHADER], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0 and "ran" in run.stdout, run.stdout + run.stderr
    version = subprocess.run(["metal-puzzles", "--version"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("metal-puzzles "), version.stdout + version.stderr
    (tmp_path / "k.metal").write_text("kernel void k(device float* y [[buffer(0)]]) { y[0] = z; }\n")
    lint = subprocess.run([str(py), "-m", "metal_puzzles", "lint", "k.metal"], capture_output=True, text=True, env=env,
                          cwd=tmp_path)
    assert lint.returncode == 1 and "k.metal:1:" in lint.stderr, lint.stdout + lint.stderr
    plugin = subprocess.run([str(py), "-c", "import importlib.metadata as m; "
                             "print([e.value for e in m.entry_points(group='pytest11')])"],
                            capture_output=True, text=True, env=env)
    assert "metal_puzzles.pytest_plugin" in plugin.stdout, plugin.stdout + plugin.stderr
