// WHY: a neighbour sum in a partial SIMD-group: the last thread's shuffle reads a missing lane, but it discards the result.
// KERNEL: k
// GRID: 20
// THREADGROUP: 32
// BUFFER: 0 arange 20 f32
// BUFFER: 1 zeros 20 f32
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    float v = a[i];
    float next = simd_shuffle_down(v, 1u);
    out[i] = (i + 1 < 20) ? v + next * 0.5f : v;
}
