// WHY: only half the threadgroup reaches the barrier; on hardware the others never arrive (a hang or undefined behaviour).
// KERNEL: k
// GRID: 64
// THREADGROUP: 64
// BUFFER: 0 arange 64 f32
// BUFFER: 1 zeros 64 f32
// EXPECT: barrier-divergence @ 15
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
    threadgroup float tile[64];
    tile[l] = a[i];
    if (l < 32) {
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    out[i] = tile[l];
}
