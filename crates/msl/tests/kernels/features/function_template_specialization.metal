// UNSUPPORTED: an explicit specialization of a function template
// (`template <> ...`). Valid Metal; the simulator's front end reports it as
// not supported yet.
#include <metal_stdlib>
using namespace metal;

template <typename T>
T scale_of(T v) {
  return v * T(2);
}

template <>
half scale_of<half>(half v) {
  return v * 4.0h;
}

kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = scale_of(float(i)) + float(scale_of(half(1.0h)));
}
