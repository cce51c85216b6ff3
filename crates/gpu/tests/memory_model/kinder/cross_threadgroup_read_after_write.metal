// WHY: threadgroup 1 reads the cells threadgroup 0 writes; threadgroups are not ordered and no barrier orders them, so the read may see old or new values.
// KERNEL: k
// GRID: 64
// THREADGROUP: 32
// BUFFER: 0 arange 64 f32
// BUFFER: 1 zeros 64 f32
// EXPECT: data-race @ 15
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* buf [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]], uint g [[threadgroup_position_in_grid]]) {
    if (g == 0) {
        buf[i] = buf[i] * 2.0f;
    } else {
        out[i] = buf[i - 32];
    }
}
