// Reference Einsum contraction: every loop point unravelled from its ordinal and every
// operand's offset recomputed from the label strides. The oracle for kernels/einsum.h.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_EINSUM_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_EINSUM_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "runtime/kernels/einsum.h"

namespace onnx_bcast::runtime::kernels::reference {

/// Same contract as kernels::EinsumContract.
template <class T>
void EinsumContract(absl::Span<const T* const> inputs,
                    absl::Span<const std::vector<int64_t>> strides, absl::Span<const int64_t> dims,
                    int64_t out_count, EinsumAcc<T>* acc) {
  for (int64_t i = 0; i < out_count; ++i) acc[i] = 0;
  int64_t points = 1;
  for (int64_t d : dims) points *= d;
  for (int64_t w = 0; w < points; ++w) {
    std::vector<int64_t> offsets(strides.size(), 0);
    int64_t rest = w;
    for (size_t l = dims.size(); l-- > 0;) {
      const int64_t i = rest % dims[l];
      rest /= dims[l];
      for (size_t t = 0; t < strides.size(); ++t) offsets[t] += i * strides[t][l];
    }
    EinsumAdd(EinsumProduct(inputs, offsets.data()), acc + offsets.back());
  }
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_EINSUM_H_
