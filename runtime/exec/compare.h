// Numeric comparison of runtime values, shared by `run` (against test data), the conformance
// driver and `verify` (two models): within rtol/atol (the ONNX backend tests' rule) or
// bit-exact; NaN matches NaN and infinities match by sign; integers and bools exactly; shapes,
// dtypes and value kinds must match. Reports what a user needs to judge a mismatch.
#ifndef ONNX_BCAST_RUNTIME_EXEC_COMPARE_H_
#define ONNX_BCAST_RUNTIME_EXEC_COMPARE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/value.h"

namespace onnx_bcast::runtime {

/// Tolerances for floating-point elements (the ONNX backend test defaults).
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
  /// Identical bits instead (NaN payloads aside; +0 and -0 differ).
  bool exact = false;
};

/// The outcome of comparing one value.
struct Comparison {
  bool match = true;
  /// When !match: one line naming the output, the first differing index (flat and as a
  /// multi-index), both values, how many elements differ and the largest errors.
  std::string message;
  double max_abs_error = 0;
  double max_rel_error = 0;
  /// Largest distance in units in the last place (floating types).
  int64_t max_ulp = 0;
  int64_t mismatches = 0;
  /// Elements compared (all items of a sequence).
  int64_t elements = 0;
  /// Where the largest errors are, as "5 [0,1,1]" (flat and multi-index); empty when no
  /// element has such an error. The relative error skips expected zeros.
  std::string max_abs_at;
  std::string max_rel_at;
  /// When !match on floating tensors compared with a tolerance: the smallest atol (at the
  /// given rtol) and the smallest rtol (at the given atol) with which every element passes,
  /// rounded up to 3 significant digits that do pass; infinity when none does (a NaN or an
  /// infinity differs, or for the rtol an expected 0 differs by more than atol). Unset
  /// for integers, bools and exact comparisons, where no tolerance applies.
  std::optional<double> passing_atol;
  std::optional<double> passing_rtol;
  /// Comparisons under the error model (error_model.h): true when a per-element bound was
  /// used; the largest error / bound (the fallback's tolerance stands for the bound without
  /// one), and where: flat and multi-index, the values there and the bound.
  bool error_model = false;
  double bound_ratio = 0;
  std::string bound_at;
  double worst_actual = 0;
  double worst_expected = 0;
  double worst_bound = 0;
  /// "max abs 1.2e-05, max rel 3.4e-06, max ULP 12".
  std::string Figures() const;
  /// When !match, one line for a user choosing tolerances: the largest errors and where, how
  /// many elements differ, and the smallest --atol / --rtol that would pass (polygraphy's
  /// figure), e.g. "output 'y': max abs error 0.25 at 5 [0,1,1], max rel error ...".
  std::string Statistics(const std::string& name, const Tolerance& tolerance) const;
};

/// The position of element `flat` (row-major) in a tensor of `shape`, as "[0,1,1]": where a
/// comparison's message says an error is.
std::string MultiIndex(int64_t flat, const std::vector<int64_t>& shape);

/// Compares `actual` with `expected`; `name` labels the output in the message.
Comparison CompareValues(const Value& actual, const Value& expected, const std::string& name,
                         const Tolerance& tolerance = {});

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_EXEC_COMPARE_H_
