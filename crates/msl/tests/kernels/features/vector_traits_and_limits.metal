// Metal's type traits and numeric_limits take vector types: a vector is
// floating point (or integral) when its elements are, and its limits are
// its element's in every lane. A switch naming every enumerator returns on
// every path, so the helper below needs no trailing return.
#include <metal_stdlib>
using namespace metal;

enum class Kind : uchar { Real, Pair, Count };

template <typename T, enable_if_t<is_floating_point_v<T> && is_scalar_v<T>, bool> = true>
inline float classify(T) { return 1.0f; }
template <typename T, enable_if_t<is_floating_point_v<T> && is_vector_v<T>, bool> = true>
inline float classify(T) { return 2.0f; }
template <typename T, enable_if_t<is_integral_v<T> && !is_scalar_v<T>, bool> = true>
inline float classify(T) { return 3.0f; }

inline float by_kind(Kind k, float2 v) {
  switch (k) {
    case Kind::Real:
      return v.x;
    case Kind::Pair:
      return v.x + v.y;
    case Kind::Count:
      return 2.0f;
  }
}

kernel void vector_traits_kernel(
    device float* out [[buffer(0)]],
    uint t [[thread_position_in_grid]]) {
  const float2 big = numeric_limits<float2>::max();
  const half2 inf = numeric_limits<half2>::infinity();
  out[8 * t + 0] = classify(float(t));
  out[8 * t + 1] = classify(half2(t));
  out[8 * t + 2] = classify(int3(t));
  out[8 * t + 3] = big.y == FLT_MAX ? 1.0f : 0.0f;
  out[8 * t + 4] = isinf(inf.x) && isinf(inf.y) ? 1.0f : 0.0f;
  out[8 * t + 5] = float(numeric_limits<uint2>::max().x == 0xffffffffu);
  out[8 * t + 6] = by_kind(Kind(t % 3), float2(t, 10));
  out[8 * t + 7] = float(is_signed_v<int2>) + 2.0f * float(is_unsigned_v<ushort4>) + 4.0f * float(numeric_limits<half4>::digits);
}
