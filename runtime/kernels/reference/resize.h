// Reference resampling: each output element summed directly over the product of its per-dim
// taps (no separable passes). The oracle for runtime/kernels/resize.h in tests.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_RESIZE_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_RESIZE_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "runtime/kernels/resize.h"

namespace onnx_bcast::runtime::kernels::reference {

/// Same contract as kernels::Resize.
template <class T>
void Resize(const std::vector<int64_t>& shape, const std::vector<ResizeTaps>& taps,
            double extrapolation_value, const T* x, T* y) {
  const size_t rank = shape.size();
  std::vector<int64_t> out(rank);
  int64_t total = 1;
  for (size_t d = 0; d < rank; ++d) total *= (out[d] = taps[d].out_size());
  std::vector<int64_t> oc(rank), k(rank);
  for (int64_t i = 0; i < total; ++i) {
    int64_t rem = i;
    bool outside = false, empty = false;
    for (size_t d = rank; d-- > 0;) {
      oc[d] = rem % out[d];
      rem /= out[d];
      outside = outside || taps[d].extrapolate[oc[d]];
      k[d] = taps[d].begin[oc[d]];
      empty = empty || k[d] == taps[d].begin[oc[d] + 1];
    }
    double sum = 0;
    while (!empty && !outside) {
      double w = 1;
      int64_t off = 0;
      for (size_t d = 0; d < rank; ++d) {
        w *= taps[d].weight[k[d]];
        off = off * shape[d] + taps[d].index[k[d]];
      }
      sum += w * static_cast<double>(x[off]);
      size_t d = rank;
      while (d-- > 0) {
        if (++k[d] < taps[d].begin[oc[d] + 1]) break;
        k[d] = taps[d].begin[oc[d]];
      }
      if (d == static_cast<size_t>(-1)) break;
    }
    y[i] = static_cast<T>(outside ? extrapolation_value : sum);
  }
}

/// Same contract as kernels::StoreSaturated, the range compared in long double (exact for
/// every 64-bit integer on x86-64's 80-bit format).
template <class T>
void StoreSaturated(const double* v, int64_t n, bool round, T* out) {
  for (int64_t i = 0; i < n; ++i) {
    const long double r = round ? std::round(v[i]) : v[i];
    if (std::isnan(r)) {
      out[i] = T(0);
    } else if (r > static_cast<long double>(std::numeric_limits<T>::max())) {
      out[i] = std::numeric_limits<T>::max();
    } else if (r < static_cast<long double>(std::numeric_limits<T>::lowest())) {
      out[i] = std::numeric_limits<T>::lowest();
    } else {
      out[i] = static_cast<T>(r);
    }
  }
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_RESIZE_H_
