// ERROR: 14: `span` has a reference member `count`, which must be bound where the `span` is made
// A reference member must be bound where its struct is made; braces that
// stop before it leave it unbound.
#include <metal_stdlib>
using namespace metal;

struct span {
  constant float *data;
  constant uint &count;
};

kernel void first(constant float *data [[buffer(0)]], constant uint &n [[buffer(1)]],
                  device float *out [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  span s{data}; // <-- error
  out[i] = s.data[0] + float(s.count);
}
