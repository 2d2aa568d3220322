// Reference convolutions: direct loops over every output element and kernel tap, in double.
// The oracle for runtime/kernels/conv.h in tests.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_CONV_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_CONV_H_

#include <cstdint>
#include <vector>

#include "runtime/kernels/conv.h"

namespace onnx_bcast::runtime::kernels::reference {

/// Unravels `flat` into `coord` over `dims`.
inline void Unravel(int64_t flat, const std::vector<int64_t>& dims, std::vector<int64_t>* coord) {
  coord->resize(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    (*coord)[d] = flat % dims[d];
    flat /= dims[d];
  }
}

/// The flat offset in `dims` of the position `at * strides - pads_begin + k * dilations` on
/// each dim (the window formula, from an output position for Conv and from an input position
/// for ConvTranspose); -1 when it falls outside.
inline int64_t TapOffset(const WindowGeometry& g, const std::vector<int64_t>& at,
                         const std::vector<int64_t>& k, const std::vector<int64_t>& dims) {
  int64_t off = 0;
  for (int64_t d = 0; d < g.rank(); ++d) {
    const int64_t i = at[d] * g.strides[d] - g.pads_begin[d] + k[d] * g.dilations[d];
    if (i < 0 || i >= dims[d]) return -1;
    off = off * dims[d] + i;
  }
  return off;
}

/// Same contract as kernels::Conv.
template <class T>
void Conv(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps, int64_t group,
          const T* x, const T* w, const T* bias, T* y) {
  const int64_t cg = channels / group, mg = maps / group;
  const int64_t ksize = g.kernel_size(), isize = g.in_size(), osize = g.out_size();
  std::vector<int64_t> oc, kc;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < maps; ++m) {
      const int64_t gi = m / mg;
      for (int64_t o = 0; o < osize; ++o) {
        Unravel(o, g.out, &oc);
        double sum = bias != nullptr ? static_cast<double>(bias[m]) : 0.0;
        for (int64_t c = 0; c < cg; ++c) {
          for (int64_t kf = 0; kf < ksize; ++kf) {
            Unravel(kf, g.kernel, &kc);
            const int64_t off = TapOffset(g, oc, kc, g.in);
            if (off < 0) continue;
            sum += static_cast<double>(x[(n * channels + gi * cg + c) * isize + off]) *
                   static_cast<double>(w[(m * cg + c) * ksize + kf]);
          }
        }
        y[(n * maps + m) * osize + o] = static_cast<T>(sum);
      }
    }
  }
}

/// Same contract as kernels::ConvTranspose.
template <class T>
void ConvTranspose(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps,
                   int64_t group, const T* x, const T* w, const T* bias, T* y) {
  const int64_t cg = channels / group, mg = maps / group;
  const int64_t ksize = g.kernel_size(), isize = g.in_size(), osize = g.out_size();
  std::vector<double> acc(static_cast<size_t>(batch * maps * osize), 0.0);
  std::vector<int64_t> ic, kc;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t gi = c / cg;
      for (int64_t i = 0; i < isize; ++i) {
        Unravel(i, g.in, &ic);
        const double xv = static_cast<double>(x[(n * channels + c) * isize + i]);
        for (int64_t m = 0; m < mg; ++m) {
          for (int64_t kf = 0; kf < ksize; ++kf) {
            Unravel(kf, g.kernel, &kc);
            const int64_t off = TapOffset(g, ic, kc, g.out);
            if (off < 0) continue;
            acc[(n * maps + gi * mg + m) * osize + off] +=
                xv * static_cast<double>(w[(c * mg + m) * ksize + kf]);
          }
        }
      }
    }
  }
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < maps; ++m) {
      for (int64_t o = 0; o < osize; ++o) {
        const int64_t j = (n * maps + m) * osize + o;
        y[j] = static_cast<T>(acc[j] + (bias != nullptr ? static_cast<double>(bias[m]) : 0.0));
      }
    }
  }
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_CONV_H_
