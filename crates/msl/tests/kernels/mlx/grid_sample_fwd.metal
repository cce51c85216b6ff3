// MLX: grid_sample (bilinear, zero padding, align_corners=False), forward
// GRID: 200,1,1
// THREADGROUP: 256,1,1
// INPUTS: x=rand(2,8,8,4):f32 grid=rand(2,5,5,2)*2-1:f32
// OUTPUT: out=2,5,5,4:f32
// One thread per output element (b, gy, gx, c). x is (B, H, W, C) channels-last,
// grid holds (x, y) sample positions in [-1, 1], out is (B, gH, gW, C).
#include <metal_stdlib>
using namespace metal;

[[kernel]] void custom_kernel_grid_sample_float_float_float(
  const device float* x [[buffer(0)]],
  const constant int* x_shape [[buffer(1)]],
  const device float* grid [[buffer(2)]],
  const constant int* grid_shape [[buffer(3)]],
  device float* out [[buffer(4)]],
  uint3 thread_position_in_grid [[thread_position_in_grid]]) {

        int elem = int(thread_position_in_grid.x);
        int H = x_shape[1];
        int W = x_shape[2];
        int C = x_shape[3];
        int gH = grid_shape[1];
        int gW = grid_shape[2];
        int total = x_shape[0] * gH * gW * C;

        if (elem < total) {
            int channel = elem % C;
            int point = elem / C;
            int batch = point / (gH * gW);

            // normalised coordinates -> continuous pixel coordinates
            float px = ((grid[2 * point] + 1.0f) * float(W) - 1.0f) * 0.5f;
            float py = ((grid[2 * point + 1] + 1.0f) * float(H) - 1.0f) * 0.5f;

            float fx = floor(px);
            float fy = floor(py);
            int x0 = int(fx);
            int y0 = int(fy);
            int x1 = x0 + 1;
            int y1 = y0 + 1;

            // bilinear weights
            float wx1 = px - fx;
            float wx0 = 1.0f - wx1;
            float wy1 = py - fy;
            float wy0 = 1.0f - wy1;

            bool col0 = x0 >= 0 && x0 < W;
            bool col1 = x1 >= 0 && x1 < W;
            bool row0 = y0 >= 0 && y0 < H;
            bool row1 = y1 >= 0 && y1 < H;

            // start of this image, already offset to our channel
            const device float* img = x + batch * H * W * C + channel;

            float acc = 0.0f;
            if (row0 && col0) {
                acc += wy0 * wx0 * img[(y0 * W + x0) * C];
            }
            if (row0 && col1) {
                acc += wy0 * wx1 * img[(y0 * W + x1) * C];
            }
            if (row1 && col0) {
                acc += wy1 * wx0 * img[(y1 * W + x0) * C];
            }
            if (row1 && col1) {
                acc += wy1 * wx1 * img[(y1 * W + x1) * C];
            }
            out[elem] = acc;
        }

}
