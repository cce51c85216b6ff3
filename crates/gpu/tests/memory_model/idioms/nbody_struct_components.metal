// WHY: n-body with bodies as structs of float4: every thread reads pos.w of all bodies, then (after a device barrier) writes its own pos and vel.
// KERNEL: step
// GRID: 64
// THREADGROUP: 64
// BUFFER: 0 rand 512 f32
#include <metal_stdlib>
using namespace metal;
struct Body { float4 pos; float4 vel; };
kernel void step(device Body* bodies [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float3 p = bodies[i].pos.xyz;
    float3 a = 0;
    for (uint j = 0; j < 64; j++) {
        float3 d = bodies[j].pos.xyz - p;
        float m = bodies[j].pos.w;
        a += d * m / (dot(d, d) + 0.01f);
    }
    threadgroup_barrier(mem_flags::mem_device);
    float4 v = bodies[i].vel;
    v.xyz += a * 0.01f;
    bodies[i].vel = v;
    bodies[i].pos.xyz += v.xyz * 0.01f;
}
