// KERNEL: scaled
// GRID: 1000
// THREADGROUP: 64
// BUFFER: 0 arange 1000 f32
// BUFFER: 1 fill=-7 1100 f32
// An output only stored to, each thread its own element: with several
// workers the compiled code stores into one copy they share. The grid's
// last threadgroup is partial, some threads store nothing, and the buffer
// is longer than the grid: every element nobody stores keeps its value.
#include <metal_stdlib>
using namespace metal;

kernel void scaled(const device float* a [[buffer(0)]], device float* out [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) {
  if (i % 7u != 3u) {
    out[i] = a[i] * 2.0f + 1.0f;
  }
}
