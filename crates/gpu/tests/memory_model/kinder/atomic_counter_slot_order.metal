// WHY: each thread appends its value at the slot an atomic counter hands out; which thread gets which slot is the hardware's order, so the output's order is not defined.
// KERNEL: k
// GRID: 64
// THREADGROUP: 32
// BUFFER: 0 arange 64 f32
// BUFFER: 1 zeros 1 u32
// BUFFER: 2 zeros 64 f32
// EXPECT: data-race @ 13
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device atomic_uint* count [[buffer(1)]],
              device float* out [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    uint slot = atomic_fetch_add_explicit(count, 1u, memory_order_relaxed);
    out[slot] = a[i];
}
