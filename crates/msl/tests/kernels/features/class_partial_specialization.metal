// FEATURE: class template partial specialization — patterns over template
// instances (`Traits<Pair<T>>`), pointers, fixed values (`Grid<T, 1>`),
// SFINAE through a defaulted `enable_if_t` parameter, and the choice of the
// more specialised of two matching partial specializations; a static
// member through `decltype(x)::name`.
// KERNEL: partial_spec_kernel
// GRID: 4,1,1
// THREADGROUP: 4,1,1
#include <metal_stdlib>
using namespace metal;

template <typename T>
struct Pair {
  T a, b;
};

template <typename T>
struct Traits {
  static constant constexpr int kind = 1;
};
template <typename T>
struct Traits<Pair<T>> {
  static constant constexpr int kind = 2;
};
template <typename T>
struct Traits<thread T*> {
  static constant constexpr int kind = 3;
};
template <>
struct Traits<bool> {
  static constant constexpr int kind = 4;
};

template <typename T, int N>
struct Grid {
  static constant constexpr int cells = N * N;
};
template <typename T>
struct Grid<T, 1> {
  static constant constexpr int cells = 100;
};

template <typename T, typename Enable = void>
struct Acc {
  static T combine(T x, T y) { return x + y; }
};
template <typename T>
struct Acc<T, enable_if_t<is_floating_point_v<T>>> {
  static T combine(T x, T y) { return max(x, y); }
};

template <typename A, typename B>
struct Match {
  static constant constexpr int which = 0;
};
template <typename A>
struct Match<A, A> {
  static constant constexpr int which = 1;
};
template <>
struct Match<int, int> {
  static constant constexpr int which = 2;
};
template <typename A>
struct Match<A, Pair<A>> {
  static constant constexpr int which = 3;
};

kernel void partial_spec_kernel(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  int k = Traits<float>::kind + 10 * Traits<Pair<half>>::kind + 100 * Traits<thread int*>::kind + 1000 * Traits<bool>::kind;
  Grid<float, 2> grid;
  int g = Grid<float, 3>::cells + Grid<int, 1>::cells + decltype(grid)::cells;
  float c = Acc<float>::combine(float(i), 2.0f) + float(Acc<int>::combine(int(i), 2));
  int m = Match<float, half>::which + 10 * Match<float, float>::which + 100 * Match<int, int>::which +
          1000 * Match<half, Pair<half>>::which;
  // k = 4321, g = 113, c = max(i, 2) + i + 2, m = 3210
  out[i] = float(k) + float(g) + c + float(m);
}
