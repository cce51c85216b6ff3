// FEATURE: a reference-to-array parameter with its size deduced, and a
// trailing return type with decltype (out = 2.5 everywhere).
#include <metal_stdlib>
using namespace metal;

// N is deduced from the array type
template <int N>
float average(thread const float (&vals)[N]) {
  float acc = 0.0f;
  for (int i = 0; i < N; ++i) {
    acc += vals[i];
  }
  return acc / float(N);
}

template <typename T, typename U>
auto mul_mixed(T a, U b) -> decltype(a * b) {
  return a * b;
}

kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float v[2] = {1.0f, 2.0f};
  out[i] = average(v) + mul_mixed(2, 0.5f);
}
