// ERROR: 8: non-void function 'half_of' should return a value ('return;' in a function returning float)
// A bare return in a function that must produce a float.
#include <metal_stdlib>
using namespace metal;

float half_of(float v) {
  if (v < 0.0f) {
    return;  // <-- error
  }
  return v * 0.5f;
}

kernel void missing_return_value(
    device const float* src [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  out[tid] = half_of(src[tid]);
}
