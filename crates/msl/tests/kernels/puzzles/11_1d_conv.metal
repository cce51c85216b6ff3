// PUZZLE: 1d_conv
// GRID: 16,1,1
// THREADGROUP: 8,1,1
// INPUTS: a=arange(15):f32 b=arange(4):f32
// OUTPUT: out=15:f32
// SPEC: np.array([sum(a[i + j] * b[j] for j in range(b.shape[0]) if i + j < a.shape[0]) for i in range(a.shape[0])], dtype=np.float32)
#include <metal_stdlib>
using namespace metal;

        constant uint THREADGROUP_MAX_CONV_SIZE = 12;
        constant uint MAX_CONV = 4;

[[kernel]] void custom_kernel_1D_conv_float_floatc_float(
  const device float* a [[buffer(0)]],
  const constant int* a_shape [[buffer(1)]],
  const constant float* b [[buffer(2)]],
  const constant int* b_shape [[buffer(3)]],
  device float* out [[buffer(4)]],
  uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
  uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
  uint3 threads_per_threadgroup [[threads_per_threadgroup]]) {

        uint i = threadgroup_position_in_grid.x * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
        uint local_i = thread_position_in_threadgroup.x;

        // window of the signal for this group, plus a tail of MAX_CONV - 1 values
        threadgroup float a_tile[THREADGROUP_MAX_CONV_SIZE];
        threadgroup float b_tile[MAX_CONV];

        uint n = uint(a_shape[0]);
        uint k = uint(b_shape[0]);
        uint group_len = threads_per_threadgroup.x;
        uint group_start = threadgroup_position_in_grid.x * group_len;

        // first read: the element under this thread
        a_tile[local_i] = (i < n) ? a[i] : 0.0f;

        // second read: either a filter tap or one element of the tail
        if (local_i < k) {
            b_tile[local_i] = b[local_i];
        } else if (local_i < k + MAX_CONV - 1) {
            uint t = local_i - k;
            uint src = group_start + group_len + t;
            a_tile[group_len + t] = (src < n) ? a[src] : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);

        if (i < n) {
            float acc = 0.0f;
            for (uint j = 0; j < k; ++j) {
                if (i + j < n) {
                    acc += a_tile[local_i + j] * b_tile[j];
                }
            }
            out[i] = acc;
        }

}
