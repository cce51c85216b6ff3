// WHY: atomics stored, then a barrier, then updated: the order is fixed by the barrier.
// KERNEL: k
// GRID: 64
// THREADGROUP: 64
// BUFFER: 0 zeros 64 u32
#include <metal_stdlib>
using namespace metal;
kernel void k(device uint* out [[buffer(0)]], uint l [[thread_position_in_threadgroup]]) {
    threadgroup atomic_uint c;
    if (l == 0) atomic_store_explicit(&c, 0u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    atomic_fetch_add_explicit(&c, 1u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[l] = atomic_load_explicit(&c, memory_order_relaxed);
}
