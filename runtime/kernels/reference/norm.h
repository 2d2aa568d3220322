// Reference normalization kernels: each output element computed on its own from the textbook
// formula, its statistics recomputed from its row, plane or channel by index arithmetic. The
// oracle for kernels/norm.h in tests; quadratic, small shapes only.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_NORM_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_NORM_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace onnx_bcast::runtime::kernels::reference {

/// Mean and population variance of the elements k of x (flat) for which `in(k)` holds.
template <class C, class In>
void Moments(const C* x, int64_t total, In in, double* mean, double* var) {
  double s = 0, count = 0;
  for (int64_t k = 0; k < total; ++k) {
    if (in(k)) {
      s += static_cast<double>(x[k]);
      count += 1;
    }
  }
  *mean = count > 0 ? s / count : 0;
  double ss = 0;
  for (int64_t k = 0; k < total; ++k) {
    if (in(k)) ss += (static_cast<double>(x[k]) - *mean) * (static_cast<double>(x[k]) - *mean);
  }
  *var = count > 0 ? ss / count : 0;
}

/// Same contract as kernels::LayerNormRows.
template <class C>
void LayerNormRows(const C* x, int64_t rows, int64_t cols, const C* scale, const C* bias,
                   double eps, C* y, double* mean, double* inv_std) {
  const int64_t total = rows * cols;
  for (int64_t e = 0; e < total; ++e) {
    const int64_t row = e / cols, col = e % cols;
    double m = 0, v = 0;
    Moments(
        x, total, [&](int64_t k) { return k / cols == row; }, &m, &v);
    y[e] = static_cast<C>((static_cast<double>(x[e]) - m) / std::sqrt(v + eps) *
                              static_cast<double>(scale[col]) +
                          static_cast<double>(bias[col]));
  }
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    Moments(
        x, total, [&](int64_t k) { return k / cols == r; }, &m, &v);
    if (mean != nullptr) mean[r] = m;
    if (inv_std != nullptr) inv_std[r] = 1.0 / std::sqrt(v + eps);
  }
}

/// Same contract as kernels::PlaneMoments.
template <class C>
void PlaneMoments(const C* x, int64_t planes, int64_t inner, double eps, double* mean,
                  double* inv_std) {
  for (int64_t p = 0; p < planes; ++p) {
    double v = 0;
    Moments(
        x, planes * inner, [&](int64_t k) { return k / inner == p; }, &mean[p], &v);
    inv_std[p] = 1.0 / std::sqrt(v + eps);
  }
}

/// Same contract as kernels::ChannelMoments.
template <class C>
void ChannelMoments(const C* x, int64_t n, int64_t c, int64_t inner, double* mean, double* var) {
  for (int64_t ch = 0; ch < c; ++ch) {
    Moments(
        x, n * c * inner, [&](int64_t k) { return (k / inner) % c == ch; }, &mean[ch], &var[ch]);
  }
}

/// Same contract as kernels::NormalizeChannels.
template <class C>
void NormalizeChannels(const C* x, int64_t n, int64_t c, int64_t inner, const double* mean,
                       const double* inv_std, const C* scale, const C* bias, C* y,
                       bool per_instance) {
  for (int64_t e = 0; e < n * c * inner; ++e) {
    const int64_t b = e / (c * inner), ch = (e / inner) % c;
    const int64_t stat = per_instance ? b * c + ch : ch;
    y[e] = static_cast<C>((static_cast<double>(x[e]) - mean[stat]) * inv_std[stat] *
                              static_cast<double>(scale[ch]) +
                          static_cast<double>(bias[ch]));
  }
}

/// Same contract as kernels::Lrn (the loop LrnOp held): each output element sums its own
/// window of squares.
template <class C>
void Lrn(const C* x, int64_t n, int64_t c, int64_t inner, int64_t size, double alpha, double beta,
         double bias, C* y) {
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  for (int64_t e = 0; e < n * c * inner; ++e) {
    const int64_t b = e / (c * inner), ch = (e / inner) % c, i = e % inner;
    double sq = 0;
    for (int64_t k = 0; k < c; ++k) {
      if (k < ch - before || k - ch > after) continue;
      const double v = x[(b * c + k) * inner + i];
      sq += v * v;
    }
    y[e] = static_cast<C>(x[e] / std::pow(bias + alpha / size * sq, beta));
  }
}

/// Same contract as kernels::MeanVarianceNormalize (the loop MvnOp held): each element's
/// statistic index found by unravelling its flat index, counts summed one by one.
template <class C>
void MeanVarianceNormalize(const C* x, const std::vector<int64_t>& shape,
                           const std::vector<bool>& reduce, C* y) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return;
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t total = 1, stats = 1;
  for (int64_t d = 0; d < rank; ++d) {
    total *= shape[d];
    stats *= reduce[d] ? 1 : shape[d];
  }
  std::vector<int64_t> stat_index(static_cast<size_t>(total));
  for (int64_t i = 0; i < total; ++i) {
    int64_t rem = i, o = 0, stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t k = rem % shape[d];
      rem /= shape[d];
      if (!reduce[d]) {
        o += k * stride;
        stride *= shape[d];
      }
    }
    stat_index[i] = o;
  }
  std::vector<double> s(stats, 0), ss(stats, 0), cnt(stats, 0);
  for (int64_t i = 0; i < total; ++i) {
    const double v = x[i];
    s[stat_index[i]] += v;
    ss[stat_index[i]] += v * v;
    cnt[stat_index[i]] += 1;
  }
  for (int64_t i = 0; i < total; ++i) {
    const int64_t k = stat_index[i];
    const double m = s[k] / cnt[k];
    const double sd = std::sqrt(std::max(0.0, ss[k] / cnt[k] - m * m));
    y[i] = static_cast<C>((x[i] - m) / (sd + 1e-9));
  }
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_NORM_H_
