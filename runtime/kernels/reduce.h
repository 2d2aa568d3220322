// Reduction kernels: Reduce* over any set of axes (dims collapsed first, then one flat pass
// with per-dim output strides), ArgMax/ArgMin and the Softmax family over [outer, n, inner].
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REDUCE_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REDUCE_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "runtime/kernels/vector_math.h"

namespace onnx_bcast::runtime::kernels {

/// The Reduce* operators.
enum class ReduceKind {
  kSum,
  kMean,
  kMax,
  kMin,
  kProd,
  kL1,
  kL2,
  kLogSum,
  kLogSumExp,
  kSumSquare,
};

/// Accumulator of a reduction over T: double for floating T, 64-bit integers otherwise
/// (integer results wrap on the final cast, as numpy's do).
template <class T>
using ReduceAcc = std::conditional_t<std::is_floating_point_v<T>, double,
                                     std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

/// Identity of `kind`'s accumulation (what an empty reduction starts from).
template <class A>
A ReduceInit(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kMax:
    case ReduceKind::kLogSumExp:
      return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                  : std::numeric_limits<A>::lowest();
    case ReduceKind::kMin:
      return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity()
                                                  : std::numeric_limits<A>::max();
    case ReduceKind::kProd:
      return A(1);
    default:
      return A(0);
  }
}

/// Folds one value into an accumulator (LogSumExp is done in two passes by the caller).
template <class A>
inline A ReduceStep(ReduceKind kind, A acc, A x) {
  // Integer accumulators wrap (modulo 2^64) instead of overflowing, which would be undefined.
  auto add = [](A a, A b) -> A {
    if constexpr (std::is_integral_v<A>) {
      return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    } else {
      return a + b;
    }
  };
  auto mul = [](A a, A b) -> A {
    if constexpr (std::is_integral_v<A>) {
      return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    } else {
      return a * b;
    }
  };
  switch (kind) {
    case ReduceKind::kMax:
      return (x > acc || x != x) ? x : acc;
    case ReduceKind::kMin:
      return (x < acc || x != x) ? x : acc;
    case ReduceKind::kProd:
      return mul(acc, x);
    case ReduceKind::kL1:
      if constexpr (std::is_signed_v<A>) return add(acc, x < 0 ? mul(A(-1), x) : x);
      return add(acc, x);
    case ReduceKind::kL2:
    case ReduceKind::kSumSquare:
      return add(acc, mul(x, x));
    default:
      return add(acc, x);
  }
}

/// Converts a double result to T; for integer T, NaN gives 0 and out-of-range values saturate
/// (a plain cast would be undefined, e.g. ReduceLogSum of zeros on int32).
template <class T>
inline T FromDouble(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    if (v != v) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) {
      return std::numeric_limits<T>::lowest();
    }
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) {
      return std::numeric_limits<T>::max();
    }
    return static_cast<T>(v);
  }
}

/// Turns an accumulator into the output value; `count` is the number of reduced elements.
template <class T, class A>
inline T ReduceFinish(ReduceKind kind, A acc, int64_t count) {
  switch (kind) {
    case ReduceKind::kMean:
      if (count == 0) return FromDouble<T>(std::numeric_limits<double>::quiet_NaN());
      if constexpr (std::is_floating_point_v<T>) {
        return FromDouble<T>(static_cast<double>(acc) / static_cast<double>(count));
      } else {
        return static_cast<T>(acc / static_cast<A>(count));
      }
    case ReduceKind::kL2:
      return FromDouble<T>(std::sqrt(static_cast<double>(acc)));
    case ReduceKind::kLogSum:
      return FromDouble<T>(std::log(static_cast<double>(acc)));
    default:
      return static_cast<T>(acc);
  }
}

/// Sum of row[0, n) in double, in four interleaved partial sums (so it differs from a
/// sequential double sum only in the last bits of the double, not of a float result).
template <class T>
inline double SumRow(const T* row, int64_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t k = 0;
  for (; k + 4 <= n; k += 4) {
    s0 += static_cast<double>(row[k]);
    s1 += static_cast<double>(row[k + 1]);
    s2 += static_cast<double>(row[k + 2]);
    s3 += static_cast<double>(row[k + 3]);
  }
  for (; k < n; ++k) s0 += static_cast<double>(row[k]);
  return (s0 + s1) + (s2 + s3);
}

/// Output strides of collapsed `dims`: row-major over the kept dims, 0 on the reduced ones
/// (`red`), so one walk over the input advances the output offset by them.
inline std::vector<int64_t> KeptStrides(const std::vector<int64_t>& dims,
                                        const std::vector<bool>& red) {
  std::vector<int64_t> ostride(dims.size(), 0);
  int64_t s = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    if (!red[d]) {
      ostride[d] = s;
      s *= dims[d];
    }
  }
  return ostride;
}

/// Reduces `in` (dims `shape`) over the dims where `reduce[d]` is true into `out`, whose
/// elements are laid out as the input with reduced dims set to 1.
template <class T>
void Reduce(ReduceKind kind, const T* in, const std::vector<int64_t>& shape,
            const std::vector<bool>& reduce, T* out) {
  using A = ReduceAcc<T>;
  // Collapse runs of dims that are all reduced or all kept; dims of size 1 join either.
  std::vector<int64_t> dims;
  std::vector<bool> red;
  int64_t total = 1, out_count = 1, count = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    total *= shape[d];
    if (reduce[d]) {
      count *= shape[d];
    } else {
      out_count *= shape[d];
    }
    if (shape[d] == 1) continue;
    if (!dims.empty() && red.back() == reduce[d]) {
      dims.back() *= shape[d];
    } else {
      dims.push_back(shape[d]);
      red.push_back(reduce[d]);
    }
  }
  std::vector<A> acc(static_cast<size_t>(out_count), ReduceInit<A>(kind));
  if (kind == ReduceKind::kLogSumExp) {
    std::vector<T> max(static_cast<size_t>(out_count));
    Reduce(ReduceKind::kMax, in, shape, reduce, max.data());
    std::vector<double> shifted(static_cast<size_t>(out_count), 0.0);
    // Second pass below accumulates exp(x - max) into `shifted`.
    const int rank = static_cast<int>(dims.size());
    const std::vector<int64_t> ostride = KeptStrides(dims, red);
    std::vector<int64_t> idx(rank, 0);
    int64_t o = 0;
    for (int64_t i = 0; i < total; ++i) {
      const double m = static_cast<double>(max[o]);
      const double shift = std::isinf(m) ? 0.0 : m;
      shifted[o] += std::exp(static_cast<double>(in[i]) - shift);
      for (int d = rank - 1; d >= 0; --d) {
        o += ostride[d];
        if (++idx[d] < dims[d]) break;
        o -= ostride[d] * dims[d];
        idx[d] = 0;
      }
    }
    for (int64_t j = 0; j < out_count; ++j) {
      const double m = static_cast<double>(max[j]);
      const double shift = std::isinf(m) ? 0.0 : m;
      out[j] = FromDouble<T>(shift + std::log(shifted[j]));
    }
    return;
  }
  if (total > 0) {
    if (!red.empty() && red.back() && (dims.size() == 1 || (dims.size() == 2 && !red[0]))) {
      // [kept..., reduced]: contiguous rows, the common case (last axis, keepdims or not).
      const int64_t n = dims.back();
      if constexpr (std::is_floating_point_v<T>) {
        if (kind == ReduceKind::kSum || kind == ReduceKind::kMean) {
          // LayerNorm's means (rows of 16-128): four chains instead of one, since one chain
          // waits on each double add's latency (Swin: 3 ns an element before).
          for (int64_t j = 0; j < out_count; ++j) acc[j] = SumRow(in + j * n, n);
          for (int64_t j = 0; j < out_count; ++j) out[j] = ReduceFinish<T, A>(kind, acc[j], count);
          return;
        }
      }
      for (int64_t j = 0; j < out_count; ++j) {
        const T* row = in + j * n;
        A a = acc[j];
        for (int64_t k = 0; k < n; ++k) a = ReduceStep<A>(kind, a, static_cast<A>(row[k]));
        acc[j] = a;
      }
    } else {
      const int rank = static_cast<int>(dims.size());
      const std::vector<int64_t> ostride = KeptStrides(dims, red);
      std::vector<int64_t> idx(rank, 0);
      // Innermost collapsed dim as a flat loop with a fixed output stride.
      const int64_t inner = rank > 0 ? dims[rank - 1] : 1;
      const int64_t inner_stride = rank > 0 ? ostride[rank - 1] : 0;
      int64_t o = 0;
      for (int64_t i = 0; i < total; i += inner) {
        for (int64_t k = 0; k < inner; ++k) {
          A& a = acc[o + k * inner_stride];
          a = ReduceStep<A>(kind, a, static_cast<A>(in[i + k]));
        }
        for (int d = rank - 2; d >= 0; --d) {
          o += ostride[d];
          if (++idx[d] < dims[d]) break;
          o -= ostride[d] * dims[d];
          idx[d] = 0;
        }
      }
    }
  }
  for (int64_t j = 0; j < out_count; ++j) out[j] = ReduceFinish<T, A>(kind, acc[j], count);
}

/// ArgMax (`is_max`) or ArgMin over the middle dim of [outer, n, inner]; ties pick the first
/// index, or the last with `select_last`. NaN counts as the extreme.
template <class T>
void ArgReduce(bool is_max, bool select_last, const T* in, int64_t outer, int64_t n, int64_t inner,
               int64_t* out) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* base = in + o * n * inner + i;
      int64_t best = 0;
      for (int64_t k = 1; k < n; ++k) {
        const T x = base[k * inner], b = base[best * inner];
        if (b != b) break;
        const bool better = x != x || (is_max ? x > b : x < b);
        if (better || (select_last && x == b)) best = k;
      }
      out[o * inner + i] = best;
    }
  }
}

/// The Softmax family.
enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

/// Softmax, LogSoftmax or Hardmax over the middle dim of [outer, n, inner], exp summed in
/// double: the reference kernel (reference::Softmax), and the fast one's path for every case
/// it does not vectorize.
template <class T>
void SoftmaxInDouble(SoftmaxKind kind, const T* in, int64_t outer, int64_t n, int64_t inner,
                     T* out) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* x = in + o * n * inner + i;
      T* y = out + o * n * inner + i;
      if (n == 0) continue;
      int64_t arg = 0;
      T max = x[0];
      for (int64_t k = 1; k < n; ++k) {
        if (x[k * inner] > max) {
          max = x[k * inner];
          arg = k;
        }
      }
      if (kind == SoftmaxKind::kHardmax) {
        for (int64_t k = 0; k < n; ++k) y[k * inner] = T(k == arg ? 1 : 0);
        continue;
      }
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += std::exp(static_cast<double>(x[k * inner] - max));
      if (kind == SoftmaxKind::kSoftmax) {
        const double inv = 1.0 / sum;
        for (int64_t k = 0; k < n; ++k) {
          y[k * inner] = static_cast<T>(std::exp(static_cast<double>(x[k * inner] - max)) * inv);
        }
      } else {
        const double log_sum = std::log(sum);
        for (int64_t k = 0; k < n; ++k) {
          y[k * inner] = static_cast<T>(static_cast<double>(x[k * inner] - max) - log_sum);
        }
      }
    }
  }
}

/// Largest of row[0, n), n > 0, in four interleaved chains (one chain waits on each compare's
/// latency: most of a 16-element attention row's time). A NaN may or may not be picked; the
/// caller's row is NaN either way.
inline float RowMax(const float* row, int64_t n) {
  float m0 = row[0], m1 = row[0], m2 = row[0], m3 = row[0];
  int64_t k = 0;
  for (; k + 4 <= n; k += 4) {
    m0 = row[k] > m0 ? row[k] : m0;
    m1 = row[k + 1] > m1 ? row[k + 1] : m1;
    m2 = row[k + 2] > m2 ? row[k + 2] : m2;
    m3 = row[k + 3] > m3 ? row[k + 3] : m3;
  }
  for (; k < n; ++k) m0 = row[k] > m0 ? row[k] : m0;
  m0 = m1 > m0 ? m1 : m0;
  m2 = m3 > m2 ? m3 : m2;
  return m2 > m0 ? m2 : m0;
}

/// Softmax, LogSoftmax or Hardmax over the middle dim of [outer, n, inner]. Float Softmax
/// over contiguous rows (inner == 1, the last axis: attention) takes each exp once, eight
/// lanes at a time (vector_math.h); everything else sums exp in double as the reference does.
template <class T>
void Softmax(SoftmaxKind kind, const T* in, int64_t outer, int64_t n, int64_t inner, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    if (kind == SoftmaxKind::kSoftmax && inner == 1 && n > 0) {
      // Masked attention scores (Swin's -100) put x - max far below ln(FLT_MIN) = -87.34,
      // where libmvec's expf leaves its vector path for a scalar one per lane and returns
      // denormals, each a slow microcode assist: Swin's masked Softmax ran 3x slower than
      // an unmasked one. So shifts are clamped at kLow (exp about 1.22e-38, a normal float)
      // and exps below kFlushBelow become 0 after the sum, where the reference gives under
      // 1.3e-38 too; denormals the scaling makes are flushed as well.
      constexpr float kLow = kSoftmaxLowestShift;
      constexpr float kFlushBelow = kSoftmaxFlushBelow;
      const FlushDenormalsScope flush;
      if (SoftmaxRowsFloats(in, out, outer, n)) return;
      // Shift every row by its maximum, take the exps of the whole block in one call (rows of
      // attention are short: 16 in a Swin window), then normalize row by row.
      for (int64_t o = 0; o < outer; ++o) {
        const float* x = in + o * n;
        float* y = out + o * n;
        const float max = RowMax(x, n);
        for (int64_t k = 0; k < n; ++k) {
          const float d = x[k] - max;
          y[k] = d < kLow ? kLow : d;  // NaN stays NaN
        }
      }
      ExpFloats(out, out, outer * n);
      for (int64_t o = 0; o < outer; ++o) {
        float* y = out + o * n;
        const double inv = 1.0 / SumRow(y, n);
        for (int64_t k = 0; k < n; ++k) {
          y[k] = y[k] < kFlushBelow ? 0.0f : static_cast<float>(y[k] * inv);
        }
      }
      return;
    }
  }
  SoftmaxInDouble(kind, in, outer, n, inner, out);
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REDUCE_H_
