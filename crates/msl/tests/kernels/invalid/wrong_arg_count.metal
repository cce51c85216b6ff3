// ERROR: 16: no matching function for call to 'add3' (2 arguments, 3 expected)
// A user function called with too few arguments.
#include <metal_stdlib>
using namespace metal;

float add3(float a, float b, float c) {
  return a + b + c;
}

kernel void wrong_arg_count(
    device const float* src [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  float v = src[tid];
  out[tid] = add3(v, 1.0f);  // <-- error
}
