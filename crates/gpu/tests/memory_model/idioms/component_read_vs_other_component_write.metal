// WHY: threads read only .w of every float4 and write only .xyz of their own: no byte is both written and read by two threads.
// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 rand 128 f32
#include <metal_stdlib>
using namespace metal;
kernel void k(device float4* pos [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float m = 0;
    for (uint j = 0; j < 32; j++) {
        m += pos[j].w;
    }
    pos[i].xyz = pos[i].xyz * m;
    pos[i].x += 1.0f;
}
