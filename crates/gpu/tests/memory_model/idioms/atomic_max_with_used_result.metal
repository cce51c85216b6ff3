// WHY: atomic_fetch_max whose old value is only compared with itself: any order gives the same maximum.
// KERNEL: k
// GRID: 128
// THREADGROUP: 64
// BUFFER: 0 mod=97 128 u32
// BUFFER: 1 zeros 1 u32
#include <metal_stdlib>
using namespace metal;
kernel void k(device const uint* a [[buffer(0)]], device atomic_uint* best [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    uint seen = atomic_fetch_max_explicit(best, a[i], memory_order_relaxed);
    if (seen > 1000u) atomic_store_explicit(best, 0u, memory_order_relaxed);
}
