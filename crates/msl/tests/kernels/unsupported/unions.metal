// UNSUPPORTED: unions (used by quantized kernels to view bytes as halves).
// Valid Metal; the simulator reports them as not supported yet.
#include <metal_stdlib>
using namespace metal;

union bits {
  uint u;
  float f;
};

kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  bits b;
  b.u = 0x3f800000u;
  out[i] = b.f;
}
