// FEATURE: a range-based for over a braced list (std::initializer_list):
// one deduced element type, the elements walked in order.
// KERNEL: range_for_braced_list
// GRID: 4,1,1
// THREADGROUP: 4,1,1
#include <metal_stdlib>
using namespace metal;

kernel void range_for_braced_list(
    device float* out [[buffer(0)]],
    uint tid [[thread_position_in_grid]]) {
  float sum = 0.0f;
  for (float w : {0.25f, 0.5f, 0.25f}) {
    sum += w;
  }
  out[tid] = sum;
}
