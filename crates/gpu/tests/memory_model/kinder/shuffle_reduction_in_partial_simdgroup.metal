// WHY: 40 threads in a threadgroup of 64: the second SIMD-group has 8 threads, and a shuffle reduction reads lanes that do not exist.
// KERNEL: k
// GRID: 40
// THREADGROUP: 64
// BUFFER: 0 ones 40 f32
// BUFFER: 1 zeros 2 f32
// EXPECT: uninitialized-read @ 14
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]) {
    float v = a[i];
    for (ushort d = 16; d > 0; d >>= 1) {
        v += simd_shuffle_down(v, d);
    }
    if (lane == 0) out[sg] = v;
}
