// PUZZLE: guard
// GRID: 8,1,1
// THREADGROUP: 8,1,1
// INPUTS: a=arange(4):i32
// OUTPUT: out=4:f32
// SPEC: a + 10
#include <metal_stdlib>
using namespace metal;

[[kernel]] void custom_kernel_guard_int32_tc_float(
  const constant int32_t* a [[buffer(0)]],
  const constant int* a_shape [[buffer(1)]],
  device float* out [[buffer(2)]],
  uint3 thread_position_in_grid [[thread_position_in_grid]]) {

        uint local_i = thread_position_in_grid.x;
        // more threads than elements: the extra ones do nothing
        uint n = uint(a_shape[0]);
        if (local_i < n) {
            out[local_i] = a[local_i] + 10;
        }

}
