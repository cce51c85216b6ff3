// MLX: scatter_add — out[indices[i]] += values[i], atomic_outputs=True, init_value=0
// GRID: 64,1,1
// THREADGROUP: 32,1,1
// INPUTS: values=rand(64):f32 indices=arange(64)%10:i32
// OUTPUT: out=10:f32
// INIT: 0
// SPEC: np.bincount(indices, weights=values, minlength=10).astype(np.float32)
// Several threads hit the same output slot, so the adds must be atomic.
#include <metal_stdlib>
using namespace metal;

[[kernel]] void custom_kernel_scatter_add_float_int32_t_float(
  const device float* values [[buffer(0)]],
  const constant int* values_shape [[buffer(1)]],
  const device int32_t* indices [[buffer(2)]],
  device atomic<float>* out [[buffer(3)]],
  uint3 thread_position_in_grid [[thread_position_in_grid]]) {

        uint i = thread_position_in_grid.x;
        if (i < uint(values_shape[0])) {
            int target = indices[i];
            atomic_fetch_add_explicit(&out[target], values[i], memory_order_relaxed);
        }

}
