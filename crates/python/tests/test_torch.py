"""PyTorch as PyTorch does it: metal_puzzles.torch.install() makes
torch.mps.compile_shader compile on the simulator; Python scalars travel as
PyTorch sends them (int -> int64, float -> float32).

Needs torch (tools/test.py installs it; set METAL_PUZZLES_SKIP_TORCH=1 to
skip these tests)."""

import os
import warnings

import numpy as np
import pytest

if os.environ.get("METAL_PUZZLES_SKIP_TORCH") == "1":
    pytest.skip("METAL_PUZZLES_SKIP_TORCH is set", allow_module_level=True)
try:
    import torch
except ImportError as e:
    pytest.skip(f"torch is not installed (tools/test.py installs it): {e}", allow_module_level=True)
except OSError as e:
    # A torch whose shared libraries are missing is a broken install, not a test failure.
    pytest.skip(f"torch is installed but does not load: {e}", allow_module_level=True)

import metal_puzzles as mp  # noqa: E402
import metal_puzzles.torch  # noqa: E402

SRC = """
#include <metal_stdlib>
using namespace metal;

kernel void scale_u(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                    constant float& a [[buffer(2)]], constant uint& w [[buffer(3)]],
                    uint i [[thread_position_in_grid]]) {
    y[i] = x[i] * a + float(w);
}
kernel void add_i(device int* y [[buffer(0)]], constant int& k [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    y[i] += k;
}
kernel void add_l(device long* y [[buffer(0)]], constant long& k [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    y[i] += k;
}
kernel void add_f(device float* y [[buffer(0)]], constant float& k [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    y[i] += k;
}
kernel void shape2(device uint* y [[buffer(0)]], constant uint2& shape [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    y[i] = shape.x * 10 + shape.y;
}
kernel void long2k(device long* y [[buffer(0)]], constant long2& s [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    y[i] = s.x - s.y;
}
kernel void f4(device float* y [[buffer(0)]], constant float4& v [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    y[i] = v.x + v.y + v.z + v.w;
}
kernel void grid2(device uint* y [[buffer(0)]], uint2 p [[thread_position_in_grid]], uint2 n [[threads_per_grid]]) {
    y[p.y * n.x + p.x] = p.x + 100 * p.y;
}
"""


@pytest.fixture(scope="module")
def lib():
    assert metal_puzzles.torch.install()
    yield torch.mps.compile_shader(SRC)
    metal_puzzles.torch.uninstall()


def test_install_routes_compile_shader():
    assert metal_puzzles.torch.install()
    assert torch.mps.compile_shader is mp.compile_shader
    metal_puzzles.torch.uninstall()
    assert not metal_puzzles.torch.installed()


def test_int_into_uint_and_float_into_float_written_back(lib):
    x = torch.arange(8, dtype=torch.float32)
    y = torch.zeros(8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 2.0 and 4 are read exactly: no warning
        lib.scale_u(x, y, 2.0, 4, threads=8)
    assert torch.equal(y, x * 2 + 4)


def test_int_into_int_and_long(lib):
    y = torch.arange(4, dtype=torch.int32)
    lib.add_i(y, -3, threads=4)
    assert y.tolist() == [-3, -2, -1, 0]
    z = torch.zeros(4, dtype=torch.int64)
    lib.add_l(z, 2**40, threads=4)
    assert z.tolist() == [2**40] * 4


def test_an_int_that_does_not_fit_uint_warns_and_reads_the_low_bytes(lib):
    x = torch.ones(2)
    y = torch.zeros(2)
    with pytest.warns(mp.KernelWarning, match="reads 1 from those bytes"):
        lib.scale_u(x, y, 1.0, 2**32 + 1, threads=2)
    assert y.tolist() == [2.0, 2.0]


def test_an_int_into_a_float_reads_its_bits_as_a_mac_does(lib):
    y = torch.zeros(2)
    with pytest.warns(mp.KernelWarning, match="not 3: pass a Python float"):
        lib.add_f(y, 3, threads=2)
    assert y[0].item() == np.frombuffer(np.int64(3).tobytes()[:4], dtype=np.float32)[0]


def test_vector_parameters_from_tuples_and_tensors(lib):
    y = torch.zeros(2, dtype=torch.int64)
    lib.long2k(y, (7, 2), threads=2)
    assert y.tolist() == [5, 5]
    u = torch.zeros(2, dtype=torch.int32).view(torch.uint32) if hasattr(torch, "uint32") else np.zeros(2, np.uint32)
    lib.shape2(u, torch.tensor([3, 4], dtype=torch.int32), threads=2)
    assert [int(v) for v in u.tolist()] == [34, 34]
    f = torch.zeros(1)
    lib.f4(f, [1.0, 2.0, 3.0, 4.5], threads=1)
    assert f.item() == 10.5


def test_a_tuple_too_short_for_its_parameter_is_refused(lib):
    f = torch.zeros(1)
    with pytest.raises(ValueError, match="reads 16 bytes"):
        lib.f4(f, [1.0, 2.0], threads=1)


def test_threads_and_group_size_as_pytorch_takes_them(lib):
    y = np.zeros(12, dtype=np.uint32)
    lib.grid2(y, threads=[4, 3], group_size=[2, 2])
    assert y.reshape(3, 4)[2, 1] == 201
    t = torch.zeros(8)
    lib.add_f(t, 1.5)  # threads default to the first tensor's element count
    assert t.tolist() == [1.5] * 8


def test_findings_raise_kernel_error_with_the_line(lib):
    y = torch.zeros(4)
    with pytest.raises(mp.KernelError) as e:
        lib.add_f(y, 1.0, threads=5)
    f = e.value.findings[0]
    assert f.kind == "out-of-bounds" and f.line == 17 and f.thread == (4, 0, 0)
