// KERNEL: reduce
// GRID: 1000
// THREADGROUP: 256
// BUFFER: 0 mod=17 1000 f32
// BUFFER: 1 zeros 4 f32
// The classic two-level reduction: simd_sum in every SIMD-group, partial
// sums through threadgroup memory, a second simd_sum in SIMD-group 0 only
// (the other groups go on to the end meanwhile); a partial last threadgroup.
#include <metal_stdlib>
using namespace metal;

kernel void reduce(const device float* a [[buffer(0)]], device float* out [[buffer(1)]],
                   uint i [[thread_position_in_grid]], uint l [[thread_index_in_threadgroup]],
                   uint g [[threadgroup_position_in_grid]], uint sg [[simdgroup_index_in_threadgroup]],
                   uint lane [[thread_index_in_simdgroup]], uint groups [[simdgroups_per_threadgroup]]) {
  threadgroup float partial[8];
  float v = i < 1000 ? a[i] : 0.0f;
  v = simd_sum(v);
  if (lane == 0) partial[sg] = v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (sg == 0) {
    float p = lane < groups ? partial[lane] : 0.0f;
    p = simd_sum(p);
    if (lane == 0) out[g] = p;
  }
}
