// UNSUPPORTED: an out-of-class definition of a static data member of a
// class template, written with `template <…>`. Valid Metal; refused by name
// (definitions for a struct or an explicit specialization work).
#include <metal_stdlib>
using namespace metal;

template <typename T>
struct Limits {
  static constant constexpr const int bits = sizeof(T) * 8;
};

template <typename T>
constant constexpr const int Limits<T>::bits;

kernel void static_member_definition_in_template(
    device int* out [[buffer(0)]],
    uint tid [[thread_position_in_grid]]) {
  out[tid] = Limits<float>::bits;
}
