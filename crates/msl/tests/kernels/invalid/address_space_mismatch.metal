// ERROR: 11: cannot initialize 'device float *' with a 'thread float *' (address space mismatch)
// A thread-space address stored into a device pointer.
#include <metal_stdlib>
using namespace metal;

kernel void address_space_mismatch(
    device float* out [[buffer(0)]],
    uint tid [[thread_position_in_grid]])
{
  float tmp = float(tid);
  device float* p = &tmp;  // <-- error
  out[tid] = *p;
}
