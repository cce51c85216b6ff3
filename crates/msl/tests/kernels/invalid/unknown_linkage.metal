// ERROR: 5: a language linkage other than "C" or "C++".
#include <metal_stdlib>
using namespace metal;

extern "Fortran" float f(float x) { return x; }

kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = f(float(i));
}
