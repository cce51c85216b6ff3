// ERROR: 15: the function type's parameters are not the template's (a `float*` where it takes a `half*`)
// A function-type typedef names the signature an explicit instantiation
// must have; here it differs from the template's for `T = half`.
#include <metal_stdlib>
using namespace metal;

typedef void (fill_t)(device float *out [[buffer(0)]], uint i [[thread_position_in_grid]]);

template <typename T>
kernel void fill(device T *out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = T(i);
}

template [[host_name("fill_f32")]] kernel fill_t fill<float>;
template [[host_name("fill_f16")]] kernel fill_t fill<half>; // <-- error
