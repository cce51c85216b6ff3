// PUZZLE: dot_product
// GRID: 8,1,1
// THREADGROUP: 8,1,1
// INPUTS: a=arange(8):f32 b=arange(8):f32
// OUTPUT: out=1:f32
// SPEC: np.array([a @ b], dtype=np.float32)
#include <metal_stdlib>
using namespace metal;

        constant uint THREADGROUP_MEM_SIZE = 8;

[[kernel]] void custom_kernel_dot_product_float_float_float(
  const device float* a [[buffer(0)]],
  const constant int* a_shape [[buffer(1)]],
  const device float* b [[buffer(2)]],
  device float* out [[buffer(3)]],
  uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
  uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
  uint3 threads_per_threadgroup [[threads_per_threadgroup]]) {

        threadgroup float shared[THREADGROUP_MEM_SIZE];
        uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
        uint local_i = thread_position_in_threadgroup.x;
        uint n = uint(a_shape[0]);

        // each thread forms one product
        shared[local_i] = (i < n) ? a[i] * b[i] : 0.0f;
        threadgroup_barrier(mem_flags::mem_threadgroup);

        // halve the active range each round (group size is a power of two)
        for (uint stride = threads_per_threadgroup.x / 2; stride > 0; stride /= 2) {
            if (local_i < stride) {
                shared[local_i] += shared[local_i + stride];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }

        if (local_i == 0) {
            out[0] = shared[0];
        }

}
