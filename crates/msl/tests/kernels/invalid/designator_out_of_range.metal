// ERROR: 8: index 4 is outside the array, which has 4 elements
// A GNU range designator that runs past the end of the array.
#include <metal_stdlib>
using namespace metal;

kernel void designator_out_of_range(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]])
{
  float s[4] = { [1 ... 4] = 1.0f };  // <-- error
  out[tid] = s[tid % 4];
}
