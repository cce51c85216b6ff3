// ERROR: 7: a lambda expression (the Metal Shading Language has none): the
// message says so and suggests a function instead.
#include <metal_stdlib>
using namespace metal;

kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  auto twice = [](float x) { return 2.0f * x; };
  out[i] = twice(float(i));
}
