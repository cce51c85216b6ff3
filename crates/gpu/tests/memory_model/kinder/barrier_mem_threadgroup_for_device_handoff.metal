// WHY: a device-memory handoff between threads of a threadgroup needs mem_device; mem_threadgroup does not order it.
// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 zeros 32 f32
// EXPECT: data-race @ 12
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* buf [[buffer(0)]], uint l [[thread_position_in_threadgroup]]) {
    buf[l] = float(l) * 2.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float v = buf[31 - l];
    threadgroup_barrier(mem_flags::mem_device);
    buf[l] = v;
}
