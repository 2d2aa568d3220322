// Normalization kernels (LayerNormalization, InstanceNormalization, BatchNormalization): flat
// loops over dense rows or channel planes, statistics in double. They know nothing of nodes;
// the ops work out rows, planes and broadcast parameters. Oracle: reference/norm.h.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_NORM_H_
#define ONNX_BCAST_RUNTIME_KERNELS_NORM_H_

#include <cmath>
#include <cstdint>

namespace onnx_bcast::rt::kernels {

/// Each of `rows` rows of `cols` elements: y = (x - mean) * inv_std * scale + bias, with
/// inv_std = 1 / sqrt(variance + eps) (population variance, two passes). `scale` and `bias`
/// hold `cols` values. `mean` and `inv_std` (per row) are written when not null. A row of
/// zero columns has mean 0 and inv_std 1/sqrt(eps).
template <class C>
void LayerNormRows(const C* x, int64_t rows, int64_t cols, const C* scale, const C* bias,
                   double eps, C* y, double* mean, double* inv_std) {
  for (int64_t r = 0; r < rows; ++r) {
    const C* xp = x + r * cols;
    C* yp = y + r * cols;
    double s = 0, ss = 0;
    for (int64_t i = 0; i < cols; ++i) s += xp[i];
    const double m = cols > 0 ? s / cols : 0;
    for (int64_t i = 0; i < cols; ++i) ss += (xp[i] - m) * (xp[i] - m);
    const double inv = 1.0 / std::sqrt((cols > 0 ? ss / cols : 0) + eps);
    for (int64_t i = 0; i < cols; ++i) {
      yp[i] = static_cast<C>((xp[i] - m) * inv * static_cast<double>(scale[i]) +
                             static_cast<double>(bias[i]));
    }
    if (mean != nullptr) mean[r] = m;
    if (inv_std != nullptr) inv_std[r] = inv;
  }
}

/// Mean and 1 / sqrt(variance + eps) of each of `planes` dense planes of `inner` elements
/// (InstanceNormalization's per (batch, channel) statistics). Empty planes: 0 and 1/sqrt(eps).
template <class C>
void PlaneMoments(const C* x, int64_t planes, int64_t inner, double eps, double* mean,
                  double* inv_std) {
  for (int64_t p = 0; p < planes; ++p) {
    double s = 0, ss = 0;
    for (int64_t i = 0; i < inner; ++i) s += x[p * inner + i];
    const double m = inner > 0 ? s / inner : 0;
    for (int64_t i = 0; i < inner; ++i) {
      const double d = x[p * inner + i] - m;
      ss += d * d;
    }
    mean[p] = m;
    inv_std[p] = 1.0 / std::sqrt((inner > 0 ? ss / inner : 0) + eps);
  }
}

/// Per channel of x [n, c, inner]: the mean and population variance over batch and inner
/// (BatchNormalization in training mode). Empty channels: 0 and 0.
template <class C>
void ChannelMoments(const C* x, int64_t n, int64_t c, int64_t inner, double* mean,
                    double* var) {
  const double count = static_cast<double>(n * inner);
  for (int64_t ch = 0; ch < c; ++ch) {
    double s = 0, ss = 0;
    for (int64_t b = 0; b < n; ++b) {
      const C* xp = x + (b * c + ch) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const double v = xp[i];
        s += v;
        ss += v * v;
      }
    }
    mean[ch] = count > 0 ? s / count : 0;
    var[ch] = count > 0 ? ss / count - mean[ch] * mean[ch] : 0;
  }
}

/// x [n, c, inner] -> y: (x - mean) * inv_std * scale[ch] + bias[ch], folded into one multiply
/// and add per element. Statistics are per (batch, channel) plane when `per_instance`
/// (InstanceNormalization), else per channel (BatchNormalization).
template <class C>
void NormalizeChannels(const C* x, int64_t n, int64_t c, int64_t inner, const double* mean,
                       const double* inv_std, const C* scale, const C* bias, C* y,
                       bool per_instance) {
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t stat = per_instance ? b * c + ch : ch;
      const double s = static_cast<double>(scale[ch]) * inv_std[stat];
      const double t = static_cast<double>(bias[ch]) - mean[stat] * s;
      const C* xp = x + (b * c + ch) * inner;
      C* yp = y + (b * c + ch) * inner;
      for (int64_t i = 0; i < inner; ++i) yp[i] = static_cast<C>(xp[i] * s + t);
    }
  }
}

}  // namespace onnx_bcast::rt::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_NORM_H_
