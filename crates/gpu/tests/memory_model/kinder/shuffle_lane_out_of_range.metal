// WHY: simd_shuffle's lane must be a valid lane (0-31); lane 32 + x is not.
// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 zeros 32 f32
// EXPECT: uninitialized-read @ 10
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint lane [[thread_index_in_simdgroup]]) {
    out[lane] = simd_shuffle(float(lane), ushort(lane + 1));
}
