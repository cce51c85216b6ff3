// KERNEL: k
// GRID: 300
// THREADGROUP: 64
// BUFFER: 0 zeros 300 u32
// BUFFER: 1 zeros 300 i32
// Integer conversions between every 8-, 16- and 32-bit type (wrapping,
// sign and zero extension), from bool, and integer min/max, compiled
// natively: bit for bit the interpreter's.
#include <metal_stdlib>
using namespace metal;

kernel void k(device uint* u [[buffer(0)]], device int* s [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  int x = int(i * 2654435761u) >> 7;
  ushort us = ushort(x);
  short ss = short(x);
  uchar uc = uchar(x);
  char sc = char(x);
  uint a = uint(us) + uint(ss) * 3u + uint(uc) * 5u + uint(sc) * 7u;
  int b = int(us) - int(ss) + int(uc) - int(sc) + int(bool(i & 4u));
  ushort back = ushort(b);
  char back8 = char(a);
  u[i] = min(a, uint(back) * 11u) ^ max(uint(back8), a >> 3);
  s[i] = min(b, int(back8)) + max(b, -int(back)) + int(short(ushort(sc)));
}
