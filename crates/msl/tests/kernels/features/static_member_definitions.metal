// FEATURE: out-of-class definitions of static data members — tables held by
// an explicit specialization of a struct template, defined again at program
// scope without a value, then read through an alias of the specialization.
// KERNEL: static_member_definitions_kernel
// GRID: 6,1,1
// THREADGROUP: 6,1,1
#include <metal_stdlib>
using namespace metal;

template <int ROWS, int COLS>
struct Weights {};

template <>
struct Weights<2, 3> {
  static constant constexpr const int rows = 2;
  static constant constexpr const float w[2][3] = {
      {0.5f, 1.0f, 1.5f},
      {2.0f, 2.5f, 3.0f},
  };
};

constant constexpr const float Weights<2, 3>::w[2][3];
constant constexpr const int Weights<2, 3>::rows;

template <int R>
float weight_at(uint k) {
  using W = Weights<R, 3>;
  return W::w[k / 3 % W::rows][k % 3];
}

kernel void static_member_definitions_kernel(
    device float* out [[buffer(0)]],
    uint tid [[thread_position_in_grid]]) {
  out[tid] = weight_at<2>(tid);
}
