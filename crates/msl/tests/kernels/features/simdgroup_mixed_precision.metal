// FEATURE: mixed-precision SIMD-group matrix products — half and bfloat
// factors multiplied into a float accumulator with
// `simdgroup_multiply_accumulate(d, a, b, c)`, as PyTorch's GEMMs do; the
// product is computed in float.
// KERNEL: mixed_mma
// GRID: 32,1,1
// THREADGROUP: 32,1,1
#include <metal_simdgroup>
#include <metal_stdlib>
using namespace metal;

kernel void mixed_mma(
    const device half* a [[buffer(0)]],
    const device bfloat* b [[buffer(1)]],
    device float* out [[buffer(2)]],
    uint lane [[thread_index_in_simdgroup]])
{
  simdgroup_half8x8 ha;
  simdgroup_half8x8 hb;
  simdgroup_bfloat8x8 ba;
  simdgroup_bfloat8x8 bb;
  simdgroup_load(ha, a, 8);
  simdgroup_load(hb, a, 8, ulong2(0, 0), true);
  simdgroup_load(ba, b, 8);
  simdgroup_load(bb, b, 8, ulong2(0, 0), true);
  simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(1.0f);
  // acc = 1 + a * transpose(a), then + b * transpose(b).
  simdgroup_multiply_accumulate(acc, ha, hb, acc);
  simdgroup_multiply_accumulate(acc, ba, bb, acc);
  simdgroup_store(acc, out, 8);
}
