// WHY: a threadgroup of 48 threads has a second SIMD-group of 16 lanes; simd_shuffle_xor(v, 16) there reads lanes 16-31, which do not exist.
// KERNEL: k
// GRID: 48
// THREADGROUP: 48
// BUFFER: 0 arange 48 f32
// BUFFER: 1 zeros 48 f32
// EXPECT: uninitialized-read @ 13
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
    float v = a[i];
    v += simd_shuffle_xor(v, 16u);
    out[i] = v;
}
