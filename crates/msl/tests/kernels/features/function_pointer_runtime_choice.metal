// FEATURE: a function pointer chosen at run time (`?:` on a thread's
// value): each thread calls the function its pointer holds.
// KERNEL: pick
// GRID: 4,1,1
// THREADGROUP: 4,1,1
#include <metal_stdlib>
using namespace metal;

float add1(float x) { return x + 1.0f; }
float neg(float x) { return -x; }

kernel void pick(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float (*f)(float) = (i & 1) ? add1 : neg;
  out[i] = f(float(i));
}
