// KERNEL: spin_first
// GRID: 512
// THREADGROUP: 64
// BUFFER: 0 arange 512 f32
// BUFFER: 1 fill=-7 512 f32
// The first threadgroup never ends; the others store their elements of an
// output the workers share. The compiled code gives up on the first, and
// the interpreter's rerun stops there: the elements the later threadgroups
// stored while compiled must not survive into the result.
#include <metal_stdlib>
using namespace metal;

kernel void spin_first(const device float* a [[buffer(0)]], device float* out [[buffer(1)]],
                       uint i [[thread_position_in_grid]], uint g [[threadgroup_position_in_grid]]) {
  uint k = 0;
  while (g == 0u) {
    k += 1u;
  }
  out[i] = a[i] + float(k);
}
