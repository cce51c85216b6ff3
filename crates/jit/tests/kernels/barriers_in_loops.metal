// KERNEL: scan
// GRID: 192
// THREADGROUP: 64
// BUFFER: 0 mod=9 192 u32
// BUFFER: 1 zeros 192 u32
#include <metal_stdlib>
using namespace metal;

// Hillis-Steele inclusive scan with a double buffer: barriers inside a
// uniform loop, values kept across them.
kernel void scan(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
  threadgroup uint buf[2][64];
  uint cur = 0;
  buf[cur][l] = in[i];
  uint keep = in[i] * 3u;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint d = 1; d < 64; d <<= 1) {
    uint next = 1 - cur;
    buf[next][l] = l >= d ? buf[cur][l] + buf[cur][l - d] : buf[cur][l];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    cur = next;
  }
  out[i] = buf[cur][l] + keep;
}
