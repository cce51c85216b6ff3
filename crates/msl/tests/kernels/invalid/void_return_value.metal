// ERROR: 8: void function 'store_twice' should not return a value
// Returning a value from a function declared void.
#include <metal_stdlib>
using namespace metal;

void store_twice(device float* dst, float v) {
  dst[0] = v * 2.0f;
  return v;  // <-- error
}

kernel void void_return_value(
    device float* out [[buffer(0)]],
    uint tid [[thread_position_in_grid]])
{
  store_twice(out + tid, float(tid));
}
