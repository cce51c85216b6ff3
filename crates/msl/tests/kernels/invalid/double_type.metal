// ERROR: 11: 'double' is not supported in Metal
// Double precision does not exist in the Metal shading language.
#include <metal_stdlib>
using namespace metal;

kernel void double_type(
    device const float* src [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  double wide = src[tid];  // <-- error
  out[tid] = float(wide);
}
