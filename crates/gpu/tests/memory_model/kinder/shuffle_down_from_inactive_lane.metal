// WHY: lanes 0-15 run simd_shuffle_down(v, 8): lanes 8-15 read lanes 16-23, which took the other side of the branch; their values are undefined.
// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 zeros 32 f32
// EXPECT: uninitialized-read @ 12
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float v = float(i);
    if (i < 16) {
        v = simd_shuffle_down(v, 8u);
    }
    out[i] = v;
}
