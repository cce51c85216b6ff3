// FEATURE: quad-group functions — quad_sum, quad_max, quad_prefix_exclusive_sum,
// quad_shuffle / _xor / _down / _up, quad_broadcast, quad_any / quad_all,
// thread_index_in_quadgroup.
// KERNEL: quad_kernel
// GRID: 16,1,1
// THREADGROUP: 16,1,1
#include <metal_stdlib>
using namespace metal;

kernel void quad_kernel(
    device const float* src [[buffer(0)]],
    device float* dst [[buffer(1)]],
    uint gid [[thread_position_in_grid]],
    uint qlane [[thread_index_in_quadgroup]])
{
  float v = src[gid];

  float s = quad_sum(v);
  float m = quad_max(v);
  float before = quad_prefix_exclusive_sum(v);
  float reversed = quad_shuffle(v, ushort(3 - qlane));
  float partner = quad_shuffle_xor(v, 1);
  float next = quad_shuffle_down(v, 1);
  float prev = quad_shuffle_up(v, 1);
  float corner = quad_broadcast(v, 0);
  bool any_neg = quad_any(v < 0.0f);
  bool all_small = quad_all(v < 100.0f);

  dst[gid] = s + m + before + reversed + partner + next + prev + corner +
             (any_neg ? 1.0f : 0.0f) + (all_small ? 2.0f : 0.0f);
}
