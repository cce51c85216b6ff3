// FEATURE: conversions — as_type bit reinterpretation (scalar and vector),
// static_cast, C-style casts, functional casts, vector conversion
// constructors, bool conversions, integer truncation.
// KERNEL: casts_kernel
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

kernel void casts_kernel(
    device const float* src [[buffer(0)]],
    device uint* bits_out [[buffer(1)]],
    device float4* vec_out [[buffer(2)]],
    uint tid [[thread_position_in_grid]])
{
  float f = src[tid];

  // bit-level reinterpretation between same-sized types
  uint bits = as_type<uint>(f);
  float negated = as_type<float>(bits ^ 0x80000000u);
  half2 halves = as_type<half2>(bits);
  float2 pair = as_type<float2>(uint2(bits, 0x3f800000u));
  int4 lanes = as_type<int4>(float4(f));

  // value conversions
  int i = static_cast<int>(f);
  float g = (float)i;
  uint u = uint(g);
  short narrowed = (short)(i & 0x7fff);
  bool nonzero = bool(u);
  float from_bool = float(true);

  int3 truncated = int3(float3(1.5f, -2.5f, 3.75f));
  float4 widened = float4(int4(1, 2, 3, 4));
  float scaled = static_cast<float>(widened.w) * (float)narrowed;
  half4 h = half4(widened);
  uchar4 bytes = uchar4(uint4(0x101u, 2u, 3u, 4u));

  bits_out[tid] = bits + uint(lanes.x & 1) + (nonzero ? 1u : 0u) + uint(narrowed);
  vec_out[tid] = widened + float4(float3(truncated), negated) +
                 float4(float2(halves), pair) + float4(h) + float4(bytes) + float4(from_bool + scaled);
}
