// Non-temporal ("streaming") stores for kernels whose output is too large to stay in cache:
// the output bypasses the caches, so it costs no read-for-ownership and evicts nothing the
// inputs need. StreamLine uses SSE2, which every x86-64 has; loops compiled for AVX-512
// (binary_loops.h) store whole lines and are picked at run time (CpuHasAvx512); other
// architectures fall back to ordinary copies.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_STREAM_STORE_H_
#define ONNX_BCAST_RUNTIME_KERNELS_STREAM_STORE_H_

#include <atomic>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace onnx_bcast::runtime {

/// Writes the 64-byte line at `src` (64-byte aligned, normally in L1) to `dst` (64-byte
/// aligned) with non-temporal stores. Call StreamFence() before others may read `dst`.
inline void StreamLine(void* dst, const void* src) {
#if defined(__SSE2__)
  const __m128i* s = static_cast<const __m128i*>(src);
  __m128i* d = static_cast<__m128i*>(dst);
  const __m128i v0 = _mm_load_si128(s);
  const __m128i v1 = _mm_load_si128(s + 1);
  const __m128i v2 = _mm_load_si128(s + 2);
  const __m128i v3 = _mm_load_si128(s + 3);
  _mm_stream_si128(d, v0);
  _mm_stream_si128(d + 1, v1);
  _mm_stream_si128(d + 2, v2);
  _mm_stream_si128(d + 3, v3);
#else
  std::memcpy(dst, src, 64);
#endif
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BCAST_HAVE_STREAM_LINE_512 1
/// Whether this CPU runs AVX-512F (checked once).
inline bool CpuHasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}
#else
#define BCAST_HAVE_STREAM_LINE_512 0
#endif

/// Orders this thread's earlier non-temporal stores before its later stores (sfence):
/// they are weakly ordered, so a kernel fences before handing its output on.
inline void StreamFence() {
#if defined(__SSE2__)
  _mm_sfence();
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_KERNELS_STREAM_STORE_H_
