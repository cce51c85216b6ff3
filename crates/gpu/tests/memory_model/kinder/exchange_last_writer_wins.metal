// WHY: every lane exchanges its value into one location and keeps the old one: which value stays depends on the order of the lanes.
// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 zeros 1 u32
// BUFFER: 1 zeros 32 u32
// EXPECT: data-race @ 11
#include <metal_stdlib>
using namespace metal;
kernel void k(device atomic_uint* cell [[buffer(0)]], device uint* old [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    old[i] = atomic_exchange_explicit(cell, i + 1, memory_order_relaxed);
}
