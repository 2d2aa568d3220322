// libmvec's 8-lane AVX2 entry points (the x86-64 vector function ABI names, `d` for AVX2)
// called from functions compiled for AVX2 only, so the rest of the build stays baseline x86-64.
#include "runtime/kernels/vector_math.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && defined(__GLIBC__)
#include <immintrin.h>
#define BCAST_HAVE_MVEC 1
extern "C" {
__m256 _ZGVdN8v_expf(__m256 x);
__m256 _ZGVdN8v_erff(__m256 x);
}
#endif

namespace onnx_bcast::rt::kernels {
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
#endif

}  // namespace

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

}  // namespace onnx_bcast::rt::kernels
