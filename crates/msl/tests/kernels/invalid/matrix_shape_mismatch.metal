// ERROR: 10: invalid operands to '*': 'float3x2' and 'float2' (a 3-column matrix needs a 3-component vector on its right)
// A matrix of 3 columns times a vector of its row count.
#include <metal_stdlib>
using namespace metal;

kernel void matrix_shape_mismatch(device float2* out [[buffer(0)]], uint tid [[thread_position_in_grid]])
{
  float3x2 m = float3x2(1.0f);
  float2 v = float2(float(tid), 1.0f);
  out[tid] = m * v;  // <-- error
}
