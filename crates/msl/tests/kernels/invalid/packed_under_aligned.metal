// ERROR: 5: a packed struct whose float member sits at byte offset 1.
#include <metal_stdlib>
using namespace metal;

struct __attribute__((packed)) Tagged {
  uchar tag;
  float value;
};

kernel void k(device const Tagged* t [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  out[i] = t[i].value;
}
