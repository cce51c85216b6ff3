// FEATURE: an alias template brought in by a using-declaration still looks
// its names up where it was written (`detail::` inside its namespace), also
// as a defaulted template parameter of a kernel template instantiated
// explicitly; an unsized array initialized from a pack expansion
// (`T vals[] = {first, T(rest)...}`) has one element per value; and
// `numeric_limits<int>::infinity()` is 0, as in C++.
// KERNEL: wide_sum_half
// GRID: 4,1,1
// THREADGROUP: 4,1,1
#include <metal_stdlib>
using namespace metal;

namespace lib {
namespace detail {
template <typename T>
struct Wider {
  using type = T;
};
template <>
struct Wider<half> {
  using type = float;
};
} // namespace detail

template <typename T>
using wider_t = typename detail::Wider<T>::type;
} // namespace lib

using lib::wider_t;

template <typename T, typename... Ts>
T largest(T first, Ts... rest) {
  T vals[] = {first, T(rest)...};
  constexpr int n = 1 + sizeof...(Ts);
  T m = vals[0];
  for (int k = 1; k < n; k++) {
    m = max(m, vals[k]);
  }
  return m + T(sizeof(vals) / sizeof(T)) * T(1000);
}

template <typename T, typename Acc = wider_t<T>>
kernel void wide_sum(
    device const T* in [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  Acc acc = Acc(0);
  for (uint k = 0; k <= tid; k++) {
    acc += Acc(in[k]);
  }
  int no_inf = numeric_limits<int>::infinity();
  out[tid] = float(acc) * float(sizeof(Acc)) + largest(float(tid), 2, 7.5f, short(3)) + float(no_inf);
}

template [[host_name("wide_sum_half")]] kernel void wide_sum<half>(
    device const half*, device float*, uint);
