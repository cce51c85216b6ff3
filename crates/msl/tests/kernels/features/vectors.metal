// FEATURE: vectors — constructors from scalars and smaller vectors, swizzle
// reads and writes (xyzw and rgba sets), subscripts, component-wise math and
// comparisons, select, explicit vector conversions, packed_float3.
// KERNEL: vectors_kernel
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

kernel void vectors_kernel(
    device const float4* src [[buffer(0)]],
    device float4* dst [[buffer(1)]],
    device packed_float3* packed [[buffer(2)]],
    uint tid [[thread_position_in_grid]])
{
  float2 xy = float2(1.0f, 2.0f);
  float4 v = float4(xy, 0.0f, 1.0f);
  float4 w = src[tid];

  // swizzle writes
  v.xy = w.zw;
  v.zw = v.yx;
  float3 c = w.rgb;
  v.a = c.b;

  // splat constructor and component-wise arithmetic
  float4 half_vec = float4(0.5f);
  float4 r = v * half_vec + w - float4(c, 1.0f) / 2.0f;
  r = max(r, float4(0.0f));

  // comparisons give boolean vectors
  bool4 mask = r > half_vec;
  float4 picked = select(r, half_vec, mask);
  bool some = any(mask);
  bool every = all(mask);

  int3 iv = int3(1, 2, 3);
  iv += 1;
  iv = iv * int3(2);
  float3 conv = float3(iv);

  uint2 u = uint2(tid, tid + 1u);
  float4 reversed = w.wzyx;
  float s = v[2] + r.x + reversed.g;

  // packed 12-byte vectors convert to and from float3
  packed_float3 p = packed[tid];
  float3 up = float3(p);
  packed[tid] = packed_float3(up * 2.0f);

  half4 h = half4(v);
  float len = length(c) + dot(xy, float2(u));

  dst[tid] = picked + reversed + float4(conv, s) + float4(float(h.x), up.x, len, some && every ? 1.0f : 0.0f);
  dst[tid].y += 1.0f;
}
