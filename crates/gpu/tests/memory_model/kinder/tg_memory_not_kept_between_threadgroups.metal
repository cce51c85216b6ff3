// WHY: threadgroup memory does not survive from one threadgroup to the next: reading the sum "left by the previous threadgroup" reads garbage.
// KERNEL: k
// GRID: 64
// THREADGROUP: 32
// BUFFER: 0 ones 64 f32
// BUFFER: 1 zeros 2 f32
// EXPECT: uninitialized-read @ 16
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]],
              uint g [[threadgroup_position_in_grid]]) {
    threadgroup float carry[1];
    float s = simd_sum(a[i]);
    if (l == 0) {
        float before = g > 0 ? carry[0] : 0.0f;
        carry[0] = before + s;
        out[g] = carry[0];
    }
}
