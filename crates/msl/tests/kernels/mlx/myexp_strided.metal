// MLX: myexp_strided (templated, T=float32; float16 strided view, ensure_row_contiguous=False)
// GRID: 32,1,1
// THREADGROUP: 256,1,1
// INPUTS: inp=rand(4,16)[::2]:f16
// OUTPUT: out=2,16:f16
// SPEC: np.exp(inp.astype(np.float32)).astype(np.float16)
// The view inp[::2] has shape (2, 16) and strides (32, 1); the kernel maps the
// flat output index to the strided input location with elem_to_loc.
// MLX's preamble supplies float16_t and elem_to_loc; minimal versions follow.
#include <metal_stdlib>
using namespace metal;

typedef half float16_t;

// Peel dimensions off from the innermost one: the remainder is the
// coordinate along that axis, the quotient carries on outward.
uint elem_to_loc(
    uint elem,
    const constant int* shape,
    const constant int64_t* strides,
    int ndim) {
  int64_t offset = 0;
  for (int d = ndim - 1; d >= 0 && elem > 0; --d) {
    uint extent = static_cast<uint>(shape[d]);
    offset += static_cast<int64_t>(elem % extent) * strides[d];
    elem /= extent;
  }
  return static_cast<uint>(offset);
}

template <typename T>
[[kernel]] void custom_kernel_myexp_strided__float_float16_t_float16_t(
  const device float16_t* inp [[buffer(0)]],
  const constant int* inp_shape [[buffer(1)]],
  const constant int64_t* inp_strides [[buffer(2)]],
  const constant int& inp_ndim [[buffer(3)]],
  device float16_t* out [[buffer(4)]],
  uint3 thread_position_in_grid [[thread_position_in_grid]]) {

        uint elem = thread_position_in_grid.x;
        // find where this logical element lives in the (possibly strided) input
        uint loc = elem_to_loc(elem, inp_shape, inp_strides, inp_ndim);
        T tmp = inp[loc];
        // the output is always row contiguous
        out[elem] = metal::exp(tmp);

}

template [[host_name("custom_kernel_myexp_strided__float_float16_t_float16_t")]] [[kernel]] decltype(custom_kernel_myexp_strided__float_float16_t_float16_t<float>) custom_kernel_myexp_strided__float_float16_t_float16_t<float>;
