// FEATURE: atomics — atomic_int / atomic_uint / atomic<float> in device
// memory, atomic_uint in threadgroup memory; load, store, fetch_add/sub,
// fetch_min/max, fetch_and/or/xor, exchange, compare_exchange_weak loop.
// KERNEL: atomics_kernel
// GRID: 64,1,1
// THREADGROUP: 32,1,1
#include <metal_stdlib>
using namespace metal;

kernel void atomics_kernel(
    device atomic_int* counter [[buffer(0)]],
    device atomic_uint* largest [[buffer(1)]],
    device atomic<float>* fsum [[buffer(2)]],
    device atomic_int* smallest [[buffer(3)]],
    device atomic_uint* slots [[buffer(4)]],
    device uint* results [[buffer(5)]],
    uint gid [[thread_position_in_grid]],
    uint lid [[thread_position_in_threadgroup]])
{
  threadgroup atomic_uint group_count;
  if (lid == 0) {
    atomic_store_explicit(&group_count, 0u, memory_order_relaxed);
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  atomic_fetch_add_explicit(&group_count, 1u, memory_order_relaxed);

  int ticket = atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
  atomic_fetch_sub_explicit(counter, 0, memory_order_relaxed);
  atomic_fetch_max_explicit(largest, gid, memory_order_relaxed);
  atomic_fetch_min_explicit(smallest, -int(gid), memory_order_relaxed);
  atomic_fetch_add_explicit(fsum, 0.5f, memory_order_relaxed);

  atomic_fetch_or_explicit(&slots[0], 1u << (gid % 32), memory_order_relaxed);
  atomic_fetch_and_explicit(&slots[1], ~(1u << (gid % 32)), memory_order_relaxed);
  atomic_fetch_xor_explicit(&slots[2], gid, memory_order_relaxed);
  uint previous = atomic_exchange_explicit(&slots[3], gid, memory_order_relaxed);

  // compare-and-swap loop implementing "add gid + 1"
  uint expected = atomic_load_explicit(&slots[4], memory_order_relaxed);
  while (!atomic_compare_exchange_weak_explicit(&slots[4], &expected, expected + gid + 1u,
                                                memory_order_relaxed, memory_order_relaxed)) {
  }

  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint seen = atomic_load_explicit(&group_count, memory_order_relaxed);

  results[gid] = uint(ticket) + (previous & 0u) + seen;
}
