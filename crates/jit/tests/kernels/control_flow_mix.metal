// KERNEL: mix
// GRID: 256
// THREADGROUP: 64
// BUFFER: 0 arange 256 i32
// BUFFER: 1 zeros 256 i32
// BUFFER: 2 zeros 256 f32
#include <metal_stdlib>
using namespace metal;

// Switch with fall-through, do/while with continue and break, early
// return, private arrays, short and char arithmetic, 64-bit values,
// integer division by odd divisors, half and float conversions.
static int classify(int x) {
  switch (x % 5) {
    case 0: return 10;
    case 1:
    case 2: x += 3;
    case 3: return x * 2;
    default: break;
  }
  return -x;
}

kernel void mix(const device int* in [[buffer(0)]], device int* out [[buffer(1)]],
                device float* f [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  int v = in[i];
  if (v == 255) return;
  int acc = 0;
  int k = 0;
  do {
    k++;
    if (k % 3 == 0) continue;
    if (k > v % 11 + 2) break;
    acc += classify(v + k);
  } while (k < 20);
  int arr[6];
  for (int j = 0; j < 6; j++) arr[j] = (v * j) % 7;
  short s = (short)(acc * 311);
  char c = (char)(v * 37);
  long big = (long)v * 1000000007L + acc;
  out[i] = acc + arr[v % 6] + s / 3 + c + (int)(big % 1000) + (v - 128) / 7 + (v - 128) % 5;
  half h = half(v) * 0.125h;
  f[i] = float(h) + sqrt(float(v)) + (v % 2 ? exp(-float(v) / 64.0f) : -0.5f);
}
