// FEATURE: a tile GEMM in the style of MLX's steel library — a fragment
// struct template whose 8x8 partial specialization fills SIMD-group
// matrices through `thread_elements()` (lane coordinates as Apple lays
// them out), member alias templates deduced through (`frag_t<U>&`), a
// static member calling a sibling declared after it, `reinterpret_cast`
// to a reference, compile-time strides (`Int<1>`) multiplied by a `short`
// through their conversion operator, matrices kept in an array
// (`acc[i].thread_elements()[0]`), and a kernel template overloaded on its
// template parameters, explicitly instantiated. C = A * B + bias for
// A (16 x 8), B (8 x 16): one SIMD-group, 2 x 2 output fragments.
// KERNEL: gemm_f32_16x16x8
// GRID: 32,1,1
// THREADGROUP: 32,1,1
#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;

namespace tiles {

template <typename T, T v>
struct integral_constant {
  static constexpr constant T value = v;
  using value_type = T;
  constexpr operator value_type() const thread {
    return value;
  }
};

template <int val>
using Int = integral_constant<int, val>;

// Only two constants multiply to a constant; `short * Int<1>{}` uses the
// built-in `*` on the conversion to `int`.
template <typename T, T tv, typename U, U uv>
constexpr auto operator*(integral_constant<T, tv>, integral_constant<U, uv>) {
  return integral_constant<decltype(tv * uv), tv * uv>{};
}

template <typename T, int R, int C>
struct Frag {
  static_assert(R == 8 && C == 8, "only 8x8 fragments");
};

template <typename T>
struct Frag<T, 8, 8> {
  static constexpr constant int kElems = 2;
  typedef simdgroup_matrix<T, 8, 8> mat_type;
  typedef vec<T, kElems> frag_type;

  template <typename U>
  using frag_t = vec<U, kElems>;
  template <typename U>
  using mat_t = simdgroup_matrix<U, 8, 8>;

  // The element coordinates (column, row) this lane holds.
  static short2 coord(ushort lane) {
    const short qid = lane / 4;
    const short fm = (qid & 4) + ((lane / 2) % 4);
    const short fn = (qid & 2) * 2 + (lane % 2) * 2;
    return short2{fn, fm};
  }

  template <typename Ptr, typename StrX, typename StrY>
  static void load(thread frag_type& dst, Ptr src, StrX str_x, StrY str_y) {
    for (short j = 0; j < kElems; j++) {
      dst[j] = static_cast<T>(src[j * str_y]);
    }
    (void)str_x;
  }

  // Calls the matrix overload declared below it.
  template <typename A, typename B, typename Cty>
  static void mma(thread frag_type& d, thread frag_t<A>& a, thread frag_t<B>& b, thread frag_t<Cty>& c) {
    mat_type d_mat;
    mat_t<A> a_mat;
    mat_t<B> b_mat;
    mat_t<Cty> c_mat;
    reinterpret_cast<thread frag_t<A>&>(a_mat.thread_elements()) = a;
    reinterpret_cast<thread frag_t<B>&>(b_mat.thread_elements()) = b;
    reinterpret_cast<thread frag_t<Cty>&>(c_mat.thread_elements()) = c;
    mma(d_mat, a_mat, b_mat, c_mat);
    d = reinterpret_cast<thread frag_type&>(d_mat.thread_elements());
  }

  template <typename A, typename B, typename Cty>
  static void mma(thread mat_type& d, thread mat_t<A>& a, thread mat_t<B>& b, thread mat_t<Cty>& c) {
    simdgroup_multiply_accumulate(d, a, b, c);
  }
};

// A tile of TR x TC fragments held by one SIMD-group.
template <typename T, int TR, int TC, typename F = Frag<T, 8, 8>>
struct Tile {
  typedef typename F::frag_type frag_type;
  frag_type frags[TR * TC];

  thread frag_type& at(int r, int c) {
    return frags[r * TC + c];
  }

  template <typename Ptr>
  void load(Ptr src, int ld, ushort lane) {
    const short2 xy = F::coord(lane);
    for (short r = 0; r < TR; r++) {
      for (short c = 0; c < TC; c++) {
        F::load(at(r, c), src + (r * 8 + xy.y) * ld + c * 8 + xy.x, ld, Int<1>{});
      }
    }
  }
};

template <typename T, int M, int N, int K, typename FD, typename FA, typename FB>
void tile_mma(thread Tile<T, M, N, FD>& d, thread Tile<T, M, K, FA>& a, thread Tile<T, K, N, FB>& b) {
  for (short m = 0; m < M; m++) {
    for (short n = 0; n < N; n++) {
      for (short k = 0; k < K; k++) {
        FD::mma(d.at(m, n), a.at(m, k), b.at(k, n), d.at(m, n));
      }
    }
  }
}

}  // namespace tiles

using namespace tiles;

// Two kernel templates of one name, told apart by their parameter lists.
template <typename T, int BM, int BN, int BK, bool with_bias>
[[kernel]] void gemm(
    const device T* A [[buffer(0)]],
    const device T* B [[buffer(1)]],
    device T* C [[buffer(2)]],
    const device T* bias [[buffer(3)]],
    ushort lane [[thread_index_in_simdgroup]]) {
  Tile<T, BM / 8, BK / 8> a;
  Tile<T, BK / 8, BN / 8> b;
  Tile<T, BM / 8, BN / 8> acc;
  a.load(A, BK, lane);
  b.load(B, BN, lane);
  for (int i = 0; i < (BM / 8) * (BN / 8); i++) {
    acc.frags[i] = typename Tile<T, 1, 1>::frag_type(0);
  }
  tile_mma(acc, a, b);

  // Store through matrices kept in an array, element by element.
  simdgroup_matrix<T, 8, 8> out[(BM / 8) * (BN / 8)];
  const short2 xy = Frag<T, 8, 8>::coord(lane);
  for (int r = 0; r < BM / 8; r++) {
    for (int c = 0; c < BN / 8; c++) {
      out[r * (BN / 8) + c].thread_elements()[0] = acc.at(r, c)[0];
      out[r * (BN / 8) + c].thread_elements()[1] = acc.at(r, c).y;
      thread const auto& e = out[r * (BN / 8) + c].thread_elements();
      const int row = r * 8 + xy.y;
      const int col = c * 8 + xy.x;
      for (short j = 0; j < 2; j++) {
        C[row * BN + col + j] = e[j] + (with_bias ? bias[col + j] : T(0));
      }
    }
  }
}

template <typename T, int BM, int BN, int BK>
[[kernel]] void gemm(
    const device T* A [[buffer(0)]],
    const device T* B [[buffer(1)]],
    device T* C [[buffer(2)]],
    ushort lane [[thread_index_in_simdgroup]]) {
  // Whole-matrix loads and stores of the same product.
  simdgroup_matrix<T, 8, 8> acc[(BM / 8) * (BN / 8)];
  for (int i = 0; i < (BM / 8) * (BN / 8); i++) {
    acc[i] = make_filled_simdgroup_matrix<T, 8, 8>(T(0));
  }
  for (int k = 0; k < BK; k += 8) {
    for (int r = 0; r < BM / 8; r++) {
      for (int c = 0; c < BN / 8; c++) {
        simdgroup_matrix<T, 8, 8> a, b;
        simdgroup_load(a, A + r * 8 * BK + k, BK);
        simdgroup_load(b, B + k * BN + c * 8, BN);
        simdgroup_multiply_accumulate(acc[r * (BN / 8) + c], a, b, acc[r * (BN / 8) + c]);
      }
    }
  }
  for (int r = 0; r < BM / 8; r++) {
    for (int c = 0; c < BN / 8; c++) {
      simdgroup_store(acc[r * (BN / 8) + c], C + r * 8 * BN + c * 8, BN);
    }
  }
  (void)lane;
}

#define instantiate_kernel(name, func, ...) \
  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;

instantiate_kernel("gemm_f32_16x16x8", gemm, float, 16, 16, 8, true)
instantiate_kernel("gemm_plain_f32_16x16x8", gemm, float, 16, 16, 8)
