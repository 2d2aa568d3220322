// Numeric comparison of runtime values (see compare.h).
#include "verify/compare.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace onnx_bcast::verify {
namespace {

// Maps float bits to integers ordered like the floats, so the difference counts ULPs.
int64_t OrderedBits(double v, rt::DType dtype) {
  if (dtype == rt::DType::kFloat64) {
    int64_t i;
    std::memcpy(&i, &v, 8);
    return i < 0 ? std::numeric_limits<int64_t>::min() - i : i;
  }
  if (dtype == rt::DType::kFloat32) {
    const float f = static_cast<float>(v);
    int32_t i;
    std::memcpy(&i, &f, 4);
    return i < 0 ? static_cast<int64_t>(std::numeric_limits<int32_t>::min()) - i : i;
  }
  const uint16_t bits = dtype == rt::DType::kFloat16 ? rt::FloatToHalfBits(static_cast<float>(v))
                                                     : rt::FloatToBFloat16Bits(static_cast<float>(v));
  const int16_t i = static_cast<int16_t>(bits);
  return i < 0 ? static_cast<int64_t>(std::numeric_limits<int16_t>::min()) - i : i;
}

// Element `i` as a double (exact for every integer type that fits, and for all floats).
std::vector<double> AsDoubles(const rt::Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.num_elements()));
  rt::VisitDType(t.dtype(), 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = static_cast<const T*>(t.raw_data());
    for (size_t i = 0; i < out.size(); ++i) {
      if constexpr (std::is_same_v<T, rt::Float16> || std::is_same_v<T, rt::BFloat16>) {
        out[i] = rt::ToFloat(p[i]);
      } else {
        out[i] = static_cast<double>(p[i]);
      }
    }
    return 0;
  });
  return out;
}

std::string IndexString(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (int64_t a = static_cast<int64_t>(shape.size()) - 1; a >= 0; --a) {
    if (shape[a] > 0) {
      index[a] = flat % shape[a];
      flat /= shape[a];
    }
  }
  return absl::StrCat("[", absl::StrJoin(index, ","), "]");
}

std::string Format(double v) { return absl::StrFormat("%.9g", v); }

}  // namespace

std::string Comparison::Summary() const {
  if (match && mismatches == 0) {
    return absl::StrFormat("max abs %.3g, max rel %.3g, max ULP %d", max_abs, max_rel, max_ulp);
  }
  if (first_index < 0) return reason;
  return absl::StrFormat("%d element(s) differ; max abs %.3g, max rel %.3g, max ULP %d; first at %s: expected %s, got %s",
                         mismatches, max_abs, max_rel, max_ulp, reason, expected_value,
                         actual_value);
}

Comparison CompareTensors(const rt::Tensor& expected, const rt::Tensor& actual,
                          const Tolerance& tol) {
  Comparison c;
  if (expected.dtype() != actual.dtype()) {
    c.match = false;
    c.reason = absl::StrCat("dtype ", rt::DTypeName(actual.dtype()), " instead of ",
                            rt::DTypeName(expected.dtype()));
    return c;
  }
  if (expected.shape() != actual.shape()) {
    c.match = false;
    c.reason = absl::StrCat("shape ", rt::ShapeToString(actual.shape()), " instead of ",
                            rt::ShapeToString(expected.shape()));
    return c;
  }
  const bool is_float = rt::IsFloatingPoint(expected.dtype());
  if (!is_float || tol.exact) {
    // Bitwise for integers and exact mode: NaNs still match NaNs of any payload.
    if (!is_float && std::memcmp(expected.raw_data(), actual.raw_data(), expected.byte_size()) == 0) {
      return c;
    }
  }
  const std::vector<double> e = AsDoubles(expected), a = AsDoubles(actual);
  for (size_t i = 0; i < e.size(); ++i) {
    const double x = e[i], y = a[i];
    bool same;
    if (std::isnan(x) || std::isnan(y)) {
      same = std::isnan(x) && std::isnan(y);
    } else if (std::isinf(x) || std::isinf(y)) {
      same = x == y;
    } else {
      const double abs = std::fabs(x - y);
      const double rel = x == 0 ? (abs == 0 ? 0 : std::numeric_limits<double>::infinity())
                                : abs / std::fabs(x);
      c.max_abs = std::max(c.max_abs, abs);
      if (abs > 0) c.max_rel = std::max(c.max_rel, rel);
      if (is_float) {
        const int64_t ulp = std::llabs(OrderedBits(x, expected.dtype()) -
                                       OrderedBits(y, expected.dtype()));
        c.max_ulp = std::max(c.max_ulp, ulp);
      }
      if (!is_float || tol.exact) {
        if (is_float) {
          // Exact for floats: identical bits (so -0 and +0 differ, as a rewrite must not flip them).
          same = OrderedBits(x, expected.dtype()) == OrderedBits(y, expected.dtype());
        } else {
          same = x == y;
        }
      } else {
        same = abs <= tol.atol + tol.rtol * std::fabs(x);
      }
    }
    if (!same) {
      if (c.first_index < 0) {
        c.first_index = static_cast<int64_t>(i);
        c.reason = absl::StrCat("index ", i, " ", IndexString(static_cast<int64_t>(i), expected.shape()));
        c.expected_value = Format(x);
        c.actual_value = Format(y);
      }
      ++c.mismatches;
    }
  }
  c.match = c.mismatches == 0;
  return c;
}

Comparison CompareValues(const rt::Value& expected, const rt::Value& actual,
                         const Tolerance& tolerance) {
  Comparison c;
  if (expected.kind != actual.kind) {
    c.match = false;
    c.reason = "kinds differ (tensor, sequence or empty optional)";
    return c;
  }
  if (expected.is_tensor()) return CompareTensors(*expected.tensor, *actual.tensor, tolerance);
  if (expected.is_sequence()) {
    if (expected.sequence.size() != actual.sequence.size()) {
      c.match = false;
      c.reason = absl::StrCat("sequence of ", actual.sequence.size(), " instead of ",
                              expected.sequence.size());
      return c;
    }
    for (size_t i = 0; i < expected.sequence.size(); ++i) {
      Comparison item = CompareTensors(*expected.sequence[i], *actual.sequence[i], tolerance);
      if (!item.match) {
        item.reason = absl::StrCat("sequence item ", i, ": ", item.reason);
        return item;
      }
      c.max_abs = std::max(c.max_abs, item.max_abs);
      c.max_rel = std::max(c.max_rel, item.max_rel);
      c.max_ulp = std::max(c.max_ulp, item.max_ulp);
    }
  }
  return c;
}

}  // namespace onnx_bcast::verify
