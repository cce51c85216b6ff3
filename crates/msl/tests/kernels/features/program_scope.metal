// FEATURE: program scope — constant arrays (1-D and 2-D), constant structs
// with nested arrays, constexpr constants,
// static_assert, typedef / using aliases,
// #pragma unroll on loops.
// KERNEL: program_scope_kernel
// GRID: 16,1,1
// THREADGROUP: 16,1,1
#include <metal_stdlib>
using namespace metal;

struct Coeffs {
  float scale;
  float bias;
  int taps[3];
};

constant Coeffs kCoeffs = {2.0f, 0.5f, {-1, 0, 1}};
constant float kWeights[3] = {0.25f, 0.5f, 0.25f};
constant float kGrid[2][3] = {{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}};
constant constexpr int kRadius = 1;
constant uint kCount = 16;


typedef float4 vec4;
typedef unsigned int index_type;
using real = float;

static_assert(sizeof(float4) == 16, "float4 is 16 bytes");
static_assert(kRadius * 2 + 1 == 3, "constant arithmetic");

kernel void program_scope_kernel(
    device const real* src [[buffer(0)]],
    device vec4* out [[buffer(1)]],
    index_type tid [[thread_position_in_grid]])
{
  real acc = 0.0f;

  // 3-tap stencil, clamped at the edges
#pragma unroll
  for (int k = -kRadius; k <= kRadius; ++k) {
    int idx = clamp(int(tid) + k, 0, int(kCount) - 1);
    acc += kWeights[k + kRadius] * src[idx];
  }

  constexpr int local_n = 2 * 2;
  real scratch[local_n];
#pragma unroll(4)
  for (int i = 0; i < local_n; ++i) {
    scratch[i] = float(kCoeffs.taps[i % 3]) * kCoeffs.scale + kCoeffs.bias;
  }

  float2 p = float2(kGrid[0][tid % 3], kGrid[1][tid % 3]);
  out[tid] = vec4(acc, scratch[0] + scratch[3], p.x, p.y);
}
