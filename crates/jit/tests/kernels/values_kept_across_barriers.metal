// KERNEL: keep
// GRID: 256
// THREADGROUP: 64
// BUFFER: 0 mod=13 256 u32
// BUFFER: 1 zeros 256 u32
#include <metal_stdlib>
using namespace metal;

// Values live across barriers, changed between them on some paths only
// (a branch, a switch that falls through, a helper that returns early, a
// loop): a thread resuming after a barrier must find each value as it was
// last set, whichever path set it (the code skips storing values it
// reloaded and did not change).
static uint bump(uint v, uint l) {
  if (l % 3u == 0u) return v + 7u;
  v ^= 5u;
  return v * 3u;
}

kernel void keep(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
  threadgroup uint t[64];
  uint a = in[i];
  uint b = a * 2u + 1u;
  uint c = l;
  t[l] = a;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (l & 1u) {
    a += t[(l + 1u) % 64u];
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  switch (l % 4u) {
    case 0: b += 3u;
    case 1: b *= 5u; break;
    case 2: c = bump(c, l); break;
    default: break;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint k = 0; k < 3u; k++) {
    if ((l + k) % 5u == 0u) {
      c += k + a;
    }
    t[l] = c + k;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (k == 1u && (l & 2u)) {
      b = bump(b, l + k);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  out[i] = a * 1000003u + b * 1009u + c + t[(l + 7u) % 64u];
}
