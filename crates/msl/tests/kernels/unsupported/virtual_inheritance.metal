// UNSUPPORTED: virtual base classes. Valid Metal (C++14 classes without
// virtual functions); the simulator refuses `virtual` inheritance by name.
#include <metal_stdlib>
using namespace metal;

struct Base {
  float scale;
};

struct Left : virtual Base {
  float left;
};

kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  Left l;
  l.scale = 2.0f;
  out[i] = l.scale * float(i);
}
