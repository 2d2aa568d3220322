// Einsum's contraction once the op has parsed the equation: a loop over every label's extent
// (output labels first, then the summed ones), each operand addressed by a stride per label
// (0 where it lacks the label or broadcasts, summed where a label repeats, as on a diagonal).
// An odometer over the outer labels, a flat loop over the innermost. Oracle: reference/einsum.h.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_EINSUM_H_
#define ONNX_BCAST_RUNTIME_KERNELS_EINSUM_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/types/span.h"

namespace onnx_bcast::runtime::kernels {

/// The accumulator of an Einsum over T: double for floating T, int64 for integers (products
/// and sums wrap modulo 2^64, like the other integer kernels).
template <class T>
using EinsumAcc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

/// The product of operand values at one loop point, taken left to right.
template <class T>
EinsumAcc<T> EinsumProduct(absl::Span<const T* const> inputs, const int64_t* offsets) {
  if constexpr (std::is_floating_point_v<T>) {
    double p = 1;
    for (size_t t = 0; t < inputs.size(); ++t) p *= static_cast<double>(inputs[t][offsets[t]]);
    return p;
  } else {
    uint64_t q = 1;  // unsigned: signed overflow is undefined
    for (size_t t = 0; t < inputs.size(); ++t) q *= static_cast<uint64_t>(inputs[t][offsets[t]]);
    return static_cast<int64_t>(q);
  }
}

/// *acc += p (wrapping for integers).
template <class A>
void EinsumAdd(A p, A* acc) {
  if constexpr (std::is_floating_point_v<A>) {
    *acc += p;
  } else {
    *acc = static_cast<A>(static_cast<uint64_t>(*acc) + static_cast<uint64_t>(p));
  }
}

/// Fills acc[0, out_count) with, at each output position, the sum over the loop space `dims`
/// of the product of the operands. strides[t][l] is how far operand t moves when label l
/// advances; strides[inputs.size()] is the output's. Points are visited in row-major order of
/// `dims`, so float sums do not depend on how the loops are split.
template <class T>
void EinsumContract(absl::Span<const T* const> inputs,
                    absl::Span<const std::vector<int64_t>> strides, absl::Span<const int64_t> dims,
                    int64_t out_count, EinsumAcc<T>* acc) {
  using A = EinsumAcc<T>;
  std::fill(acc, acc + out_count, A(0));
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  const size_t operands = strides.size();  // the inputs, then the output
  const int rank = static_cast<int>(dims.size());
  // The innermost label runs as a flat loop; a rank-0 contraction is one point.
  const int64_t n = rank > 0 ? dims[rank - 1] : 1;
  std::vector<int64_t> step(operands, 0), off(operands, 0), at(operands);
  if (rank > 0) {
    for (size_t t = 0; t < operands; ++t) step[t] = strides[t][rank - 1];
  }
  std::vector<int64_t> idx(std::max(rank - 1, 0), 0);
  while (true) {
    for (int64_t i = 0; i < n; ++i) {
      for (size_t t = 0; t < operands; ++t) at[t] = off[t] + i * step[t];
      EinsumAdd(EinsumProduct(inputs, at.data()), acc + at.back());
    }
    int d = rank - 2;
    for (; d >= 0; --d) {
      for (size_t t = 0; t < operands; ++t) off[t] += strides[t][d];
      if (++idx[d] < dims[d]) break;
      for (size_t t = 0; t < operands; ++t) off[t] -= strides[t][d] * dims[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_EINSUM_H_
