// A compare-and-swap helper generic over the atomic's element type: `AT` is
// deduced from `device atomic<AT>*`, `T` from the value and from the
// function pointer combining old and new values (c10's atomic.h style).
#include <metal_stdlib>
using namespace metal;

template <typename AT, typename T>
inline void atomic_combine(device atomic<AT>* data, long offset, T value, T (*op)(T, T)) {
  device atomic<AT>* slot = data + offset;
  T old = atomic_load_explicit(slot, memory_order_relaxed);
  T next;
  do {
    next = op(old, value);
  } while (!atomic_compare_exchange_weak_explicit(slot, &old, next, memory_order_relaxed, memory_order_relaxed));
}

inline float larger(float a, float b) { return a > b ? a : b; }
inline int product(int a, int b) { return a * b; }

kernel void atomic_combine_kernel(
    device atomic_float* maxima [[buffer(0)]],
    device atomic_int* products [[buffer(1)]],
    uint t [[thread_position_in_grid]]) {
  atomic_combine(maxima, long(t % 2), float(t) * 0.5f, larger);
  if (t < 6) {
    atomic_combine(products, 0, int(t + 1), product);
  }
}
