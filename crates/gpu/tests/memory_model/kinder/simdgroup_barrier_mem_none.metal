// WHY: simdgroup_barrier(mem_flags::mem_none) orders no memory between the lanes of a SIMD-group.
// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 zeros 32 f32
// EXPECT: data-race @ 13
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint l [[thread_position_in_threadgroup]]) {
    threadgroup float t[32];
    t[l] = float(l);
    simdgroup_barrier(mem_flags::mem_none);
    out[l] = t[l ^ 1];
}
