// ERROR: 8: `[[buffer(1)]]` is already used by another parameter of this kernel
// Two buffer parameters bound to the same index.
#include <metal_stdlib>
using namespace metal;

kernel void duplicate_buffer_index(device const float* a [[buffer(0)]],
                                   device const float* b [[buffer(1)]],
                                   device float* out [[buffer(1)]],  // <-- error
                                   uint tid [[thread_position_in_grid]])
{
  out[tid] = a[tid] + b[tid];
}
