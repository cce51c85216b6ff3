// WHY: a barrier with mem_device orders device memory only; the tile is in threadgroup memory.
// KERNEL: k
// GRID: 64
// THREADGROUP: 64
// BUFFER: 0 arange 64 f32
// BUFFER: 1 zeros 64 f32
// EXPECT: data-race @ 15
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
    threadgroup float tile[64];
    tile[l] = a[i];
    threadgroup_barrier(mem_flags::mem_device);
    out[i] = tile[63 - l];
}
