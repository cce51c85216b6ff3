// FEATURE: functions as template arguments chosen among overloaded function
// templates by their function type — a mixture-of-experts mat-vec in the
// style of a quantized-matmul library: row "impl" functions for several
// storage formats (function templates and a plain function), an overloaded
// wrapper `mv_fn` whose overloads differ only in the function type of their
// template parameter, a `typedef decltype` of one wrapper instance, a kernel
// template taking that function type, and explicit instantiations under host
// names. `mv_fn<dot_scaled_impl>` names a template without its arguments:
// they are deduced from the parameter type of the one overload it fits.
// KERNEL: mv_id_f32
// GRID: 4,2,1
// THREADGROUP: 4,2,1
#include <metal_stdlib>
using namespace metal;

// One dot product per call: row `row` of a row-major matrix with `ncols`
// columns, `nb_row` bytes apart, times `x`.
typedef void (rows_impl_t)(
    device const char  * src0,
    device const float * x,
    device       float * dst,
                 int64_t ncols,
                uint64_t nb_row,
                 uint    row);

// Block-quantized formats know their own row stride.
typedef void (blocks_impl_t)(
    device const void  * src0,
    device const float * x,
    device       float * dst,
                 int64_t ncols,
                 uint    row);

template <typename T0>
void dot_rows_impl(device const char *src0, device const float *x, device float *dst,
                   int64_t ncols, uint64_t nb_row, uint row) {
  device const T0 *a = (device const T0 *)(src0 + row * nb_row);
  float acc = 0.0f;
  for (int64_t k = 0; k < ncols; ++k) {
    acc += float(a[k]) * x[k];
  }
  dst[row] = acc;
}

// Signed bytes, no scale: a plain function among the templates.
void dot_i8_rows_impl(device const char *src0, device const float *x, device float *dst,
                      int64_t ncols, uint64_t nb_row, uint row) {
  device const char *a = src0 + row * nb_row;
  float acc = 0.0f;
  for (int64_t k = 0; k < ncols; ++k) {
    acc += float(a[k]) * x[k];
  }
  dst[row] = acc;
}

#define QK 8

struct block_q8 {
  half d;
  char qs[QK];
};

struct block_q4 {
  half d;
  half m;
  uchar qs[QK / 2];
};

inline float dequant(device const block_q8 &b, int k) { return float(b.d) * float(b.qs[k]); }

inline float dequant(device const block_q4 &b, int k) {
  const uchar q = k < QK / 2 ? (b.qs[k] & 0x0F) : (b.qs[k - QK / 2] >> 4);
  return float(b.d) * float(q) + float(b.m);
}

template <typename block_t, int qk>
void dot_blocks_impl(device const void *src0, device const float *x, device float *dst,
                     int64_t ncols, uint row) {
  const int nb = ncols / qk;
  device const block_t *blocks = (device const block_t *)src0 + row * nb;
  float acc = 0.0f;
  for (int ib = 0; ib < nb; ++ib) {
    for (int k = 0; k < qk; ++k) {
      acc += dequant(blocks[ib], k) * x[ib * qk + k];
    }
  }
  dst[row] = acc;
}

// Dense rows of `V` at half weight; `V` is deduced from the function type
// the wrapper's parameter has.
template <typename V>
void dot_scaled_impl(device const void *src0, device const V *x, device float *dst,
                     int64_t ncols, uint row) {
  device const V *a = (device const V *)src0 + row * ncols;
  V acc = 0;
  for (int64_t k = 0; k < ncols; ++k) {
    acc += a[k] * x[k];
  }
  dst[row] = float(acc) * 0.5f;
}

// One signature for every format: the overload is chosen by the function
// type of the argument.
template <rows_impl_t impl_fn>
void mv_fn(device const char *src0, device const float *x, device float *dst,
           int64_t ncols, uint64_t nb_row, uint row) {
  impl_fn(src0, x, dst, ncols, nb_row, row);
}

template <blocks_impl_t impl_fn>
void mv_fn(device const char *src0, device const float *x, device float *dst,
           int64_t ncols, uint64_t nb_row, uint row) {
  impl_fn((device const void *)src0, x, dst, ncols, row);
}

typedef decltype(mv_fn<dot_rows_impl<float>>) mv_fn_t;

// `ids[z]` picks the matrix ("expert") that multiplies input vector `z`.
template <mv_fn_t impl_fn>
kernel void kernel_mv_id(
    device const char    * src0s  [[buffer(0)]],
    device const float   * x      [[buffer(1)]],
    device       float   * dst    [[buffer(2)]],
    device const int     * ids    [[buffer(3)]],
    constant     int64_t & ncols  [[buffer(4)]],
    constant    uint64_t & nb_row [[buffer(5)]],
    constant    uint64_t & nb_mat [[buffer(6)]],
    uint3 gid   [[thread_position_in_grid]],
    uint3 ngrid [[threads_per_grid]]) {
  const int sel = ids[gid.y];
  impl_fn(
      /* src0   */ src0s + sel * nb_mat,
      /* x      */ x + gid.y * ncols,
      /* dst    */ dst + gid.y * ngrid.x,
      /* ncols  */ ncols,
      /* nb_row */ nb_row,
      /* row    */ gid.x);
}

typedef decltype(kernel_mv_id<mv_fn<dot_rows_impl<half>>>) kernel_mv_id_t;

template [[host_name("mv_id_f32")]]    kernel kernel_mv_id_t kernel_mv_id<mv_fn<dot_rows_impl<float>>>;
template [[host_name("mv_id_f16")]]    kernel kernel_mv_id_t kernel_mv_id<mv_fn<dot_rows_impl<half>>>;
template [[host_name("mv_id_i8")]]     kernel kernel_mv_id_t kernel_mv_id<mv_fn<dot_i8_rows_impl>>;
template [[host_name("mv_id_q8")]]     kernel kernel_mv_id_t kernel_mv_id<mv_fn<dot_blocks_impl<block_q8, QK>>>;
template [[host_name("mv_id_q4")]]     kernel kernel_mv_id_t kernel_mv_id<mv_fn<dot_blocks_impl<block_q4, QK>>>;
template [[host_name("mv_id_scaled")]] kernel kernel_mv_id_t kernel_mv_id<mv_fn<dot_scaled_impl>>;
