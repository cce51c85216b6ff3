// ERROR: 8: `[[threadgroup(0)]]` is already used by another parameter of this kernel
// Two threadgroup-memory parameters bound to the same index.
#include <metal_stdlib>
using namespace metal;

kernel void duplicate_threadgroup_index(device float* out [[buffer(0)]],
                                        threadgroup float* sums [[threadgroup(0)]],
                                        threadgroup float* maxes [[threadgroup(0)]],  // <-- error
                                        uint lid [[thread_position_in_threadgroup]])
{
  sums[lid] = 1.0f;
  maxes[lid] = 2.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid] = sums[lid] + maxes[lid];
}
