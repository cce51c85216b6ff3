// WHY: an atomic at an address that is not a multiple of its size is undefined on real GPUs.
// KERNEL: k
// GRID: 4
// THREADGROUP: 4
// BUFFER: 0 zeros 4 i32
// EXPECT: misaligned-access @ 11
#include <metal_stdlib>
using namespace metal;
kernel void k(device atomic_int* out [[buffer(0)]]) {
    device atomic_int* p = (device atomic_int*)((device char*)out + 2);
    atomic_fetch_add_explicit(p, 1, memory_order_relaxed);
}
