// WHY: threadgroups run in no defined order: two of them writing one element is a race no barrier can fix.
// KERNEL: k
// GRID: 8
// THREADGROUP: 4
// BUFFER: 0 zeros 4 f32
// EXPECT: data-race @ 10
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint g [[threadgroup_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
    out[l] = float(g);
}
