// PUZZLE: prefix_sum
// GRID: 16,1,1
// THREADGROUP: 8,1,1
// INPUTS: a=arange(15):i32
// OUTPUT: out=2:f32
// SPEC: np.array([a[s:s + 8].sum() for s in range(0, a.shape[0], 8)], dtype=np.float32)
#include <metal_stdlib>
using namespace metal;

        constant uint THREADGROUP_MEM_SIZE = 8;

[[kernel]] void custom_kernel_prefix_sum_int32_t_float(
  const device int32_t* a [[buffer(0)]],
  const constant int* a_shape [[buffer(1)]],
  device float* out [[buffer(2)]],
  uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
  uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
  uint3 threads_per_threadgroup [[threads_per_threadgroup]]) {

        threadgroup float cache[THREADGROUP_MEM_SIZE];
        uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
        uint local_i = thread_position_in_threadgroup.x;
        uint n = uint(a_shape[0]);

        // lanes past the end contribute zero
        cache[local_i] = (i < n) ? float(a[i]) : 0.0f;
        threadgroup_barrier(mem_flags::mem_threadgroup);

        // pairwise tree: distance doubles every round
        for (uint step = 1; step < THREADGROUP_MEM_SIZE; step *= 2) {
            if (local_i % (2 * step) == 0 && local_i + step < THREADGROUP_MEM_SIZE) {
                cache[local_i] += cache[local_i + step];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }

        // one partial sum per group
        if (local_i == 0) {
            out[threadgroup_position_in_grid.x] = cache[0];
        }

}
