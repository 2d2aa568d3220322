// Normalization kernels (LayerNormalization, InstanceNormalization, BatchNormalization, LRN,
// MeanVarianceNormalization): flat loops over dense rows or channel planes, statistics in
// double. They know nothing of nodes; the ops work out rows, planes and broadcast parameters.
// Oracle: reference/norm.h.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_NORM_H_
#define ONNX_BCAST_RUNTIME_KERNELS_NORM_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace onnx_bcast::runtime::kernels {

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
void ChannelMoments(const C* x, int64_t n, int64_t c, int64_t inner, double* mean, double* var) {
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

/// LRN across the channels of x [n, c, inner]: y = x / (bias + alpha / size * sq)^beta, sq the
/// sum of squares over channels [ch - (size - 1) / 2, ch + size / 2] within [0, c). Each sq
/// adds its channels in ascending order (a plane at a time, so the inner loop is contiguous).
/// Requires size > 0.
template <class C>
void Lrn(const C* x, int64_t n, int64_t c, int64_t inner, int64_t size, double alpha, double beta,
         double bias, C* y) {
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  std::vector<double> sq(static_cast<size_t>(inner));
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      // ch + after may pass int64 for a huge size: compare the distance to the last channel.
      const int64_t lo = std::max<int64_t>(0, ch - before), hi = ch + std::min(after, c - 1 - ch);
      std::fill(sq.begin(), sq.end(), 0.0);
      for (int64_t k = lo; k <= hi; ++k) {
        const C* xk = x + (b * c + k) * inner;
        for (int64_t i = 0; i < inner; ++i) {
          const double v = xk[i];
          sq[i] += v * v;
        }
      }
      const C* xp = x + (b * c + ch) * inner;
      C* yp = y + (b * c + ch) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        yp[i] = static_cast<C>(xp[i] / std::pow(bias + alpha / size * sq[i], beta));
      }
    }
  }
}

/// MeanVarianceNormalization of x (dense, `shape`) over the dims where `reduce` is true:
/// y = (x - mean) / (std + 1e-9) (the ONNX function body's epsilon), population statistics
/// as E[x^2] - E[x]^2 clamped at 0, each summed in flat element order. The statistics sit in a
/// keepdims layout walked by strides (0 on reduced dims), so no index is divided per element.
template <class C>
void MeanVarianceNormalize(const C* x, const std::vector<int64_t>& shape,
                           const std::vector<bool>& reduce, C* y) {
  // An empty tensor's other dims may multiply past int64: nothing to normalize.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return;
  const size_t rank = shape.size();
  std::vector<int64_t> stat_stride(rank, 0);
  int64_t stats = 1, total = 1;
  for (size_t d = rank; d-- > 0;) {
    if (!reduce[d]) {
      stat_stride[d] = stats;
      stats *= shape[d];
    }
    total *= shape[d];
  }
  const int64_t last = rank > 0 ? shape[rank - 1] : 1;
  const int64_t last_stride = rank > 0 ? stat_stride[rank - 1] : 0;
  // Calls fn(flat index, statistic index) in flat order: an odometer over every dim but the
  // last, a contiguous run along the last.
  auto walk = [&](auto&& fn) {
    std::vector<int64_t> idx(rank, 0);
    int64_t k = 0;
    for (int64_t row = 0; row < total / last; ++row) {
      for (int64_t i = 0; i < last; ++i) fn(row * last + i, k + i * last_stride);
      for (size_t d = rank > 0 ? rank - 1 : 0; d-- > 0;) {
        k += stat_stride[d];
        if (++idx[d] < shape[d]) break;
        k -= stat_stride[d] * shape[d];
        idx[d] = 0;
      }
    }
  };
  std::vector<double> s(static_cast<size_t>(stats), 0), ss(static_cast<size_t>(stats), 0);
  walk([&](int64_t i, int64_t k) {
    const double v = x[i];
    s[k] += v;
    ss[k] += v * v;
  });
  const double count = static_cast<double>(total / stats);
  for (int64_t k = 0; k < stats; ++k) {
    const double m = s[k] / count;
    s[k] = m;
    ss[k] = std::sqrt(std::max(0.0, ss[k] / count - m * m)) + 1e-9;
  }
  walk([&](int64_t i, int64_t k) { y[i] = static_cast<C>((x[i] - s[k]) / ss[k]); });
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_NORM_H_
