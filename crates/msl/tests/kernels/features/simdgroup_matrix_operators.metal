// FEATURE: the product operator on SIMD-group matrices ((a * b) * c, as in
// Winograd transforms) and a vector braced list that leaves out trailing
// components (they are zero).
// KERNEL: simdgroup_matrix_operators_kernel
// GRID: 32,1,1
// THREADGROUP: 32,1,1
#include <metal_stdlib>
using namespace metal;

kernel void simdgroup_matrix_operators_kernel(
    device const float* a_in [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint lane [[thread_index_in_simdgroup]]) {
  simdgroup_float8x8 a;
  simdgroup_load(a, a_in, 8);
  simdgroup_float8x8 twice = make_filled_simdgroup_matrix<float, 8, 8>(2.0f);
  simdgroup_float8x8 r = (a * twice) * a;
  simdgroup_store(r, out, 8);
  uint3 seed = {lane, 1u};
  out[64 + lane] = float(seed.x + seed.y + seed.z);
}
