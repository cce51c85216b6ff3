// PUZZLE: threadgroups
// GRID: 12,1,1
// THREADGROUP: 4,1,1
// INPUTS: a=arange(9):i32
// OUTPUT: out=9:f32
// SPEC: a + 10
#include <metal_stdlib>
using namespace metal;

[[kernel]] void custom_kernel_threadgroups_int32_t_float(
  const device int32_t* a [[buffer(0)]],
  const constant int* a_shape [[buffer(1)]],
  device float* out [[buffer(2)]],
  uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
  uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
  uint3 threads_per_threadgroup [[threads_per_threadgroup]]) {

        uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
        // the last group is only partly in range
        if (i < uint(a_shape[0])) {
            out[i] = a[i] + 10;
        }

}
