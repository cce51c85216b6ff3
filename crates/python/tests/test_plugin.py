"""The pytest plugin (`pytest --metal-sim`), run on sample test files in a
subprocess: an MLX-style test file passes unchanged, a planted
out-of-bounds fails with its line, also under pytest-xdist."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mlx.core", reason="MLX's CPU wheel is not installed")

DATA = Path(__file__).parent / "data"


def run_pytest(tmp_path, *files, args=()):
    for f in files:
        (tmp_path / f).write_text((DATA / f).read_text())
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    env["PYTHONPATH"] = str(tmp_path)
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA", *args, *files]
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)


def test_without_the_flag_mlx_tests_are_skipped(tmp_path):
    r = run_pytest(tmp_path, "mlx_style_sample.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "4 skipped" in r.stdout, r.stdout


def test_an_mlx_style_test_file_passes_unchanged(tmp_path):
    r = run_pytest(tmp_path, "mlx_style_sample.py", args=["--metal-sim"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "4 passed" in r.stdout, r.stdout
    # The session summary, per kernel; the agreeing store is a warning.
    assert "basic: 1 call, clean" in r.stdout, r.stdout
    assert "library_double: 1 call, clean" in r.stdout, r.stdout
    assert "test_fun: 1 call, 0 error findings, 1 warning" in r.stdout, r.stdout
    assert "formal data race whose stores agree" in r.stdout, r.stdout


def test_a_planted_bug_fails_its_test_with_the_line(tmp_path):
    r = run_pytest(tmp_path, "planted_oob_sample.py", args=["--metal-sim"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 failed, 1 passed" in r.stdout, r.stdout
    assert "FAILED planted_oob_sample.py::test_planted_out_of_bounds" in r.stdout, r.stdout
    assert "kernel `oob_copy` (called at " in r.stdout and "planted_oob_sample.py:17)" in r.stdout, r.stdout
    assert "oob_copy.metal:2:" in r.stdout and "out-of-bounds (error), thread (7, 0, 0)" in r.stdout, r.stdout
    assert "oob_copy: 1 call, 1 error finding" in r.stdout, r.stdout


def test_warn_only_and_the_ini_option(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\nmetal_sim = true\nmetal_sim_warn_only = true\n")
    r = run_pytest(tmp_path, "planted_oob_sample.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 passed" in r.stdout and "oob_copy: 1 call, 1 error finding" in r.stdout, r.stdout


def test_check_level_none_reports_nothing(tmp_path):
    r = run_pytest(tmp_path, "planted_oob_sample.py", args=["--metal-sim", "--metal-sim-check=none"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "oob_copy: 1 call, clean" in r.stdout, r.stdout


@pytest.mark.skipif(importlib.util.find_spec("xdist") is None, reason="pytest-xdist is not installed")
def test_under_xdist(tmp_path):
    r = run_pytest(tmp_path, "mlx_style_sample.py", "planted_oob_sample.py", args=["--metal-sim", "-n", "2"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 failed, 5 passed" in r.stdout, r.stdout
    # The workers' calls reach the controller's summary.
    assert "basic: 1 call, clean" in r.stdout and "oob_copy: 1 call, 1 error finding" in r.stdout, r.stdout
