// Small float products in AVX2+FMA registers, and oneDNN's matmul for large ones.
#include "runtime/kernels/matmul_fast.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#ifdef BCAST_HAVE_ONEDNN
#include <omp.h>

#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>

#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/kernels/onednn_cache.h"
#endif

namespace onnx_bcast::runtime::kernels {
namespace {

bool EnvOn(const char* name) {
  const char* env = std::getenv(name);
  return env == nullptr || std::strcmp(env, "0") != 0;
}

#if defined(__x86_64__)
// One output row at a time: its kFull column blocks of 8 floats (plus a masked partial block
// when n is not a multiple of 8) stay in registers while k runs, so each b row is loaded once
// per output row and nothing is stored until the row is done. kFull is a template argument
// so that the accumulators are registers, not an array in memory.
template <int kFull>
__attribute__((target("avx2,fma"))) void SmallProduct(int64_t m, int64_t n, int64_t k,
                                                      const float* a, const float* b, float* c) {
  const int64_t tail = n - 8 * kFull;
  alignas(32) int32_t mask_bits[8];
  for (int j = 0; j < 8; ++j) mask_bits[j] = j < tail ? -1 : 0;
  const __m256i mask = _mm256_load_si256(reinterpret_cast<const __m256i*>(mask_bits));
  for (int64_t i = 0; i < m; ++i) {
    const float* ar = a + i * k;
    __m256 acc[kFull + 1];
    for (int q = 0; q <= kFull; ++q) acc[q] = _mm256_setzero_ps();
    for (int64_t p = 0; p < k; ++p) {
      const __m256 av = _mm256_broadcast_ss(ar + p);
      const float* br = b + p * n;
      for (int q = 0; q < kFull; ++q) {
        acc[q] = _mm256_fmadd_ps(av, _mm256_loadu_ps(br + 8 * q), acc[q]);
      }
      if (tail != 0) {
        acc[kFull] = _mm256_fmadd_ps(av, _mm256_maskload_ps(br + 8 * kFull, mask), acc[kFull]);
      }
    }
    float* cr = c + i * n;
    for (int q = 0; q < kFull; ++q) _mm256_storeu_ps(cr + 8 * q, acc[q]);
    if (tail != 0) _mm256_maskstore_ps(cr + 8 * kFull, mask, acc[kFull]);
  }
}

using SmallProductFn = void (*)(int64_t, int64_t, int64_t, const float*, const float*, float*);
// Indexed by n / 8 (n <= kSmallMatMulMaxDim = 64).
constexpr SmallProductFn kSmallProducts[] = {
    SmallProduct<0>, SmallProduct<1>, SmallProduct<2>, SmallProduct<3>, SmallProduct<4>,
    SmallProduct<5>, SmallProduct<6>, SmallProduct<7>, SmallProduct<8>,
};
#endif

}  // namespace

bool SmallMatMulAvailable() {
#if defined(__x86_64__)
  static const bool available = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                                EnvOn("BCAST_SMALL_MATMUL");
  return available;
#else
  return false;
#endif
}

bool SmallMatMuls(int64_t batch, int64_t m, int64_t n, int64_t k, const float* a,
                  const int64_t* a_offset, const float* b, const int64_t* b_offset, float* out) {
#if defined(__x86_64__)
  if (!SmallMatMulAvailable() || m > kSmallMatMulMaxDim || n > kSmallMatMulMaxDim ||
      k > kSmallMatMulMaxDim) {
    return false;
  }
  const SmallProductFn product = kSmallProducts[n / 8];
  for (int64_t i = 0; i < batch; ++i) {
    product(m, n, k, a + a_offset[i], b + b_offset[i], out + i * m * n);
  }
  return true;
#else
  return false;
#endif
}

#ifndef BCAST_HAVE_ONEDNN

bool OneDnnMatMulAvailable() { return false; }
bool OneDnnMatMul(int64_t, int64_t, int64_t, const float*, const float*, float*) { return false; }

#else

namespace {

using dnnl::memory;

struct Entry {
  dnnl::matmul matmul;
  memory a, b, c;
};

using ThreadState = OneDnnThreadState<std::tuple<int64_t, int64_t, int64_t>, Entry>;

}  // namespace

bool OneDnnMatMulAvailable() {
  static const bool available = EnvOn("BCAST_MATMUL_ONEDNN");
  return available;
}

bool OneDnnMatMul(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  if (!OneDnnMatMulAvailable()) return false;
  thread_local ThreadState ts;
  // One OpenMP thread, as for Conv (conv_onednn.cc): libgomp's idle team spins.
  omp_set_num_threads(1);
  const auto key = std::make_tuple(m, n, k);
  Entry* found = ts.Find(key, [&] {
    auto e = std::make_unique<Entry>();
    constexpr memory::data_type kF32 = memory::data_type::f32;
    const memory::desc a_desc({m, k}, kF32, memory::format_tag::ab);
    const memory::desc b_desc({k, n}, kF32, memory::format_tag::ab);
    const memory::desc c_desc({m, n}, kF32, memory::format_tag::ab);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_desc, b_desc, c_desc), ts.engine);
    e->matmul = dnnl::matmul(pd);
    e->a = memory(a_desc, ts.engine, nullptr);
    e->b = memory(b_desc, ts.engine, nullptr);
    e->c = memory(c_desc, ts.engine, nullptr);
    return e;
  });
  if (found == nullptr) return false;
  Entry& e = *found;
  try {
    e.a.set_data_handle(const_cast<float*>(a));
    e.b.set_data_handle(const_cast<float*>(b));
    e.c.set_data_handle(c);
    e.matmul.execute(ts.stream,
                     {{DNNL_ARG_SRC, e.a}, {DNNL_ARG_WEIGHTS, e.b}, {DNNL_ARG_DST, e.c}});
    ts.stream.wait();
  } catch (const dnnl::error&) {
    return false;
  }
  return true;
}

#endif  // BCAST_HAVE_ONEDNN

}  // namespace onnx_bcast::runtime::kernels
