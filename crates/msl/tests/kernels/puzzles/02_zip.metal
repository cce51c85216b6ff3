// PUZZLE: zip
// GRID: 4,1,1
// THREADGROUP: 4,1,1
// INPUTS: a=arange(4):i32 b=arange(4):i32
// OUTPUT: out=4:f32
// SPEC: a + b
#include <metal_stdlib>
using namespace metal;

[[kernel]] void custom_kernel_zip_int32_tc_int32_tc_float(
  const constant int32_t* a [[buffer(0)]],
  const constant int32_t* b [[buffer(1)]],
  device float* out [[buffer(2)]],
  uint3 thread_position_in_grid [[thread_position_in_grid]]) {

        uint local_i = thread_position_in_grid.x;
        // element-wise sum of the two inputs
        out[local_i] = a[local_i] + b[local_i];

}
