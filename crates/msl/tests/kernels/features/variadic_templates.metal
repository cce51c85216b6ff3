// FEATURE: variadic templates — template and function parameter packs,
// recursion over a pack, pack expansion in calls, constructor calls and
// template argument lists, patterns (`f(x)...`), sizeof..., fold
// expressions, value packs, and the choice of the more specialised overload
// (`max_of(T)` over `max_of(T, Rest...)` for one argument).
// KERNEL: variadic_kernel
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

template <typename T>
T max_of(T x) {
  return x;
}

template <typename T, typename... Rest>
T max_of(T x, Rest... rest) {
  T r = max_of(rest...);
  return x > r ? x : r;
}

template <typename... Ts>
struct type_list {
  static constant constexpr int size = sizeof...(Ts);
};

template <typename... Ts>
using list_of = type_list<Ts..., float>;

template <int... Ks>
constexpr int weighted() {
  return (Ks * ... * 1);
}

template <typename... Args>
float mean(Args... args) {
  return (float(args) + ... + 0.0f) / float(sizeof...(args));
}

inline float sq(float v) {
  return v * v;
}

template <typename... Args>
float sum_squares(thread const Args&... args) {
  return mean(sq(args)...) * float(sizeof...(Args));
}

struct Vec3 {
  float x, y, z;
  Vec3(float a, float b, float c) : x(a), y(b), z(c) {}
};

template <typename T, typename... Args>
T make(Args... args) {
  return T(args...);
}

kernel void variadic_kernel(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float v = float(i);
  Vec3 p = make<Vec3>(v, 2.0f, 3.0f);
  // max(v, 3, 5) + 3 + 24 + mean(v, 2, 6) + (v*v + 1 + 4) + p.x + p.z
  out[i] = max_of(v, 3.0f, 5.0f) + float(list_of<int, half>::size) + float(weighted<2, 3, 4>()) + mean(v, 2, 6u) +
           sum_squares(v, 1.0f, 2.0f) + p.x + p.z;
}
