// ERROR: 11: vector is not assignable (swizzle contains duplicate components)
// Writing through a swizzle that names the same component twice.
#include <metal_stdlib>
using namespace metal;

kernel void swizzle_repeated_assign(
    device float4* data [[buffer(0)]],
    uint tid [[thread_position_in_grid]])
{
  float4 v = data[tid];
  v.xx = float2(1.0f, 2.0f);  // <-- error
  data[tid] = v;
}
