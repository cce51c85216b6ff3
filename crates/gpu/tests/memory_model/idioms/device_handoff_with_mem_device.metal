// WHY: threads of one threadgroup hand data over through device memory, ordered by a mem_device barrier.
// KERNEL: k
// GRID: 64
// THREADGROUP: 64
// BUFFER: 0 arange 64 f32
// BUFFER: 1 zeros 64 f32
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* scratch [[buffer(1)]], uint l [[thread_position_in_threadgroup]]) {
    scratch[l] = a[l] * 2.0f;
    threadgroup_barrier(mem_flags::mem_device);
    float v = scratch[63 - l];
    threadgroup_barrier(mem_flags::mem_device);
    scratch[l] = v;
}
