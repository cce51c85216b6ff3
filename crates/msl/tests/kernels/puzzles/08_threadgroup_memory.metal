// PUZZLE: threadgroup_memory
// GRID: 8,1,1
// THREADGROUP: 4,1,1
// INPUTS: a=ones(8):f32
// OUTPUT: out=8:f32
// SPEC: a + 10
#include <metal_stdlib>
using namespace metal;

        constant uint THREADGROUP_MEM_SIZE = 4;

[[kernel]] void custom_kernel_threadgroup_memory_float_float(
  const device float* a [[buffer(0)]],
  const constant int* a_shape [[buffer(1)]],
  device float* out [[buffer(2)]],
  uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
  uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
  uint3 threads_per_threadgroup [[threads_per_threadgroup]]) {

        threadgroup float shared[THREADGROUP_MEM_SIZE];
        uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
        uint local_i = thread_position_in_threadgroup.x;
        uint n = uint(a_shape[0]);

        // stage through threadgroup memory; the barrier is reached by every thread
        if (i < n) {
            shared[local_i] = a[i];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);

        if (i < n) {
            out[i] = shared[local_i] + 10;
        }

}
