// ERROR: 12: use of undeclared identifier 'vlaue' (typo of 'value')
// A misspelt local variable name.
#include <metal_stdlib>
using namespace metal;

kernel void undeclared_identifier(
    device const float* src [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  float value = src[tid];
  out[tid] = vlaue + 1.0f;  // <-- error
}
