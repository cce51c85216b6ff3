// MLX: grid_sample backward (VJP), atomic_outputs=True, init_value=0
// GRID: 288,1,1
// THREADGROUP: 256,1,1
// INPUTS: x=rand(1,4,4,32):f32 grid=rand(1,3,3,2)*2-1:f32 cotangent=rand(1,3,3,32):f32
// OUTPUT: x_grad=1,4,4,32:f32 grid_grad=1,3,3,2:f32
// INIT: 0
// One thread per (b, gy, gx, c) like the forward pass. The gradient for x is
// scattered to the four neighbours with float atomics. The gradient for grid
// needs a sum over channels: C is 32, so one SIMD-group covers exactly the
// channels of one sample point; simd_sum reduces them and lane 0 publishes.
#include <metal_stdlib>
using namespace metal;

[[kernel]] void custom_kernel_grid_sample_grad_float_float_float_float_float(
  const device float* x [[buffer(0)]],
  const constant int* x_shape [[buffer(1)]],
  const device float* grid [[buffer(2)]],
  const constant int* grid_shape [[buffer(3)]],
  const device float* cotangent [[buffer(4)]],
  device atomic<float>* x_grad [[buffer(5)]],
  device atomic<float>* grid_grad [[buffer(6)]],
  uint thread_index_in_simdgroup [[thread_index_in_simdgroup]],
  uint3 thread_position_in_grid [[thread_position_in_grid]]) {

        int elem = int(thread_position_in_grid.x);
        int H = x_shape[1];
        int W = x_shape[2];
        int C = x_shape[3];
        int gH = grid_shape[1];
        int gW = grid_shape[2];
        int total = x_shape[0] * gH * gW * C;

        // total is a multiple of 32, so whole SIMD-groups are in or out together
        if (elem < total) {
            int channel = elem % C;
            int point = elem / C;
            int batch = point / (gH * gW);

            float px = ((grid[2 * point] + 1.0f) * float(W) - 1.0f) * 0.5f;
            float py = ((grid[2 * point + 1] + 1.0f) * float(H) - 1.0f) * 0.5f;

            float fx = floor(px);
            float fy = floor(py);
            int x0 = int(fx);
            int y0 = int(fy);
            int x1 = x0 + 1;
            int y1 = y0 + 1;

            float wx1 = px - fx;
            float wx0 = 1.0f - wx1;
            float wy1 = py - fy;
            float wy0 = 1.0f - wy1;

            bool col0 = x0 >= 0 && x0 < W;
            bool col1 = x1 >= 0 && x1 < W;
            bool row0 = y0 >= 0 && y0 < H;
            bool row1 = y1 >= 0 && y1 < H;

            int base = batch * H * W * C + channel;
            float g = cotangent[elem];

            // corner values (zero outside the image) and scatter of g into x_grad
            float v00 = 0.0f;
            float v01 = 0.0f;
            float v10 = 0.0f;
            float v11 = 0.0f;
            if (row0 && col0) {
                int loc = base + (y0 * W + x0) * C;
                v00 = x[loc];
                atomic_fetch_add_explicit(&x_grad[loc], wy0 * wx0 * g, memory_order_relaxed);
            }
            if (row0 && col1) {
                int loc = base + (y0 * W + x1) * C;
                v01 = x[loc];
                atomic_fetch_add_explicit(&x_grad[loc], wy0 * wx1 * g, memory_order_relaxed);
            }
            if (row1 && col0) {
                int loc = base + (y1 * W + x0) * C;
                v10 = x[loc];
                atomic_fetch_add_explicit(&x_grad[loc], wy1 * wx0 * g, memory_order_relaxed);
            }
            if (row1 && col1) {
                int loc = base + (y1 * W + x1) * C;
                v11 = x[loc];
                atomic_fetch_add_explicit(&x_grad[loc], wy1 * wx1 * g, memory_order_relaxed);
            }

            // derivative of the interpolated value w.r.t. the pixel coordinates
            float d_px = (wy0 * (v01 - v00) + wy1 * (v11 - v10)) * g;
            float d_py = (wx0 * (v10 - v00) + wx1 * (v11 - v01)) * g;

            // every lane participates: reduce over the 32 channels of this point
            d_px = simd_sum(d_px);
            d_py = simd_sum(d_py);

            if (thread_index_in_simdgroup == 0) {
                // chain rule through the [-1, 1] -> pixel mapping
                atomic_fetch_add_explicit(&grid_grad[2 * point], d_px * float(W) * 0.5f, memory_order_relaxed);
                atomic_fetch_add_explicit(&grid_grad[2 * point + 1], d_py * float(H) * 0.5f, memory_order_relaxed);
            }
        }

}
