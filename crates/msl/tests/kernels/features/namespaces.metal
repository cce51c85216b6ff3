// FEATURE: namespaces — metal::fast / metal::precise math, qualified and
// unqualified calls, user namespaces (nested, anonymous), namespace alias,
// using-declaration, global-scope qualification.
// KERNEL: namespaces_kernel
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

namespace geo {
constant float kScale = 2.0f;

float norm2(float2 v) {
  return dot(v, v);
}

namespace detail {
inline float twice(float v) {
  return v * 2.0f;
}
}  // namespace detail
}  // namespace geo

namespace {
float local_helper(float v) {
  return v - 1.0f;
}
}  // namespace

using geo::norm2;

kernel void namespaces_kernel(
    device const float* src [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  float x = src[tid];
  float y = abs(x) + 1.0f;

  float r = metal::fast::exp(x);
  r += metal::precise::sqrt(y);
  r += fast::sin(x) + precise::cos(x);
  r += metal::abs(x) + metal::max(x, y);
  r += geo::detail::twice(x) + geo::kScale + ::geo::kScale;
  r += norm2(float2(x, y));
  r += local_helper(y);

  out[tid] = r;
}
