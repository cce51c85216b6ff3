// FEATURE: a qualified name written relative to the enclosing namespace
// (`detail::Accum<T>::type` inside `lib`, `inner::scale` inside
// `lib::ops`) is looked up innermost namespace first, also inside alias
// templates used as a non-deduced function parameter type.
// KERNEL: scaled_half
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

namespace lib {
namespace detail {
template <typename T>
struct Accum {
  using type = T;
};
template <>
struct Accum<half> {
  using type = float;
};
} // namespace detail

template <typename T>
using accum_t = typename detail::Accum<T>::type;

namespace inner {
constant constexpr float scale = 0.5f;
}

namespace ops {
template <typename T>
accum_t<T> scaled(thread accum_t<T>* acc, T v) {
  *acc += static_cast<accum_t<T>>(v) * inner::scale;
  return *acc;
}
} // namespace ops
} // namespace lib

kernel void scaled_half(
    device const half* in [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint i [[thread_position_in_grid]]) {
  float acc = 1.0f;
  out[i] = lib::ops::scaled(&acc, in[i]);
}
