// PUZZLE: matmul
// GRID: 9,9,1
// THREADGROUP: 3,3,1
// INPUTS: a=arange(8,8):f32 b=arange(8,8).T:f32
// OUTPUT: out=8,8:f32
// SPEC: a @ b
#include <metal_stdlib>
using namespace metal;

        constant uint THREADGROUP_MEM_SIZE = 3;

[[kernel]] void custom_kernel_matmul_float_float_float(
  const device float* a [[buffer(0)]],
  const constant int* a_shape [[buffer(1)]],
  const device float* b [[buffer(2)]],
  device float* out [[buffer(3)]],
  uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
  uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
  uint3 threads_per_threadgroup [[threads_per_threadgroup]]) {

        threadgroup float a_shared[THREADGROUP_MEM_SIZE][THREADGROUP_MEM_SIZE];
        threadgroup float b_shared[THREADGROUP_MEM_SIZE][THREADGROUP_MEM_SIZE];

        uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
        uint j = threadgroup_position_in_grid.y * threads_per_threadgroup.y + thread_position_in_threadgroup.y;

        uint local_i = thread_position_in_threadgroup.x;
        uint local_j = thread_position_in_threadgroup.y;

        // i picks the output row, j the output column; square n x n operands
        uint n = uint(a_shape[0]);
        float acc = 0.0f;

        // march over the shared dimension one tile at a time
        for (uint base = 0; base < n; base += THREADGROUP_MEM_SIZE) {
            uint a_col = base + local_j;
            uint b_row = base + local_i;
            a_shared[local_i][local_j] = (i < n && a_col < n) ? a[i * n + a_col] : 0.0f;
            b_shared[local_i][local_j] = (b_row < n && j < n) ? b[b_row * n + j] : 0.0f;
            threadgroup_barrier(mem_flags::mem_threadgroup);

            for (uint k = 0; k < THREADGROUP_MEM_SIZE; ++k) {
                acc += a_shared[local_i][k] * b_shared[k][local_j];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }

        if (i < n && j < n) {
            out[i * n + j] = acc;
        }

}
