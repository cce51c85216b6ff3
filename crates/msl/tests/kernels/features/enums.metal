// FEATURE: enums — plain enums with explicit and implicit values, scoped
// enum class with an underlying type, switch over both, conversions,
// program-scope constant array of enum values.
// KERNEL: enums_kernel
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

enum Mode {
  MODE_ADD = 0,
  MODE_MUL = 1,
  MODE_KEEP
};

enum class Op : uint {
  Neg,
  Abs,
  Square,
  Halve = 10
};

constant Op kOps[4] = {Op::Neg, Op::Abs, Op::Square, Op::Halve};

float apply(Op op, float v) {
  switch (op) {
    case Op::Neg:
      return -v;
    case Op::Abs:
      return abs(v);
    case Op::Square:
      return v * v;
    default:
      return v * 0.5f;
  }
}

kernel void enums_kernel(
    device const float* src [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  float v = src[tid];
  Mode m = Mode(tid % 3);
  float r = 0.0f;
  switch (m) {
    case MODE_ADD:
      r = v + 1.0f;
      break;
    case MODE_MUL:
      r = v * 2.0f;
      break;
    case MODE_KEEP:
    default:
      r = v;
      break;
  }

  Op op = kOps[tid % 4];
  r += apply(op, v);

  uint raw = static_cast<uint>(Op::Halve);
  int plain = MODE_KEEP;       // unscoped enums convert implicitly
  bool is_neg = (op == Op::Neg);

  out[tid] = r + float(raw) + float(plain) + (is_neg ? 1.0f : 0.0f);
}
