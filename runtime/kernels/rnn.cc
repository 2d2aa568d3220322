// Recurrent cells with BLAS products, and activation-name parsing.
#include "runtime/kernels/rnn.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "runtime/kernels/gemm.h"

namespace onnx_bcast::runtime::kernels {

bool RnnActivation::Parse(const std::string& name, double alpha, double beta, RnnActivation* out) {
  struct Row {
    const char* name;
    Kind kind;
    double alpha, beta;
  };
  static constexpr Row kRows[] = {
      {"sigmoid", Kind::kSigmoid, 0, 0},
      {"tanh", Kind::kTanh, 0, 0},
      {"relu", Kind::kRelu, 0, 0},
      {"affine", Kind::kAffine, 1.0, 0.0},
      {"leakyrelu", Kind::kLeakyRelu, 0.01, 0},
      {"thresholdedrelu", Kind::kThresholdedRelu, 1.0, 0},
      {"scaledtanh", Kind::kScaledTanh, 1.0, 1.0},
      {"hardsigmoid", Kind::kHardSigmoid, 0.2, 0.5},
      {"elu", Kind::kElu, 1.0, 0},
      {"softsign", Kind::kSoftsign, 0, 0},
      {"softplus", Kind::kSoftplus, 0, 0},
  };
  const std::string lower = absl::AsciiStrToLower(name);
  for (const Row& row : kRows) {
    if (lower != row.name) continue;
    out->kind = row.kind;
    out->alpha = std::isnan(alpha) ? row.alpha : alpha;
    out->beta = std::isnan(beta) ? row.beta : beta;
    return true;
  }
  return false;
}

template <class T>
void RnnDirectionFast(const RnnParams& p, const T* x, const T* w, const T* r, const T* b,
                      const T* peep, const int64_t* lens, const T* h0, const T* c0, T* y,
                      int64_t y_step_stride, T* yh, T* yc) {
  RnnDirection<T>(p, x, w, r, b, peep, lens, h0, c0, y, y_step_stride, yh, yc,
                  [](int64_t m, int64_t n, int64_t k, const T* a, const T* bt, T* c) {
                    Gemm(false, true, m, n, k, T(1), a, k, bt, k, T(0), c, n);
                  });
}

template void RnnDirectionFast<float>(const RnnParams&, const float*, const float*, const float*,
                                      const float*, const float*, const int64_t*, const float*,
                                      const float*, float*, int64_t, float*, float*);
template void RnnDirectionFast<double>(const RnnParams&, const double*, const double*,
                                       const double*, const double*, const double*, const int64_t*,
                                       const double*, const double*, double*, int64_t, double*,
                                       double*);

}  // namespace onnx_bcast::runtime::kernels
