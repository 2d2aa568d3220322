// Shared by the kernel benchmarks and the peer-comparison driver: the case table of issue
// #7, input filling, byte accounting and the STREAM-style add that gives the memory
// bandwidth limit of the same byte volume (with ordinary and with non-temporal stores).
#ifndef ONNX_BCAST_BENCH_BENCH_UTIL_H_
#define ONNX_BCAST_BENCH_BENCH_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace onnx_bcast::bench {

using Shape = std::vector<int64_t>;

/// One broadcast pattern of the table; `large` cases are memory-bound and are compared
/// with the STREAM line.
struct ShapeCase {
  const char* name;
  Shape a, b;
  bool large;
};

/// The case table of issue #7, in its order.
inline const std::vector<ShapeCase>& ShapeCases() {
  static const std::vector<ShapeCase> cases = {
      {"same", {4, 64, 256, 256}, {4, 64, 256, 256}, true},
      {"scalar", {4, 64, 256, 256}, {}, true},
      {"per_channel", {4, 64, 256, 256}, {1, 64, 1, 1}, true},
      {"inner_row", {16384, 1024}, {1024}, true},
      {"outer_column", {16384, 1024}, {16384, 1}, true},
      {"bidirectional", {256, 1, 1024}, {1, 256, 1024}, true},
      {"middle_axis", {128, 1, 4096}, {128, 32, 4096}, true},
      {"tiny", {1, 3, 8, 8}, {3, 1, 1}, false},
  };
  return cases;
}

inline Shape Broadcast(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t k = 1; k <= rank; ++k) {
    const int64_t x = k <= a.size() ? a[a.size() - k] : 1;
    const int64_t y = k <= b.size() ? b[b.size() - k] : 1;
    out[rank - k] = x == 1 ? y : x;
  }
  return out;
}

inline int64_t Elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

/// Bytes a binary op must move at least: each input read once, the output written once.
inline int64_t BytesMoved(const Shape& a, const Shape& b, size_t in_size, size_t out_size) {
  return (Elements(a) + Elements(b)) * static_cast<int64_t>(in_size) +
         Elements(Broadcast(a, b)) * static_cast<int64_t>(out_size);
}

/// A tensor of small nonzero values (no denormals, no division by zero, every page touched).
inline runtime::Tensor Filled(runtime::DType dtype, const Shape& shape) {
  runtime::Tensor t = runtime::Tensor::Allocate(dtype, shape).value();
  runtime::VisitDType(dtype, 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        p[i] = (i % 3) != 0;
      } else if constexpr (std::is_integral_v<T>) {
        p[i] = static_cast<T>(1 + i % 7);
      } else if constexpr (std::is_floating_point_v<T>) {
        p[i] = static_cast<T>(1 + i % 7) * T(0.25);
      }
    }
    return 0;
  });
  return t;
}

// c[i] = a[i] + b[i] with ordinary stores, vectorized for the widest unit the machine has.
static __attribute__((target_clones("avx512f", "avx2", "default"), noinline)) void StreamAddPlain(
    const float* __restrict a, const float* __restrict b, float* __restrict c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}

#if defined(__x86_64__)
// c[i] = a[i] + b[i] with non-temporal stores (c 64-byte aligned, n a multiple of 16).
static __attribute__((target("avx512f"), noinline)) void StreamAddNt512(const float* a,
                                                                        const float* b, float* c,
                                                                        int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    _mm512_stream_ps(c + i, _mm512_add_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));
  }
  _mm_sfence();
}
static __attribute__((target("avx"), noinline)) void StreamAddNt256(const float* a, const float* b,
                                                                    float* c, int64_t n) {
  for (int64_t i = 0; i < n; i += 8) {
    _mm256_stream_ps(c + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  }
  _mm_sfence();
}
#endif

inline void StreamAddNt(const float* a, const float* b, float* c, int64_t n) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return StreamAddNt512(a, b, c, n);
  if (__builtin_cpu_supports("avx")) return StreamAddNt256(a, b, c, n);
#endif
  StreamAddPlain(a, b, c, n);
}

// c[i] = s * a[i] (one read per write) and c[i] = s (writes only), ordinary and
// non-temporal stores.
static __attribute__((target_clones("avx512f", "avx2", "default"), noinline)) void StreamScalePlain(
    const float* __restrict a, float* __restrict c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = 1.5f * a[i];
}
static __attribute__((target_clones("avx512f", "avx2", "default"), noinline)) void StreamFillPlain(
    float* __restrict c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = 1.5f;
}
#if defined(__x86_64__)
static __attribute__((target("avx512f"), noinline)) void StreamScaleNt512(const float* a, float* c,
                                                                          int64_t n) {
  const __m512 s = _mm512_set1_ps(1.5f);
  for (int64_t i = 0; i < n; i += 16) _mm512_stream_ps(c + i, _mm512_mul_ps(s, _mm512_loadu_ps(a + i)));
  _mm_sfence();
}
static __attribute__((target("avx512f"), noinline)) void StreamFillNt512(float* c, int64_t n) {
  const __m512 s = _mm512_set1_ps(1.5f);
  for (int64_t i = 0; i < n; i += 16) _mm512_stream_ps(c + i, s);
  _mm_sfence();
}
#endif

/// The read/write mix of a STREAM-style baseline: `add` reads two floats per float written
/// (the classic triad shape), `scale` one, `fill` none.
enum class StreamMix { kAdd, kScale, kFill };

inline const char* StreamMixName(StreamMix mix) {
  return mix == StreamMix::kAdd ? "add" : mix == StreamMix::kScale ? "scale" : "fill";
}

/// The mix that matches a kernel: the inputs too large to stay in cache (at least 1/16 of
/// the output) are what it reads from memory; the output is what it writes. Zen-class
/// parts write to memory at about half the rate they read, so a kernel is only fairly
/// compared with a baseline of the same mix.
inline StreamMix MatchingMix(const Shape& a, const Shape& b, size_t in_size, size_t out_size) {
  const double out = static_cast<double>(Elements(Broadcast(a, b)) * static_cast<int64_t>(out_size));
  double reads = 0;
  for (const Shape* s : {&a, &b}) {
    const double bytes = static_cast<double>(Elements(*s) * static_cast<int64_t>(in_size));
    if (bytes * 16 >= out) reads += bytes;
  }
  return reads >= 1.5 * out ? StreamMix::kAdd : reads >= 0.5 * out ? StreamMix::kScale : StreamMix::kFill;
}

/// Float arrays holding about `bytes` in total for one STREAM-style kernel of `mix`.
struct StreamArrays {
  explicit StreamArrays(int64_t bytes, StreamMix m = StreamMix::kAdd)
      : mix(m),
        n(std::max<int64_t>(bytes / (4 * Arrays(m)) / 64 * 64, 64)),
        a(Filled(runtime::DType::kFloat32, {m == StreamMix::kFill ? 1 : n})),
        b(Filled(runtime::DType::kFloat32, {m == StreamMix::kAdd ? n : 1})),
        c(Filled(runtime::DType::kFloat32, {n})) {}
  static int64_t Arrays(StreamMix m) { return m == StreamMix::kAdd ? 3 : m == StreamMix::kScale ? 2 : 1; }
  int64_t bytes() const { return n * 4 * Arrays(mix); }

  /// One pass on `threads` threads of the default pool, each taking one contiguous share
  /// of the arrays (chunk edges on 64 elements, so on cache lines).
  void Run(int threads, bool non_temporal) {
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* pc = c.data<float>();
    const int64_t units = n / 64;
    auto body = [&](int64_t t) {
      const int64_t begin = units * t / threads * 64;
      const int64_t end = units * (t + 1) / threads * 64;
      const int64_t len = end - begin;
      switch (mix) {
        case StreamMix::kAdd:
          if (non_temporal) {
            StreamAddNt(pa + begin, pb + begin, pc + begin, len);
          } else {
            StreamAddPlain(pa + begin, pb + begin, pc + begin, len);
          }
          return;
        case StreamMix::kScale:
#if defined(__x86_64__)
          if (non_temporal && __builtin_cpu_supports("avx512f")) {
            return StreamScaleNt512(pa + begin, pc + begin, len);
          }
#endif
          return StreamScalePlain(pa + begin, pc + begin, len);
        case StreamMix::kFill:
#if defined(__x86_64__)
          if (non_temporal && __builtin_cpu_supports("avx512f")) {
            return StreamFillNt512(pc + begin, len);
          }
#endif
          return StreamFillPlain(pc + begin, len);
      }
    };
    if (threads <= 1) {
      body(0);
    } else {
      runtime::ThreadPool::Default().ParallelFor(threads, threads, body);
    }
  }

  StreamMix mix;
  int64_t n;
  runtime::Tensor a, b, c;
};

}  // namespace onnx_bcast::bench

#endif  // ONNX_BCAST_BENCH_BENCH_UTIL_H_
