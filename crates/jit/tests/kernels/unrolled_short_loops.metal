// KERNEL: short_loops
// GRID: 256
// THREADGROUP: 64
// BUFFER: 0 arange 256 u32
// BUFFER: 1 zeros 256 u32
// BUFFER: 2 zeros 256 f32
// Short counted loops the compiled tier unrolls (a constant start, a
// constant limit): with break, continue, an early return, a start past the
// limit (no trips), an inclusive limit, nested inside a loop it does not
// unroll, a float sum whose order must stay, and threadgroup memory read
// at constant offsets after a barrier.
#include <metal_stdlib>
using namespace metal;

kernel void short_loops(const device uint* a [[buffer(0)]], device uint* out [[buffer(1)]],
                        device float* sums [[buffer(2)]], uint i [[thread_position_in_grid]],
                        uint l [[thread_position_in_threadgroup]]) {
  threadgroup float tile[64 + 8];
  tile[l] = float(a[i]) * 0.37f;
  if (l < 8u) tile[64u + l] = float(l) * 1.5f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint acc = a[i];
  for (uint k = 0; k < 6u; k++) {
    if (k == (acc & 3u)) continue;
    acc = acc * 5u + k;
    if (acc % 11u == 0u) break;
  }
  for (uint k = 7; k < 5u; k++) acc += 1000u;        // no trips
  for (uint k = 2; k <= 4u; ++k) acc ^= k << (acc & 7u);
  uint total = 0;
  while (total < (a[i] & 7u)) {                       // not unrolled
    for (uint k = 0; k < 3u; k++) total += k + 1u;
  }
  float s = 0.0f;
  for (uint j = 0; j < 9u; j++) s += tile[l + j] * (0.1f + float(j));
  sums[i] = s;
  for (uint k = 0; k < 4u; k++) {
    if (acc == 12345u) return;
  }
  out[i] = acc + total;
}
