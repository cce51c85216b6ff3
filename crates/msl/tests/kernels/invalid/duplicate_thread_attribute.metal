// ERROR: 8: `[[thread_position_in_grid]]` is already given to another parameter of this kernel
// The same thread-position attribute on two parameters.
#include <metal_stdlib>
using namespace metal;

kernel void duplicate_thread_attribute(device float* out [[buffer(0)]],
                                       uint tid [[thread_position_in_grid]],
                                       uint gid [[thread_position_in_grid]])  // <-- error
{
  out[tid] = float(gid);
}
