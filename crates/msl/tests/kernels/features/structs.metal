// FEATURE: structs — nested structs, arrays of structs, aggregate
// initialisation, constructors, const member functions, structs in device
// buffers and a constant-reference parameter struct.
// KERNEL: structs_kernel
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

struct Point {
  float x;
  float y;
};

struct Segment {
  Point a;
  Point b;

  float length() const {
    return distance(float2(a.x, a.y), float2(b.x, b.y));
  }
};

struct Particle {
  float3 pos;
  float mass;

  Particle() : pos(0.0f), mass(1.0f) {}
  Particle(float3 p, float m) : pos(p), mass(m) {}

  float3 momentum(float3 velocity) const {
    return velocity * mass;
  }
};

struct Params {
  uint count;
  float scale;
};

struct Bin {
  int ids[4];
  float weight;
};

kernel void structs_kernel(
    device const Point* pts [[buffer(0)]],
    device float* out [[buffer(1)]],
    constant Params& params [[buffer(2)]],
    uint tid [[thread_position_in_grid]])
{
  if (tid >= params.count) {
    return;
  }

  Point loaded = pts[tid];  // copy out of device memory
  Segment s;
  s.a = loaded;
  s.b = Point{1.0f, 2.0f};

  // nested aggregate initialisation
  Segment segs[2] = {{{0.0f, 0.0f}, {3.0f, 4.0f}}, {{1.0f, 1.0f}, {1.0f, 2.0f}}};

  Particle p(float3(1.0f, 2.0f, 3.0f), 2.0f);
  Particle rest;
  float3 mom = p.momentum(float3(1.0f));

  Bin bins[3];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      bins[i].ids[j] = i * 4 + j;
    }
    bins[i].weight = float(i);
  }

  Point copy = pts[tid];
  copy.x += 1.0f;

  out[tid] = s.length() * params.scale + segs[0].length() + segs[1].b.y + mom.z +
             rest.mass + float(bins[1].ids[2]) * bins[2].weight + copy.x;
}
