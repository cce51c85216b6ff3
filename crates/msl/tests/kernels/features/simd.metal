// FEATURE: SIMD-group functions — simd_sum/max/min, simd_prefix_exclusive_sum
// and inclusive sum, shuffles (up, down, xor, indexed), simd_broadcast,
// simd_broadcast_first, simd_ballot with simd_vote, simd_any/all,
// simd_is_first, SIMD-group thread attributes.
// KERNEL: simd_kernel
// GRID: 64,1,1
// THREADGROUP: 64,1,1
#include <metal_stdlib>
using namespace metal;

kernel void simd_kernel(
    device const float* src [[buffer(0)]],
    device float* dst [[buffer(1)]],
    device uint* ballots [[buffer(2)]],
    uint gid [[thread_position_in_grid]],
    uint lane [[thread_index_in_simdgroup]],
    uint width [[threads_per_simdgroup]])
{
  float v = src[gid];

  float total = simd_sum(v);
  float biggest = simd_max(v);
  float least = simd_min(v);
  float before = simd_prefix_exclusive_sum(v);
  float upto = simd_prefix_inclusive_sum(v);

  float from_next = simd_shuffle_down(v, 1);
  float from_prev = simd_shuffle_up(v, 1);
  float partner = simd_shuffle_xor(v, 1);
  float mirrored = simd_shuffle(v, ushort(width - 1 - lane));
  float lane0 = simd_broadcast(v, 0);
  float first_active = simd_broadcast_first(v);

  simd_vote vote = simd_ballot(v > 0.5f);
  uint64_t mask = static_cast<uint64_t>(vote);
  bool any_big = simd_any(v > 0.9f);
  bool all_pos = simd_all(v >= 0.0f);

  if (simd_is_first()) {
    ballots[gid / width] = uint(mask & 0xFFFFFFFFul);
  }

  dst[gid] = total + biggest + least + before + upto + from_next + from_prev + partner +
             mirrored + lane0 + first_active + (any_big ? 1.0f : 0.0f) + (all_pos ? 2.0f : 0.0f);
}
