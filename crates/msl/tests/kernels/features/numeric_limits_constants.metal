// FEATURE: `numeric_limits<T>`'s static data members (`digits`, `digits10`,
// `radix`, `is_signed`, `is_integer`, exponents) as compile-time constants,
// inside templates and in `constexpr` locals; beside the member functions.
// KERNEL: limits_constants
// GRID: 1,1,1
// THREADGROUP: 1,1,1
#include <metal_stdlib>
using namespace metal;

// Mantissa bits stored in a floating-point type (without the implicit one).
template <typename T>
int stored_mantissa_bits() {
  constexpr int bits = numeric_limits<T>::digits - 1;
  return bits;
}

template <typename T>
int describe() {
  int flags = (numeric_limits<T>::is_signed ? 1 : 0) + (numeric_limits<T>::is_integer ? 2 : 0);
  return numeric_limits<T>::digits * 100 + numeric_limits<T>::digits10 * 10 + flags;
}

kernel void limits_constants(device int* out [[buffer(0)]])
{
  out[0] = stored_mantissa_bits<float>();
  out[1] = stored_mantissa_bits<half>();
  out[2] = stored_mantissa_bits<bfloat>();
  out[3] = describe<int>();
  out[4] = describe<uchar>();
  out[5] = describe<float>();
  out[6] = metal::numeric_limits<float>::radix;
  out[7] = numeric_limits<half>::max_exponent + numeric_limits<half>::min_exponent;
  out[8] = int(numeric_limits<half>::max()) >> numeric_limits<half>::digits;
}
