// ERROR: 10: recursive call to 'factorial' (recursion is not supported)
// A helper that calls itself. Rejected at the recursive call.
#include <metal_stdlib>
using namespace metal;

int factorial(int n) {
  if (n <= 1) {
    return 1;
  }
  return n * factorial(n - 1);  // <-- error
}

kernel void recursion(
    device int* out [[buffer(0)]],
    uint tid [[thread_position_in_grid]])
{
  out[tid] = factorial(int(tid % 6));
}
