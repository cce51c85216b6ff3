// UNSUPPORTED: template template parameters. Valid Metal (a reduction
// parameterized by a class template `Op`, used as `Op<T>` inside); the
// simulator reports the parameter as not supported yet.
#include <metal_stdlib>
using namespace metal;

template <typename T>
struct Plus {
  static T combine(T a, T b) { return a + b; }
};

template <template <typename> class Op, typename T>
struct Folder {
  static T fold(T a, T b) { return Op<T>::combine(a, b); }
};

kernel void fold_pairs(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  out[tid] = Folder<Plus, float>::fold(float(tid), 1.0f);
}
