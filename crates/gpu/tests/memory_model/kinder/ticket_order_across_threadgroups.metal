// WHY: each threadgroup takes a ticket from a device counter and writes at it: which threadgroup gets which slot depends on the order threadgroups run in.
// KERNEL: k
// GRID: 64
// THREADGROUP: 16
// BUFFER: 0 zeros 1 u32
// BUFFER: 1 zeros 4 u32
// EXPECT: data-race @ 13
#include <metal_stdlib>
using namespace metal;
kernel void k(device atomic_uint* next [[buffer(0)]], device uint* order [[buffer(1)]],
              uint g [[threadgroup_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
    if (l == 0) {
        uint slot = atomic_fetch_add_explicit(next, 1u, memory_order_relaxed);
        order[slot] = g;
    }
}
