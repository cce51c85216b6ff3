// FEATURE: an out-of-class definition of a static data member of a class
// template, written with `template <…>`, restating a member that has its
// value in the class (C++17 makes it redundant; libraries still write it).
// KERNEL: static_member_definition_in_template
// GRID: 4,1,1
// THREADGROUP: 4,1,1
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
