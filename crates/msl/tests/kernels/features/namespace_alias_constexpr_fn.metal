// FEATURE: a namespace alias, a constexpr function used in a constant
// expression, and an alias template.
#include <metal_stdlib>
using namespace metal;

namespace geometry { constant float kScale = 2.0f; }
namespace g = geometry;

constexpr int square_ce(int v) { return v * v; }

template <typename T>
using pair_of = vec<T, 2>;

kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float tmp[square_ce(2)];
  pair_of<float> p = pair_of<float>(1.0f, 2.0f);
  tmp[0] = p.x;
  out[i] = g::kScale + tmp[0];
}
