// WHY: an atomic load of a threadgroup atomic nobody stored to reads garbage.
// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 zeros 32 i32
// EXPECT: uninitialized-read @ 11
#include <metal_stdlib>
using namespace metal;
kernel void k(device int* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    threadgroup atomic_int flag;
    out[i] = atomic_load_explicit(&flag, memory_order_relaxed);
}
