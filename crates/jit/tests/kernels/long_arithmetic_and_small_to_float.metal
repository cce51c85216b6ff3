// KERNEL: k
// GRID: 200
// THREADGROUP: 64
// BUFFER: 0 zeros 200 u32
// BUFFER: 1 zeros 200 f32
// 64-bit integer arithmetic (wrapping, division and remainder, shifts),
// and 8/16-bit integers and halves converted to float, compiled natively:
// bit for bit the interpreter's.
#include <metal_stdlib>
using namespace metal;

kernel void k(device uint* u [[buffer(0)]], device float* f [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  long a = long(ulong(i) * 0x9E3779B97F4A7C15ul) - 77l;
  ulong b = ulong(a) >> (i % 67u);
  long c = (a / ((long(i % 5u) + 1l) * ((i & 1u) != 0u ? -1l : 1l))) + (a % 1000003l) - long(b % 97ul);
  ulong d = (b * 31ul) ^ (ulong(c) << (i & 7u)) | ulong(i);
  long e = c / (long(i) - 300l) + (c % -7l);
  u[i] = uint(d ^ (d >> 32)) + uint(e);
  char ch = char(i * 37u);
  ushort us = ushort(i * 1234u);
  half h = half(float(i) * 0.37f);
  f[i] = float(ch) + float(us) * 0.5f + float(h) + float(uchar(i * 3u)) + float(short(i * 999u));
}
