// ERROR: 13: invalid operands to binary expression ('float' and 'float') for '%'
// The % operator is integer-only; floats need fmod.
#include <metal_stdlib>
using namespace metal;

kernel void float_modulo(
    device const float* src [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  float a = src[tid];
  float b = 3.0f;
  out[tid] = a % b;  // <-- error
}
