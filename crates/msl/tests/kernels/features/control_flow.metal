// FEATURE: control flow — for (with multiple declarators and comma
// increments), while, do-while, nested loops with break/continue, switch with
// fallthrough and default, ternaries (nested), comma operator, early return,
// logical short-circuit, compound assignments, pre/post increment.
// KERNEL: control_flow_kernel
// GRID: 16,1,1
// THREADGROUP: 16,1,1
#include <metal_stdlib>
using namespace metal;

kernel void control_flow_kernel(
    device const int* src [[buffer(0)]],
    device int* out [[buffer(1)]],
    constant uint& n [[buffer(2)]],
    uint tid [[thread_position_in_grid]])
{
  if (tid >= n) {
    return;
  }
  int v = src[tid];
  int acc = 0;

  for (int i = 0, j = 10; i < j; ++i, --j) {
    if (i == 2) {
      continue;
    }
    acc += i * j;
  }

  int k = 0;
  while (true) {
    if (k >= 5) {
      break;
    }
    acc += k++;
  }

  int steps = 0;
  do {
    v = (v % 2 == 0) ? v / 2 : 3 * v + 1;
    ++steps;
  } while (v > 1 && steps < 50);

  for (int row = 0; row < 4; ++row) {
    for (int col = 0; col < 4; ++col) {
      if (col > row) {
        break;
      }
      if ((row + col) % 2) {
        continue;
      }
      acc += row - col;
    }
  }

  switch (tid % 5) {
    case 0:
      acc += 1;
      // fall through
    case 1:
      acc += 2;
      break;
    case 2: {
      int scoped = 7;
      acc += scoped;
      break;
    }
    default:
      acc -= 1;
      break;
  }

  int sgn = v > 0 ? 1 : (v < 0 ? -1 : 0);
  int t = (acc += 1, acc * 2);
  bool safe = (tid != 0) && (100 / int(tid) > 3);
  acc <<= 1;
  acc |= 1;
  acc ^= 2;
  acc %= 1000;

  out[tid] = acc + sgn + t + steps + (safe ? 1 : 0);
}
