// The integer ends of ConvInteger, QLinearConv, MatMulInteger and QLinearMatMul: inputs minus
// their zero points (per tensor or per slice), and accumulators requantized through per-tensor,
// per-row or per-channel scales. The products between are kernels/conv.h and gemm.h; the ops
// read the parameters and pick the axes. Oracle: reference/qlinear.h.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_QLINEAR_H_
#define ONNX_BCAST_RUNTIME_KERNELS_QLINEAR_H_

#include <cmath>
#include <cstdint>
#include <limits>

namespace onnx_bcast::runtime::kernels {

/// A per-slice parameter of a flat tensor: element i reads values[(i / inner) % count]; one
/// value (count 1) is a per-tensor parameter.
template <class V>
struct SliceParam {
  const V* values;
  int64_t count = 1, inner = 1;
};

/// out[i] = x[i] - zero_point of element i, as Out (double for the convolutions, int32 for the
/// matrix products). Requires inner > 0 when count > 1.
template <class T, class Out>
void SubtractZeroPoint(const T* x, int64_t n, SliceParam<int64_t> zp, Out* out) {
  if (zp.count == 1) {
    const int64_t z = zp.values[0];
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Out>(static_cast<int64_t>(x[i]) - z);
    return;
  }
  // A block of `inner` elements shares its zero point: no division per element.
  for (int64_t start = 0, b = 0; start < n; start += zp.inner, ++b) {
    const int64_t z = zp.values[b % zp.count];
    const int64_t end = start + zp.inner < n ? start + zp.inner : n;
    for (int64_t i = start; i < end; ++i) {
      out[i] = static_cast<Out>(static_cast<int64_t>(x[i]) - z);
    }
  }
}

/// A real value stored as integer type T: round half to even, add `zero_point`, saturate
/// (NaN gives the zero point).
template <class T>
T QuantizeValue(double real, int64_t zero_point) {
  const double q = std::nearbyint(real) + static_cast<double>(zero_point);
  if (q != q) return static_cast<T>(zero_point);
  const double lo = static_cast<double>(std::numeric_limits<T>::min());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  return static_cast<T>(q < lo ? lo : (q > hi ? hi : q));
}

/// out[i] = QuantizeValue(nearbyint(acc[i]) * s1 * s2 / y_scale, zero_point), s1 and s2 the
/// element's values of two scales (QLinearConv: x_scale and the per-map w_scale; QLinearMatMul:
/// the per-row a_scale and the per-column b_scale), multiplied in that order. Each scale's
/// position is counted along, not divided out per element.
template <class Acc, class T>
void Requantize(const Acc* acc, int64_t n, SliceParam<double> s1, SliceParam<double> s2,
                double y_scale, int64_t zero_point, T* out) {
  int64_t j1 = 0, j2 = 0, left1 = s1.inner, left2 = s2.inner;
  for (int64_t i = 0; i < n; ++i) {
    const double real =
        std::nearbyint(static_cast<double>(acc[i])) * s1.values[j1] * s2.values[j2] / y_scale;
    out[i] = QuantizeValue<T>(real, zero_point);
    if (--left1 == 0) {
      left1 = s1.inner;
      if (++j1 == s1.count) j1 = 0;
    }
    if (--left2 == 0) {
      left2 = s2.inner;
      if (++j2 == s2.count) j2 = 0;
    }
  }
}

/// ConvInteger's output: each double accumulator (an exact integer) rounded to int32.
inline void RoundToInt32(const double* acc, int64_t n, int32_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<int32_t>(std::llround(acc[i]));
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_QLINEAR_H_
