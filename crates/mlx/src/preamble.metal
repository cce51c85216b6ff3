// The preamble MLX puts in front of every custom kernel (a small
// re-implementation of what `mx.fast.metal_kernel` kernels rely on).
#include <metal_stdlib>
using namespace metal;

typedef half float16_t;
typedef bfloat bfloat16_t;

// Type limits: max/min are +-inf for floating types.
template <typename U>
struct Limits {
  static constexpr constant U max = numeric_limits<U>::max();
  static constexpr constant U min = numeric_limits<U>::min();
  static constexpr constant U finite_max = numeric_limits<U>::max();
  static constexpr constant U finite_min = numeric_limits<U>::min();
};

template <>
struct Limits<float> {
  static constexpr constant float max = numeric_limits<float>::infinity();
  static constexpr constant float min = -numeric_limits<float>::infinity();
  static constexpr constant float finite_max = numeric_limits<float>::max();
  static constexpr constant float finite_min = -numeric_limits<float>::max();
};

template <>
struct Limits<half> {
  static constexpr constant half max = numeric_limits<half>::infinity();
  static constexpr constant half min = -numeric_limits<half>::infinity();
  static constexpr constant half finite_max = numeric_limits<half>::max();
  static constexpr constant half finite_min = -numeric_limits<half>::max();
};

template <>
struct Limits<bfloat> {
  static constexpr constant bfloat max = numeric_limits<bfloat>::infinity();
  static constexpr constant bfloat min = -numeric_limits<bfloat>::infinity();
  static constexpr constant bfloat finite_max = numeric_limits<bfloat>::max();
  static constexpr constant bfloat finite_min = -numeric_limits<bfloat>::max();
};

template <>
struct Limits<bool> {
  static constexpr constant bool max = true;
  static constexpr constant bool min = false;
  static constexpr constant bool finite_max = true;
  static constexpr constant bool finite_min = false;
};

// Integer division rounding up.
template <typename T, typename U>
inline T ceildiv(T n, U d) {
  return (n + d - 1) / d;
}

// log(1 + x), accurate for small x.
inline float log1p(float x) {
  float xp1 = 1.0f + x;
  if (xp1 == Limits<float>::max) {
    return Limits<float>::max;
  }
  if (xp1 == 1.0f) {
    return x;
  }
  return x * (metal::log(xp1) / (xp1 - 1.0f));
}

inline half log1p(half x) {
  return half(log1p(float(x)));
}

inline bfloat log1p(bfloat x) {
  return bfloat(log1p(float(x)));
}

// Index of element `elem` (row-major logical order) in a strided array.
#define MLX_ELEM_TO_LOC(IdxT)                                              \
  inline IdxT elem_to_loc(                                                 \
      IdxT elem,                                                           \
      constant const int* shape,                                           \
      constant const int64_t* strides,                                     \
      int ndim) {                                                          \
    IdxT loc = 0;                                                          \
    for (int i = ndim - 1; i >= 0 && elem > 0; --i) {                      \
      loc += (elem % IdxT(shape[i])) * IdxT(strides[i]);                   \
      elem /= IdxT(shape[i]);                                              \
    }                                                                      \
    return loc;                                                            \
  }
MLX_ELEM_TO_LOC(int)
MLX_ELEM_TO_LOC(uint)
MLX_ELEM_TO_LOC(int64_t)
MLX_ELEM_TO_LOC(size_t)
#undef MLX_ELEM_TO_LOC

// x and y index the two innermost dimensions, z the flattened rest.
template <typename IdxT = int64_t>
inline IdxT elem_to_loc(
    uint3 elem,
    constant const int* shape,
    constant const int64_t* strides,
    int ndim) {
  IdxT loc = elem.x * IdxT(strides[ndim - 1]) + elem.y * IdxT(strides[ndim - 2]);
  for (int d = ndim - 3; d >= 0; --d) {
    loc += (elem.z % shape[d]) * IdxT(strides[d]);
    elem.z /= shape[d];
  }
  return loc;
}

template <typename IdxT = int64_t>
inline IdxT elem_to_loc_1(uint elem, constant const int64_t& stride) {
  return elem * IdxT(stride);
}

template <typename IdxT = int64_t>
inline IdxT elem_to_loc_2(uint2 elem, constant const int64_t strides[2]) {
  return elem.x * IdxT(strides[1]) + elem.y * IdxT(strides[0]);
}

template <typename IdxT = int64_t>
inline IdxT elem_to_loc_3(uint3 elem, constant const int64_t strides[3]) {
  return elem.x * IdxT(strides[2]) + elem.y * IdxT(strides[1]) + elem.z * IdxT(strides[0]);
}

// Locations of one element in two (three) arrays sharing a shape.
template <typename IdxT = int64_t>
inline vec<IdxT, 2> elem_to_loc_2_nd(
    uint3 elem,
    constant const int* shape,
    constant const int64_t* a_strides,
    constant const int64_t* b_strides,
    int ndim) {
  vec<IdxT, 2> loc = {
      IdxT(elem.x * IdxT(a_strides[ndim - 1]) + IdxT(elem.y) * IdxT(a_strides[ndim - 2])),
      IdxT(elem.x * IdxT(b_strides[ndim - 1]) + IdxT(elem.y) * IdxT(b_strides[ndim - 2]))};
  for (int d = ndim - 3; d >= 0; --d) {
    uint l = elem.z % shape[d];
    loc.x += l * IdxT(a_strides[d]);
    loc.y += l * IdxT(b_strides[d]);
    elem.z /= shape[d];
  }
  return loc;
}

template <typename IdxT = int64_t>
inline vec<IdxT, 3> elem_to_loc_3_nd(
    uint3 elem,
    constant const int* shape,
    constant const int64_t* a_strides,
    constant const int64_t* b_strides,
    constant const int64_t* c_strides,
    int ndim) {
  vec<IdxT, 3> loc = {
      IdxT(elem.x * IdxT(a_strides[ndim - 1]) + elem.y * IdxT(a_strides[ndim - 2])),
      IdxT(elem.x * IdxT(b_strides[ndim - 1]) + elem.y * IdxT(b_strides[ndim - 2])),
      IdxT(elem.x * IdxT(c_strides[ndim - 1]) + elem.y * IdxT(c_strides[ndim - 2]))};
  for (int d = ndim - 3; d >= 0; --d) {
    uint l = elem.z % shape[d];
    loc.x += l * IdxT(a_strides[d]);
    loc.y += l * IdxT(b_strides[d]);
    loc.z += l * IdxT(c_strides[d]);
    elem.z /= shape[d];
  }
  return loc;
}
