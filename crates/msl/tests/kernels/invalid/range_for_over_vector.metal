// ERROR: 10: invalid range expression of type 'float4'; no viable 'begin' function available
// A range-based for needs an array; a vector has no elements to iterate.
#include <metal_stdlib>
using namespace metal;

kernel void range_for_over_vector(
    device float* out [[buffer(0)]],
    uint tid [[thread_position_in_grid]]) {
  float4 v = float4(1.0f, 2.0f, 3.0f, 4.0f);
  for (float x : v) {  // <-- error
    out[tid] += x;
  }
}
