"""Captures from Python: ``capture=`` on calls and ``MTL_CAPTURE_ENABLED=1``
write capture files that ``metal-puzzles replay`` reproduces and
``metal-puzzles debug`` opens."""

import subprocess

import numpy as np

import metal_puzzles as mp

SRC = """
#include <metal_stdlib>
using namespace metal;

kernel void scale(const device float* x [[buffer(0)]], device float* out [[buffer(1)]],
                  constant float& f [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    float v = x[i] * f;
    out[i] = v;
}
"""


def replay(cli, path, cwd):
    return subprocess.run([cli, "replay", str(path)], cwd=cwd, capture_output=True, text=True)


def test_metal_kernel_capture_keyword(tmp_path, cli, capsys):
    k = mp.fast.metal_kernel("twice", ["a"], ["out"], "uint i = thread_position_in_grid.x;\nout[i] = a[i] * 2;\n")
    a = np.arange(6, dtype=np.float32)
    path = tmp_path / "twice.mpcapture"
    (out,) = k(inputs=[a], output_shapes=[a.shape], output_dtypes=[np.float32], grid=(6, 1, 1), threadgroup=(4, 1, 1),
               capture=path)
    assert f"capture written to {path}" in capsys.readouterr().err
    np.testing.assert_array_equal(out, a * 2)
    r = replay(cli, path, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "output out: same as recorded" in r.stdout
    assert "Reproduced" in r.stdout


def test_env_variable_captures_shader_calls(tmp_path, cli, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MTL_CAPTURE_ENABLED", "1")
    lib = mp.compile_shader(SRC)
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, dtype=np.float32)
    lib.scale(x, y, 1.5, threads=8, group_size=4)
    np.testing.assert_allclose(y, x * 1.5)
    path = tmp_path / "metal-puzzles-captures" / "scale-1.mpcapture"
    assert path.is_file(), capsys.readouterr().err
    r = replay(cli, path, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "out  float32 [8]  (the kernel may write it)" in r.stdout
    d = subprocess.run([cli, "debug", str(path), "--thread", "5", "--print", "8: v, f"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert d.returncode == 0, d.stderr
    assert "thread (5, 0, 0) in the grid, (1, 0, 0) in threadgroup (1, 0, 0)" in d.stdout
    assert "7.5 | 1.5" in d.stdout, d.stdout
    # Without the variable (and no keyword) nothing more is written.
    monkeypatch.delenv("MTL_CAPTURE_ENABLED")
    lib.scale(x, y, 2.0, threads=8, group_size=4)
    assert not (tmp_path / "metal-puzzles-captures" / "scale-2.mpcapture").exists()


def test_problem_check_captures_the_failing_test(tmp_path, cli, capsys):
    def zip_wrong(a, b):
        return mp.MetalKernel(
            name="zip", input_names=["a", "b"], output_names=["out"],
            source="uint i = thread_position_in_grid.x;\nout[i] = a[i] + b[3 - i];\n",
        )

    a = np.arange(4, dtype=np.int32)
    p = mp.MetalProblem("Zip", zip_wrong, [a, a], (4,), grid=(4, 1, 1), spec=lambda a, b: a + b)
    assert p.book_puzzle().number == 2
    path = tmp_path / "zip.mpcapture"
    assert p.check(capture=path) is False
    assert f"capture written to {path}" in capsys.readouterr().err
    r = replay(cli, path, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "puzzle 2 (Zip)" in r.stdout


def test_damaged_capture_is_a_clear_error(tmp_path, cli):
    path = tmp_path / "bad.mpcapture"
    path.write_text('{"format": "metal-puzzles-capture", "version": 1, "made_by"')
    r = replay(cli, path, tmp_path)
    assert r.returncode == 2
    assert "the file ends early" in r.stderr


def test_extracted_arrays_load_in_numpy_and_a_changed_input_replays(tmp_path, cli):
    k = mp.fast.metal_kernel("twice_x", ["a"], ["out"], "uint i = thread_position_in_grid.x;\nout[i] = a[i] * 2;\n")
    a = np.arange(6, dtype=np.float32)
    path = tmp_path / "twice.mpcapture"
    k(inputs=[a], output_shapes=[a.shape], output_dtypes=[np.float32], grid=(6, 1, 1), threadgroup=(4, 1, 1),
      capture=path)
    x = subprocess.run([cli, "replay", str(path), "--extract", "arrays"], cwd=tmp_path, capture_output=True, text=True)
    assert x.returncode == 0, x.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "arrays" / "inputs" / "a.npy"), a)
    np.testing.assert_array_equal(np.load(tmp_path / "arrays" / "outputs" / "out.npy"), a * 2)
    np.save(tmp_path / "b.npy", np.full(6, 5, dtype=np.float32))
    r = subprocess.run([cli, "replay", str(path), "--arg", "a=@b.npy"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "argument `a`: float32 [6] → float32 [6] from `@b.npy`" in r.stdout, r.stdout
