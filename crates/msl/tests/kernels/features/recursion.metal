// FEATURE: recursion — a helper that calls itself, and two helpers that call
// each other. Apple's compiler accepts both; the simulator unrolls them to a
// bounded depth (tid % 6 stays well inside it).
// KERNEL: recursion
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

int factorial(int n) {
  if (n <= 1) {
    return 1;
  }
  return n * factorial(n - 1);
}

bool odd(uint n);
bool even(uint n) { return n == 0 ? true : odd(n - 1); }
bool odd(uint n) { return n == 0 ? false : even(n - 1); }

kernel void recursion(
    device int* out [[buffer(0)]],
    uint tid [[thread_position_in_grid]])
{
  out[tid] = factorial(int(tid % 6)) * (even(tid % 4) ? 1 : -1);
}
