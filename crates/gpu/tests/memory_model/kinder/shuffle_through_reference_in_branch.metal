// WHY: a radix-sort scan whose shuffle operand is read through a thread reference, inside a branch that leaves half the lanes inactive.
// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 mod=2 32 u16
// BUFFER: 1 zeros 32 u16
// EXPECT: uninitialized-read @ 11
#include <metal_stdlib>
using namespace metal;
ushort scan_step(thread ushort& x, ushort d) {
    return simd_shuffle_up(x, d);
}
kernel void k(device const ushort* bits [[buffer(0)]], device ushort* out [[buffer(1)]], uint lane [[thread_index_in_simdgroup]]) {
    ushort x = bits[lane];
    if (lane % 2 == 1) {
        ushort y = scan_step(x, 1);
        x += y;
    }
    out[lane] = x;
}
