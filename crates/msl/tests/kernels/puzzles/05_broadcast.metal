// PUZZLE: broadcast
// GRID: 3,3,1
// THREADGROUP: 3,3,1
// INPUTS: a=arange(2,1):i32 b=arange(1,2):i32
// OUTPUT: out=2,2:f32
// SPEC: a + b
#include <metal_stdlib>
using namespace metal;

[[kernel]] void custom_kernel_broadcast_int32_tc_int32_tc_float(
  const constant int32_t* a [[buffer(0)]],
  const constant int* a_shape [[buffer(1)]],
  const constant int32_t* b [[buffer(2)]],
  const constant int* b_shape [[buffer(3)]],
  device float* out [[buffer(4)]],
  uint3 thread_position_in_grid [[thread_position_in_grid]]) {

        uint thread_x = thread_position_in_grid.x;
        uint thread_y = thread_position_in_grid.y;
        // a is a column (rows x 1), b is a row (1 x cols)
        uint rows = uint(a_shape[0]);
        uint cols = uint(b_shape[1]);
        if (thread_y < rows && thread_x < cols) {
            out[thread_y * cols + thread_x] = a[thread_y] + b[thread_x];
        }

}
