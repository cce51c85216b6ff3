// ERROR: 6: kernel function must return void (declared to return 'float')
// A kernel entry point declared with a value return type.
#include <metal_stdlib>
using namespace metal;

kernel float kernel_nonvoid_return(device const float* src [[buffer(0)]], uint tid [[thread_position_in_grid]])  // <-- error
{
  return src[tid];
}
