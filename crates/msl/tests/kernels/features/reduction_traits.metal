// FEATURE: a library's reduction machinery: numeric_limits and SIMD traits for its own types
// KERNEL: argmax_rows
// GRID: 32,1,1
// THREADGROUP: 32,1,1
// INPUTS: x=rand(32):f32
// OUTPUT: out=32:u32
// SPEC: np.full(32, np.argmax(x), dtype=np.uint32)
// An (index, value) pair gets `numeric_limits` through a specialization of
// `_numeric_limits_impl`, is declared a valid SIMD type through a trait
// built on `__is_valid_simdgroup_type`, and is shuffled by an overload of
// `simd_shuffle_down` declared after the reducer template that calls it
// (found by argument-dependent lookup where the reducer is instantiated).
// The reducer's operation calls its own `operator()` as `this->operator()`,
// and a static member that does not compile for the pair is never called.
#include <metal_stdlib>
using namespace metal;

template <typename T>
struct slot {
  uint at;
  T val;
};

template <typename T>
struct _numeric_limits_impl<slot<T>> {
  static constexpr slot<T> lowest() { return slot<T>{0, numeric_limits<T>::lowest()}; }
};

template <typename T, typename _E = void>
struct simd_ok {
  static constant constexpr bool value = false;
};
template <typename T>
struct simd_ok<T, typename metal::enable_if_t<__is_valid_simdgroup_type<T>::value>> {
  static constant constexpr bool value = true;
};
template <typename T>
constexpr constant bool simd_ok_v = simd_ok<T>::value;

template <typename T>
struct Larger {
  static T start() { return numeric_limits<T>::lowest(); }
  // Only valid for SIMD types; never called for a slot.
  static T whole_simd(T a) { return simd_max(a); }
  T operator()(T a, T b) { return a.val > b.val || (a.val == b.val && a.at < b.at) ? a : b; }
  T operator()(T a, float b) { return this->operator()(a, T{0, b}); }
};

template <typename OP, typename T, typename _E = void>
struct reducer;
template <typename OP, typename T>
struct reducer<OP, T, typename metal::enable_if_t<simd_ok_v<T>>> {
  OP op;
  T operator()(T v) {
    for (ushort d = 16; d > 0; d /= 2) {
      v = op(v, simd_shuffle_down(v, d));
    }
    return v;
  }
};

template <typename T>
slot<T> simd_shuffle_down(slot<T> s, ushort delta) {
  return slot<T>{simd_shuffle_down(s.at, delta), simd_shuffle_down(s.val, delta)};
}
template <typename T>
struct simd_ok<slot<T>, typename metal::enable_if_t<simd_ok_v<T>>> {
  static constant constexpr bool value = true;
};

kernel void argmax_rows(device const float *x [[buffer(0)]], device uint *out [[buffer(1)]],
                        uint i [[thread_position_in_grid]]) {
  reducer<Larger<slot<float>>, slot<float>> r;
  slot<float> best = Larger<slot<float>>::start();
  best = r.op(best, x[i]);
  best.at = i;
  slot<float> top = r(best);
  out[i] = simd_shuffle(top.at, 0);
}
