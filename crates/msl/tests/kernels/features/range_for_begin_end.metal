// FEATURE: range-based for over a struct through its begin()/end() member
// functions (pointers into a thread array), reading and then doubling the
// elements through auto&.
// KERNEL: range_for_begin_end
// GRID: 4,1,1
// THREADGROUP: 4,1,1
#include <metal_stdlib>
using namespace metal;

struct Span4 {
  thread float* data;
  thread float* begin() const { return data; }
  thread float* end() const { return data + 4; }
};

kernel void range_for_begin_end(
    device float* out [[buffer(0)]],
    uint tid [[thread_position_in_grid]]) {
  float vals[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  Span4 s = Span4{vals};
  float sum = 0.0f;
  for (float v : s) {
    sum += v;
  }
  for (auto& v : s) {
    v *= 2.0f;
  }
  out[tid] = sum + vals[tid];
}
