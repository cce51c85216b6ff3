// MLX: myexp (templated, T=float32; float16 input and output)
// GRID: 64,1,1
// THREADGROUP: 256,1,1
// INPUTS: inp=rand(4,16):f16
// OUTPUT: out=4,16:f16
// SPEC: np.exp(inp.astype(np.float32)).astype(np.float16)
// Full source as mx.fast.metal_kernel generates it, minus MLX's preamble.
// The only preamble name needed here is float16_t, so it is declared below.
#include <metal_stdlib>
using namespace metal;

typedef half float16_t;

template <typename T>
[[kernel]] void custom_kernel_myexp__float_float16_t_float16_t(
  const device float16_t* inp [[buffer(0)]],
  device float16_t* out [[buffer(1)]],
  uint3 thread_position_in_grid [[thread_position_in_grid]]) {

        uint elem = thread_position_in_grid.x;
        // widen to the template type, exponentiate, narrow on store
        T tmp = inp[elem];
        out[elem] = metal::exp(tmp);

}

template [[host_name("custom_kernel_myexp__float_float16_t_float16_t")]] [[kernel]] decltype(custom_kernel_myexp__float_float16_t_float16_t<float>) custom_kernel_myexp__float_float16_t_float16_t<float>;
