// PUZZLE: map_2d
// GRID: 3,3,1
// THREADGROUP: 3,3,1
// INPUTS: a=arange(2,2):i32
// OUTPUT: out=2,2:f32
// SPEC: a + 10
#include <metal_stdlib>
using namespace metal;

[[kernel]] void custom_kernel_map_2D_int32_tc_float(
  const constant int32_t* a [[buffer(0)]],
  const constant int* a_shape [[buffer(1)]],
  device float* out [[buffer(2)]],
  uint3 thread_position_in_grid [[thread_position_in_grid]]) {

        uint thread_x = thread_position_in_grid.x;
        uint thread_y = thread_position_in_grid.y;
        // x walks the columns, y walks the rows of a row-major matrix
        uint rows = uint(a_shape[0]);
        uint cols = uint(a_shape[1]);
        if (thread_x < cols && thread_y < rows) {
            uint idx = thread_y * cols + thread_x;
            out[idx] = a[idx] + 10;
        }

}
