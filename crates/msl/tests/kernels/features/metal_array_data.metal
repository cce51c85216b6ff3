// FEATURE: `metal::array<T, N>::data()` — a pointer to the first element in
// the array's own address space (constant for a member of a `constant`
// struct, thread for a local), walked like any pointer; `size()` beside it.
// KERNEL: array_data_kernel
// GRID: 4,1,1
// THREADGROUP: 4,1,1
#include <metal_array>
#include <metal_stdlib>
using namespace metal;

struct Shape {
  metal::array<int, 3> extents;
  metal::array<int, 3> steps;
};

int dot_shape(constant const int* a, constant const int* b, uint n) {
  int sum = 0;
  for (uint k = 0; k < n; k++) {
    sum += a[k] * b[k];
  }
  return sum;
}

kernel void array_data_kernel(
    device int* out [[buffer(0)]],
    constant Shape& shape [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  auto extents = shape.extents.data();
  constant const int* steps = shape.steps.data();
  metal::array<int, 4> local = {1, 2, 3, 4};
  thread int* first = local.data();
  first[tid] *= 10;
  out[tid] = dot_shape(extents, steps, shape.extents.size()) + local[tid] + int(tid);
}
