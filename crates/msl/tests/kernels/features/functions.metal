// FEATURE: functions — overloading on scalar and vector types, default
// arguments, thread references as out-parameters, inline and static
// functions, functions returning structs and vectors, forward declaration,
// calls between helpers, void functions with early return.
// KERNEL: functions_kernel
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

struct MinMax {
  float lo;
  float hi;
};

float combine(float a, float b);  // defined further down

inline float scale(float v, float factor = 2.0f) {
  return v * factor;
}

float describe(float v) {
  return v + 1.0f;
}

float describe(int v) {
  return float(v) * 10.0f;
}

float describe(float2 v) {
  return v.x - v.y;
}

static void split(float v, thread float& whole, thread float& part) {
  whole = floor(v);
  part = v - whole;
}

MinMax bounds(thread const float* vals, int n) {
  MinMax r = {vals[0], vals[0]};
  for (int i = 1; i < n; ++i) {
    r.lo = min(r.lo, vals[i]);
    r.hi = max(r.hi, vals[i]);
  }
  return r;
}

float3 lift(float v) {
  return float3(v, v * v, v * v * v);
}

void clear_if_negative(thread float& v) {
  if (v >= 0.0f) {
    return;
  }
  v = 0.0f;
}

float combine(float a, float b) {
  return scale(a) + scale(b, 0.5f);
}

kernel void functions_kernel(
    device const float* src [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  float v = src[tid];
  float whole;
  float part;
  split(v, whole, part);

  float vals[3] = {v, whole, part};
  MinMax mm = bounds(vals, 3);

  float r = describe(v) + describe(int(tid)) + describe(float2(v, 1.0f));
  r += combine(mm.lo, mm.hi) + lift(part).z;
  clear_if_negative(r);

  out[tid] = r;
}
