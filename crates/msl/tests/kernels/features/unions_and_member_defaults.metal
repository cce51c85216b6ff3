// FEATURE: unions and default member initializers — a named union viewing
// a float's bytes, a template union, an anonymous union holding an anonymous
// struct inside a block struct (members reached directly), a typedef'd
// union, and members given values by their declarations.
// KERNEL: unions_kernel
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

union float_bits {
  float f;
  uint u;
};

template <typename T>
union lanes {
  T v[4 / sizeof(T)];
  uint word;
};

typedef union {
  ushort2 halves;
  uint whole;
} split_word;

struct scale_block {
  union {
    struct {
      half lo;
      half hi;
    };
    half2 both;
  };
  uchar tag = 7;
};

struct counter {
  int count = 0;
  float step{0.5f};
  void bump() thread { count += 1; }
};

kernel void unions_kernel(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float_bits fb;
  fb.f = float(i);
  lanes<uchar> l;
  l.word = fb.u;
  split_word w;
  w.whole = 0x00030001u;
  scale_block b;
  b.both = half2(1.0h, 2.0h);
  counter c;
  c.bump();
  out[i] = float(l.v[3]) + float(w.halves.y) + float(b.hi) + float(b.tag) + float(c.count) + c.step;
}
