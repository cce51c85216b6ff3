// WHY: an uninitialized output written first and accumulated after is fine.
// KERNEL: k
// GRID: 16
// THREADGROUP: 16
// BUFFER: 0 arange 16 f32
// BUFFER: 1 uninit 16 f32
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    out[i] = 0;
    for (int k = 0; k < 3; k++) out[i] += a[i];
}
