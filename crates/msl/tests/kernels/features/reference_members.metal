// FEATURE: reference members bound by aggregate initialization and by a constructor
// KERNEL: strided_sum
// GRID: 4,1,1
// THREADGROUP: 4,1,1
// INPUTS: x=arange(24):f32 rank=2:u32 dims=arange(2)+2:u32 strides=arange(2)*-3+4:u32
// OUTPUT: out=4:f32
// SPEC: np.full(4, x.reshape(6, 4)[:2, :3].sum())
// A walker over a strided view keeps a `constant` reference to the rank and
// pointers to the shape: it is built by brace initialization from kernel
// parameters, copied (the copy shares the binding), and read in a const
// call operator. A second struct binds a `thread` reference in its
// constructor's member initializer list and writes through it.
#include <metal_stdlib>
using namespace metal;

template <typename I, bool STRIDED>
struct walker;

template <typename I>
struct walker<I, true> {
  constant const I &rank;
  constant const I *dims;
  constant const I *strides;

  I operator()(I flat) const {
    I at = 0;
    for (I d = rank; d > 0; d--) {
      at += (flat % dims[d - 1]) * strides[d - 1];
      flat /= dims[d - 1];
    }
    return at;
  }
};

struct counter {
  thread float &total;
  int seen;
  int weight;
  counter(thread float &t, int w) : total(t), seen(0), weight(w) {}
  void add(float v) {
    total += v * float(weight);
    seen++;
  }
};

kernel void strided_sum(
    device const float *x [[buffer(0)]],
    constant uint &rank [[buffer(1)]],
    constant uint *dims [[buffer(2)]],
    constant uint *strides [[buffer(3)]],
    device float *out [[buffer(4)]],
    uint i [[thread_position_in_grid]]) {
  walker<uint, true> w{rank, dims, strides};
  walker<uint, true> copy = w;
  uint n = 1;
  for (uint d = 0; d < copy.rank; d++) {
    n *= copy.dims[d];
  }
  float sum = 0.0f;
  counter c(sum, 1);
  for (uint k = 0; k < n; k++) {
    c.add(x[copy(k)]);
  }
  out[i] = sum;
}
