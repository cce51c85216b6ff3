// WHY: simd_sum over the active lanes of a guarded, partial SIMD-group is what the guard means.
// KERNEL: k
// GRID: 40
// THREADGROUP: 64
// BUFFER: 0 rand 40 f32
// BUFFER: 1 uninit 2 f32
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]], uint sg [[simdgroup_index_in_threadgroup]],
              uint lane [[thread_index_in_simdgroup]]) {
    if (i < 40) {
        float s = simd_sum(a[i]);
        if (lane == 0) out[sg] = s;
    }
}
