// WHY: the classic reduction: every step behind a mem_threadgroup barrier.
// KERNEL: k
// GRID: 256
// THREADGROUP: 128
// BUFFER: 0 rand 256 f32
// BUFFER: 1 uninit 2 f32
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]],
              uint g [[threadgroup_position_in_grid]]) {
    threadgroup float s[128];
    s[l] = a[i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint k = 64; k > 0; k >>= 1) {
        if (l < k) s[l] += s[l + k];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (l == 0) out[g] = s[0];
}
