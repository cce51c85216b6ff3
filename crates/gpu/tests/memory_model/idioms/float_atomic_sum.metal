// WHY: device float atomic adds: their order changes only the rounding.
// KERNEL: k
// GRID: 256
// THREADGROUP: 64
// BUFFER: 0 rand 256 f32
// BUFFER: 1 zeros 1 f32
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device atomic_float* sum [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    atomic_fetch_add_explicit(sum, a[i], memory_order_relaxed);
}
