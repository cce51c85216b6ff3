// WHY: the book's histogram: bins zeroed, barrier, atomic adds, barrier, read back.
// KERNEL: hist
// GRID: 128
// THREADGROUP: 64
// BUFFER: 0 mod=16 1000 u32
// BUFFER: 1 zeros 16 i32
#include <metal_stdlib>
using namespace metal;
kernel void hist(device const uint* x [[buffer(0)]], device atomic_int* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]],
                 uint n [[threads_per_grid]]) {
    threadgroup atomic_int bins[16];
    if (l < 16) atomic_store_explicit(&bins[l], 0, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint j = i; j < 1000; j += n) {
        atomic_fetch_add_explicit(&bins[x[j]], 1, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (l < 16) {
        int c = atomic_load_explicit(&bins[l], memory_order_relaxed);
        if (c > 0) atomic_fetch_add_explicit(&out[l], c, memory_order_relaxed);
    }
}
