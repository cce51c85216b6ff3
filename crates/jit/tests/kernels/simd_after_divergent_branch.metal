// KERNEL: k
// GRID: 64
// THREADGROUP: 64
// BUFFER: 0 arange 64 f32
// BUFFER: 1 zeros 64 f32
// A SIMD-group function inside a branch half the lanes take, then another
// after it that all lanes reach: lockstep runs the first with half the
// lanes and the second with all of them.
#include <metal_stdlib>
using namespace metal;

kernel void k(const device float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
  float v = a[i];
  if (lane < 16) {
    v = simd_sum(v);
  }
  v += simd_shuffle_down(v, 1u);
  out[i] = v + quad_sum(a[i]);
}
