"""compile_shader: PyTorch's binding rules on NumPy arrays."""

import numpy as np
import pytest

import metal_puzzles as mp

SRC = """
#include <metal_stdlib>
using namespace metal;

kernel void scale(const device float* x [[buffer(0)]], device float* out [[buffer(1)]],
                  constant float& f [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    out[i] = x[i] * f;
}

kernel void fill2d(device int* out [[buffer(0)]], constant long& width [[buffer(1)]],
                   uint2 p [[thread_position_in_grid]]) {
    out[p.y * width + p.x] = int(p.y * 100 + p.x);
}

kernel void fill3d(device int* out [[buffer(0)]], uint3 p [[thread_position_in_grid]],
                   uint3 n [[threads_per_grid]]) {
    out[(p.z * n.y + p.y) * n.x + p.x] = int(p.z * 10000 + p.y * 100 + p.x);
}

kernel void groups(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]],
                   uint g [[threadgroup_position_in_grid]], uint t [[threads_per_threadgroup]]) {
    out[i] = g * 1000 + t;
}
"""


@pytest.fixture(scope="module")
def lib():
    return mp.compile_shader(SRC)


def test_kernels_are_attributes(lib):
    assert set(lib.kernel_names) == {"scale", "fill2d", "fill3d", "groups"}
    with pytest.raises(AttributeError, match="its kernels are"):
        lib.nope


def test_1d_scalar_and_default_threads(lib):
    x = np.arange(7, dtype=np.float32)
    out = np.zeros(7, np.float32)
    lib.scale(x, out, 3.0)  # threads default to the first array's size
    np.testing.assert_array_equal(out, x * 3)
    one = np.array([0.5], dtype=np.float32)  # a one-element array backs a scalar too
    lib.scale(x, out, one, threads=[7])
    np.testing.assert_array_equal(out, x * 0.5)


def test_2d_threads_and_int_scalar(lib):
    out = np.zeros((3, 5), np.int32)
    lib.fill2d(out, 5, threads=[5, 3], group_size=[2, 2])
    np.testing.assert_array_equal(out, np.add.outer(np.arange(3) * 100, np.arange(5)))


def test_3d_threads(lib):
    out = np.zeros((2, 3, 4), np.int32)
    lib.fill3d(out, threads=[4, 3, 2], group_size=[4, 1, 1])
    z, y, x = np.meshgrid(np.arange(2), np.arange(3), np.arange(4), indexing="ij")
    np.testing.assert_array_equal(out, z * 10000 + y * 100 + x)


def test_partial_threadgroups(lib):
    out = np.zeros(10, np.uint32)
    lib.groups(out, threads=10, group_size=4)
    np.testing.assert_array_equal(out, [4, 4, 4, 4, 1004, 1004, 1004, 1004, 2002, 2002])  # the edge group is partial


def test_results_land_in_strided_views(lib):
    x = np.arange(4, dtype=np.float32)
    base = np.zeros(8, np.float32)
    lib.scale(x, base[::2], 2.0, threads=4)
    np.testing.assert_array_equal(base, [0, 0, 2, 0, 4, 0, 6, 0])


def test_binding_errors_teach(lib):
    x = np.arange(4, dtype=np.float32)
    out = np.zeros(4, np.float32)
    # An int into a `constant float&`: read as a Mac reads it (its low 4
    # bytes as a float), with a warning that says what to pass.
    with pytest.warns(mp.KernelWarning, match=r"8-byte int64 as PyTorch does.*pass a Python float"):
        lib.scale(x, out, 2, threads=4)
    with pytest.raises(ValueError, match=r"buffer\(2\)"):
        lib.scale(x, out, threads=4)
    with pytest.raises(ValueError, match="must have dtype float32"):
        lib.scale(x.astype(np.int32), out, 2.0)


def test_compile_error_and_kernel_error():
    with pytest.raises(mp.CompileError) as e:
        mp.compile_shader("kernel void k(device float* o [[buffer(0)]]) { o[0] = nope; }")
    d = e.value.diagnostics[0]
    assert (d.line, d.column) == (1, 55)
    lib = mp.compile_shader(
        "kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i + 1] = 1; }"
    )
    with pytest.raises(mp.KernelError) as e:
        lib.k(np.zeros(4, np.float32))
    assert e.value.findings[0].kind == "out-of-bounds"
    assert e.value.findings[0].thread == (3, 0, 0)


def test_torch_tensors_when_installed():
    try:
        import torch
    except (ImportError, OSError) as e:
        pytest.skip(f"torch is not usable here: {e}")
    lib = mp.compile_shader(SRC)
    x = torch.arange(5, dtype=torch.float32)
    out = torch.zeros(5)
    lib.scale(x, out, 2.0)
    assert out.tolist() == [0, 2, 4, 6, 8]


def test_compile_shader_check_nan_warns_where_each_nan_was_born():
    lib = mp.compile_shader(
        """
kernel void ratio(device const float* a [[buffer(0)]], device float* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    float e = exp(a[i]);
    out[i] = e / e;
}
"""
    )
    a = np.array([1.0, 121.0], np.float32)
    out = np.zeros(2, np.float32)
    with pytest.warns(mp.KernelWarning, match=r"exp\(121\) overflows float"):
        lib.ratio(a, out, check="nan")
    assert out[0] == 1.0 and np.isnan(out[1])
