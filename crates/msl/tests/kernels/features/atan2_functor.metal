// SEED: PyTorch c10/metal style binary functor kernel (atan2), self-contained
// KERNEL: atan2_float
// GRID: 8,1,1
// THREADGROUP: 8,1,1
// INPUTS: out=zeros(8):f32 a=rand(8):f32 b=rand(8):f32
// OUTPUT: out=8:f32
// SPEC: np.arctan2(a, b)
// A functor with a member template call operator, overloaded on floating and
// integral element types via enable_if, plugged into a kernel template that
// is explicitly instantiated under several host names.
#include <metal_stdlib>
using namespace metal;

struct atan2_functor {
  // floating inputs keep their own type
  template <typename T, enable_if_t<is_floating_point_v<T>, bool> = true>
  inline T operator()(const T lhs, const T rhs) {
    return static_cast<T>(precise::atan2(float(lhs), float(rhs)));
  }
  // integral inputs produce float
  template <typename T, enable_if_t<is_integral_v<T>, bool> = true>
  inline float operator()(const T lhs, const T rhs) {
    return precise::atan2(float(lhs), float(rhs));
  }
};

template <typename F, typename In, typename Out>
kernel void binary_dense(
    device Out* out [[buffer(0)]],
    constant In* lhs [[buffer(1)]],
    constant In* rhs [[buffer(2)]],
    uint index [[thread_position_in_grid]])
{
  F op;
  out[index] = static_cast<Out>(op(lhs[index], rhs[index]));
}

#define INSTANTIATE_BINARY(NAME, FUNCTOR, IN, OUT)                     \
  template [[host_name(#NAME "_" #IN)]] kernel void                   \
  binary_dense<FUNCTOR, IN, OUT>(                                      \
      device OUT* out [[buffer(0)]],                                   \
      constant IN* lhs [[buffer(1)]],                                  \
      constant IN* rhs [[buffer(2)]],                                  \
      uint index [[thread_position_in_grid]]);

INSTANTIATE_BINARY(atan2, atan2_functor, float, float)
INSTANTIATE_BINARY(atan2, atan2_functor, half, half)
INSTANTIATE_BINARY(atan2, atan2_functor, int, float)
