// ERROR: 7: kernel parameter `scratch` cannot point into `thread` memory
// A kernel parameter pointing into the thread's own memory: the host has no way to pass it.
#include <metal_stdlib>
using namespace metal;

kernel void thread_pointer_kernel_parameter(device float* out [[buffer(0)]],
                                            thread float* scratch,  // <-- error
                                            uint tid [[thread_position_in_grid]])
{
  out[tid] = scratch[0];
}
