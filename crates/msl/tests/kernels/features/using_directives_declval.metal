// FEATURE: `using namespace` for user namespaces (nested, relative, inside
// another namespace), `declval<T>()` in `decltype` to name a call's result
// type, and explicit instantiation of a template named with a leading `::`.
// KERNEL: apply_half_float
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

namespace lib {
namespace detail {
template <typename T>
constexpr constant bool is_small_v = sizeof(T) <= 2;
inline float twice(float x) { return 2.0f * x; }
} // namespace detail

template <typename F, typename T>
using call_t = decltype(::metal::declval<F>()(::metal::declval<T>()));

namespace ops {
using namespace detail; // relative: lib::detail
inline float quad(float x) { return twice(twice(x)); }
} // namespace ops

template <typename T, typename F>
kernel void apply(device call_t<F, T>* out [[buffer(0)]], device const T* in [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
  F f;
  out[i] = f(in[i]);
}
} // namespace lib

using namespace lib::detail;

struct widen {
  template <typename T, enable_if_t<is_small_v<T>, bool> = true>
  float operator()(T x) { return float(x) + 0.5f; }
  template <typename T, enable_if_t<!is_small_v<T>, bool> = true>
  T operator()(T x) { return lib::ops::quad(float(x)); }
};

static_assert(is_same_v<lib::call_t<widen, half>, float>, "small types widen to float");
static_assert(is_same_v<lib::call_t<widen, float>, float>, "float stays float");

template [[host_name("apply_half_float")]] kernel void ::lib::apply<half, widen>(
    device float* out, device const half* in, uint i);
template [[host_name("apply_float_float")]] kernel void ::lib::apply<float, widen>(
    device float* out, device const float* in, uint i);
