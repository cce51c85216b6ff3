// ERROR: 11: unknown type name 'flaot' (typo of 'float')
// A misspelt type name in a declaration.
#include <metal_stdlib>
using namespace metal;

kernel void unknown_type(
    device const float* src [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  flaot scaled = src[tid] * 2.0f;  // <-- error
  out[tid] = scaled;
}
