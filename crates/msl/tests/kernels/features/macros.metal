// FEATURE: preprocessor — object-like and function-like macros, # and ##,
// variadic macros, line continuations, #if/#elif/#else, defined(), #ifdef,
// #ifndef, #undef, macro-generated declarations and host names.
// KERNEL: macros_kernel
// GRID: 16,1,1
// THREADGROUP: 16,1,1
#include <metal_stdlib>
using namespace metal;

#define BLOCK 16
#define SQUARE(x) ((x) * (x))
#define CLAMP_TO(v, lo, hi) (max((lo), min((v), (hi))))
#define STRINGIFY(x) #x
#define GLUE(a, b) a##b
#define FIRST_OF(first, ...) (first)

// expands to a program-scope constant named scale_<n>
#define DECLARE_SCALE(n) constant float GLUE(scale_, n) = float(n) * 0.5f;
DECLARE_SCALE(2)
DECLARE_SCALE(3)

#define LEVEL 3
#if LEVEL >= 4
#define LEVEL_FACTOR 4.0f
#elif LEVEL == 3
#define LEVEL_FACTOR 3.0f
#else
#define LEVEL_FACTOR 1.0f
#endif

#if defined(BLOCK) && !defined(SOMETHING_NEVER_DEFINED)
#define HAVE_BLOCK 1
#endif

#ifndef HAVE_BLOCK
#error "HAVE_BLOCK should be set"
#endif

#if defined(__METAL_VERSION__) && __METAL_VERSION__ >= 200
#define NEWER_METAL 1
#else
#define NEWER_METAL 0
#endif

#define TEMP_VALUE 100
#undef TEMP_VALUE
#ifdef TEMP_VALUE
#error "TEMP_VALUE was undefined"
#endif
#define TEMP_VALUE 7

// a multi-line macro with a statement body
#define ACCUMULATE(dst, value) \
  do {                         \
    (dst) += (value);          \
  } while (false)

kernel void macros_kernel(
    device float* out [[buffer(0)]],
    uint tid [[thread_position_in_grid]])
{
  float v = float(tid % BLOCK);
  float acc = SQUARE(v + 1.0f);
  ACCUMULATE(acc, GLUE(scale_, 2));
  ACCUMULATE(acc, scale_3 * LEVEL_FACTOR);
  acc += FIRST_OF(1.0f, 2.0f, 3.0f);
  acc += float(TEMP_VALUE + NEWER_METAL * 0);
  out[tid] = CLAMP_TO(acc, 0.0f, 1000.0f);
}

// macro-built host names for template instantiations
template <typename T>
kernel void scaled_copy(
    device const T* src [[buffer(0)]],
    device T* dst [[buffer(1)]],
    uint tid [[thread_position_in_grid]])
{
  dst[tid] = src[tid] * T(LEVEL);
}

#define INSTANTIATE_COPY(tname, type)                                   \
  template [[host_name(STRINGIFY(scaled_copy_##tname))]] kernel void    \
  scaled_copy<type>(                                                    \
      device const type* src [[buffer(0)]],                             \
      device type* dst [[buffer(1)]],                                   \
      uint tid [[thread_position_in_grid]]);

INSTANTIATE_COPY(float32, float)
INSTANTIATE_COPY(float16, half)
