// PUZZLE: map
// GRID: 4,1,1
// THREADGROUP: 4,1,1
// INPUTS: a=arange(4):i32
// OUTPUT: out=4:f32
// SPEC: a + 10
#include <metal_stdlib>
using namespace metal;

[[kernel]] void custom_kernel_map_int32_tc_float(
  const constant int32_t* a [[buffer(0)]],
  device float* out [[buffer(1)]],
  uint3 thread_position_in_grid [[thread_position_in_grid]]) {

        uint local_i = thread_position_in_grid.x;
        // one thread per element: shift by ten
        out[local_i] = a[local_i] + 10;

}
