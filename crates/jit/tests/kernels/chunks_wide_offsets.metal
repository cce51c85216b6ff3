// KERNEL: offsets
// GRID: 40,7
// THREADGROUP: 16
// BUFFER: 0 rand 400 f32
// BUFFER: 1 zeros 400 f32
// BUFFER: 2 fill=270 1 u32
// 64-bit offsets from a two-dimensional grid (as MLX's elementwise kernels
// make them) and a `size_t` length with an early return (as candle's),
// run four threads at a time by the compiled tier.
#include <metal_stdlib>
using namespace metal;

kernel void offsets(const device float* a [[buffer(0)]], device float* out [[buffer(1)]],
                    constant uint& n [[buffer(2)]], uint2 index [[thread_position_in_grid]],
                    uint2 grid [[threads_per_grid]]) {
  size_t dim = size_t(n);
  size_t offset = index.x + grid.x * size_t(index.y);
  if (offset >= dim) return;
  long j = long(offset) - 5;
  out[offset] = a[offset] * 2.0f + float(j < 6 ? 1 : 0) + a[dim - 1 - offset];
}
