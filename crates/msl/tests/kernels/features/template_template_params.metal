// FEATURE: template template parameters — reductions parameterized by an
// op class template (`template <typename> class OpFn`): `OpFn<T>` as a
// type, a `using`, a base class and a qualified prefix (`OpFn<T>::combine`,
// `typename OpFn<T>::value_type`); arguments that are class templates,
// alias templates and templates in a namespace; a default template
// argument; a partial specialization on one op and one on `W<T>` for any
// class template `W`; function templates taking the op explicitly
// (`pick<MaxOp>(a, b)`) or deducing it from a parameter of type `Wrap<T>`;
// a `template <typename...> class` parameter; kernels instantiated per op
// with their own host names.
// KERNEL: row_reduce_sum
// GRID: 32,1,1
// THREADGROUP: 32,1,1
#include <metal_stdlib>
using namespace metal;

namespace ops {
template <typename T>
struct SumOp {
  using value_type = T;
  static T identity() { return T(0); }
  static T combine(T a, T b) { return a + b; }
  static T simd_reduce(T v) { return simd_sum(v); }
};

template <typename T>
struct MaxOp {
  using value_type = T;
  static T identity() { return -numeric_limits<T>::infinity(); }
  static T combine(T a, T b) { return max(a, b); }
  static T simd_reduce(T v) { return simd_max(v); }
  static bool replace(T cand, T cur) { return cand > cur; }
};

template <typename T>
struct MinOp {
  using value_type = T;
  static T identity() { return numeric_limits<T>::infinity(); }
  static T combine(T a, T b) { return min(a, b); }
  static T simd_reduce(T v) { return simd_min(v); }
  static bool replace(T cand, T cur) { return cand < cur; }
};
} // namespace ops

// An alias template is a template too.
template <typename T>
using Sum = ops::SumOp<T>;

// Load functors: how an input element becomes an accumulator value.
struct IdentityLoad {
  template <typename TA, typename TI>
  static TA load(TI v) {
    return static_cast<TA>(v);
  }
};

struct AbsLoad {
  template <typename TA, typename TI>
  static TA load(TI v) {
    return static_cast<TA>(abs(v));
  }
};

template <template <typename> class OpFn, typename Load, typename TA>
struct ValueAccumulator {
  template <typename TI>
  static void accumulate(thread TA& acc, TI v) {
    acc = OpFn<TA>::combine(acc, Load::template load<TA>(v));
  }
  static TA combine(TA a, TA b) { return OpFn<TA>::combine(a, b); }
  static constant constexpr int generic = 1;
};

// The sum gets its own accumulator (a partial specialization on the op).
template <typename Load, typename TA>
struct ValueAccumulator<ops::SumOp, Load, TA> {
  template <typename TI>
  static void accumulate(thread TA& acc, TI v) {
    acc += Load::template load<TA>(v);
  }
  static TA combine(TA a, TA b) { return a + b; }
  static constant constexpr int generic = 0;
};

// A template template parameter with a default, passed on to another one.
template <typename TA, template <typename> class OpFn = ops::SumOp, typename Load = IdentityLoad>
struct RowReducer {
  using Acc = ValueAccumulator<OpFn, Load, TA>;
  using value_type = typename OpFn<TA>::value_type;
  static value_type reduce(device const float* row, uint lane) {
    TA acc = OpFn<TA>::identity();
    Acc::accumulate(acc, row[lane]);
    Acc::accumulate(acc, row[lane + 32]);
    return OpFn<TA>::simd_reduce(acc);
  }
};

// A base class named through the parameter.
template <template <typename> class OpFn, typename T>
struct Folder : OpFn<T> {
  T total;
  void add(T v) { total = OpFn<T>::combine(total, v); }
};

// Function templates: the op given explicitly, the element type deduced.
template <template <typename> class OpFn, typename TA>
TA pick(TA a, TA b) {
  using Op = OpFn<TA>;
  return Op::combine(a, b);
}

template <template <typename> class OpFn, typename TA>
bool arg_better(TA cand_val, uint cand_idx, TA cur_val, uint cur_idx) {
  if (OpFn<TA>::replace(cand_val, cur_val)) {
    return true;
  }
  if (OpFn<TA>::replace(cur_val, cand_val)) {
    return false;
  }
  return cand_idx < cur_idx;
}

// Deduced from a parameter of type `Wrap<T>`.
template <typename T>
struct Boxed {
  T v;
};
template <template <typename> class Wrap, typename T>
T unwrap_twice(Wrap<T> w) {
  return w.v + w.v;
}

// A partial specialization whose pattern is `W<T>` for any class template W.
template <typename T>
struct IsWrapped {
  static constant constexpr int value = 0;
};
template <template <typename> class W, typename T>
struct IsWrapped<W<T>> {
  static constant constexpr int value = 1;
};

// `template <typename...> class` takes templates of any arity.
template <typename A, typename B = float>
struct PairOf {
  A a;
  B b;
};
template <template <typename...> class Tuple, typename T>
struct MakeOf {
  using type = Tuple<T, T>;
};

template <template <typename> class OpFn, typename TA>
TA simd_op_reduce(TA v) {
  return OpFn<TA>::simd_reduce(v);
}

// One row of 64 floats per threadgroup of 32; out[row] gets the reduction.
template <template <typename> class OpFn, typename Load>
kernel void row_reduce(
    device const float* in [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint lane [[thread_index_in_simdgroup]],
    uint row [[threadgroup_position_in_grid]]) {
  using R = RowReducer<float, OpFn, Load>;
  float r = R::reduce(in + row * 64, lane);
  if (lane == 0) {
    out[row] = r;
  }
}

template [[host_name("row_reduce_sum")]] kernel void row_reduce<ops::SumOp, IdentityLoad>(
    device const float*, device float*, uint, uint);
template [[host_name("row_reduce_max")]] kernel void row_reduce<ops::MaxOp, IdentityLoad>(
    device const float*, device float*, uint, uint);
template [[host_name("row_reduce_abs_min")]] kernel void row_reduce<ops::MinOp, AbsLoad>(
    device const float*, device float*, uint, uint);
template [[host_name("row_reduce_alias_sum")]] kernel void row_reduce<Sum, AbsLoad>(
    device const float*, device float*, uint, uint);

// Per-thread checks of the rest, one float each:
// out[0] pick<MaxOp>, out[1] pick<Sum>, out[2] which specializations were chosen,
// out[3] unwrap_twice, out[4] Folder, out[5] MakeOf<PairOf>, out[6] the
// default op, out[7] argmax over the simdgroup through arg_better.
kernel void ttp_misc(device const float* in [[buffer(0)]], device float* out [[buffer(1)]], uint lane [[thread_index_in_simdgroup]]) {
  float x = in[lane];
  float y = in[lane + 32];
  float best = x;
  uint best_idx = lane;
  if (arg_better<ops::MaxOp>(y, lane + 32, best, best_idx)) {
    best = y;
    best_idx = lane + 32;
  }
  float top = simd_op_reduce<ops::MaxOp>(best);
  uint idx = simd_min(best == top ? best_idx : 0xffffffffu);
  if (lane != 0) {
    return;
  }
  out[0] = pick<ops::MaxOp>(in[0], in[1]);
  out[1] = pick<Sum>(in[0], in[1]);
  out[2] = float(ValueAccumulator<ops::MaxOp, IdentityLoad, float>::generic * 10 +
                 ValueAccumulator<ops::SumOp, IdentityLoad, float>::generic +
                 IsWrapped<Boxed<float>>::value * 100 + IsWrapped<float>::value * 1000);
  Boxed<float> b;
  b.v = in[2];
  out[3] = unwrap_twice(b);
  Folder<ops::SumOp, float> f;
  f.total = 1.0f;
  f.add(in[3]);
  f.add(in[4]);
  out[4] = f.total + Folder<ops::SumOp, float>::identity();
  typename MakeOf<PairOf, int>::type p;
  p.a = 3;
  p.b = 4;
  out[5] = float(p.a * 10 + p.b) + float(sizeof(p));
  out[6] = RowReducer<float>::Acc::combine(in[5], 2.0f);
  out[7] = float(idx);
}
