// Elementwise comparison with tolerances, errors measured in double.
#include "runtime/exec/compare.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/tensor.h"

namespace onnx_bcast::runtime {
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

std::string Format(double v, bool floating) {
  return floating ? absl::StrFormat("%.9g", v) : absl::StrFormat("%.0f", v);
}

// The tolerance rule for finite floats (the ONNX backend tests' rule).
bool WithinTolerance(double x, double y, double atol, double rtol) {
  return std::fabs(x - y) <= atol + rtol * std::fabs(y);
}

// True when every finite element pair of two floating tensors of one shape is within the
// tolerance (callers only ask when no NaN or infinity differs).
bool AllWithin(const Tensor& actual, const Tensor& expected, double atol, double rtol) {
  bool all = true;
  VisitDType(actual.dtype(), 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = actual.data<T>();
    const T* e = expected.data<T>();
    for (int64_t i = 0; i < actual.num_elements() && all; ++i) {
      const double x = AsDouble(a[i]);
      const double y = AsDouble(e[i]);
      if (std::isfinite(x) && std::isfinite(y)) all = WithinTolerance(x, y, atol, rtol);
    }
    return 0;
  });
  return all;
}

// `needed` rounded up to 3 significant digits (as printed by %.3g), raised by one unit of the
// last digit until `passes` accepts it; infinity for an infinite need.
template <class Passes>
double PassingValue(double needed, Passes passes) {
  if (std::isinf(needed)) return needed;
  if (needed <= 0) return 0;
  const double scale = std::pow(10.0, std::floor(std::log10(needed)) - 2);
  double steps = std::ceil(needed / scale);
  for (int attempt = 0; attempt < 8; ++attempt, steps += 1) {
    // Through the printed text, so that the value checked is the one a user types back.
    const double candidate = std::strtod(absl::StrFormat("%.3g", steps * scale).c_str(), nullptr);
    if (candidate >= needed && passes(candidate)) return candidate;
  }
  return steps * scale;
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
  const bool tolerant = floating && !tol.exact;
  int64_t first = -1;
  double first_actual = 0, first_expected = 0;
  int64_t max_abs_index = -1, max_rel_index = -1;
  // The tolerances every element needs (see Comparison::passing_atol); infinity once a NaN or
  // an infinity differs.
  double need_atol = 0, need_rtol = 0;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  VisitDType(actual.dtype(), 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = actual.data<T>();
    const T* e = expected.data<T>();
    for (int64_t i = 0; i < actual.num_elements(); ++i) {
      const double x = AsDouble(a[i]);
      const double y = AsDouble(e[i]);
      bool ok;
      double abs_err = 0;
      if (floating) {
        if (std::isnan(x) || std::isnan(y)) {
          ok = std::isnan(x) && std::isnan(y);
          if (!ok) need_atol = need_rtol = kInf;
        } else if (std::isinf(x) || std::isinf(y)) {
          ok = x == y;
          if (!ok) need_atol = need_rtol = kInf;
        } else {
          abs_err = std::fabs(x - y);
          if constexpr (!std::is_integral_v<T>) {
            const int64_t ulp = std::llabs(OrderedBits(a[i]) - OrderedBits(e[i]));
            out.max_ulp = std::max(out.max_ulp, ulp);
            // Exact means identical bits: +0 and -0 are one ULP-ordinal apart from nothing,
            // yet a rewrite must not flip a sign.
            ok = tol.exact ? std::memcmp(&a[i], &e[i], sizeof(T)) == 0
                           : WithinTolerance(x, y, tol.atol, tol.rtol);
          } else {
            ok = abs_err == 0;
          }
          need_atol = std::max(need_atol, abs_err - tol.rtol * std::fabs(y));
          if (y != 0) {
            need_rtol = std::max(need_rtol, (abs_err - tol.atol) / std::fabs(y));
          } else if (abs_err > tol.atol) {
            need_rtol = kInf;
          }
        }
      } else {
        ok = x == y;
        if (!ok) abs_err = std::fabs(x - y);
      }
      if (abs_err > out.max_abs_error) {
        out.max_abs_error = abs_err;
        max_abs_index = i;
      }
      if (y != 0 && abs_err / std::fabs(y) > out.max_rel_error) {
        out.max_rel_error = abs_err / std::fabs(y);
        max_rel_index = i;
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
  out.elements = actual.num_elements();
  if (max_abs_index >= 0) {
    out.max_abs_at = absl::StrCat(max_abs_index, " ", MultiIndex(max_abs_index, actual.shape()));
  }
  if (max_rel_index >= 0) {
    out.max_rel_at = absl::StrCat(max_rel_index, " ", MultiIndex(max_rel_index, actual.shape()));
  }
  if (first >= 0 && tolerant) {
    // Rounded up for printing, then confirmed on every element with the rule itself: the
    // printed value must pass when given back as --atol / --rtol.
    out.passing_atol = PassingValue(
        need_atol, [&](double atol) { return AllWithin(actual, expected, atol, tol.rtol); });
    out.passing_rtol = PassingValue(
        need_rtol, [&](double rtol) { return AllWithin(actual, expected, tol.atol, rtol); });
  }
  if (first >= 0) {
    out.match = false;
    out.message = absl::StrCat(
        "output '", name, "' differs at index ", first, " ", MultiIndex(first, actual.shape()),
        ": got ", Format(first_actual, floating), ", expected ", Format(first_expected, floating),
        "; ", out.mismatches, " element(s) differ; max abs error ",
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

std::string Comparison::Figures() const {
  std::string out = absl::StrFormat("max abs %.3g, max rel %.3g, max ULP %d", max_abs_error,
                                    max_rel_error, max_ulp);
  if (error_model) absl::StrAppend(&out, absl::StrFormat(", %.2g x the bound", bound_ratio));
  return out;
}

std::string Comparison::Statistics(const std::string& name, const Tolerance& tolerance) const {
  std::string line =
      absl::StrCat("output '", name, "': ", mismatches, " of ", elements, " element(s) differ");
  if (!max_abs_at.empty()) {
    absl::StrAppend(&line, "; max abs error ", absl::StrFormat("%.3g", max_abs_error), " at ",
                    max_abs_at);
  }
  if (!max_rel_at.empty()) {
    absl::StrAppend(&line, "; max rel error ", absl::StrFormat("%.3g", max_rel_error), " at ",
                    max_rel_at);
  }
  auto figure = [](const std::optional<double>& v) {
    return std::isinf(*v) ? std::string("none") : absl::StrFormat("%.3g", *v);
  };
  if (passing_atol.has_value() && passing_rtol.has_value()) {
    absl::StrAppend(&line, "; smallest passing --atol ", figure(passing_atol), " (at rtol ",
                    absl::StrFormat("%g", tolerance.rtol), "), --rtol ", figure(passing_rtol),
                    " (at atol ", absl::StrFormat("%g", tolerance.atol), ")");
    if (std::isinf(*passing_atol)) {
      absl::StrAppend(&line, " (a NaN or infinity differs)");
    } else if (std::isinf(*passing_rtol)) {
      absl::StrAppend(&line, " (an expected 0 differs by more than atol)");
    }
  } else if (!match && mismatches > 0 && error_model) {
    absl::StrAppend(
        &line, absl::StrFormat("; the worst error is %.3g x the error model's bound", bound_ratio));
  } else if (!match && mismatches > 0) {
    absl::StrAppend(
        &line, tolerance.exact ? "; compared bit-exact" : "; integers and bools compare exactly");
  }
  return line;
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
      // Positions name the item holding the largest error; a passing tolerance is the
      // largest any item needs (the items that match pass with less).
      if (!item.max_abs_at.empty() && item.max_abs_error >= out.max_abs_error) {
        out.max_abs_at = absl::StrCat("item ", i, " ", item.max_abs_at);
      }
      if (!item.max_rel_at.empty() && item.max_rel_error >= out.max_rel_error) {
        out.max_rel_at = absl::StrCat("item ", i, " ", item.max_rel_at);
      }
      out.max_abs_error = std::max(out.max_abs_error, item.max_abs_error);
      out.max_rel_error = std::max(out.max_rel_error, item.max_rel_error);
      out.max_ulp = std::max(out.max_ulp, item.max_ulp);
      out.mismatches += item.mismatches;
      out.elements += item.elements;
      if (item.passing_atol.has_value()) {
        out.passing_atol = std::max(out.passing_atol.value_or(0), *item.passing_atol);
        out.passing_rtol = std::max(out.passing_rtol.value_or(0), *item.passing_rtol);
      }
      if (!item.match && out.match) {
        out.match = false;
        out.message = item.message;
      }
    }
  }
  return out;
}

}  // namespace onnx_bcast::runtime
