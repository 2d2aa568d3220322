// Fast linear quantization: each thread walks whole runs of one channel, so the scale and zero
// point are loaded once per run and the inner loop is a plain divide/round/clamp.
#include "runtime/kernels/unary_quantize.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "runtime/kernels/elementwise_ops.h"
#include "runtime/kernels/unary_internal.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {
namespace {

using unary_internal::ForRange;

absl::Status CheckOperands(absl::string_view op, const Tensor& x, const Tensor& scale,
                           const Tensor* zero_point, int64_t inner, const Tensor& y,
                           DType zero_point_dtype) {
  const int64_t channels = scale.num_elements();
  if (channels < 1 || inner < 1 || x.shape() != y.shape() ||
      (x.num_elements() % (channels * inner)) != 0 || !IsFloatingPoint(scale.dtype())) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": x ", x.DebugString(), ", scale ", scale.DebugString(), ", inner ",
                     inner, " and y ", y.DebugString(), " do not fit together"));
  }
  if (zero_point != nullptr &&
      (zero_point->num_elements() != channels || zero_point->dtype() != zero_point_dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": zero point ", zero_point->DebugString(),
                                                   " does not match scale ", scale.DebugString(),
                                                   " of ", DTypeName(zero_point_dtype)));
  }
  return absl::OkStatus();
}

// Per-channel float scale and integer zero point, read once.
struct QuantParams {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
};

template <class Q>
QuantParams ReadParams(const Tensor& scale, const Tensor* zero_point) {
  const int64_t channels = scale.num_elements();
  QuantParams p;
  p.scale.resize(channels);
  p.zero_point.assign(channels, 0);
  VisitDType(scale.dtype(), 0, [&](auto tag) {
    using S = typename decltype(tag)::type;
    for (int64_t c = 0; c < channels; ++c) {
      p.scale[c] = static_cast<float>(elem::Load(scale.data<S>()[c]));
    }
    return 0;
  });
  if (zero_point != nullptr) {
    for (int64_t c = 0; c < channels; ++c) p.zero_point[c] = zero_point->data<Q>()[c];
  }
  return p;
}

// Calls fn(qtag, params) with the quantized dtype `q`'s tag when it is a (non-bool) integer,
// `bad` otherwise: the outer dispatch QuantizeLinear and DequantizeLinear share.
template <class Fn>
absl::Status VisitQuantized(DType q, const Tensor& scale, const Tensor* zero_point,
                            const absl::Status& bad, Fn&& fn) {
  return VisitDType(q, bad, [&](auto qtag) -> absl::Status {
    using Q = typename decltype(qtag)::type;
    if constexpr (!std::is_integral_v<Q> || std::is_same_v<Q, bool>) {
      return bad;
    } else {
      return fn(qtag, ReadParams<Q>(scale, zero_point));
    }
  });
}

// Splits [0, n) over threads (opts) and each part into runs of one channel; calls
// fn(begin, end, scale, zero point) per run, so the inner loop sees plain scalars.
template <class Fn>
void ForEachChannelRun(int64_t n, int64_t inner, const QuantParams& p, const UnaryOptions& opts,
                       Fn&& fn) {
  const int64_t channels = static_cast<int64_t>(p.scale.size());
  ForRange(n, opts, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e;) {
      const int64_t block = i / inner;
      const int64_t run_end = std::min(e, (block + 1) * inner);
      const int64_t c = block % channels;
      fn(i, run_end, p.scale[c], p.zero_point[c]);
      i = run_end;
    }
  });
}

// An already rounded value clamped to Q's range (NaN -> 0).
template <class Q>
inline Q SaturateRounded(float v) {
  return elem::SaturatingCast<Q>(static_cast<double>(v));
}

}  // namespace

absl::Status QuantizeLinear(const Tensor& x, const Tensor& scale, const Tensor* zero_point,
                            int64_t inner, Tensor* y, const UnaryOptions& opts) {
  BCAST_RETURN_IF_ERROR(
      CheckOperands("QuantizeLinear", x, scale, zero_point, inner, *y, y->dtype()));
  if (!IsInteger(y->dtype()) || !(IsFloatingPoint(x.dtype()) || x.dtype() == DType::kInt32)) {
    return absl::InvalidArgumentError(
        absl::StrCat("QuantizeLinear from ", DTypeName(x.dtype()), " to ", DTypeName(y->dtype())));
  }
  const absl::Status bad = absl::InvalidArgumentError("QuantizeLinear: bad dtype");
  return VisitQuantized(y->dtype(), scale, zero_point, bad, [&](auto qtag, const QuantParams& p) {
    using Q = typename decltype(qtag)::type;
    return VisitDType(x.dtype(), bad, [&](auto xtag) -> absl::Status {
      using X = typename decltype(xtag)::type;
      if constexpr (std::is_same_v<X, bool>) {
        return bad;
      } else {
        const X* in = x.data<X>();
        Q* out = y->data<Q>();
        ForEachChannelRun(x.num_elements(), inner, p, opts,
                          [&](int64_t rb, int64_t re, float sc, int64_t zp) {
                            const float z = static_cast<float>(zp);
                            for (int64_t i = rb; i < re; ++i) {
                              const float v = static_cast<float>(elem::Load(in[i])) / sc;
                              out[i] = SaturateRounded<Q>(std::nearbyint(v) + z);
                            }
                          });
        return absl::OkStatus();
      }
    });
  });
}

absl::Status DequantizeLinear(const Tensor& x, const Tensor& scale, const Tensor* zero_point,
                              int64_t inner, Tensor* y, const UnaryOptions& opts) {
  BCAST_RETURN_IF_ERROR(
      CheckOperands("DequantizeLinear", x, scale, zero_point, inner, *y, x.dtype()));
  if (!IsInteger(x.dtype()) || y->dtype() != scale.dtype()) {
    return absl::InvalidArgumentError(absl::StrCat("DequantizeLinear from ", DTypeName(x.dtype()),
                                                   " to ", DTypeName(y->dtype())));
  }
  const absl::Status bad = absl::InvalidArgumentError("DequantizeLinear: bad dtype");
  return VisitQuantized(x.dtype(), scale, zero_point, bad, [&](auto qtag, const QuantParams& p) {
    using Q = typename decltype(qtag)::type;
    return VisitDType(y->dtype(), bad, [&](auto ytag) -> absl::Status {
      using Y = typename decltype(ytag)::type;
      if constexpr (std::is_integral_v<Y>) {
        return bad;
      } else {
        const Q* in = x.data<Q>();
        Y* out = y->data<Y>();
        ForEachChannelRun(x.num_elements(), inner, p, opts,
                          [&](int64_t rb, int64_t re, float sc, int64_t z) {
                            for (int64_t i = rb; i < re; ++i) {
                              const float v = static_cast<float>(static_cast<int64_t>(in[i]) - z);
                              out[i] = elem::Store<Y>(v * sc);
                            }
                          });
        return absl::OkStatus();
      }
    });
  });
}

absl::Status DynamicQuantizeLinear(const Tensor& x, Tensor* y, Tensor* scale, Tensor* zero_point) {
  if (x.dtype() != DType::kFloat32 || y->dtype() != DType::kUInt8 || y->shape() != x.shape() ||
      scale->dtype() != DType::kFloat32 || scale->num_elements() != 1 ||
      zero_point->dtype() != DType::kUInt8 || zero_point->num_elements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("DynamicQuantizeLinear: x ", x.DebugString(), ", y ", y->DebugString()));
  }
  const float* in = x.data<float>();
  float lo = 0, hi = 0;  // the range always includes 0
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    lo = in[i] < lo ? in[i] : lo;
    hi = in[i] > hi ? in[i] : hi;
  }
  const float s = (hi - lo) / 255.0f;
  uint8_t* out = y->data<uint8_t>();
  if (!(s > 0) || !std::isfinite(s)) {
    // All zeros (or NaN/inf in the data): nothing to quantize meaningfully.
    scale->data<float>()[0] = std::isfinite(s) ? s : 0.0f;
    zero_point->data<uint8_t>()[0] = 0;
    std::fill(out, out + x.num_elements(), uint8_t{0});
    return absl::OkStatus();
  }
  const uint8_t zp = SaturateRounded<uint8_t>(std::nearbyint((0.0f - lo) / s));
  scale->data<float>()[0] = s;
  zero_point->data<uint8_t>()[0] = zp;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    out[i] = SaturateRounded<uint8_t>(std::nearbyint(in[i] / s) + static_cast<float>(zp));
  }
  return absl::OkStatus();
}

}  // namespace onnx_bcast::runtime
