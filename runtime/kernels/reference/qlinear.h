// Reference integer ends (the loops the ops held): each element's zero point and scales found
// by dividing its flat index. The oracle for kernels/qlinear.h in tests.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_QLINEAR_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_QLINEAR_H_

#include <cmath>
#include <cstdint>

#include "runtime/kernels/qlinear.h"

namespace onnx_bcast::runtime::kernels::reference {

/// Same contract as kernels::SubtractZeroPoint.
template <class T, class Out>
void SubtractZeroPoint(const T* x, int64_t n, SliceParam<int64_t> zp, Out* out) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t z = zp.count == 1 ? zp.values[0] : zp.values[(i / zp.inner) % zp.count];
    out[i] = static_cast<Out>(static_cast<int64_t>(x[i]) - z);
  }
}

/// Same contract as kernels::Requantize.
template <class Acc, class T>
void Requantize(const Acc* acc, int64_t n, SliceParam<double> s1, SliceParam<double> s2,
                double y_scale, int64_t zero_point, T* out) {
  for (int64_t i = 0; i < n; ++i) {
    const double a = s1.values[(i / s1.inner) % s1.count];
    const double b = s2.values[(i / s2.inner) % s2.count];
    const double real = std::nearbyint(static_cast<double>(acc[i])) * a * b / y_scale;
    out[i] = QuantizeValue<T>(real, zero_point);
  }
}

/// Same contract as kernels::RoundToInt32.
inline void RoundToInt32(const double* acc, int64_t n, int32_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<int32_t>(std::llround(acc[i]));
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_QLINEAR_H_
