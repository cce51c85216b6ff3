// ERROR: 8: function parameter pack `args` must be expanded with `...` here
// A parameter pack used without `...`.
#include <metal_stdlib>
using namespace metal;

template <typename... Args>
float first(Args... args) {
  return args;  // <-- error
}

kernel void unexpanded_pack(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = first(1.0f, 2.0f);
}
