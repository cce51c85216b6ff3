// KERNEL: k
// GRID: 96
// THREADGROUP: 48
// BUFFER: 0 mod=5 96 u32
// BUFFER: 1 zeros 96 u32
// BUFFER: 2 zeros 96 u32
// SIMD-group functions in a loop that lanes leave after different numbers
// of trips: each trip's functions see only the lanes still in the loop
// (ballot, prefix sum, max, broadcast of the first active lane, is_first).
#include <metal_stdlib>
using namespace metal;

kernel void k(const device uint* a [[buffer(0)]], device uint* out [[buffer(1)]], device uint* bits [[buffer(2)]],
              uint i [[thread_position_in_grid]]) {
  uint acc = 0;
  uint seen = 0;
  for (uint t = 0; t < a[i] + 1; t++) {
    uint x = a[i] * 3u + t;
    acc += simd_prefix_exclusive_sum(x);
    acc ^= simd_max(x) << 8;
    acc += simd_broadcast_first(i);
    seen |= uint(simd_ballot(x & 1u)) ^ (simd_is_first() ? 0x80000000u : 0u);
  }
  out[i] = acc;
  bits[i] = seen;
}
