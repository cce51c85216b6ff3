// FEATURE: MLX's random.metal: a range-based `for` over a row of a `constant`
// 2-D table (by value, by `const auto&`, with an explicit element type), and
// nested over the whole table by reference to each row.
// row = fold of acc * 2 + v over table[i % 3]; all = 1110; out = row + 10000
// all.
// KERNEL: k
// GRID: 4
// THREADGROUP: 4
// BUFFER: 0 zeros 4 f32
// OUTPUT: 0 = 11100026 11100260 11102600 11100026
    for (float v : r) {
using namespace metal;
static constexpr constant uint table[3][4] = {{1, 2, 3, 4}, {10, 20, 30, 40}, {100, 200, 300, 400}};
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  uint row = 0;
  for (auto v : table[i % 3]) {
    row = row * 2 + v;
  }
  uint all = 0;
  for (const auto& r : table) {
#include <metal_stdlib>
      all += uint(v);
    }
  }
  out[i] = float(row) + 10000.0f * float(all);
}