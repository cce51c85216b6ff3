// SEED: torch.mps.compile_shader style full source
// KERNEL: my_kernel
// GRID: 3,1,1
// THREADGROUP: 3,1,1
// INPUTS: input=arange(3):f32 output=zeros(3):f32
// OUTPUT: output=3:f32
// SPEC: input * 2
// lib = torch.mps.compile_shader(src); lib.my_kernel(inp, out, threads=[3,1,1], group_size=[3,1,1])
// Positional argument k binds to [[buffer(k)]]; the thread index is a scalar uint.
#include <metal_stdlib>
using namespace metal;

kernel void my_kernel(
    const device float* input [[buffer(0)]],
    device float* output [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
    // double every element (the unsuffixed literal 2.0 is accepted; Metal has no double type)
    output[tid] = input[tid] * 2.0;
}
