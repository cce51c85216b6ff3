// PUZZLE: threadgroups_2d
// GRID: 6,6,1
// THREADGROUP: 3,3,1
// INPUTS: a=ones(5,5):f32
// OUTPUT: out=5,5:f32
// SPEC: a + 10
#include <metal_stdlib>
using namespace metal;

[[kernel]] void custom_kernel_threadgroups_2D_float_float(
  const device float* a [[buffer(0)]],
  const constant int* a_shape [[buffer(1)]],
  device float* out [[buffer(2)]],
  uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
  uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
  uint3 threads_per_threadgroup [[threads_per_threadgroup]]) {

        uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
        // same computation for the second axis
        uint j = threadgroup_position_in_grid.y * threads_per_threadgroup.y + thread_position_in_threadgroup.y;
        uint rows = uint(a_shape[0]);
        uint cols = uint(a_shape[1]);
        if (i < cols && j < rows) {
            uint idx = j * cols + i;
            out[idx] = a[idx] + 10;
        }

}
