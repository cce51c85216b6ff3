// KERNEL: copy_then_read
// GRID: 512
// THREADGROUP: 64
// BUFFER: 0 zeros 1024 f32
// BUFFER: 1 zeros 512 f32
// A block copy into a device buffer, then a load of what it wrote: the
// compiled code must read the worker's copy that the copy went into.
#include <metal_stdlib>
using namespace metal;

struct Pair { float a; float b; };

kernel void copy_then_read(device Pair* pairs [[buffer(0)]], device float* out [[buffer(1)]],
                           uint i [[thread_position_in_grid]]) {
  Pair p;
  p.a = float(i) + 1.0f;
  p.b = float(i) * 2.0f;
  pairs[i] = p;
  out[i] = pairs[i].a + pairs[i].b;
}
