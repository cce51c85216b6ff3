// MLX: softmax_rows — numerically stable softmax over the last axis
// GRID: 512,1,1
// THREADGROUP: 128,1,1
// INPUTS: inp=rand(4,100):f32
// OUTPUT: out=4,100:f32
// SPEC: np.exp(inp - inp.max(-1, keepdims=True)) / np.exp(inp - inp.max(-1, keepdims=True)).sum(-1, keepdims=True)
// One threadgroup per row. Each pass reduces inside SIMD-groups first
// (simd_max / simd_sum), then combines the per-group partials through
// threadgroup memory in SIMD-group 0.
#include <metal_stdlib>
using namespace metal;

[[kernel]] void custom_kernel_softmax_rows_float_float(
  const device float* inp [[buffer(0)]],
  const constant int* inp_shape [[buffer(1)]],
  device float* out [[buffer(2)]],
  uint simdgroup_index_in_threadgroup [[simdgroup_index_in_threadgroup]],
  uint simdgroups_per_threadgroup [[simdgroups_per_threadgroup]],
  uint thread_index_in_simdgroup [[thread_index_in_simdgroup]],
  uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
  uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
  uint3 threads_per_threadgroup [[threads_per_threadgroup]]) {

        threadgroup float partials[32];
        threadgroup float row_stats[2];

        uint row = threadgroup_position_in_grid.x;
        uint cols = uint(inp_shape[1]);
        uint lid = thread_position_in_threadgroup.x;
        uint width = threads_per_threadgroup.x;
        uint lane = thread_index_in_simdgroup;
        uint sg = simdgroup_index_in_threadgroup;
        uint n_sg = simdgroups_per_threadgroup;

        const device float* src = inp + row * cols;
        device float* dst = out + row * cols;
        const float neg_inf = -numeric_limits<float>::infinity();

        // pass 1: row maximum
        float m = neg_inf;
        for (uint c = lid; c < cols; c += width) {
            m = max(m, src[c]);
        }
        m = simd_max(m);
        if (lane == 0) {
            partials[sg] = m;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (sg == 0) {
            float v = (lane < n_sg) ? partials[lane] : neg_inf;
            v = simd_max(v);
            if (lane == 0) {
                row_stats[0] = v;
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        float row_max = row_stats[0];

        // pass 2: sum of shifted exponentials
        float s = 0.0f;
        for (uint c = lid; c < cols; c += width) {
            s += metal::exp(src[c] - row_max);
        }
        s = simd_sum(s);
        if (lane == 0) {
            partials[sg] = s;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (sg == 0) {
            float v = (lane < n_sg) ? partials[lane] : 0.0f;
            v = simd_sum(v);
            if (lane == 0) {
                row_stats[1] = v;
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        float inv_total = 1.0f / row_stats[1];

        // pass 3: normalise
        for (uint c = lid; c < cols; c += width) {
            dst[c] = metal::exp(src[c] - row_max) * inv_total;
        }

}
