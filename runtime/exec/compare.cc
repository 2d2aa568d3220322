// Elementwise comparison with tolerances, errors measured in double.
#include "runtime/exec/compare.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/tensor.h"

namespace onnx_bcast::rt {
namespace {

template <class T>
double AsDouble(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return static_cast<double>(ToFloat(v));
  } else {
    return static_cast<double>(v);
  }
}

// Maps a float's bits to an integer ordered like the floats, so differences count ULPs.
template <class T>
int64_t OrderedBits(T v) {
  if constexpr (std::is_same_v<T, double>) {
    int64_t i;
    std::memcpy(&i, &v, 8);
    return i < 0 ? std::numeric_limits<int64_t>::min() - i : i;
  } else if constexpr (std::is_same_v<T, float>) {
    int32_t i;
    std::memcpy(&i, &v, 4);
    return i < 0 ? int64_t{std::numeric_limits<int32_t>::min()} - i : i;
  } else {
    const int16_t i = static_cast<int16_t>(v.bits);
    return i < 0 ? int64_t{std::numeric_limits<int16_t>::min()} - i : i;
  }
}

std::string MultiIndex(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (int64_t a = static_cast<int64_t>(shape.size()) - 1; a >= 0; --a) {
    if (shape[a] > 0) {
      index[a] = flat % shape[a];
      flat /= shape[a];
    }
  }
  return absl::StrCat("[", absl::StrJoin(index, ","), "]");
}

std::string Format(double v, bool floating) {
  return floating ? absl::StrFormat("%.9g", v) : absl::StrFormat("%.0f", v);
}

Comparison CompareTensors(const Tensor& actual, const Tensor& expected, const std::string& name,
                          const Tolerance& tol) {
  Comparison out;
  if (actual.dtype() != expected.dtype()) {
    out.match = false;
    out.message = absl::StrCat("output '", name, "': dtype ", DTypeName(actual.dtype()),
                               ", expected ", DTypeName(expected.dtype()));
    return out;
  }
  if (actual.shape() != expected.shape()) {
    out.match = false;
    out.message = absl::StrCat("output '", name, "': shape ", ShapeToString(actual.shape()),
                               ", expected ", ShapeToString(expected.shape()));
    return out;
  }
  const bool floating = IsFloatingPoint(actual.dtype());
  int64_t first = -1;
  double first_actual = 0, first_expected = 0;
  VisitDType(actual.dtype(), 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = actual.data<T>();
    const T* e = expected.data<T>();
    for (int64_t i = 0; i < actual.num_elements(); ++i) {
      const double x = AsDouble(a[i]);
      const double y = AsDouble(e[i]);
      bool ok;
      if (floating) {
        if (std::isnan(x) || std::isnan(y)) {
          ok = std::isnan(x) && std::isnan(y);
        } else if (std::isinf(x) || std::isinf(y)) {
          ok = x == y;
        } else {
          const double abs_err = std::fabs(x - y);
          if constexpr (!std::is_integral_v<T>) {
            const int64_t ulp = std::llabs(OrderedBits(a[i]) - OrderedBits(e[i]));
            out.max_ulp = std::max(out.max_ulp, ulp);
            // Exact means identical bits: +0 and -0 are one ULP-ordinal apart from nothing,
            // yet a rewrite must not flip a sign.
            ok = tol.exact ? std::memcmp(&a[i], &e[i], sizeof(T)) == 0
                           : abs_err <= tol.atol + tol.rtol * std::fabs(y);
          } else {
            ok = abs_err == 0;
          }
          out.max_abs_error = std::max(out.max_abs_error, abs_err);
          if (y != 0) out.max_rel_error = std::max(out.max_rel_error, abs_err / std::fabs(y));
        }
      } else {
        ok = x == y;
        if (!ok) {
          out.max_abs_error = std::max(out.max_abs_error, std::fabs(x - y));
          if (y != 0) {
            out.max_rel_error = std::max(out.max_rel_error, std::fabs(x - y) / std::fabs(y));
          }
        }
      }
      if (!ok) ++out.mismatches;
      if (!ok && first < 0) {
        first = i;
        first_actual = x;
        first_expected = y;
      }
    }
    return 0;
  });
  if (first >= 0) {
    out.match = false;
    out.message = absl::StrCat("output '", name, "' differs at index ", first, " ",
                               MultiIndex(first, actual.shape()), ": got ",
                               Format(first_actual, floating), ", expected ",
                               Format(first_expected, floating), "; ", out.mismatches,
                               " element(s) differ; max abs error ",
                               absl::StrFormat("%.3g", out.max_abs_error), ", max rel error ",
                               absl::StrFormat("%.3g", out.max_rel_error),
                               floating ? absl::StrCat(", max ULP ", out.max_ulp) : "");
  }
  return out;
}

const char* KindName(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kTensor:
      return "a tensor";
    case Value::Kind::kSequence:
      return "a sequence";
    case Value::Kind::kOptionalNone:
      return "an empty optional";
    case Value::Kind::kNone:
      break;
  }
  return "nothing";
}

}  // namespace

std::string Comparison::Figures() const {
  return absl::StrFormat("max abs %.3g, max rel %.3g, max ULP %d", max_abs_error, max_rel_error,
                         max_ulp);
}

Comparison CompareValues(const Value& actual, const Value& expected, const std::string& name,
                         const Tolerance& tolerance) {
  Comparison out;
  if (actual.kind != expected.kind) {
    out.match = false;
    out.message = absl::StrCat("output '", name, "' is ", KindName(actual), ", expected ",
                               KindName(expected));
    return out;
  }
  if (actual.is_tensor()) return CompareTensors(*actual.tensor, *expected.tensor, name, tolerance);
  if (actual.is_sequence()) {
    if (actual.sequence.size() != expected.sequence.size()) {
      out.match = false;
      out.message = absl::StrCat("output '", name, "' has ", actual.sequence.size(),
                                 " sequence items, expected ", expected.sequence.size());
      return out;
    }
    for (size_t i = 0; i < actual.sequence.size(); ++i) {
      Comparison item = CompareTensors(*actual.sequence[i], *expected.sequence[i],
                                       absl::StrCat(name, "[", i, "]"), tolerance);
      out.max_abs_error = std::max(out.max_abs_error, item.max_abs_error);
      out.max_rel_error = std::max(out.max_rel_error, item.max_rel_error);
      out.max_ulp = std::max(out.max_ulp, item.max_ulp);
      out.mismatches += item.mismatches;
      if (!item.match && out.match) {
        out.match = false;
        out.message = item.message;
      }
    }
  }
  return out;
}

}  // namespace onnx_bcast::rt
