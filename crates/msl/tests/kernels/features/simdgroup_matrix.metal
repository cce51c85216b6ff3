// FEATURE: simdgroup_matrix — simdgroup_float8x8, make_filled_simdgroup_matrix,
// simdgroup_load (plain, transposed, from device and threadgroup memory),
// simdgroup_multiply, simdgroup_multiply_accumulate, simdgroup_store to
// threadgroup and device memory, simdgroup_barrier.
// One SIMD-group computes C = A*B + A*B^T + A*A for 8x8 row-major matrices.
// KERNEL: simdgroup_matrix_kernel
// GRID: 32,1,1
// THREADGROUP: 32,1,1
// INPUTS: a=rand(64):f32 b=rand(64):f32
// OUTPUT: c=64:f32
// SPEC: (a.reshape(8, 8) @ b.reshape(8, 8) + a.reshape(8, 8) @ b.reshape(8, 8).T + a.reshape(8, 8) @ a.reshape(8, 8)).reshape(64)
#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;

kernel void simdgroup_matrix_kernel(
    device const float* a [[buffer(0)]],
    device const float* b [[buffer(1)]],
    device float* c [[buffer(2)]],
    uint lane [[thread_index_in_simdgroup]])
{
  threadgroup float stage[64];
  threadgroup float eye[64];

  simdgroup_float8x8 ma;
  simdgroup_float8x8 mb;
  simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);

  simdgroup_load(ma, a, 8);
  simdgroup_load(mb, b, 8);
  simdgroup_multiply_accumulate(acc, ma, mb, acc);

  // the same B, loaded transposed
  simdgroup_load(mb, b, 8, ulong2(0, 0), true);
  simdgroup_multiply_accumulate(acc, ma, mb, acc);

  // A*A, sent through threadgroup memory and read back
  simdgroup_float8x8 square;
  simdgroup_multiply(square, ma, ma);
  simdgroup_store(square, stage, 8);

  // each lane fills two entries of an identity matrix
  for (uint k = lane; k < 64; k += 32) {
    eye[k] = (k % 9 == 0) ? 1.0f : 0.0f;
  }
  simdgroup_barrier(mem_flags::mem_threadgroup);

  simdgroup_float8x8 reloaded;
  simdgroup_float8x8 identity;
  simdgroup_load(reloaded, stage, 8);
  simdgroup_load(identity, eye, 8);
  simdgroup_multiply_accumulate(acc, reloaded, identity, acc);

  simdgroup_store(acc, c, 8);
}
