"""MLX programs unchanged: metal_puzzles.mlx.install() with MLX's CPU wheel."""

import numpy as np
import pytest

mx = pytest.importorskip("mlx.core", reason="MLX's CPU wheel is not installed (pip install 'mlx[cpu]'); tools/test.py installs it where PyPI has one")

import metal_puzzles.mlx  # noqa: E402
from metal_puzzles.fast import metal_kernel  # noqa: E402


@pytest.fixture
def hooked():
    assert metal_puzzles.mlx.install(force=True)
    yield
    metal_puzzles.mlx.uninstall()


def test_install_replaces_and_uninstall_restores():
    original = mx.fast.metal_kernel
    assert metal_puzzles.mlx.install(force=True)
    assert mx.fast.metal_kernel is not original
    metal_puzzles.mlx.uninstall()
    assert mx.fast.metal_kernel is original
    assert not metal_puzzles.mlx.installed()


def test_mlx_arrays_in_and_out_float16_template(hooked):
    a = mx.random.normal(shape=(4, 16), key=mx.random.key(1)).astype(mx.float16)
    k = mx.fast.metal_kernel(
        name="myexp", input_names=["inp"], output_names=["out"],
        source="uint elem = thread_position_in_grid.x;\nT tmp = inp[elem];\nout[elem] = metal::exp(tmp);",
    )
    (b,) = k(inputs=[a], template=[("T", mx.float32)], grid=(a.size, 1, 1), threadgroup=(256, 1, 1),
             output_shapes=[a.shape], output_dtypes=[a.dtype])
    assert isinstance(b, mx.array) and b.dtype == mx.float16
    assert mx.allclose(b, mx.exp(a), rtol=1e-3, atol=1e-3).item()


def test_strided_mlx_view_without_copy(hooked):
    a = mx.arange(64, dtype=mx.float32).reshape(8, 8)[::2]
    k = mx.fast.metal_kernel(
        name="strided", input_names=["inp"], output_names=["out"], ensure_row_contiguous=False,
        source="uint elem = thread_position_in_grid.x;\nuint loc = elem_to_loc(elem, inp_shape, inp_strides, inp_ndim);\nout[elem] = inp[loc] * 2;",
    )
    (b,) = k(inputs=[a], grid=(a.size, 1, 1), threadgroup=(32, 1, 1), output_shapes=[a.shape], output_dtypes=[a.dtype])
    assert mx.array_equal(b, a * 2).item()


def test_bfloat16_mlx(hooked):
    a = mx.array([1.0, -2.5, 3.0]).astype(mx.bfloat16)
    k = mx.fast.metal_kernel(name="neg", input_names=["a"], output_names=["out"],
                             source="uint i = thread_position_in_grid.x;\nout[i] = -a[i];")
    (b,) = k(inputs=[a], grid=(3, 1, 1), threadgroup=(3, 1, 1), output_shapes=[(3,)], output_dtypes=[mx.bfloat16])
    assert b.dtype == mx.bfloat16
    assert b.astype(mx.float32).tolist() == [-1.0, 2.5, -3.0]


FWD = """
uint i = thread_position_in_grid.x;
float p = pos[i];
int j = int(metal::floor(p));
float t = p - float(j);
int n = x_shape[0];
float a = (j >= 0 && j < n) ? x[j] : 0.0f;
float b = (j + 1 >= 0 && j + 1 < n) ? x[j + 1] : 0.0f;
out[i] = a * (1.0f - t) + b * t;
"""

BWD = """
uint i = thread_position_in_grid.x;
float p = pos[i];
int j = int(metal::floor(p));
float t = p - float(j);
int n = x_shape[0];
float g = cot[i];
if (j >= 0 && j < n) { atomic_fetch_add_explicit(&dx[j], g * (1.0f - t), memory_order_relaxed); }
if (j + 1 >= 0 && j + 1 < n) { atomic_fetch_add_explicit(&dx[j + 1], g * t, memory_order_relaxed); }
"""


def test_custom_function_with_kernel_vjp_under_grad(hooked):
    """Linear sampling with a scatter-add backward kernel (the grid-sample pattern)."""
    fwd = mx.fast.metal_kernel(name="sample", input_names=["x", "pos"], output_names=["out"], source=FWD)
    bwd = mx.fast.metal_kernel(name="sample_vjp", input_names=["cot", "pos", "x"], output_names=["dx"],
                               source=BWD, atomic_outputs=True)

    @mx.custom_function
    def sample(x, pos):
        return fwd(inputs=[x, pos], grid=(pos.size, 1, 1), threadgroup=(32, 1, 1), output_shapes=[pos.shape],
                   output_dtypes=[mx.float32])[0]

    @sample.vjp
    def sample_vjp(primals, cotangent, output):
        x, pos = primals
        dx = bwd(inputs=[cotangent, pos, x], grid=(pos.size, 1, 1), threadgroup=(32, 1, 1), output_shapes=[x.shape],
                 output_dtypes=[mx.float32], init_value=0)[0]
        return dx, mx.zeros_like(pos)

    xs = np.array([1.0, 4.0, 2.0, 8.0, 5.0], np.float32)
    ps = np.array([0.5, 1.25, 3.0, 2.75, 3.9, -0.5], np.float32)
    ws = np.arange(1, 7, dtype=np.float32)
    x, pos, w = mx.array(xs), mx.array(ps), mx.array(ws)

    j = np.floor(ps).astype(int)
    t = ps - j
    padded = np.concatenate([[0], xs, [0, 0]])  # index -1 .. n+1
    expected = padded[j + 1] * (1 - t) + padded[j + 2] * t
    assert np.allclose(np.array(sample(x, pos)), expected)

    grad = mx.grad(lambda x: (sample(x, pos) * w).sum())(x)
    want = np.zeros(len(xs) + 3, np.float32)
    np.add.at(want, j + 1, ws * (1 - t))
    np.add.at(want, j + 2, ws * t)
    assert np.allclose(np.array(grad), want[1:len(xs) + 1])


def test_numpy_kernels_take_mlx_inputs():
    k = metal_kernel("add1", ["a"], ["out"], "uint i = thread_position_in_grid.x;\nout[i] = a[i] + 1;")
    (b,) = k(inputs=[mx.arange(4)], grid=(4, 1, 1), threadgroup=(4, 1, 1), output_shapes=[(4,)], output_dtypes=[mx.int32])
    assert isinstance(b, mx.array) and b.tolist() == [1, 2, 3, 4]


def test_availability_switch_and_library_gates():
    assert not mx.metal.is_available()
    assert metal_puzzles.mlx.install(force=True, available=True)
    try:
        assert mx.metal.is_available() and mx.is_available(mx.gpu)
        assert mx.default_device() == mx.gpu
        mx.set_default_device(mx.gpu)  # accepted; ops still run on the CPU
        assert (mx.arange(3) * 2).tolist() == [0, 2, 4]
        assert mx.metal.device_info()["threads_per_simdgroup"] == 32
    finally:
        metal_puzzles.mlx.uninstall()
    assert not mx.metal.is_available()
    assert mx.default_device() == mx.Device(mx.cpu)


def test_compile_runs_kernels_and_vmap_is_refused_with_the_workaround(hooked):
    k = mx.fast.metal_kernel(name="inc", input_names=["x"], output_names=["out"],
                             source="uint i = thread_position_in_grid.x;\nout[i] = x[i] + 1;")

    def f(x):
        return k(inputs=[x], grid=(x.size, 1, 1), threadgroup=(4, 1, 1), output_shapes=[x.shape],
                 output_dtypes=[x.dtype])[0]

    x = mx.arange(4, dtype=mx.float32)
    assert mx.compile(f)(x).tolist() == [1, 2, 3, 4]
    with pytest.raises(ValueError, match=r"\[metal_kernel\] kernel `inc` cannot run inside mx.vmap.*Workaround"):
        mx.vmap(f)(mx.ones((2, 4)))


def test_math_mode_errors_and_docstring(hooked):
    src = "uint i = thread_position_in_grid.x;\n#if defined(__FAST_MATH__) && __FAST_MATH__\nout[i] = 1.0f;\n#else\nout[i] = 0.0f;\n#endif"
    a = mx.zeros((2,))
    for mode, want in (("safe", 0.0), ("fast", 1.0)):
        k = mx.fast.metal_kernel(name="mm", input_names=["inp"], output_names=["out"], source=src,
                                 compile_options={"math_mode": mode})
        out = k(inputs=[a], grid=(2, 1, 1), threadgroup=(2, 1, 1), output_shapes=[(2,)], output_dtypes=[mx.float32])[0]
        assert out.tolist() == [want, want]
    with pytest.raises(ValueError, match=r"\[metal_kernel\] Expected math_mode"):
        mx.fast.metal_kernel(name="x", input_names=["a"], output_names=["o"], source="", compile_options={"math_mode": "precise"})
    with pytest.raises(ValueError, match=r"\[metal_kernel\] Unknown compile option"):
        mx.fast.metal_kernel(name="x", input_names=["a"], output_names=["o"], source="", compile_options={"unknown": 1})
    k = mx.fast.metal_kernel(name="d", input_names=["a"], output_names=["o"], source="o[0] = a[0];")
    assert "grid" in type(k).__call__.__doc__ and "threads" in type(k).__call__.__doc__
    assert mx.fast.metal_kernel.__name__ == "metal_kernel"
    with pytest.raises(TypeError, match=r"metal_kernel\.__call__\(\) got an unexpected keyword"):
        k(inputs=[a], grid=(1, 1, 1), threadgroup=(1, 1, 1), output_shapes=[(1,)], output_dtypes=[mx.float32], bogus=1)
