// WHY: an atomic counter counts matches; which thread incremented first is never observed.
// KERNEL: k
// GRID: 128
// THREADGROUP: 32
// BUFFER: 0 mod=7 128 u32
// BUFFER: 1 zeros 1 u32
#include <metal_stdlib>
using namespace metal;
kernel void k(device const uint* a [[buffer(0)]], device atomic_uint* count [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    if (a[i] == 3) atomic_fetch_add_explicit(count, 1u, memory_order_relaxed);
}
