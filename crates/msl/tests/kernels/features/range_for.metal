// FEATURE: range-based for over arrays — a row of a constant 2-D table by
// value, a whole table by const reference to each row, a thread array and a
// metal::array modified through auto&, an explicit element type, break and
// continue.
// KERNEL: range_for_kernel
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

constexpr constant uint shifts[2][3] = {{1, 2, 3}, {4, 5, 6}};

kernel void range_for_kernel(
    device uint* out [[buffer(0)]],
    uint tid [[thread_position_in_grid]]) {
  uint acc = tid;
  for (auto s : shifts[tid % 2]) {
    acc += (acc << s) & 0xFFu;
  }
  uint total = 0;
  for (const auto& row : shifts) {
    for (int s : row) {
      if (s == 2) continue;
      if (s == 5) break;
      total += uint(s);
    }
  }
  uint local_vals[4] = {tid, tid + 1, tid + 2, tid + 3};
  for (auto& v : local_vals) {
    v *= 2;
  }
  metal::array<uint, 2> pair = {7, 9};
  for (thread uint& p : pair) {
    p += local_vals[3];
  }
  out[tid] = acc + total + pair[0] + pair[1];
}
