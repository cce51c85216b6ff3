// FEATURE: scalar types — half (h / H literals), bfloat, int64_t/long/ulong,
// uchar/char/short/ushort, fixed-width aliases, size_t, bool, literal forms
// (hex, octal, binary, suffixes), implicit scalar promotions.
// KERNEL: scalar_types_kernel
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

kernel void scalar_types_kernel(
    device half* half_out [[buffer(0)]],
    device bfloat* bf_out [[buffer(1)]],
    device int64_t* long_out [[buffer(2)]],
    device uchar* byte_out [[buffer(3)]],
    device float* float_out [[buffer(4)]],
    uint tid [[thread_position_in_grid]])
{
  half h = 1.5h + half(tid);
  half h2 = 0.25H;
  float widened = h;                 // half -> float is implicit

  bfloat bf = bfloat(2.0f);
  bfloat bf2 = bfloat(float(bf) * 0.5f);

  int64_t big = int64_t(tid) << 33;
  long l = 3l;
  ulong ul = 5ul;
  uint64_t u64 = 0xFFFFFFFFull;

  uchar byte = uchar(tid & 0xFFu);
  char sc = -3;
  short sh = 12;
  ushort us = 0xFFFF;
  uint8_t u8 = 7;
  int16_t i16 = -2;
  uint32_t u32 = 010;               // octal 8
  int bin = 0b101;                   // 5
  size_t sz = sizeof(float4);
  bool flag = tid > 3u;
  float tiny = 1e-3f;
  float dot5 = .5f;

  half_out[tid] = h * h2;
  bf_out[tid] = bf2;
  long_out[tid] = big + l + long(ul) + long(u64 & 1ul);
  byte_out[tid] = byte + uchar(1);
  float_out[tid] = widened + float(sc) + float(sh) + float(us) + float(u8) + float(i16) +
                   float(u32) + float(bin) + float(sz) + (flag ? 1.0f : 0.0f) + tiny + dot5;
}
