// PUZZLE: axis_sum
// GRID: 8,4,1
// THREADGROUP: 8,1,1
// INPUTS: a=arange(4,6):i32
// OUTPUT: out=4,1:f32
// SPEC: a.sum(axis=1, keepdims=True).astype(np.float32)
#include <metal_stdlib>
using namespace metal;

        constant uint THREADGROUP_MEM_SIZE = 8;

[[kernel]] void custom_kernel_axis_sum_int32_t_float(
  const device int32_t* a [[buffer(0)]],
  const constant int* a_shape [[buffer(1)]],
  device float* out [[buffer(2)]],
  uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
  uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
  uint3 threads_per_threadgroup [[threads_per_threadgroup]]) {

        threadgroup float cache[THREADGROUP_MEM_SIZE];
        uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
        uint local_i = thread_position_in_threadgroup.x;
        uint batch = threadgroup_position_in_grid.y;

        uint cols = uint(a_shape[1]);
        uint out_cols = (cols + THREADGROUP_MEM_SIZE - 1) / THREADGROUP_MEM_SIZE;

        // row `batch`, column i (zero when past the row end)
        cache[local_i] = (i < cols) ? float(a[batch * cols + i]) : 0.0f;
        threadgroup_barrier(mem_flags::mem_threadgroup);

        for (uint half_width = THREADGROUP_MEM_SIZE / 2; half_width > 0; half_width /= 2) {
            if (local_i < half_width) {
                cache[local_i] += cache[local_i + half_width];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }

        if (local_i == 0) {
            out[batch * out_cols + threadgroup_position_in_grid.x] = cache[0];
        }

}
