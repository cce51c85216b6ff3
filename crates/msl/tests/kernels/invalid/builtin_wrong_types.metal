// ERROR: 13: no matching function for call to 'dot' (float3 and float4)
// A builtin called with operands of mismatched vector sizes.
#include <metal_stdlib>
using namespace metal;

kernel void builtin_wrong_types(
    device const float4* src [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  float4 v = src[tid];
  float3 w = v.xyz;
  out[tid] = dot(w, v);  // <-- error
}
