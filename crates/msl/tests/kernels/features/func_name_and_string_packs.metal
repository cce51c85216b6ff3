// FEATURE: `__func__` (the enclosing function's name as a string in the
// constant address space) and string literals passed through a function
// parameter pack: they deduce `constant const char*`, so an overload taking
// that type is chosen for each of them, as an error-reporting helper does.
// KERNEL: func_name_kernel
// GRID: 4,1,1
// THREADGROUP: 4,1,1
#include <metal_stdlib>
using namespace metal;

uint copy_text(device char* dst, constant const char* src) {
  uint n = 0;
  while (src[n] != 0) {
    dst[n] = src[n];
    n++;
  }
  return n;
}

uint copy_text(device char* dst, int value) {
  dst[0] = char('0' + value % 10);
  return 1;
}

inline void write_all(device char* dst) {
  dst[0] = 0;
}

template <typename T, typename... Rest>
void write_all(device char* dst, T first, Rest... rest) {
  uint n = copy_text(dst, first);
  write_all(dst + n, rest...);
}

uint name_length() {
  constant const char* me = __func__;
  uint n = 0;
  while (me[n] != 0) {
    n++;
  }
  return n;
}

kernel void func_name_kernel(
    device char* text [[buffer(0)]],
    device uint* lengths [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  if (tid == 0) {
    write_all(text, __func__, ": thread ", int(tid), " of ", 4);
  }
  lengths[tid] = name_length() + tid;
}
