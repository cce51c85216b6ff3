// ERROR: 11: 'break' statement not in loop or switch statement
// A break with no enclosing loop or switch.
#include <metal_stdlib>
using namespace metal;

kernel void break_outside_loop(
    device float* out [[buffer(0)]],
    uint tid [[thread_position_in_grid]])
{
  if (tid > 4) {
    break;  // <-- error
  }
  out[tid] = 1.0f;
}
