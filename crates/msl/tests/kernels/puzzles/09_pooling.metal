// PUZZLE: pooling
// GRID: 8,1,1
// THREADGROUP: 8,1,1
// INPUTS: a=arange(8):i32
// OUTPUT: out=8:f32
// SPEC: np.array([a[max(i - 2, 0):i + 1].sum() for i in range(a.shape[0])], dtype=np.float32)
#include <metal_stdlib>
using namespace metal;

        constant uint THREADGROUP_MEM_SIZE = 8;

[[kernel]] void custom_kernel_pooling_int32_t_float(
  const device int32_t* a [[buffer(0)]],
  const constant int* a_shape [[buffer(1)]],
  device float* out [[buffer(2)]],
  uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
  uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
  uint3 threads_per_threadgroup [[threads_per_threadgroup]]) {

        threadgroup float shared[THREADGROUP_MEM_SIZE];
        uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
        uint local_i = thread_position_in_threadgroup.x;
        uint n = uint(a_shape[0]);

        // one global read per thread into the shared window
        shared[local_i] = (i < n) ? float(a[i]) : 0.0f;
        threadgroup_barrier(mem_flags::mem_threadgroup);

        if (i < n) {
            // window of (up to) three values ending at i
            float acc = shared[local_i];
            if (local_i >= 1) {
                acc += shared[local_i - 1];
            }
            if (local_i >= 2) {
                acc += shared[local_i - 2];
            }
            out[i] = acc;
        }

}
