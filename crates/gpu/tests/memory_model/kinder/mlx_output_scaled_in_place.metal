// WHY: an MLX output without init_value holds garbage; scaling it in place reads that garbage.
// KERNEL: k
// GRID: 16
// THREADGROUP: 16
// BUFFER: 0 arange 16 f32
// BUFFER: 1 uninit 16 f32
// EXPECT: uninitialized-read @ 12
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
    out[i] *= a[i];
}
