// WHY: atomic adds into an MLX output that was never cleared start from garbage.
// KERNEL: k
// GRID: 16
// THREADGROUP: 16
// BUFFER: 0 arange 16 u32
// BUFFER: 1 uninit 4 u32
// EXPECT: uninitialized-read @ 11
#include <metal_stdlib>
using namespace metal;
kernel void k(device const uint* a [[buffer(0)]], device atomic_uint* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    atomic_fetch_add_explicit(&out[a[i] % 4], 1u, memory_order_relaxed);
}
