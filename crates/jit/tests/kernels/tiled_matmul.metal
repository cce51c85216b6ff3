// KERNEL: matmul
// GRID: 48,32
// THREADGROUP: 16,16
// BUFFER: 0 rand 1536 f32
// BUFFER: 1 rand 1536 f32
// BUFFER: 2 zeros 1024 f32
// BUFFER: 3 fill=48 1 u32
#include <metal_stdlib>
using namespace metal;

// C (32x32) = A (32x48) * B (48x32), tiles of 16; n = 48 is the inner size.
kernel void matmul(const device float* A [[buffer(0)]], const device float* B [[buffer(1)]],
                   device float* C [[buffer(2)]], constant uint& n [[buffer(3)]],
                   uint2 gid [[thread_position_in_grid]], uint2 lid [[thread_position_in_threadgroup]]) {
  threadgroup float As[16][16];
  threadgroup float Bs[16][16];
  uint r = gid.y, c = gid.x;
  float acc = 0.0f;
  for (uint k0 = 0; k0 < n; k0 += 16) {
    As[lid.y][lid.x] = A[r * n + k0 + lid.x];
    Bs[lid.y][lid.x] = (k0 + lid.y < n && c < 32) ? B[(k0 + lid.y) * 32 + c] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint k = 0; k < 16; k++) acc = fma(As[lid.y][k], Bs[k][lid.x], acc);
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (c < 32) C[r * 32 + c] = acc;
}
