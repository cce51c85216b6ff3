// WHY: n-body: each thread reads the .w of every body and writes only its own; reading one component is not a read of the whole vector.
// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 rand 128 f32
// BUFFER: 1 zeros 128 f32
#include <metal_stdlib>
using namespace metal;
kernel void k(device float4* pos [[buffer(0)]], device float4* acc [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    float3 p = pos[i].xyz;
    float3 a = 0;
    for (uint j = 0; j < 32; j++) {
        float3 d = pos[j].xyz - p;
        a += d * pos[j].w / (dot(d, d) + 0.01f);
    }
    acc[i] = float4(a, 0.0f);
    acc[i].w = 1.0f;
}
