// WHY: a float atomic max built from atomic_load and a compare-exchange loop.
// KERNEL: k
// GRID: 64
// THREADGROUP: 32
// BUFFER: 0 rand 64 f32
// BUFFER: 1 fill=-1000 1 f32
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device atomic_uint* best [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    float v = a[i];
    uint old = atomic_load_explicit(best, memory_order_relaxed);
    while (as_type<float>(old) < v) {
        if (atomic_compare_exchange_weak_explicit(best, &old, as_type<uint>(v), memory_order_relaxed, memory_order_relaxed)) {
            break;
        }
    }
}
