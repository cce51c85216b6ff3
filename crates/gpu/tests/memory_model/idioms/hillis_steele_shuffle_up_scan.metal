// WHY: an inclusive scan with simd_shuffle_up, every lane active; lanes below the delta keep their value.
// KERNEL: k
// GRID: 64
// THREADGROUP: 64
// BUFFER: 0 ones 64 u32
// BUFFER: 1 zeros 64 u32
#include <metal_stdlib>
using namespace metal;
kernel void k(device const uint* a [[buffer(0)]], device uint* out [[buffer(1)]], uint i [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
    uint v = a[i];
    for (ushort d = 1; d < 32; d <<= 1) {
        uint up = simd_shuffle_up(v, d);
        if (lane >= d) v += up;
    }
    out[i] = v;
}
