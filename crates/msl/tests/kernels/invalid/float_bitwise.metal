// ERROR: 12: invalid operands to binary expression ('float' and 'uint') for '&'
// Bitwise operators do not apply to floating-point values.
#include <metal_stdlib>
using namespace metal;

kernel void float_bitwise(
    device const float* src [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  float a = src[tid];
  float masked = a & 0x7fffffffu;  // <-- error
  out[tid] = masked;
}
