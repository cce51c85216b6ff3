// SEED: mvmr — sparse matrix-vector multiply with reduction (Triton port)
// KERNEL: mvmr_kernel
// GRID: 256,1,1
// THREADGROUP: 64,1,1
// DISPATCH: threads
// INPUTS: a=rand(4,2,3,5):f32 a_idx=arange(4):u32 b=rand(3,2,5):f32 b_idx=arange(4)%3:u32 o_idx=arange(4)%2:u32 o=zeros(2,2,3):f32 dims=[4,2,3,5,2,3]:u32
// OUTPUT: o=2,2,3:f32
// For every t: o[o_idx[t], g, m] += sum_c a[t, g, m, c] * b[b_idx[t], g, c].
// Several t may share an output row, so the accumulation uses a float atomic
// on a plain float buffer reinterpreted as atomic_float.
#include <metal_stdlib>
using namespace metal;

kernel void mvmr_kernel(
    device const float* a [[buffer(0)]],        // (T, G, M, C), flattened
    device const uint32_t* a_idx [[buffer(1)]], // (T,), not needed by the math
    device const float* b [[buffer(2)]],        // (B, G, C), flattened
    device const uint32_t* b_idx [[buffer(3)]], // which b row feeds each t
    device const uint32_t* o_idx [[buffer(4)]], // which output row each t hits
    device float* o [[buffer(5)]],              // (K, G, M), flattened
    device const uint32_t* dims [[buffer(6)]],  // T, G, M, C, K, B
    uint3 group_id [[threadgroup_position_in_grid]],
    uint3 local_id [[thread_position_in_threadgroup]],
    uint3 group_size [[threads_per_threadgroup]])
{
    uint flat = group_id.x * group_size.x + local_id.x;

    uint n_t = dims[0];
    uint n_g = dims[1];
    uint n_m = dims[2];
    uint n_c = dims[3];

    // one thread per (t, g, m)
    if (flat >= n_t * n_g * n_m) {
        return;
    }
    uint t = flat / (n_g * n_m);
    uint rest = flat % (n_g * n_m);
    uint g = rest / n_m;
    uint m = rest % n_m;

    uint src_row = b_idx[t];
    uint dst_row = o_idx[t];

    const device float* a_vec = a + ((t * n_g + g) * n_m + m) * n_c;
    const device float* b_vec = b + (src_row * n_g + g) * n_c;

    float partial = 0.0f;
    for (uint c = 0; c < n_c; ++c) {
        partial += a_vec[c] * b_vec[c];
    }

    uint dst = (dst_row * n_g + g) * n_m + m;
    atomic_fetch_add_explicit((device atomic_float*)&o[dst], partial, memory_order_relaxed);
}
