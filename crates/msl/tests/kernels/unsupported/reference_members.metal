// UNSUPPORTED: reference members. Valid Metal (a struct may hold a
// `constant T&` bound by aggregate initialization); the simulator reports
// it as not supported yet and suggests a pointer member instead.
#include <metal_stdlib>
using namespace metal;

struct extent {
  constant const uint &rank;
  constant const uint *dims;
};

kernel void total(constant uint &rank [[buffer(0)]], constant uint *dims [[buffer(1)]],
                  device uint *out [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  extent e{rank, dims};
  uint n = 1;
  for (uint d = 0; d < e.rank; d++) {
    n *= e.dims[d];
  }
  out[i] = n;
}
