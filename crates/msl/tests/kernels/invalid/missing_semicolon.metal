// ERROR: 11: expected ';' at end of declaration
// A declaration without its terminating semicolon.
#include <metal_stdlib>
using namespace metal;

kernel void missing_semicolon(
    device const float* src [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  float v = src[tid] * 2.0f  // <-- error
  out[tid] = v;
}
