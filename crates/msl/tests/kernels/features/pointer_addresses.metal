// Pointers converted to 64-bit integers and back: an alignment-aware byte
// copy that picks the widest load both pointers allow, as PyTorch's c10
// headers do, plus the round trip integer -> pointer.
#include <metal_stdlib>
using namespace metal;

inline void copy_widest(device uchar* dst, device const uchar* src, uint n) {
  const ulong align = (reinterpret_cast<ulong>(dst) | reinterpret_cast<ulong>(src)) & 3;
  uint i = 0;
  if (align == 0) {
    for (; i + 4 <= n; i += 4) {
      *reinterpret_cast<device uint*>(dst + i) = *reinterpret_cast<device const uint*>(src + i);
    }
  }
  for (; i < n; i++) {
    dst[i] = src[i];
  }
}

// Thread t copies 6 bytes starting at byte t; records its pointers' alignment
// and where a pointer rebuilt from its address lands.
kernel void pointer_address_kernel(
    device uchar* dst [[buffer(0)]],
    device const uchar* src [[buffer(1)]],
    device ulong* info [[buffer(2)]],
    uint t [[thread_position_in_grid]]) {
  copy_widest(dst + 8 * t + t, src + 8 * t + t, 6);
  ulong addr = (ulong)(src + t);
  info[2 * t] = addr & 3;
  device const uchar* back = reinterpret_cast<device const uchar*>(addr + 2);
  info[2 * t + 1] = ulong(back - src);
}
