// FEATURE: matrix arithmetic — a float3x3 read from a device buffer (its
// float3 columns are 16 bytes apart), matrix × vector, vector × matrix,
// matrix × matrix of different shapes, sums, scaling, the diagonal
// constructor, columns by index (also a run-time column of a temporary), `*=` by a matrix, transpose and
// determinant, and half matrices.
// KERNEL: matrices_kernel
// GRID: 4,1,1
// THREADGROUP: 4,1,1
#include <metal_stdlib>
using namespace metal;

struct Xform {
  float3x3 m;
  float2 shift;
};

kernel void matrices_kernel(const device Xform* xf [[buffer(0)]], device float* out [[buffer(1)]],
                            uint i [[thread_position_in_grid]]) {
  float3x3 m = xf[0].m;
  float3 v = float3(float(i), 1.0f, -2.0f);
  float3 mv = m * v;
  float3 vm = v * m;
  float3x3 mm = m * transpose(m) + float3x3(2.0f) - m * 0.5f;
  float2x3 r = float2x3(m[0], m[2]);
  float2x2 sq = transpose(r) * r;
  float4x4 moved = float4x4(1.0f);
  moved[3] = float4(xf[0].shift, 0.0f, 1.0f);
  float4 p = moved * float4(v, 1.0f);
  half2x2 h = half2x2(half2(1.0h, 2.0h), half2(3.0h, 4.0h));
  half2 hv = h * half2(half(i), 1.0h);
  float3 acc = v;
  acc *= m;
  float4x4 tri = float4x4(float4(2, 0, 0, 0), float4(1, 3, 0, 0), float4(0, 0, 1, 0), float4(float(i), 0, 0, 4));
  device float* o = out + i * 16;
  o[0] = mv.x; o[1] = mv.y; o[2] = mv.z;
  o[3] = vm.x; o[4] = vm.y; o[5] = vm.z;
  o[6] = mm[1][2]; o[7] = mm[0][0];
  o[8] = sq[1][0]; o[9] = sq[1][1];
  o[10] = p.x; o[11] = p.y;
  o[12] = float(hv.y);
  o[13] = acc.z;
  o[14] = determinant(m);
  o[15] = determinant(tri) + determinant(float2x2(1, 2, 3, 4)) + 100.0f * transpose(m)[i % 3][1];
}
