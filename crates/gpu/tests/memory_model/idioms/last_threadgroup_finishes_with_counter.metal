// WHY: each threadgroup adds its partial sum atomically and counts itself in; the result does not depend on which threadgroup comes last.
// KERNEL: k
// GRID: 256
// THREADGROUP: 64
// BUFFER: 0 mod=5 256 u32
// BUFFER: 1 zeros 1 u32
// BUFFER: 2 zeros 1 u32
// BUFFER: 3 zeros 1 u32
#include <metal_stdlib>
using namespace metal;
kernel void k(device const uint* a [[buffer(0)]], device atomic_uint* sum [[buffer(1)]], device atomic_uint* done [[buffer(2)]],
              device atomic_uint* result [[buffer(3)]],
              uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]], uint groups [[threadgroups_per_grid]]) {
    threadgroup atomic_uint partial;
    if (l == 0) atomic_store_explicit(&partial, 0u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    atomic_fetch_add_explicit(&partial, a[i], memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (l == 0) {
        atomic_fetch_add_explicit(sum, atomic_load_explicit(&partial, memory_order_relaxed), memory_order_relaxed);
        if (atomic_fetch_add_explicit(done, 1u, memory_order_relaxed) == groups - 1) {
            atomic_store_explicit(result, 1u, memory_order_relaxed);
        }
    }
}
