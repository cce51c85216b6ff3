// SEED: segment_reduce_sum — sorted segment sum (Triton port, made self-contained)
// KERNEL: segment_reduce_sum
// GRID: 12,1,1
// THREADGROUP: 8,1,1
// INPUTS: x=arange(5,4):f32 offsets=[0,2]:u32 lengths=[2,3]:u32 y=zeros(2,4):f32 num_channels=4:u32 num_segments=2:u32
// OUTPUT: y=2,4:f32
// SPEC: np.stack([x[0:2].sum(0), x[2:5].sum(0)])
// x is (T, C); segment k covers rows offsets[k] .. offsets[k] + lengths[k].
// One thread per output element y[k, c]. Sizes arrive as scalar constants,
// since a raw pointer carries no shape.
#include <metal_stdlib>
using namespace metal;

kernel void segment_reduce_sum(
    device const float* x [[buffer(0)]],
    device const uint32_t* offsets [[buffer(1)]],
    device const uint32_t* lengths [[buffer(2)]],
    device float* y [[buffer(3)]],
    constant uint& num_channels [[buffer(4)]],
    constant uint& num_segments [[buffer(5)]],
    uint3 group_id [[threadgroup_position_in_grid]],
    uint3 local_id [[thread_position_in_threadgroup]],
    uint3 group_size [[threads_per_threadgroup]])
{
    uint flat = group_id.x * group_size.x + local_id.x;
    if (flat >= num_segments * num_channels) {
        return;
    }
    uint k = flat / num_channels;
    uint c = flat % num_channels;

    uint first = offsets[k];
    uint count = lengths[k];

    float total = 0.0f;
    for (uint r = 0; r < count; ++r) {
        total += x[(first + r) * num_channels + c];
    }
    y[k * num_channels + c] = total;
}
