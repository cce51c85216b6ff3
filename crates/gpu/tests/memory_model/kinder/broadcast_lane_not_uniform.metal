// WHY: simd_broadcast's lane must be the same in every thread; here each thread passes its own.
// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 zeros 32 f32
// EXPECT: uninitialized-read @ 10
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint lane [[thread_index_in_simdgroup]]) {
    out[lane] = simd_broadcast(float(lane) * 2.0f, ushort(31 - lane));
}
