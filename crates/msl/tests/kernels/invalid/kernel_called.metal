// ERROR: 12: `add_one` is a kernel function and cannot be called
// One kernel calling another as if it were a helper.
#include <metal_stdlib>
using namespace metal;

kernel void add_one(device float* data [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  data[tid] += 1.0f;
}

kernel void kernel_called(device float* data [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  data[tid] *= 2.0f;
  add_one(data, tid);  // <-- error
}
