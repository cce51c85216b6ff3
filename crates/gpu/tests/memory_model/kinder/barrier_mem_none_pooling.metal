// WHY: threadgroup_barrier(mem_flags::mem_none) is an execution barrier only: it orders no memory.
// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 arange 32 f32
// BUFFER: 1 zeros 32 f32
// EXPECT: data-race @ 16
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
    threadgroup float tile[32];
    tile[l] = a[i];
    threadgroup_barrier(mem_flags::mem_none);
    float s = tile[l];
    if (l > 0) s += tile[l - 1];
    out[i] = s;
}
