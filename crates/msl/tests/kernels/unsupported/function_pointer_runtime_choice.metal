// UNSUPPORTED: a function pointer chosen at run time (`?:` on a thread's
// value). Valid Metal; the simulator inlines every call, so it supports
// function pointers only where the function is known at compile time.
#include <metal_stdlib>
using namespace metal;

float add1(float x) { return x + 1.0f; }
float neg(float x) { return -x; }

kernel void pick(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float (*f)(float) = (i & 1) ? add1 : neg;
  out[i] = f(float(i));
}
