// KERNEL: reduce
// GRID: 1000
// THREADGROUP: 128
// BUFFER: 0 rand 1000 f32
// BUFFER: 1 zeros 8 f32
#include <metal_stdlib>
using namespace metal;

// A partial last threadgroup; the tree's loop bound is uniform, its `if` is not.
kernel void reduce(const device float* a [[buffer(0)]], device float* out [[buffer(1)]],
                   uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]],
                   uint g [[threadgroup_position_in_grid]], uint n [[threads_per_threadgroup]]) {
  threadgroup float s[128];
  s[l] = i < 1000 ? a[i] : 0.0f;
  for (uint k = n; k < 128; k++) if (l == 0) s[k] = 0.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint stride = 64; stride > 0; stride >>= 1) {
    if (l < stride) s[l] += s[l + stride];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (l == 0) out[g] = s[0];
}
