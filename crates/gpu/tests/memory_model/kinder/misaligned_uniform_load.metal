// WHY: every lane reading one misaligned word takes the one-load fast path; it must still be checked.
// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 arange 8 u32
// BUFFER: 1 zeros 32 u32
// EXPECT: misaligned-access @ 11
#include <metal_stdlib>
using namespace metal;
kernel void k(device const uchar* bytes [[buffer(0)]], device uint* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    out[i] = *(device const uint*)(bytes + 6);
}
