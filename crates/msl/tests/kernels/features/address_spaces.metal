// FEATURE: address spaces — device, constant, threadgroup and thread
// pointers and references as parameters, program-scope constant array,
// pointer arithmetic and differences, array decay, reinterpret and C-style
// pointer casts within an address space, constant scalar reference buffer.
// KERNEL: address_spaces_kernel
// GRID: 64,1,1
// THREADGROUP: 64,1,1
#include <metal_stdlib>
using namespace metal;

constant float kTable[4] = {1.0f, 2.0f, 4.0f, 8.0f};

float sum_thread(thread const float* p, int n) {
  float acc = 0.0f;
  for (int i = 0; i < n; ++i) {
    acc += p[i];
  }
  return acc;
}

float sum_device(device const float* p, int n) {
  float acc = 0.0f;
  for (int i = 0; i < n; ++i) {
    acc += *(p + i);
  }
  return acc;
}

float sum_threadgroup(threadgroup const float* p, int n) {
  float acc = 0.0f;
  for (int i = 0; i < n; ++i) {
    acc += p[i];
  }
  return acc;
}

float sum_constant(constant const float* p, int n) {
  float acc = 0.0f;
  for (int i = 0; i < n; ++i) {
    acc += p[i];
  }
  return acc;
}

void bump(thread float& r) {
  r += 1.0f;
}

void store_to(device float& r, float v) {
  r = v;
}

kernel void address_spaces_kernel(
    device const float* src [[buffer(0)]],
    device float* dst [[buffer(1)]],
    constant uint& n [[buffer(2)]],
    uint lid [[thread_position_in_threadgroup]],
    uint gid [[thread_position_in_grid]])
{
  threadgroup float tile[64];
  tile[lid] = src[gid];
  threadgroup_barrier(mem_flags::mem_threadgroup);

  float local[4] = {0.0f, 1.0f, 2.0f, 3.0f};
  thread float* lp = local;
  lp += 1;
  float t = *lp + lp[1] + *(lp + 2);
  ptrdiff_t dist = (lp + 2) - local;

  device const float* sp = src + gid;
  threadgroup float* tp = &tile[0];
  constant const float* cp = kTable;
  thread float& first = local[0];
  first = 0.5f;

  float acc = sum_thread(local, 4) + sum_device(src, 1) + sum_threadgroup(tile, 1) + sum_constant(cp, 4);
  bump(acc);

  // byte view of the same buffer, then back to float
  device const uchar* bytes = reinterpret_cast<device const uchar*>(src);
  device const float* back = (device const float*)(bytes + 4 * gid);

  float total = acc + *back + *sp + tp[lid] + float(dist) + t + float(n) + cp[lid % 4];
  store_to(dst[gid], total);
}
