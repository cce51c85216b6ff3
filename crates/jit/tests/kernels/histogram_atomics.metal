// KERNEL: histogram
// GRID: 700
// THREADGROUP: 64
// BUFFER: 0 arange 700 u32
// BUFFER: 1 zeros 16 u32
#include <metal_stdlib>
using namespace metal;

kernel void histogram(const device uint* a [[buffer(0)]], device atomic_uint* bins [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
  if (i < 700) atomic_fetch_add_explicit(&bins[(a[i] * 2654435761u) >> 28], 1u, memory_order_relaxed);
}
