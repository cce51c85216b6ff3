// ERROR: 11: parameter packs `args` and `Ns` have different lengths (3 and 2)
// One expansion over two packs of different lengths.
#include <metal_stdlib>
using namespace metal;

inline float add3(float a, float b, float c) { return a + b + c; }

template <int... Ns>
struct Weights {
  template <typename... Args>
  static float apply(Args... args) { return add3((args * Ns)...); }  // <-- error
};

kernel void pack_lengths_differ(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = Weights<1, 2>::apply(1.0f, 2.0f, 3.0f);
}
