// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 arange 32 u32
// BUFFER: 1 zeros 32 u32
// Lanes skip the first trip's SIMD-group function with `continue`: that
// trip's sum is over the other lanes only, the next over all.
#include <metal_stdlib>
using namespace metal;

kernel void k(const device uint* a [[buffer(0)]], device uint* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  uint acc = 0;
  for (uint t = 0; t < 3; t++) {
    if (t == 0 && (a[i] & 1u)) continue;
    acc = acc * 7u + simd_sum(a[i] + t);
  }
  out[i] = acc;
}
