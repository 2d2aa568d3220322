// Internal to the unary kernel files: splitting a flat range across threads.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_UNARY_INTERNAL_H_
#define ONNX_BCAST_RUNTIME_KERNELS_UNARY_INTERNAL_H_

#include <algorithm>
#include <cstdint>

#include "runtime/kernels/unary.h"
#include "runtime/thread_pool.h"

namespace onnx_bcast::runtime::unary_internal {

/// Runs fn(begin, end) over [0, n), split across threads for large n. Edges fall on
/// multiples of 64 elements so results never depend on the thread count.
template <class Fn>
void ForRange(int64_t n, const UnaryOptions& opts, Fn&& fn) {
  if (n <= 0) return;
  if (opts.threads <= 1 || n < opts.parallel_threshold) {
    fn(int64_t{0}, n);
    return;
  }
  constexpr int64_t kGrain = 64;
  const int64_t units = (n + kGrain - 1) / kGrain;
  const int64_t tasks = std::min<int64_t>(opts.threads, units);
  ThreadPool& pool = opts.pool != nullptr ? *opts.pool : ThreadPool::Default();
  pool.ParallelFor(tasks, opts.threads, [&](int64_t task) {
    const int64_t begin = std::min(n, units * task / tasks * kGrain);
    const int64_t end = std::min(n, units * (task + 1) / tasks * kGrain);
    if (begin < end) fn(begin, end);
  });
}

}  // namespace onnx_bcast::runtime::unary_internal

#endif  // ONNX_BCAST_RUNTIME_KERNELS_UNARY_INTERNAL_H_
