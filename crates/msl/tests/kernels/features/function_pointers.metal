// FEATURE: function pointers known at compile time: a pointer type through an
// alias template and a typedef, template value parameters of function pointer
// type (given `f<T>`, a plain function, or a template name resolved by the
// parameter's type), function parameters `T (*op)(T, T)` passed different
// functions, `&f`, `(*p)(x)`, an overloaded name chosen by the pointer type,
// and a local initialized from a function.
// KERNEL: function_pointers
// GRID: 8,1,1
// THREADGROUP: 8,1,1
#include <metal_stdlib>
using namespace metal;

template <typename T>
using BinOp = T (*)(T, T);
typedef float (*UnaryF)(float);

template <typename T>
T add(T a, T b) { return a + b; }
template <typename T>
T mul(T a, T b) { return a * b; }
float max_of(float a, float b) { return a > b ? a : b; }
float sub_f(float a, float b) { return a - b; }
float twice(float x) { return 2.0f * x; }
int twice(int x) { return 2 * x; }
float square(float x) { return x * x; }

// A template value parameter through the alias, called and passed on.
template <typename T, BinOp<T> op>
T combine2(T a, T b) { return op(a, b); }

template <typename T, BinOp<T> op>
T fold4(thread const T* v) {
  T acc = v[0];
  for (int k = 1; k < 4; k++) {
    acc = combine2<T, op>(acc, v[k]);
  }
  return acc;
}

// A function pointer parameter, bound at each call site.
template <typename T>
T reduce_with(thread const T* v, int n, T (*op)(T, T)) {
  T acc = v[0];
  for (int k = 1; k < n; k++) {
    acc = op(acc, v[k]);
  }
  return acc;
}

// A pointer parameter handed on to another function.
float apply_twice(float x, UnaryF f) { return f(f(x)); }
float via(float x, UnaryF f) { return apply_twice(x, f) + (*f)(1.0f); }

// A template value parameter written out, given a template's name whose
// arguments come from the parameter's type.
template <typename T>
float load_scaled(constant T* p, uint k) { return float(p[k]) * 0.5f; }

template <typename T, float (*get)(constant T*, uint)>
float sum_loaded(constant T* p) { return get(p, 0) + get(p, 1); }

constant float table[2] = {3.0f, 5.0f};

kernel void function_pointers(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float x = float(i);
  float v[4] = {x, 1.0f, 2.0f, x - 3.0f};
  float r = fold4<float, add<float>>(v);               // 2x
  r += fold4<float, max_of>(v) * 10.0f;                 // max(x, 2) * 10
  r += reduce_with(v, 4, mul<float>) * 100.0f;          // x * 2 * (x - 3) * 100
  r += reduce_with(v, 2, &sub_f) * 1000.0f;             // (x - 1) * 1000
  UnaryF tw = twice;                                    // the float overload
  auto sq = square;
  r += via(x, tw) + via(x, sq);                         // 4x + 2 + x^4 + 1
  r += sum_loaded<float, load_scaled>(table);           // 1.5 + 2.5
  out[i] = r;
}
