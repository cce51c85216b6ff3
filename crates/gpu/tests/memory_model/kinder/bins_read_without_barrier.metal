// WHY: the counts are read back with no barrier after the additions: a SIMD-group may read before the others have added.
// KERNEL: hist
// GRID: 64
// THREADGROUP: 64
// BUFFER: 0 mod=16 64 u32
// BUFFER: 1 zeros 16 i32
// EXPECT: data-race @ 17
#include <metal_stdlib>
using namespace metal;
kernel void hist(device const uint* x [[buffer(0)]], device atomic_int* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
    threadgroup atomic_int bins[16];
    if (l < 16) atomic_store_explicit(&bins[l], 0, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    atomic_fetch_add_explicit(&bins[x[i]], 1, memory_order_relaxed);
    if (l < 16) {
        int c = atomic_load_explicit(&bins[l], memory_order_relaxed);
        atomic_fetch_add_explicit(&out[l], c, memory_order_relaxed);
    }
}
