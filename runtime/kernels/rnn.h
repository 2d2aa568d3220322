// Recurrent cells (RNN, GRU, LSTM) over one direction of a sequence: the input projection of
// every step in one GEMM, then per step a recurrent GEMM and the gate arithmetic.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_RNN_H_
#define ONNX_BCAST_RUNTIME_KERNELS_RNN_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace onnx_bcast::runtime::kernels {

/// One activation function of a recurrent cell, with its alpha/beta.
struct RnnActivation {
  enum class Kind {
    kSigmoid,
    kTanh,
    kRelu,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus,
  };
  Kind kind = Kind::kSigmoid;
  double alpha = 0, beta = 0;

  /// Parses an ONNX activation name (case-insensitive); false when unknown. `alpha`/`beta`
  /// NaN select the function's default.
  static bool Parse(const std::string& name, double alpha, double beta, RnnActivation* out);

  double operator()(double x) const {
    switch (kind) {
      case Kind::kSigmoid:
        return 1.0 / (1.0 + std::exp(-x));
      case Kind::kTanh:
        return std::tanh(x);
      case Kind::kRelu:
        return std::max(0.0, x);
      case Kind::kAffine:
        return alpha * x + beta;
      case Kind::kLeakyRelu:
        return x >= 0 ? x : alpha * x;
      case Kind::kThresholdedRelu:
        return x > alpha ? x : 0.0;
      case Kind::kScaledTanh:
        return alpha * std::tanh(beta * x);
      case Kind::kHardSigmoid:
        return std::clamp(alpha * x + beta, 0.0, 1.0);
      case Kind::kElu:
        return x >= 0 ? x : alpha * (std::exp(x) - 1);
      case Kind::kSoftsign:
        return x / (1 + std::fabs(x));
      case Kind::kSoftplus:
        return std::log1p(std::exp(x));
    }
    return x;
  }
};

/// The recurrent operators.
enum class RnnCell { kRnn, kGru, kLstm };

/// Gates per cell: RNN 1, GRU 3 (z, r, h), LSTM 4 (i, o, f, c).
inline int64_t RnnGates(RnnCell cell) {
  return cell == RnnCell::kRnn ? 1 : cell == RnnCell::kGru ? 3 : 4;
}

/// One direction of a recurrent layer.
struct RnnParams {
  RnnCell cell = RnnCell::kRnn;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  /// f, g, h as ONNX names them (RNN uses f, GRU f and g).
  RnnActivation f, g, h;
  /// Gate pre-activations are clipped to [-clip, clip] when clip > 0.
  double clip = 0;
  bool linear_before_reset = false;  ///< GRU
  bool input_forget = false;         ///< LSTM: f = 1 - i
  bool reverse = false;
};

/// Runs one direction. x [seq, batch, input]; w [G*hidden, input]; r [G*hidden, hidden]; b
/// [2*G*hidden] (Wb then Rb) or null; p [3*hidden] (LSTM peepholes i, o, f) or null; lens
/// [batch] or null; h0/c0 [batch, hidden] or null (zeros). Writes step t's hidden state to
/// y + t * y_step_stride ([batch, hidden], zero past a batch's length) when y is not null, and
/// the last states to yh/yc [batch, hidden] when not null. `matmul(m, n, k, a, b, c)` computes
/// c[m,n] = a[m,k] * b[n,k]^T; the fast kernel passes a BLAS GEMM, the reference plain loops.
template <class T, class MatMulBT>
void RnnDirection(const RnnParams& p, const T* x, const T* w, const T* r, const T* b, const T* peep,
                  const int64_t* lens, const T* h0, const T* c0, T* y, int64_t y_step_stride, T* yh,
                  T* yc, MatMulBT&& matmul) {
  const int64_t gates = RnnGates(p.cell), hs = p.hidden, bs = p.batch;
  const int64_t gh = gates * hs;
  // Input projection of every step: [seq*batch, G*hidden].
  std::vector<T> xw(static_cast<size_t>(p.seq * bs * gh));
  if (p.seq * bs > 0) matmul(p.seq * bs, gh, p.input, x, w, xw.data());
  std::vector<T> h(static_cast<size_t>(bs * hs), T(0)), c(h), hr(static_cast<size_t>(bs * gh));
  if (h0 != nullptr) std::copy(h0, h0 + bs * hs, h.begin());
  if (c0 != nullptr) std::copy(c0, c0 + bs * hs, c.begin());
  std::vector<T> rh(static_cast<size_t>(bs * hs));  // GRU: r ⊙ H for linear_before_reset = 0
  auto clip = [&](double v) { return p.clip > 0 ? std::clamp(v, -p.clip, p.clip) : v; };
  auto wb = [&](int64_t gate, int64_t j) {
    return b == nullptr ? 0.0 : static_cast<double>(b[gate * hs + j]);
  };
  auto rb = [&](int64_t gate, int64_t j) {
    return b == nullptr ? 0.0 : static_cast<double>(b[gh + gate * hs + j]);
  };
  auto len = [&](int64_t bi) { return lens == nullptr ? p.seq : std::min(lens[bi], p.seq); };
  if (y != nullptr) {
    for (int64_t t = 0; t < p.seq; ++t)
      std::fill(y + t * y_step_stride, y + t * y_step_stride + bs * hs, T(0));
  }
  for (int64_t step = 0; step < p.seq; ++step) {
    // H_{t-1} R^T for every gate; GRU's h gate is redone below when r must apply first.
    if (bs > 0) matmul(bs, gh, hs, h.data(), r, hr.data());
    std::vector<double> zr;  // GRU z and r per (batch, j)
    if (p.cell == RnnCell::kGru) zr.assign(static_cast<size_t>(bs * hs * 2), 0.0);
    for (int64_t bi = 0; bi < bs; ++bi) {
      const int64_t n = len(bi);
      if (step >= n) continue;
      const int64_t t = p.reverse ? n - 1 - step : step;
      const T* xt = xw.data() + (t * bs + bi) * gh;
      const T* ht = hr.data() + bi * gh;
      T* hb = h.data() + bi * hs;
      T* cb = c.data() + bi * hs;
      for (int64_t j = 0; j < hs; ++j) {
        auto pre = [&](int64_t gate) {
          return static_cast<double>(xt[gate * hs + j]) + static_cast<double>(ht[gate * hs + j]) +
                 wb(gate, j) + rb(gate, j);
        };
        if (p.cell == RnnCell::kRnn) {
          hb[j] = static_cast<T>(p.f(clip(pre(0))));
        } else if (p.cell == RnnCell::kLstm) {
          const double cprev = cb[j];
          const double pi = peep ? static_cast<double>(peep[j]) : 0.0;
          const double po = peep ? static_cast<double>(peep[hs + j]) : 0.0;
          const double pf = peep ? static_cast<double>(peep[2 * hs + j]) : 0.0;
          const double i = p.f(clip(pre(0) + pi * cprev));
          const double f = p.input_forget ? 1 - i : p.f(clip(pre(2) + pf * cprev));
          const double g = p.g(clip(pre(3)));
          const double cn = f * cprev + i * g;
          const double o = p.f(clip(pre(1) + po * cn));
          cb[j] = static_cast<T>(cn);
          hb[j] = static_cast<T>(o * p.h(cn));
        } else {
          zr[(bi * hs + j) * 2] = p.f(clip(pre(0)));
          zr[(bi * hs + j) * 2 + 1] = p.f(clip(pre(1)));
        }
      }
    }
    if (p.cell == RnnCell::kGru) {
      std::vector<T> hn(static_cast<size_t>(bs * hs));
      if (!p.linear_before_reset) {
        // (r ⊙ H_{t-1}) Rh^T.
        for (int64_t i = 0; i < bs * hs; ++i) rh[i] = static_cast<T>(zr[i * 2 + 1] * h[i]);
        std::vector<T> rhr(static_cast<size_t>(bs * hs));
        if (bs > 0) matmul(bs, hs, hs, rh.data(), r + 2 * hs * hs, rhr.data());
        for (int64_t i = 0; i < bs * hs; ++i) hn[i] = rhr[i];
      }
      for (int64_t bi = 0; bi < bs; ++bi) {
        const int64_t n = len(bi);
        if (step >= n) continue;
        const int64_t t = p.reverse ? n - 1 - step : step;
        const T* xt = xw.data() + (t * bs + bi) * gh;
        for (int64_t j = 0; j < hs; ++j) {
          const int64_t i = bi * hs + j;
          const double z = zr[i * 2], rg = zr[i * 2 + 1];
          const double rec = p.linear_before_reset
                                 ? rg * (static_cast<double>(hr[bi * gh + 2 * hs + j]) + rb(2, j))
                                 : static_cast<double>(hn[i]) + rb(2, j);
          const double hh = p.g(clip(static_cast<double>(xt[2 * hs + j]) + wb(2, j) + rec));
          h[i] = static_cast<T>((1 - z) * hh + z * static_cast<double>(h[i]));
        }
      }
    }
    if (y != nullptr) {
      for (int64_t bi = 0; bi < bs; ++bi) {
        const int64_t n = len(bi);
        if (step >= n) continue;
        const int64_t t = p.reverse ? n - 1 - step : step;
        std::copy(h.begin() + bi * hs, h.begin() + (bi + 1) * hs, y + t * y_step_stride + bi * hs);
      }
    }
  }
  if (yh != nullptr) std::copy(h.begin(), h.end(), yh);
  if (yc != nullptr) std::copy(c.begin(), c.end(), yc);
}

/// RnnDirection with BLAS products (T is float or double).
template <class T>
void RnnDirectionFast(const RnnParams& p, const T* x, const T* w, const T* r, const T* b,
                      const T* peep, const int64_t* lens, const T* h0, const T* c0, T* y,
                      int64_t y_step_stride, T* yh, T* yc);

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_RNN_H_
