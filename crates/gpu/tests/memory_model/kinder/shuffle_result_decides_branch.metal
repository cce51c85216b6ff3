// WHY: an undefined shuffle result decides a branch.
// KERNEL: k
// GRID: 32
// THREADGROUP: 32
// BUFFER: 0 zeros 32 u32
// EXPECT: uninitialized-read @ 12
#include <metal_stdlib>
using namespace metal;
kernel void k(device uint* out [[buffer(0)]], uint lane [[thread_index_in_simdgroup]]) {
    uint v = lane;
    if (lane >= 4) {
        uint w = simd_shuffle_xor(v, 4u);
        if (w > 100) v = 0;
    } else {
        v = 7;
    }
    out[lane] = v;
}
