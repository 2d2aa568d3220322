// The one way kernels run work on several threads: the caller passes its pool as a function.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_PARALLEL_FOR_H_
#define ONNX_BCAST_RUNTIME_KERNELS_PARALLEL_FOR_H_

#include <cstdint>
#include <functional>

namespace onnx_bcast::runtime::kernels {

/// Runs fn(i) for every i in [0, n), possibly on several threads at once (tasks are
/// independent). Kernels take it so they need not know the executor's pool.
using ParallelFor = std::function<void(int64_t n, const std::function<void(int64_t)>& fn)>;

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_PARALLEL_FOR_H_
