// ERROR: 6: a pointer type needs an explicit address space (Metal: "pointer type must have explicit address space qualifier")
// A helper taking `float*`: Metal pointers have no default address space.
#include <metal_stdlib>
using namespace metal;

void scale(float* values, uint i, float s) {  // <-- error
  values[i] *= s;
}

kernel void pointer_without_address_space(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]])
{
  float tmp[4] = {1, 2, 3, 4};
  thread float* t = tmp;
  out[tid] = t[tid % 4];
}
