// WHY: a store through a pointer cast off by two bytes, from consecutive lanes.
// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 zeros 40 u32
// EXPECT: misaligned-access @ 11
#include <metal_stdlib>
using namespace metal;
kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    device uint* p = (device uint*)((device uchar*)out + 2);
    p[i] = i;
}
