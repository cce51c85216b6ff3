// FEATURE: a template value parameter given explicitly with its own type
// (`short N` from a caller's `short TN`) agrees with the same value deduced
// from an array argument's bound (`thread T (&v)[N]` with a `float[4]`),
// as in merge-sort helpers that take register arrays by reference.
// KERNEL: sum_chunks
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

template <typename T, short N>
inline T sum_regs(thread T (&v)[N], thread uint (&idx)[N]) {
  T s = 0;
  for (short i = 0; i < N; ++i) {
    s += v[i] * T(idx[i]);
  }
  return s;
}

template <typename T, short TN>
inline T load_and_sum(device const T* in, uint base) {
  thread T v[TN];
  thread uint idx[TN];
  for (short i = 0; i < TN; ++i) {
    v[i] = in[base + i];
    idx[i] = i + 1;
  }
  return sum_regs<T, TN>(v, idx);
}

kernel void sum_chunks(
    device const float* in [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint i [[thread_position_in_grid]]) {
  out[i] = load_and_sum<float, 4>(in, i * 4);
}
