// WHY: only lanes 0-15 run simd_broadcast(v, 31); lane 31 took the other side of the branch, so the value broadcast is undefined.
// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 zeros 32 f32
// EXPECT: uninitialized-read @ 12
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float v = float(i) * 2.0f;
    if (i < 16) {
        v = simd_broadcast(v, 31);
    }
    out[i] = v;
}
