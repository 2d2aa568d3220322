// Reference reductions: every input element unravelled to its output index, no collapsing.
// The oracle for runtime/kernels/reduce.h in tests.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_REDUCE_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_REDUCE_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/kernels/reduce.h"

namespace onnx_bcast::runtime::kernels::reference {

/// Same contract as kernels::Reduce.
template <class T>
void Reduce(ReduceKind kind, const T* in, const std::vector<int64_t>& shape,
            const std::vector<bool>& reduce, T* out) {
  using A = ReduceAcc<T>;
  const size_t rank = shape.size();
  int64_t total = 1, out_count = 1, count = 1;
  for (size_t d = 0; d < rank; ++d) {
    total *= shape[d];
    (reduce[d] ? count : out_count) *= shape[d];
  }
  auto out_index = [&](int64_t flat) {
    int64_t o = 0, stride = 1;
    for (size_t d = rank; d-- > 0;) {
      const int64_t i = flat % shape[d];
      flat /= shape[d];
      if (!reduce[d]) {
        o += i * stride;
        stride *= shape[d];
      }
    }
    return o;
  };
  const ReduceKind pass = kind == ReduceKind::kLogSumExp ? ReduceKind::kMax : kind;
  std::vector<A> acc(static_cast<size_t>(out_count), ReduceInit<A>(pass));
  for (int64_t i = 0; i < total; ++i) {
    A& a = acc[out_index(i)];
    a = ReduceStep<A>(pass, a, static_cast<A>(in[i]));
  }
  if (kind != ReduceKind::kLogSumExp) {
    for (int64_t j = 0; j < out_count; ++j) out[j] = ReduceFinish<T, A>(kind, acc[j], count);
    return;
  }
  std::vector<double> sum(static_cast<size_t>(out_count), 0.0);
  for (int64_t i = 0; i < total; ++i) {
    const int64_t j = out_index(i);
    const double m = std::isinf(static_cast<double>(acc[j])) ? 0.0 : static_cast<double>(acc[j]);
    sum[j] += std::exp(static_cast<double>(in[i]) - m);
  }
  for (int64_t j = 0; j < out_count; ++j) {
    const double m = std::isinf(static_cast<double>(acc[j])) ? 0.0 : static_cast<double>(acc[j]);
    out[j] = FromDouble<T>(m + std::log(sum[j]));
  }
}

/// Same contract as kernels::Softmax: exp of every element in double, summed in double.
template <class T>
void Softmax(SoftmaxKind kind, const T* in, int64_t outer, int64_t n, int64_t inner, T* out) {
  SoftmaxInDouble(kind, in, outer, n, inner, out);
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_REDUCE_H_
