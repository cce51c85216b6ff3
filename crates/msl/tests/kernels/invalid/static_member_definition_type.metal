// ERROR: 10: redefinition of 'table' with a different type: 'const constant int[4]' vs 'const constant float[4]'
// An out-of-class definition of a static data member must repeat its type.
#include <metal_stdlib>
using namespace metal;

struct Lookup {
  static constant constexpr const float table[4] = {1.0f, 2.0f, 3.0f, 4.0f};
};

constant constexpr const int Lookup::table[4];  // <-- error

kernel void static_member_definition_type(
    device float* out [[buffer(0)]],
    uint tid [[thread_position_in_grid]]) {
  out[tid] = Lookup::table[tid % 4];
}
