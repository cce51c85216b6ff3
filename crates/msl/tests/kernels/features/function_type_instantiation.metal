// FEATURE: explicit instantiations declared with a function-type typedef
// KERNEL: scale_rows_f32
// GRID: 8,1,1
// THREADGROUP: 8,1,1
// INPUTS: src=arange(8):f32 factor=3:f32
// OUTPUT: dst=8:f32
// SPEC: src * 3 + 1
// A kernel template instantiated under host names through `typedef void
// (name_t)(…);` (the parenthesized form), `typedef void name_t(…);` and
// `using name_t = void(…);`: the instantiation's parameter list is the
// typedef's, and the template's arguments come from the angle brackets.
// Also an explicit conversion-operator call and a union named by an alias.
#include <metal_stdlib>
using namespace metal;

using bits_or_float = union {
  float f;
  uint u;
};

struct tenth {
  float v;
  operator float() const { return v; }
  float plus_one() const { return this->operator float() + 1.0f; }
};

typedef void (scale_t)(
    device const float *src [[buffer(0)]],
    constant float &factor [[buffer(1)]],
    device float *dst [[buffer(2)]],
    uint i [[thread_position_in_grid]]);

typedef void plain_t(device const float *, constant float &, device float *, uint);

using alias_t = void(device const float *src, constant float &factor, device float *dst, uint i);

template <typename T>
kernel void scale_rows(
    device const float *src [[buffer(0)]],
    constant float &factor [[buffer(1)]],
    device float *dst [[buffer(2)]],
    uint i [[thread_position_in_grid]]) {
  bits_or_float b;
  b.f = T(src[i]) * T(factor);
  tenth t{as_type<float>(b.u)};
  dst[i] = t.plus_one();
}

template [[host_name("scale_rows_f32")]] kernel scale_t scale_rows<float>;
template [[host_name("scale_rows_f16")]] kernel plain_t scale_rows<half>;
template [[host_name("scale_rows_i32")]] kernel alias_t scale_rows<int>;
