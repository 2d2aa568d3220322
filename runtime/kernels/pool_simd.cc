// MaxPool2D's vector row runs (see pool_simd.h).
#include "runtime/kernels/pool_simd.h"

#include <algorithm>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define BCAST_POOL_SIMD 1
#endif

namespace onnx_bcast::runtime::kernels {

#ifdef BCAST_POOL_SIMD
namespace {

// Independent accumulators a pass keeps at most: one vector max has a latency of several
// cycles and each output is a chain of kh * kw of them, so four chains overlap where one would
// stall.
constexpr int kMaxBlocks = 4;

// How many of a block's `width` outputs starting at `first` are < len (0 to width).
inline int64_t Filled(int64_t first, int64_t len, int64_t width) {
  return std::clamp<int64_t>(len - first, 0, width);
}

// One tap of a block: the input element of each of its 16 outputs (stride 1: consecutive;
// stride 2: the even elements of two vectors).
template <int kStride>
__attribute__((target("avx512f"), always_inline)) inline __m512 Tap512(
    const float* p, __mmask16 out_mask, __mmask16 lo_mask, __mmask16 hi_mask, __m512i evens) {
  if constexpr (kStride == 1) {
    return _mm512_maskz_loadu_ps(out_mask, p);
  } else {
    const __m512 lo = _mm512_maskz_loadu_ps(lo_mask, p);
    const __m512 hi = _mm512_maskz_loadu_ps(hi_mask, p + 16);
    return _mm512_permutex2var_ps(lo, evens, hi);
  }
}

// Lanes below `count` set (their sign bits), for maskload and maskstore.
__attribute__((target("avx2"), always_inline)) inline __m256i FirstLanes(int64_t count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// The same for 8 outputs on AVX2.
template <int kStride>
__attribute__((target("avx2"), always_inline)) inline __m256 Tap256(const float* p,
                                                                    __m256i out_mask,
                                                                    __m256i lo_mask,
                                                                    __m256i hi_mask) {
  if constexpr (kStride == 1) {
    return _mm256_maskload_ps(p, out_mask);
  } else {
    const __m256 lo = _mm256_maskload_ps(p, lo_mask);
    const __m256 hi = _mm256_maskload_ps(p + 8, hi_mask);
    // [lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6], then the middle 64-bit pairs swapped.
    const __m256 mixed = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(
        _mm256_permute4x64_pd(_mm256_castps_pd(mixed), _MM_SHUFFLE(3, 1, 2, 0)));
  }
}

// One pass over the kBlocks blocks of outputs from o0: every tap folded into each block's
// accumulator in turn. Blocks past the run's end are not in the pass (a 13-wide row of a small
// map is one block, not four masked ones).
template <int kStride, int kBlocks>
__attribute__((target("avx512f"))) void Pass512(const MaxPoolRow& r, int64_t o0, float* y) {
  constexpr int64_t kWidth = 16;
  const __m512i evens =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  // Per block: the outputs it writes, and (stride 2) the input elements its taps read,
  // 0 .. 2 * (n - 1), split over two vectors: masked loads never touch an element past the
  // last one a tap needs (it may lie past the end of the tensor).
  __mmask16 out_mask[kBlocks], lo_mask[kBlocks], hi_mask[kBlocks];
  for (int b = 0; b < kBlocks; ++b) {
    const int64_t n = Filled(o0 + b * kWidth, r.len, kWidth);
    out_mask[b] = static_cast<__mmask16>((1u << n) - 1);
    const int64_t elems = n > 0 ? 2 * n - 1 : 0;
    lo_mask[b] = static_cast<__mmask16>((1u << std::min<int64_t>(elems, 16)) - 1);
    hi_mask[b] = static_cast<__mmask16>((1u << std::max<int64_t>(elems - 16, 0)) - 1);
  }
  const float* base = r.row0 + o0 * kStride;
  __m512 acc[kBlocks];
  for (int b = 0; b < kBlocks; ++b) {
    acc[b] =
        Tap512<kStride>(base + b * kWidth * kStride, out_mask[b], lo_mask[b], hi_mask[b], evens);
  }
  for (int64_t kh = 0; kh < r.kh_taps; ++kh) {
    const float* row = base + kh * r.dh * r.in_w;
    for (int64_t kw = kh == 0 ? 1 : 0; kw < r.kw_taps; ++kw) {
      const float* src = row + kw * r.dw;
      for (int b = 0; b < kBlocks; ++b) {
        const __m512 v =
            Tap512<kStride>(src + b * kWidth * kStride, out_mask[b], lo_mask[b], hi_mask[b], evens);
        acc[b] = _mm512_max_ps(v, acc[b]);  // v > acc ? v : acc
      }
    }
  }
  for (int b = 0; b < kBlocks; ++b) {
    _mm512_mask_storeu_ps(y + o0 + b * kWidth, out_mask[b], acc[b]);
  }
}

// The same with 8 outputs a block on AVX2.
template <int kStride, int kBlocks>
__attribute__((target("avx2"))) void Pass256(const MaxPoolRow& r, int64_t o0, float* y) {
  constexpr int64_t kWidth = 8;
  __m256i out_mask[kBlocks], lo_mask[kBlocks], hi_mask[kBlocks];
  for (int b = 0; b < kBlocks; ++b) {
    const int64_t n = Filled(o0 + b * kWidth, r.len, kWidth);
    const int64_t elems = n > 0 ? 2 * n - 1 : 0;
    out_mask[b] = FirstLanes(n);
    lo_mask[b] = FirstLanes(std::min<int64_t>(elems, 8));
    hi_mask[b] = FirstLanes(std::max<int64_t>(elems - 8, 0));
  }
  const float* base = r.row0 + o0 * kStride;
  __m256 acc[kBlocks];
  for (int b = 0; b < kBlocks; ++b) {
    acc[b] = Tap256<kStride>(base + b * kWidth * kStride, out_mask[b], lo_mask[b], hi_mask[b]);
  }
  for (int64_t kh = 0; kh < r.kh_taps; ++kh) {
    const float* row = base + kh * r.dh * r.in_w;
    for (int64_t kw = kh == 0 ? 1 : 0; kw < r.kw_taps; ++kw) {
      const float* src = row + kw * r.dw;
      for (int b = 0; b < kBlocks; ++b) {
        const __m256 v =
            Tap256<kStride>(src + b * kWidth * kStride, out_mask[b], lo_mask[b], hi_mask[b]);
        acc[b] = _mm256_max_ps(v, acc[b]);  // v > acc ? v : acc
      }
    }
  }
  for (int b = 0; b < kBlocks; ++b) _mm256_maskstore_ps(y + o0 + b * kWidth, out_mask[b], acc[b]);
}

// A row: passes of kMaxBlocks blocks, then one pass of as many blocks as the rest fills
// (some of them partly).
template <int kStride, int kWidth, template <int, int> class PassOf>
void Rows(const MaxPoolRow& r, float* y) {
  int64_t o0 = 0;
  for (; o0 + kWidth * kMaxBlocks <= r.len; o0 += kWidth * kMaxBlocks) {
    PassOf<kStride, kMaxBlocks>::Run(r, o0, y);
  }
  switch ((r.len - o0 + kWidth - 1) / kWidth) {
    case 1:
      PassOf<kStride, 1>::Run(r, o0, y);
      break;
    case 2:
      PassOf<kStride, 2>::Run(r, o0, y);
      break;
    case 3:
      PassOf<kStride, 3>::Run(r, o0, y);
      break;
    case 4:
      PassOf<kStride, 4>::Run(r, o0, y);
      break;
    default:  // 0: the row ended on a pass
      break;
  }
}

template <int kStride, int kBlocks>
struct Avx512Pass {
  static void Run(const MaxPoolRow& r, int64_t o0, float* y) {
    Pass512<kStride, kBlocks>(r, o0, y);
  }
};

template <int kStride, int kBlocks>
struct Avx2Pass {
  static void Run(const MaxPoolRow& r, int64_t o0, float* y) {
    Pass256<kStride, kBlocks>(r, o0, y);
  }
};

}  // namespace

bool HasAvx512ForPool() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

bool HasAvx2ForPool() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}

void MaxPoolRowRunAvx512(const MaxPoolRow& row, float* y) {
  if (row.sw == 1) {
    Rows<1, 16, Avx512Pass>(row, y);
  } else {
    Rows<2, 16, Avx512Pass>(row, y);
  }
}

void MaxPoolRowRunAvx2(const MaxPoolRow& row, float* y) {
  if (row.sw == 1) {
    Rows<1, 8, Avx2Pass>(row, y);
  } else {
    Rows<2, 8, Avx2Pass>(row, y);
  }
}

#else  // not x86-64: no vector kernels; MaxPool2D runs the plain row run

bool HasAvx512ForPool() { return false; }
bool HasAvx2ForPool() { return false; }
void MaxPoolRowRunAvx512(const MaxPoolRow&, float*) {}
void MaxPoolRowRunAvx2(const MaxPoolRow&, float*) {}

#endif  // BCAST_POOL_SIMD

bool MaxPoolRowRunVector(const MaxPoolRow& row, float* y) {
  if (row.sw != 1 && row.sw != 2) return false;
  if (HasAvx512ForPool()) {
    MaxPoolRowRunAvx512(row, y);
    return true;
  }
  if (HasAvx2ForPool()) {
    MaxPoolRowRunAvx2(row, y);
    return true;
  }
  return false;
}

}  // namespace onnx_bcast::runtime::kernels
