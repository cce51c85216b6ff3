// ERROR: 11: use of undeclared identifier 'bias_amount' (declared on a later line)
// A local variable read before the line that declares it.
#include <metal_stdlib>
using namespace metal;

kernel void use_before_declaration(
    device const float* src [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  float shifted = src[tid] + bias_amount;  // <-- error
  float bias_amount = 1.0f;
  out[tid] = shifted + bias_amount;
}
