// ERROR: 9: an array size must be a compile-time constant (the shift count 32 is not below the width of `int`)
// A constant expression whose result C++ leaves undefined is not a constant.
#include <metal_stdlib>
using namespace metal;

constant int BITS = 32;

kernel void array_size_undefined_shift(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  float table[(1 << BITS) / 1024];  // <-- error
  table[0] = 1.0f;
  out[tid] = table[0];
}
