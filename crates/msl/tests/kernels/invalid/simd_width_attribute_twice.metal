// ERROR: 7: a kernel cannot take both `[[thread_execution_width]]` and `[[threads_per_simdgroup]]`
// The old and the new name of the SIMD-group width in one kernel.
#include <metal_stdlib>
using namespace metal;

kernel void simd_width_attribute_twice(device uint* out [[buffer(0)]],
                                       uint width [[thread_execution_width]],  // <-- error
                                       uint lanes [[threads_per_simdgroup]],
                                       uint tid [[thread_position_in_grid]])
{
  out[tid] = width + lanes;
}
