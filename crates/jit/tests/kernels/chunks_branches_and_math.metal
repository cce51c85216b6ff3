// KERNEL: chunky
// GRID: 1001
// THREADGROUP: 64
// BUFFER: 0 rand 1100 f32
// BUFFER: 1 mod=7 1100 u32
// BUFFER: 2 zeros 1100 f32
// BUFFER: 3 zeros 1100 u32
// BUFFER: 4 fill=997 1 u32
// Code the compiled tier runs four threads at a time (no barriers or
// loops): an early return, branches the threads of a chunk may take apart
// (before any store) or not, a branch of register operations only, math
// functions, selects, conversions, strided and reversed indices.
#include <metal_stdlib>
using namespace metal;

static float shape(float x, uint i) {
  if (i % 5u == 2u) return x * 2.0f;
  return sqrt(fabs(x)) + exp(x * 0.1f);
}

kernel void chunky(const device float* a [[buffer(0)]], const device uint* b [[buffer(1)]],
                   device float* out [[buffer(2)]], device uint* u [[buffer(3)]],
                   constant uint& n [[buffer(4)]], uint i [[thread_position_in_grid]],
                   uint l [[thread_position_in_threadgroup]]) {
  if (i >= n) return;
  float x = shape(a[i], i);
  uint m = b[i];
  if (m > 3u) {
    x = -x + float(m);
  } else {
    x = select(x, a[i / 2u], x > 0.5f);
  }
  uint k = (m & 1u) ? m * 3u + l : m ^ i;
  out[n - 1u - i] = x + a[2u * (i / 2u) + 1u];
  u[i] = k + min(i, 100u) + uint(int(x * 100.0f));
}
