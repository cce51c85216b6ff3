// ERROR: 9: deduced conflicting types ('float' vs 'int') for initializer list element type
// The elements of a braced list walked by a range-based for must share one type.
#include <metal_stdlib>
using namespace metal;

kernel void range_for_braced_list_mixed_types(device float* out [[buffer(0)]],
                                              uint tid [[thread_position_in_grid]]) {
  float s = 0;
  for (auto x : {1.0f, 2}) {  // <-- error
    s += x;
  }
  out[tid] = s;
}
