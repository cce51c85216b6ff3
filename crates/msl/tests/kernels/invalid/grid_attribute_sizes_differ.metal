// ERROR: 7: `[[threads_per_grid]]` has 3 components but `[[thread_position_in_grid]]` has 2
// A 2-D position with a 3-D grid size.
#include <metal_stdlib>
using namespace metal;

kernel void grid_attribute_sizes_differ(device float* out [[buffer(0)]], uint2 gid [[thread_position_in_grid]],
                                        uint3 grid [[threads_per_grid]])  // <-- error
{
  out[gid.y * grid.x + gid.x] = 1.0f;
}
