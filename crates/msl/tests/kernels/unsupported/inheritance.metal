// UNSUPPORTED: struct inheritance. Valid Metal (C++14 classes); the
// simulator reports it as not supported yet.
#include <metal_stdlib>
using namespace metal;

struct Base {
  float scale;
};

struct Derived : Base {
  float offset;
};

kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  Derived d;
  d.scale = 2.0f;
  d.offset = 1.0f;
  out[i] = d.scale * float(i) + d.offset;
}
