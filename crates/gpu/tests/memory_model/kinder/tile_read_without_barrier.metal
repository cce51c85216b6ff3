// WHY: SIMD-group 1 reads the tile cells SIMD-group 0 stores with no barrier between; which runs first is the hardware's choice.
// KERNEL: k
// GRID: 64
// THREADGROUP: 64
// BUFFER: 0 arange 64 f32
// BUFFER: 1 zeros 64 f32
// EXPECT: data-race @ 14
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
    threadgroup float tile[64];
    tile[l] = a[i];
    out[i] = tile[(l + 32) % 64];
}
