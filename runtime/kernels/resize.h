// Separable resampling: one pass per resized dim, each output index a weighted sum of input
// indices along that dim (taps computed by the op from the coordinate mode), then positions
// marked for extrapolation overwritten with a constant.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_RESIZE_H_
#define ONNX_BCAST_RUNTIME_KERNELS_RESIZE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace onnx_bcast::runtime::kernels {

/// The taps of one dim: output index j reads input index[k] with weight[k] for k in
/// [begin[j], begin[j+1]); extrapolate[j] marks outputs replaced by the extrapolation value.
struct ResizeTaps {
  std::vector<int64_t> begin, index;
  std::vector<double> weight;
  std::vector<bool> extrapolate;
  /// True when output j is input j for every j (the dim needs no pass).
  bool identity = false;

  int64_t out_size() const { return static_cast<int64_t>(begin.size()) - 1; }

  static ResizeTaps Identity(int64_t n) {
    ResizeTaps t;
    t.identity = true;
    for (int64_t j = 0; j <= n; ++j) t.begin.push_back(j);
    for (int64_t j = 0; j < n; ++j) {
      t.index.push_back(j);
      t.weight.push_back(1.0);
    }
    t.extrapolate.assign(static_cast<size_t>(n), false);
    return t;
  }
};

/// Resamples x (dims `shape`) into y (dims taps[d].out_size()). T is float or double.
template <class T>
void Resize(const std::vector<int64_t>& shape, const std::vector<ResizeTaps>& taps,
            double extrapolation_value, const T* x, T* y) {
  const size_t rank = shape.size();
  std::vector<int64_t> cur = shape;
  std::vector<double> buf(
      x, x + [&] {
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        return n;
      }());
  std::vector<double> next;
  for (size_t d = 0; d < rank; ++d) {
    if (taps[d].identity) continue;
    int64_t outer = 1, inner = 1;
    for (size_t k = 0; k < d; ++k) outer *= cur[k];
    for (size_t k = d + 1; k < rank; ++k) inner *= cur[k];
    const int64_t in_n = cur[d], out_n = taps[d].out_size();
    next.assign(static_cast<size_t>(outer * out_n * inner), 0.0);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < out_n; ++j) {
        double* dst = next.data() + (o * out_n + j) * inner;
        for (int64_t k = taps[d].begin[j]; k < taps[d].begin[j + 1]; ++k) {
          const double* src = buf.data() + (o * in_n + taps[d].index[k]) * inner;
          const double w = taps[d].weight[k];
          for (int64_t i = 0; i < inner; ++i) dst[i] += w * src[i];
        }
      }
    }
    buf.swap(next);
    cur[d] = out_n;
  }
  int64_t total = 1;
  for (int64_t v : cur) total *= v;
  bool any_extrapolation = false;
  for (const ResizeTaps& t : taps) {
    any_extrapolation = any_extrapolation || std::find(t.extrapolate.begin(), t.extrapolate.end(),
                                                       true) != t.extrapolate.end();
  }
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < total; ++i) {
    bool outside = false;
    if (any_extrapolation) {
      for (size_t d = 0; d < rank; ++d) outside = outside || taps[d].extrapolate[idx[d]];
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < cur[d]) break;
        idx[d] = 0;
      }
    }
    y[i] = static_cast<T>(outside ? extrapolation_value : buf[i]);
  }
}

/// Integer Resize's store: each value rounded half away from zero when `round` (nearest mode's
/// values are input values already), then saturated to T's range (cubic weights overshoot).
/// NaN (a NaN extrapolation value) gives 0. Compared against the range's ends as doubles:
/// int64's and uint64's maxima round up to 2^63 and 2^64, which saturate too.
template <class T>
void StoreSaturated(const double* v, int64_t n, bool round, T* out) {
  constexpr double kLo = static_cast<double>(std::numeric_limits<T>::lowest());
  constexpr double kHi = static_cast<double>(std::numeric_limits<T>::max());
  for (int64_t i = 0; i < n; ++i) {
    const double r = round ? std::round(v[i]) : v[i];
    out[i] = r != r     ? T(0)
             : r >= kHi ? std::numeric_limits<T>::max()
             : r <= kLo ? std::numeric_limits<T>::lowest()
                        : static_cast<T>(r);
  }
}

/// Resize of an integer tensor: through double (Resize), then StoreSaturated.
template <class T>
void ResizeIntegers(const std::vector<int64_t>& shape, const std::vector<ResizeTaps>& taps,
                    double extrapolation_value, bool round, const T* x, T* y) {
  int64_t in_count = 1, out_count = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    in_count *= shape[d];
    out_count *= taps[d].out_size();
  }
  const std::vector<double> xv(x, x + in_count);
  std::vector<double> yv(static_cast<size_t>(out_count));
  Resize<double>(shape, taps, extrapolation_value, xv.data(), yv.data());
  StoreSaturated(yv.data(), out_count, round, y);
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_RESIZE_H_
