// WHY: one barrier naming both kinds of memory orders both.
// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 zeros 32 f32
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* buf [[buffer(0)]], uint l [[thread_position_in_threadgroup]]) {
    threadgroup float t[32];
    t[l] = float(l);
    buf[l] = float(l);
    threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
    float v = t[31 - l] + buf[31 - l];
    threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
    buf[l] = v;
}
