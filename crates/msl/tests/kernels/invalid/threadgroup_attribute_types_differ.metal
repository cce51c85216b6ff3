// ERROR: 8: `[[threads_per_threadgroup]]` has type `uint2` but `[[thread_position_in_threadgroup]]` has type `ushort2`
// The position in the threadgroup as ushort2, the threadgroup size as uint2.
#include <metal_stdlib>
using namespace metal;

kernel void threadgroup_attribute_types_differ(device float* out [[buffer(0)]],
                                               ushort2 lid [[thread_position_in_threadgroup]],
                                               uint2 size [[threads_per_threadgroup]])  // <-- error
{
  out[lid.y * size.x + lid.x] = 1.0f;
}
