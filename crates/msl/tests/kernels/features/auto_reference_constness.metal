// FEATURE: `auto&` deduces `const` from the object it binds to: a reference
// to a member of a `constant` struct (`constant auto& s = p.sizes;`) or to
// a const local (`auto& r = limit;`) is a const reference, so reading
// through it is fine and no `const` needs to be written.
// KERNEL: gather_rows
// GRID: 6,1,1
// THREADGROUP: 6,1,1
#include <metal_stdlib>
using namespace metal;

struct Layout {
  int ndim;
  array<long, 4> sizes;
  array<long, 4> strides;
};

kernel void gather_rows(
    device const float* in [[buffer(0)]],
    device float* out [[buffer(1)]],
    constant Layout& p [[buffer(2)]],
    uint i [[thread_position_in_grid]]) {
  constant auto& sizes = p.sizes;
  constant auto& strides = p.strides;
  const long limit = 1 << 20;
  auto& cap = limit;
  long rest = i;
  long offset = 0;
  for (auto d = p.ndim - 1; d >= 0; d--) {
    offset += (rest % sizes[d]) * strides[d];
    rest /= sizes[d];
  }
  out[i] = offset < cap ? in[offset] : 0.0f;
}
