// ERROR: 12: vector component access exceeds type 'float2' (.z)
// Reading a third component from a two-component vector.
#include <metal_stdlib>
using namespace metal;

kernel void swizzle_out_of_range(
    device const float2* src [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  float2 v = src[tid];
  out[tid] = v.x + v.z;  // <-- error
}
