# A test file written the way MLX's python/tests/test_fast.py writes its
# metal_kernel tests (unittest, skipped without Metal, stream=mx.gpu), plus
# a module that gates its kernel on mx.metal.is_available() as libraries do.
import unittest

import mlx.core as mx


def library_op(x):
    """A library function: a custom kernel where Metal is available, ops elsewhere."""
    if mx.metal.is_available() and mx.default_device() == mx.gpu:
        kernel = mx.fast.metal_kernel(
            name="library_double",
            input_names=["x"],
            output_names=["out"],
            source="uint i = thread_position_in_grid.x;\nout[i] = x[i] * 2;",
        )
        (out,) = kernel(inputs=[x], grid=(x.size, 1, 1), threadgroup=(32, 1, 1),
                        output_shapes=[x.shape], output_dtypes=[x.dtype])
        library_op.used_kernel = True
        return out
    library_op.used_kernel = False
    return x * 2


class TestCustomKernels(unittest.TestCase):
    @unittest.skipIf(not mx.is_available(mx.gpu), "No GPU available")
    def test_custom_kernel_basic(self):
        source = """
            uint elem = thread_position_in_grid.x;
            out1[elem] = a[elem];
        """
        mx.random.seed(7)
        a = mx.random.normal(shape=(2, 2))
        kernel = mx.fast.metal_kernel(name="basic", input_names=["a"], output_names=["out1"], source=source)
        out = kernel(inputs=[a], grid=(4, 1, 1), threadgroup=(2, 1, 1), output_shapes=[(2, 2)],
                     output_dtypes=[mx.float32], stream=mx.gpu)
        self.assertTrue(mx.allclose(out[0], a))

    @unittest.skipIf(not mx.metal.is_available(), "Metal is not available")
    def test_custom_kernel_attributes(self):
        # Both threads store the same value to out[0]: a warning, not a failure.
        a = mx.zeros(shape=(1, 1))
        kernel = mx.fast.metal_kernel(name="test_fun", input_names=["a"], output_names=["out"],
                                      source="out[0] = threads_per_threadgroup.x;")
        out = kernel(inputs=[a], grid=(2, 1, 1), threadgroup=(2, 1, 1), output_shapes=[(1, 1)],
                     output_dtypes=[mx.uint32], stream=mx.gpu)[0]
        self.assertEqual(out.item(), 2)

    @unittest.skipIf(not mx.metal.is_available(), "Metal is not available")
    def test_library_reaches_the_kernel(self):
        x = mx.arange(40, dtype=mx.float32)
        self.assertTrue(mx.array_equal(library_op(x), x * 2))
        self.assertTrue(library_op.used_kernel)

    @unittest.skipIf(not mx.metal.is_available(), "Metal is not available")
    def test_kernel_inside_compile(self):
        kernel = mx.fast.metal_kernel(name="plus_one", input_names=["x"], output_names=["out"],
                                      source="uint i = thread_position_in_grid.x;\nout[i] = x[i] + 1;")

        @mx.compile
        def f(x):
            return kernel(inputs=[x * 3], grid=(x.size, 1, 1), threadgroup=(8, 1, 1),
                          output_shapes=[x.shape], output_dtypes=[x.dtype])[0] * 2

        x = mx.arange(8, dtype=mx.float32)
        self.assertTrue(mx.array_equal(f(x), (x * 3 + 1) * 2))
