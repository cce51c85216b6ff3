// FEATURE: templates — function templates with deduced and explicit
// arguments, non-type int parameters, array-reference deduction, trailing
// return types, class templates with member functions, full specialisation.
// KERNEL: templates_kernel
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

template <typename T>
T twice(T v) {
  return v + v;
}

template <typename T, int N>
T sum_n(thread const T* vals) {
  T acc = T(0);
  for (int i = 0; i < N; ++i) {
    acc += vals[i];
  }
  return acc;
}

template <typename T>
struct Accumulator {
  T total;

  Accumulator() : total(T(0)) {}

  void add(T v) {
    total += v;
  }

  T value() const {
    return total;
  }
};

template <typename T>
struct Traits {
  static constant constexpr const bool is_half = false;
};

template <>
struct Traits<half> {
  static constant constexpr const bool is_half = true;
};

template <typename T, int Scale = 2>
T scaled(T v) {
  return v * T(Scale);
}

kernel void templates_kernel(
    device const float* src [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  float vals[4] = {src[tid], 1.0f, 2.0f, 3.0f};

  float a = twice(vals[0]);          // T deduced as float
  int b = twice<int>(3);             // T given explicitly
  float c = sum_n<float, 4>(vals);   // type and int parameters
  float d = vals[3];
  half h = twice(half(1.5h));
  float e = 2 * 0.5f;               // int * float -> float
  float f = scaled(1.0f) + scaled<float, 3>(1.0f);

  Accumulator<float> acc;
  acc.add(a);
  acc.add(c);
  acc.add(d);

  float flag = Traits<half>::is_half ? 1.0f : 0.0f;
  out[tid] = acc.value() + float(b) + float(h) + e + f + flag;
}
