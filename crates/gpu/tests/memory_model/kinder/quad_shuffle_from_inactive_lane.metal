// WHY: lane 3 of every quad skips the branch, and quad_shuffle(v, 3) in the other three lanes reads it: undefined.
// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 zeros 32 f32
// EXPECT: uninitialized-read @ 12
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float v = float(i);
    if (i % 4 != 3) {
        v = quad_shuffle(v, 3);
    }
    out[i] = v;
}
