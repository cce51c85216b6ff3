// WHY: threadgroup memory starts as garbage in every threadgroup; only the first half of the tile is stored, yet every thread reads a mirrored element.
// KERNEL: k
// GRID: 64
// THREADGROUP: 64
// BUFFER: 0 arange 64 f32
// BUFFER: 1 zeros 64 f32
// EXPECT: uninitialized-read @ 17
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
    threadgroup float tile[64];
    if (l < 32) {
        tile[l] = a[i];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[i] = tile[63 - l];
}
