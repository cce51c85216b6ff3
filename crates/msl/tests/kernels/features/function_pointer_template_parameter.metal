// FEATURE: function-pointer template parameters — a kernel template takes
// the function that decodes one block, as candle's quantized.metal does,
// and is instantiated through a decltype typedef.
// KERNEL: decode_halves
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

void halve(device const float *src, short k, thread float &v) { v = src[k] * 0.5f; }

template <short N, void (*decode)(device const float *, short, thread float &)>
kernel void decode_rows(device const float *src [[buffer(0)]], device float *dst [[buffer(1)]],
                        uint i [[thread_position_in_grid]]) {
  float v;
  decode(src + i * N, short(i % N), v);
  dst[i] = v;
}

typedef decltype(decode_rows<4, halve>) decode_t;
template [[host_name("decode_halves")]] kernel decode_t decode_rows<4, halve>;
