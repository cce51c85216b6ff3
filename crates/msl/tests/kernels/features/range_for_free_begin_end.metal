// FEATURE: a range-based for over a struct whose begin()/end() are free
// functions taking it by reference.
// KERNEL: range_for_free_begin_end
// GRID: 4,1,1
// THREADGROUP: 4,1,1
#include <metal_stdlib>
using namespace metal;

struct Pair {
  float v[2];
};
thread float* begin(thread Pair& p) { return p.v; }
thread float* end(thread Pair& p) { return p.v + 2; }

kernel void range_for_free_begin_end(
    device float* out [[buffer(0)]],
    uint tid [[thread_position_in_grid]]) {
  Pair p = {{1.0f, 2.0f}};
  float sum = 0.0f;
  for (float x : p) {
    sum += x;
  }
  out[tid] = sum;
}
