// FEATURE: an array passed to a deduced by-value parameter decays to a
// pointer into the array's own address space, so a threadgroup array and
// arithmetic on it deduce the same `Ptr` (a merge-path search over two runs
// of one threadgroup buffer).
// KERNEL: count_pairs
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

template <typename Ptr>
int count_less(Ptr a, Ptr b, int n) {
  int c = 0;
  for (int k = 0; k < n; k++) {
    c += a[k] < b[k] ? 1 : 0;
  }
  return c;
}

template <typename T>
T first_of(thread T* p) {
  return p[0];
}

kernel void count_pairs(
    device const float* in [[buffer(0)]],
    device int* out [[buffer(1)]],
    uint lid [[thread_position_in_threadgroup]])
{
  threadgroup float shared[8];
  shared[lid] = in[lid];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  int local[2] = {int(lid) * 10, 0};
  out[lid] = count_less(shared, shared + 4, 4) + first_of(local);
}
