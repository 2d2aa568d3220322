// libmvec's 8-lane AVX2 entry points (the x86-64 vector function ABI names, `d` for AVX2)
// called from functions compiled for AVX2 only, so the rest of the build stays baseline x86-64.
#include "runtime/kernels/vector_math.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#if defined(__x86_64__) && defined(__GLIBC__)
#include <immintrin.h>
#define BCAST_HAVE_MVEC 1
// libmvec's AVX2 variants: declared with the AVX2 target, so that clang accepts direct calls
// with __m256 arguments from the AVX2 kernels below (the ABI needs AVX).
extern "C" {
__attribute__((target("avx2"))) __m256 _ZGVdN8v_expf(__m256 x);
__attribute__((target("avx2"))) __m256 _ZGVdN8v_erff(__m256 x);
}
#endif

namespace onnx_bcast::runtime::kernels {
namespace {

#ifdef BCAST_HAVE_MVEC
// The tail goes through a zero-padded lane block so every element takes the same path (a
// result must not depend on where the array is cut).
template <__m256 (*kFn)(__m256)>
__attribute__((target("avx2"))) void Map8(const float* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, kFn(_mm256_loadu_ps(in + i)));
  if (i < n) {
    float block[8] = {};
    std::memcpy(block, in + i, static_cast<size_t>(n - i) * sizeof(float));
    _mm256_storeu_ps(block, kFn(_mm256_loadu_ps(block)));
    std::memcpy(out + i, block, static_cast<size_t>(n - i) * sizeof(float));
  }
}

// acc + the four floats of `half`, widened to double.
__attribute__((target("avx2"), always_inline)) inline __m256d AddWide(__m256d acc, __m128 half) {
  return _mm256_add_pd(acc, _mm256_cvtps_pd(half));
}

// e * inv in double, rounded to float; 0 where e < flush_below.
__attribute__((target("avx2"), always_inline)) inline __m256 ScaleFlushed(__m256 e, __m256d inv,
                                                                          __m256 flush_below) {
  const __m128 lo = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(e)), inv));
  const __m128 hi =
      _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)), inv));
  const __m256 v = _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
  return _mm256_andnot_ps(_mm256_cmp_ps(e, flush_below, _CMP_LT_OQ), v);
}

// Softmax over contiguous rows, a row at a time in registers: max, then exp of the clamped
// shifts with the sum in double, then the scaling in double (see SoftmaxRowsFloats). The
// partial block at a row's end goes through masked loads and stores.
__attribute__((target("avx2"))) void SoftmaxRows8(const float* in, float* out, int64_t rows,
                                                  int64_t n) {
  const int64_t full = n / 8, tail = n % 8;
  alignas(32) int32_t mask_bits[8];
  for (int j = 0; j < 8; ++j) mask_bits[j] = j < tail ? -1 : 0;
  const __m256i mask = _mm256_load_si256(reinterpret_cast<const __m256i*>(mask_bits));
  const __m256 mask_ps = _mm256_castsi256_ps(mask);
  const __m256 low = _mm256_set1_ps(kSoftmaxLowestShift);
  const __m256 flush_below = _mm256_set1_ps(kSoftmaxFlushBelow);
  const __m256 neg_inf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = in + r * n;
    float* y = out + r * n;
    // A NaN may be lost from the max; its own shift is NaN, so the row is NaN anyway.
    __m256 m = neg_inf;
    for (int64_t q = 0; q < full; ++q) m = _mm256_max_ps(m, _mm256_loadu_ps(x + 8 * q));
    if (tail != 0) {
      m = _mm256_max_ps(m,
                        _mm256_blendv_ps(neg_inf, _mm256_maskload_ps(x + 8 * full, mask), mask_ps));
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
    const __m256 max = _mm256_set1_ps(_mm_cvtss_f32(m4));
    // max_ps(low, d) returns d when d is NaN (its second operand), so NaN stays NaN.
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    for (int64_t q = 0; q < full; ++q) {
      const __m256 e =
          _ZGVdN8v_expf(_mm256_max_ps(low, _mm256_sub_ps(_mm256_loadu_ps(x + 8 * q), max)));
      _mm256_storeu_ps(y + 8 * q, e);
      s0 = AddWide(s0, _mm256_castps256_ps128(e));
      s1 = AddWide(s1, _mm256_extractf128_ps(e, 1));
    }
    if (tail != 0) {
      const __m256 d = _mm256_sub_ps(_mm256_maskload_ps(x + 8 * full, mask), max);
      const __m256 e = _mm256_and_ps(_ZGVdN8v_expf(_mm256_max_ps(low, d)), mask_ps);
      _mm256_maskstore_ps(y + 8 * full, mask, e);
      s0 = AddWide(s0, _mm256_castps256_ps128(e));
      s1 = AddWide(s1, _mm256_extractf128_ps(e, 1));
    }
    const __m256d s = _mm256_add_pd(s0, s1);
    __m128d s2 = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    s2 = _mm_add_sd(s2, _mm_unpackhi_pd(s2, s2));
    const __m256d inv = _mm256_set1_pd(1.0 / _mm_cvtsd_f64(s2));
    for (int64_t q = 0; q < full; ++q) {
      _mm256_storeu_ps(y + 8 * q, ScaleFlushed(_mm256_loadu_ps(y + 8 * q), inv, flush_below));
    }
    if (tail != 0) {
      _mm256_maskstore_ps(y + 8 * full, mask,
                          ScaleFlushed(_mm256_maskload_ps(y + 8 * full, mask), inv, flush_below));
    }
  }
}
#endif

}  // namespace

bool SoftmaxRowsFloats(const float* in, float* out, int64_t rows, int64_t n) {
#ifdef BCAST_HAVE_MVEC
  if (!VectorMathAvailable() || n <= 0) return false;
  SoftmaxRows8(in, out, rows, n);
  return true;
#else
  return false;
#endif
}

bool VectorMathAvailable() {
#ifdef BCAST_HAVE_MVEC
  static const bool available = [] {
    const char* env = std::getenv("BCAST_VECTOR_MATH");
    return __builtin_cpu_supports("avx2") && (env == nullptr || std::strcmp(env, "0") != 0);
  }();
  return available;
#else
  return false;
#endif
}

void ExpFloats(const float* in, float* out, int64_t n) {
#ifdef BCAST_HAVE_MVEC
  if (VectorMathAvailable()) return Map8<_ZGVdN8v_expf>(in, out, n);
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = std::exp(in[i]);
}

void ErfFloats(const float* in, float* out, int64_t n) {
#ifdef BCAST_HAVE_MVEC
  if (VectorMathAvailable()) return Map8<_ZGVdN8v_erff>(in, out, n);
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = std::erf(in[i]);
}

void SigmoidFloats(const float* in, float* out, int64_t n) {
  constexpr int64_t kBlock = 256;  // exps staged in L1
  float e[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t len = std::min(kBlock, n - b);
    for (int64_t i = 0; i < len; ++i) e[i] = -std::fabs(in[b + i]);
    ExpFloats(e, e, len);
    for (int64_t i = 0; i < len; ++i) {
      const float r = 1.0f / (1.0f + e[i]);
      out[b + i] = in[b + i] >= 0.0f ? r : e[i] * r;
    }
  }
}

}  // namespace onnx_bcast::runtime::kernels
