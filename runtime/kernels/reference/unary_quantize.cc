// Reference linear quantization: the channel of each element from its unravelled index, ties
// rounded to even by hand, saturation by comparison in long double.
#include "runtime/kernels/reference/unary_quantize.h"

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/kernels/elementwise_ops.h"

namespace onnx_bcast::runtime::reference {
namespace {

// Index along `axis` of flat element `i` of `shape`; 0 when there is one channel.
int64_t ChannelOf(const std::vector<int64_t>& shape, int64_t axis, int64_t channels, int64_t i) {
  if (channels == 1) return 0;
  for (int64_t k = static_cast<int64_t>(shape.size()) - 1; k > axis; --k) i /= shape[k];
  return i % shape[axis];
}

float RoundHalfEven(float v) {
  const float lower = std::floor(v);
  const float diff = v - lower;
  if (diff > 0.5f) return lower + 1;
  if (diff < 0.5f) return lower;
  return std::fmod(lower, 2.0f) == 0 ? lower : lower + 1;
}

template <class Q>
Q Saturate(float v) {
  if (std::isnan(v)) return 0;
  const long double lo = std::numeric_limits<Q>::lowest();
  const long double hi = std::numeric_limits<Q>::max();
  if (v <= lo) return std::numeric_limits<Q>::lowest();
  if (v >= hi) return std::numeric_limits<Q>::max();
  return static_cast<Q>(v);
}

template <class T>
float AsFloat(const Tensor& t, int64_t i) {
  return static_cast<float>(elem::Load(t.data<T>()[i]));
}

float ScaleAt(const Tensor& scale, int64_t c) {
  return VisitDType(scale.dtype(), 0.0f, [&](auto tag) {
    using S = typename decltype(tag)::type;
    return static_cast<float>(elem::Load(scale.data<S>()[c]));
  });
}

}  // namespace

absl::Status QuantizeLinear(const Tensor& x, const Tensor& scale, const Tensor* zero_point,
                            int64_t axis, Tensor* y) {
  const int64_t channels = scale.num_elements();
  return VisitDType(y->dtype(), absl::InvalidArgumentError("y"), [&](auto qtag) -> absl::Status {
    using Q = typename decltype(qtag)::type;
    if constexpr (!std::is_integral_v<Q> || std::is_same_v<Q, bool>) {
      return absl::InvalidArgumentError("reference QuantizeLinear: y must be an integer");
    } else {
      return VisitDType(x.dtype(), absl::InvalidArgumentError("x"), [&](auto xtag) -> absl::Status {
        using X = typename decltype(xtag)::type;
        for (int64_t i = 0; i < x.num_elements(); ++i) {
          const int64_t c = ChannelOf(x.shape(), axis, channels, i);
          const float zp = zero_point ? static_cast<float>(zero_point->data<Q>()[c]) : 0.0f;
          const float v = static_cast<float>(elem::Load(x.data<X>()[i])) / ScaleAt(scale, c);
          y->data<Q>()[i] = Saturate<Q>(RoundHalfEven(v) + zp);
        }
        return absl::OkStatus();
      });
    }
  });
}

absl::Status DequantizeLinear(const Tensor& x, const Tensor& scale, const Tensor* zero_point,
                              int64_t axis, Tensor* y) {
  const int64_t channels = scale.num_elements();
  return VisitDType(x.dtype(), absl::InvalidArgumentError("x"), [&](auto qtag) -> absl::Status {
    using Q = typename decltype(qtag)::type;
    // The test on Q sits outside the inner lambda: clang checks the inner body's expressions on
    // Q as soon as Q is known, before the if constexpr on Y can discard them.
    if constexpr (!std::is_integral_v<Q> || std::is_same_v<Q, bool>) {
      return absl::InvalidArgumentError("reference DequantizeLinear: integer x, floating-point y");
    } else {
      return VisitDType(y->dtype(), absl::InvalidArgumentError("y"), [&](auto ytag) -> absl::Status {
        using Y = typename decltype(ytag)::type;
        if constexpr (std::is_integral_v<Y>) {
          return absl::InvalidArgumentError(
              "reference DequantizeLinear: integer x, floating-point y");
        } else {
          for (int64_t i = 0; i < x.num_elements(); ++i) {
            const int64_t c = ChannelOf(x.shape(), axis, channels, i);
            const int64_t zp = zero_point ? static_cast<int64_t>(zero_point->data<Q>()[c]) : 0;
            const float diff = static_cast<float>(static_cast<int64_t>(x.data<Q>()[i]) - zp);
            y->data<Y>()[i] = elem::Store<Y>(diff * ScaleAt(scale, c));
          }
          return absl::OkStatus();
        }
      });
    }
  });
}

}  // namespace onnx_bcast::runtime::reference
