// WHY: a SIMD-group reduction with shuffles while every lane is active.
// KERNEL: k
// GRID: 64
// THREADGROUP: 64
// BUFFER: 0 rand 64 f32
// BUFFER: 1 uninit 2 f32
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
              uint sg [[simdgroup_index_in_threadgroup]]) {
    float v = a[i];
    for (ushort d = 16; d > 0; d >>= 1) {
        v += simd_shuffle_down(v, d);
    }
    if (lane == 0) out[sg] = v;
}
