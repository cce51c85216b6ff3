// WHY: a thread array is garbage until written; reading an element no statement assigned is undefined.
// KERNEL: k
// GRID: 8
// THREADGROUP: 8
// BUFFER: 0 zeros 8 f32
// EXPECT: uninitialized-read @ 16
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float acc[4];
    for (uint j = 0; j < 3; j++) {
        acc[j] = float(j);
    }
    float s = 0;
    for (uint j = 0; j < 4; j++) {
        s += acc[j];
    }
    out[i] = s;
}
