"""metal_puzzles.fast.metal_kernel: MLX's API, generated source, dtypes, errors."""

import subprocess

import numpy as np
import pytest

import metal_puzzles as mp
from metal_puzzles.fast import metal_kernel

EXP = """
uint elem = thread_position_in_grid.x;
T tmp = inp[elem];
out[elem] = metal::exp(tmp);
"""


def run1(k, inputs, shape, dtype, grid, tg=(32, 1, 1), **kw):
    return k(inputs=inputs, grid=grid, threadgroup=tg, output_shapes=[shape], output_dtypes=[dtype], **kw)[0]


def test_generated_source_matches_the_cli(cli, tmp_path, capsys):
    k = metal_kernel("myexp", ["inp"], ["out"], EXP)
    a = np.ones((4, 16), dtype=np.float16)
    run1(k, [a], a.shape, np.float16, (64, 1, 1), template=[("T", np.float32)], verbose=True)
    printed = capsys.readouterr().out
    body = tmp_path / "body.metal"
    body.write_text(EXP)
    cli_src = subprocess.run(
        [cli, "mlx", str(body), "--name", "myexp", "--input", "inp=ones(4,16):f16", "--output", "out:f16:4,16",
         "--template", "T=float32", "--print-source"],
        capture_output=True, text=True,
    )
    assert cli_src.returncode == 0, cli_src.stderr
    assert cli_src.stdout.strip() in printed
    assert printed.startswith("Generated source code for `custom_kernel_myexp__float_float16_t_float16_t`:")
    assert k.generated_source([a], [np.float16], [("T", np.float32)]) == cli_src.stdout


def test_verbose_env(monkeypatch, capsys):
    monkeypatch.setenv("VERBOSE", "1")
    k = metal_kernel("v", ["a"], ["out"], "out[thread_position_in_grid.x] = a[thread_position_in_grid.x];")
    run1(k, [np.zeros(3, np.float32)], (3,), np.float32, (3, 1, 1))
    assert "Generated source code for `custom_kernel_v_floatc_float`" in capsys.readouterr().out


@pytest.mark.parametrize(
    "dtype", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32"]
)
def test_copy_every_dtype(dtype):
    k = metal_kernel("copy", ["a"], ["out"], "uint i = thread_position_in_grid.x;\nout[i] = a[i];")
    a = (np.arange(20) % 7).astype(dtype)
    out = run1(k, [a], a.shape, a.dtype, (20, 1, 1))
    assert out.dtype == a.dtype
    np.testing.assert_array_equal(out, a)


def test_bfloat16_bit_patterns():
    # bfloat16 through NumPy: uint16 bit patterns named bfloat16 (or ml_dtypes when installed).
    k = metal_kernel("twice", ["a"], ["out"], "uint i = thread_position_in_grid.x;\nout[i] = a[i] * 2;")
    a = np.array([1.0, 2.5, -3.0], dtype=np.float32)
    out = run1(k, [a], a.shape, "bfloat16", (3, 1, 1))
    bits = np.asarray(out).view(np.uint16).astype(np.uint32) << 16
    np.testing.assert_array_equal(bits.view(np.float32), a * 2)


def test_scalars_template_and_init_value():
    src = "uint i = thread_position_in_grid.x;\nif (i < n) { out[i] = a[i] * scale + (FLAG ? N : 0); }"
    k = metal_kernel("s", ["a", "scale", "n"], ["out"], src)
    a = np.arange(6, dtype=np.float32)
    out = run1(k, [a, 2.0, 4], (6,), np.float32, (6, 1, 1), template=[("FLAG", True), ("N", 100)], init_value=-1)
    np.testing.assert_array_equal(out, [100, 102, 104, 106, -1, -1])


def test_atomic_outputs():
    src = "uint i = thread_position_in_grid.x;\natomic_fetch_add_explicit(&out[0], a[i], memory_order_relaxed);"
    k = metal_kernel("sum", ["a"], ["out"], src, atomic_outputs=True)
    a = np.arange(100, dtype=np.float32)
    out = run1(k, [a], (1,), np.float32, (100, 1, 1), init_value=0)
    assert out[0] == a.sum()


def test_strided_input_without_copy():
    src = """
uint elem = thread_position_in_grid.x;
uint loc = elem_to_loc(elem, inp_shape, inp_strides, inp_ndim);
out[elem] = inp[loc] + 1;
"""
    k = metal_kernel("strided", ["inp"], ["out"], src, ensure_row_contiguous=False)
    base = np.arange(48, dtype=np.float32).reshape(8, 6)
    view = base[::2, 1::2]
    assert not view.flags.c_contiguous
    out = run1(k, [view], view.shape, np.float32, (view.size, 1, 1))
    np.testing.assert_array_equal(out, view + 1)
    # The same kernel with the copy MLX makes by default sees row-major strides.
    k2 = metal_kernel("strided", ["inp"], ["out"], src)
    np.testing.assert_array_equal(run1(k2, [view], view.shape, np.float32, (view.size, 1, 1)), view + 1)


def test_multiple_outputs_and_3d_grid():
    src = """
uint3 p = thread_position_in_grid;
uint i = (p.z * 3 + p.y) * 4 + p.x;
lo[i] = a[i] - 1;
hi[i] = a[i] + 1;
"""
    k = metal_kernel("two", ["a"], ["lo", "hi"], src)
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    lo, hi = k(inputs=[a], grid=(4, 3, 2), threadgroup=(2, 2, 1), output_shapes=[a.shape, a.shape],
               output_dtypes=[np.int32, np.int32])
    np.testing.assert_array_equal(lo, a - 1)
    np.testing.assert_array_equal(hi, a + 1)


def test_misuse_errors():
    k = metal_kernel("m", ["a"], ["out"], "out[0] = a[0];")
    a = np.zeros(2, np.float32)
    # MLX's own texts first, then what to do.
    with pytest.raises(ValueError, match=r"^\[metal_kernel\] Expected `inputs` to have size 1 but got size 2\."):
        run1(k, [a, a], (2,), np.float32, (1, 1, 1))
    with pytest.raises(ValueError, match=r"^\[metal_kernel\] Expected `output_shapes` to have size 1 but got size 2\."):
        k(inputs=[a], grid=(1, 1, 1), threadgroup=(1, 1, 1), output_shapes=[(2,), (2,)], output_dtypes=[np.float32])
    with pytest.raises(ValueError, match=r"^\[metal_kernel\] Invalid template argument\."):
        run1(k, [a], (2,), np.float32, (1, 1, 1), template=[("T", 1.5)])
    with pytest.raises(ValueError, match="threadgroup"):
        run1(k, [a], (2,), np.float32, (1, 1, 1), tg=(2048, 1, 1))
    with pytest.raises(ValueError, match="at least one output"):
        metal_kernel("m", ["a"], [], "")
    with pytest.raises(TypeError):
        k(inputs=[a])
    with pytest.raises(TypeError, match="float64"):
        run1(k, [np.zeros(2)], (2,), np.float32, (1, 1, 1))
    with pytest.raises(ValueError, match="3 entries"):
        run1(k, [a], (2,), np.float32, (1, 1))


def test_compile_error_points_at_the_body():
    k = metal_kernel("bad", ["a"], ["out"], "uint i = thread_position_in_grid.x;\nout[i] = a[i] + missing;")
    with pytest.raises(mp.CompileError) as e:
        run1(k, [np.zeros(4, np.float32)], (4,), np.float32, (4, 1, 1))
    d = e.value.diagnostics[0]
    assert (d.file, d.line, d.column) == ("bad.metal", 2, 17)
    assert d.source_line == "out[i] = a[i] + missing;"
    assert "bad.metal:2:17" in str(e.value)


def test_kernel_error_findings_and_check_levels():
    k = metal_kernel("oob", ["a"], ["out"], "uint i = thread_position_in_grid.x;\nout[i] = a[i + 4];")
    a = np.zeros(4, np.float32)
    with pytest.raises(mp.KernelError) as e:
        run1(k, [a], (4,), np.float32, (4, 1, 1), tg=(2, 1, 1))
    f = e.value.findings[0]
    assert (f.kind, f.line, f.thread, f.threadgroup, f.count) == ("out-of-bounds", 2, (0, 0, 0), (0, 0, 0), 4)
    # check="none": no sanitizer, no error.
    run1(k, [a], (4,), np.float32, (4, 1, 1), check="none")


def test_race_needs_check_all_and_errors_can_warn():
    k = metal_kernel("race", ["a"], ["out"], "out[0] = a[thread_position_in_grid.x];")
    a = np.arange(8, dtype=np.float32)
    with pytest.raises(mp.KernelError) as e:
        run1(k, [a], (1,), np.float32, (8, 1, 1), tg=(8, 1, 1))
    assert "data-race" in [f.kind for f in e.value.findings]
    run1(k, [a], (1,), np.float32, (8, 1, 1), tg=(8, 1, 1), check="memory")
    try:
        mp.set_default_check("memory")
        run1(k, [a], (1,), np.float32, (8, 1, 1), tg=(8, 1, 1))
        mp.set_default_check("all", errors="warn")
        with pytest.warns(mp.KernelWarning, match="data race"):
            run1(k, [a], (1,), np.float32, (8, 1, 1), tg=(8, 1, 1))
    finally:
        mp.set_default_check("all", errors="raise")


def test_dlpack_only_objects():
    class OnlyDLPack:
        def __init__(self, a):
            self._a = a

        def __dlpack__(self, *args, **kw):
            return self._a.__dlpack__(*args, **kw)

        def __dlpack_device__(self):
            return self._a.__dlpack_device__()

    k = metal_kernel("copy", ["a"], ["out"], "uint i = thread_position_in_grid.x;\nout[i] = a[i];")
    a = np.arange(5, dtype=np.int32)
    np.testing.assert_array_equal(run1(k, [OnlyDLPack(a)], (5,), np.int32, (5, 1, 1)), a)


def test_huge_outputs_are_refused_not_allocated():
    k = metal_kernel("m", ["a"], ["out"], "out[0] = a[0];")
    with pytest.raises(ValueError, match="limit"):
        run1(k, [np.zeros(2, np.float32)], (1 << 20, 1 << 20), np.float32, (1, 1, 1))


def test_output_elements_no_thread_writes_warn():
    k = metal_kernel("myexp_short", ["inp"], ["out"], EXP)
    a = np.ones((4, 16), dtype=np.float32)
    # 48 threads for 64 elements: MLX leaves the last 16 as garbage.
    with pytest.warns(mp.KernelWarning, match=r"16 of the 64 elements of output `out` were never written \(the first is `out\[3, 0\]`\)"):
        run1(k, [a], a.shape, np.float32, (48, 1, 1), tg=(16, 1, 1), template=[("T", np.float32)])


def test_check_nan_warns_where_each_nan_was_born():
    k = metal_kernel("softmaxish", ["a"], ["out"], "uint i = thread_position_in_grid.x;\nfloat e = metal::exp(a[i]);\nout[i] = e / e;")
    a = np.array([1.0, 121.0], np.float32)
    with pytest.warns(mp.KernelWarning, match=r"born at .*:2 in thread \(1, 0, 0\): exp\(121\) overflows float"):
        out = run1(k, [a], (2,), np.float32, (2, 1, 1), tg=(2, 1, 1), check="nan")
    assert out[0] == 1.0 and np.isnan(out[1])
    with pytest.raises(ValueError, match='"none", "memory", "all" or "nan"'):
        run1(k, [a], (2,), np.float32, (2, 1, 1), check="nans")
