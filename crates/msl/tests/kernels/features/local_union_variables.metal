// FEATURE: an unnamed local `union { … } v;` holding two halves packed in a
// word, updated through a compare-and-swap loop (PyTorch's atomic.h style).
// KERNEL: local_union_variables
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

kernel void local_union_variables(device atomic_uint* packed [[buffer(0)]],
                                  device float* out [[buffer(1)]],
                                  uint i [[thread_position_in_grid]]) {
  device atomic_uint* word = packed + (i % 4) / 2;
  uint seen = atomic_load_explicit(word, memory_order_relaxed);
  union {
    uint bits;
    half parts[2];
  } cell;
  do {
    cell.bits = seen;
    cell.parts[i & 1] += half(0.25);
  } while (!atomic_compare_exchange_weak_explicit(word, &seen, cell.bits, memory_order_relaxed, memory_order_relaxed));
  out[i] = float(i) * 2.0f + 3.0f;
}
