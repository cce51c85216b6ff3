// FEATURE: inheritance — single and multiple bases (public and private),
// base members and member functions found by lookup, base class templates
// reached with `this->` and `Base<T>::`, base constructors in the
// member-initializer list, derived-to-base references, pointers and copies,
// static members through a base, and integral_constant-style tag dispatch.
// KERNEL: inheritance_kernel
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

template <typename T, T v>
struct constant_of {
  static constexpr constant T value = v;
  using value_type = T;
  constexpr operator value_type() const thread { return value; }
};
template <bool B>
struct flag : constant_of<bool, B> {};
using yes = flag<true>;
using no = flag<false>;

template <typename T> struct wide : no {};
template <> struct wide<float> : yes {};

struct Shape {
  float width;
  float area() const { return width * width; }
  static constexpr constant int sides = 4;
  using measure = float;
};

struct Tag {
  int id;
  int tag_id() const { return id; }
};

struct Box : Shape, private Tag {
  float depth;
  Box(float w, int t) : Shape{w}, Tag{t}, depth(w + 1.0f) {}
  measure volume() const { return area() * depth + tag_id() + sides; }
  float wide_side() const { return Shape::width + this->width; }
};

template <typename T>
struct Counter {
  T count;
  Counter(T c) : count(c) {}
  void bump(T by) { count += by; }
};

template <typename T>
struct Meter : Counter<T> {
  T unit;
  Meter(T c, T u) : Counter<T>(c), unit(u) {}
  T reading() {
    this->bump(T(1));
    return this->count * unit + Counter<T>::count;
  }
};

float width_of(const thread Shape& s) { return s.width; }
float width_at(const thread Shape* s) { return s->width; }

template <typename T>
T scaled(T x, yes) { return x * 10; }
template <typename T>
T scaled(T x, no) { return x; }

kernel void inheritance_kernel(device float* out [[buffer(0)]],
                               uint i [[thread_position_in_grid]]) {
  Box b(float(i), 3);
  Meter<float> m(2.0f, 3.0f);
  Shape copy = b;
  float r = m.reading();
  out[i] = b.volume() + b.wide_side() + width_of(b) + width_at(&b) + copy.width + r
      + scaled(1.0f, wide<float>{}) + scaled(1.0f, wide<int>{}) + (wide<float>::value ? 100.0f : 0.0f)
      + Box::sides + float(sizeof(Box));
}
