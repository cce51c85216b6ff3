// FEATURE: numeric limits and math builtins — numeric_limits<T>::max/min/
// lowest/epsilon/infinity/quiet_NaN, isnan/isinf/isfinite, fma, clamp, mix,
// saturate, step, smoothstep, rsqrt, fract, sign, copysign, integer
// builtins (popcount, clz, ctz, abs, min/max, mulhi, rotate).
// KERNEL: limits_math_kernel
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

kernel void limits_math_kernel(
    device const float* src [[buffer(0)]],
    device float* out [[buffer(1)]],
    device uint* iout [[buffer(2)]],
    uint tid [[thread_position_in_grid]])
{
  float x = src[tid];

  float fmax_v = numeric_limits<float>::max();
  float fmin_pos = numeric_limits<float>::min();
  float flow = numeric_limits<float>::lowest();
  float eps = numeric_limits<float>::epsilon();
  float inf = numeric_limits<float>::infinity();
  float qnan = numeric_limits<float>::quiet_NaN();
  int imax = numeric_limits<int>::max();
  uint umax = numeric_limits<uint>::max();
  half hmax = numeric_limits<half>::max();

  float best = flow;
  best = max(best, x);
  bool weird = isnan(qnan) && isinf(inf) && isfinite(fmax_v);

  float r = fma(x, 2.0f, 1.0f);
  r += clamp(x, -1.0f, 1.0f);
  r += mix(0.0f, 10.0f, saturate(x));
  r += step(0.5f, x) + smoothstep(0.0f, 1.0f, x);
  r += rsqrt(abs(x) + 1.0f) + fract(x) + sign(x) + copysign(1.0f, x);
  r += floor(x) + ceil(x) + round(x) + trunc(x) + fmod(x, 3.0f);
  r += pow(abs(x), 0.5f) + log2(abs(x) + 1.0f) + exp2(x * 0.1f);
  r += (x < fmin_pos ? eps : 0.0f) + float(hmax) * 0.0f + best;

  uint bits = as_type<uint>(x);
  uint ir = popcount(bits) + clz(bits | 1u) + ctz(bits | 0x80000000u);
  ir += uint(abs(-int(tid))) + min(umax, 5u) + uint(max(imax, 0) & 1);
  ir += mulhi(bits, 3u) + rotate(bits, 8u);

  out[tid] = weird ? r : 0.0f;
  iout[tid] = ir;
}
