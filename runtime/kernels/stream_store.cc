// StreamStore variants, one per vector width, each compiled for its instruction set with a
// target attribute so the library itself stays at the x86-64 baseline.
#include "runtime/kernels/stream_store.h"

#include <atomic>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define BCAST_STREAM_X86 1
#endif

namespace onnx_bcast::rt {
namespace {

using StoreFn = void (*)(char* dst, const char* src, size_t bytes);

void StoreMemcpy(char* dst, const char* src, size_t bytes) { std::memcpy(dst, src, bytes); }

#ifdef BCAST_STREAM_X86
// Bytes to write with ordinary stores before `dst` reaches `align`, capped at `bytes`.
inline size_t HeadBytes(const char* dst, size_t align, size_t bytes) {
  const size_t head = (align - (reinterpret_cast<uintptr_t>(dst) & (align - 1))) & (align - 1);
  return head < bytes ? head : bytes;
}

void StoreSse2(char* dst, const char* src, size_t bytes) {
  const size_t head = HeadBytes(dst, 16, bytes);
  std::memcpy(dst, src, head);
  size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16));
    const __m128i v2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32));
    const __m128i v3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), v0);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), v1);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), v2);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), v3);
  }
  for (; i + 16 <= bytes; i += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
  }
  std::memcpy(dst + i, src + i, bytes - i);
}

__attribute__((target("avx"))) void StoreAvx(char* dst, const char* src, size_t bytes) {
  const size_t head = HeadBytes(dst, 32, bytes);
  std::memcpy(dst, src, head);
  size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 32));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), v0);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 32), v1);
  }
  for (; i + 32 <= bytes; i += 32) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
  }
  std::memcpy(dst + i, src + i, bytes - i);
  _mm256_zeroupper();
}

__attribute__((target("avx512f"))) void StoreAvx512(char* dst, const char* src, size_t bytes) {
  const size_t head = HeadBytes(dst, 64, bytes);
  std::memcpy(dst, src, head);
  size_t i = head;
  for (; i + 128 <= bytes; i += 128) {
    const __m512i v0 = _mm512_loadu_si512(src + i);
    const __m512i v1 = _mm512_loadu_si512(src + i + 64);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i), v0);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + 64), v1);
  }
  for (; i + 64 <= bytes; i += 64) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i), _mm512_loadu_si512(src + i));
  }
  std::memcpy(dst + i, src + i, bytes - i);
  _mm256_zeroupper();
}
#endif  // BCAST_STREAM_X86

struct Variant {
  const char* name;
  StoreFn fn;
};

bool Supported(const char* name) {
  if (std::strcmp(name, "memcpy") == 0) return true;
#ifdef BCAST_STREAM_X86
  if (std::strcmp(name, "sse2") == 0) return true;
  if (std::strcmp(name, "avx") == 0) return __builtin_cpu_supports("avx");
  if (std::strcmp(name, "avx512f") == 0) return __builtin_cpu_supports("avx512f");
#endif
  return false;
}

Variant Find(const char* name) {
#ifdef BCAST_STREAM_X86
  if (std::strcmp(name, "avx512f") == 0) return {"avx512f", &StoreAvx512};
  if (std::strcmp(name, "avx") == 0) return {"avx", &StoreAvx};
  if (std::strcmp(name, "sse2") == 0) return {"sse2", &StoreSse2};
#endif
  return {"memcpy", &StoreMemcpy};
}

Variant Best() {
  for (const char* name : {"avx512f", "avx", "sse2"}) {
    if (Supported(name)) return Find(name);
  }
  return Find("memcpy");
}

// Chosen once; tests may swap it (relaxed: a variant is correct whichever one a call sees).
std::atomic<int> g_forced{-1};
const Variant kVariants[] = {Find("avx512f"), Find("avx"), Find("sse2"), Find("memcpy")};

const Variant& Current() {
  static const Variant best = Best();
  const int forced = g_forced.load(std::memory_order_relaxed);
  return forced >= 0 ? kVariants[forced] : best;
}

}  // namespace

void StreamStore(void* dst, const void* src, size_t bytes) {
  Current().fn(static_cast<char*>(dst), static_cast<const char*>(src), bytes);
}

void StreamFence() {
#ifdef BCAST_STREAM_X86
  _mm_sfence();
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

const char* StreamStoreVariant() { return Current().name; }

bool SetStreamStoreVariantForTesting(const char* name) {
  if (name == nullptr || *name == '\0') {
    g_forced.store(-1, std::memory_order_relaxed);
    return true;
  }
  if (!Supported(name)) return false;
  const char* names[] = {"avx512f", "avx", "sse2", "memcpy"};
  for (int i = 0; i < 4; ++i) {
    if (std::strcmp(names[i], name) == 0) {
      g_forced.store(i, std::memory_order_relaxed);
      return true;
    }
  }
  return false;
}

}  // namespace onnx_bcast::rt
