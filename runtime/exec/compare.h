// Numeric comparison of runtime values, shared by `run` (against test data), the conformance
// driver and `verify` (two models): within rtol/atol (the ONNX backend tests' rule) or
// bit-exact; NaN matches NaN and infinities match by sign; integers and bools exactly; shapes,
// dtypes and value kinds must match. Reports what a user needs to judge a mismatch.
#ifndef ONNX_BCAST_RUNTIME_EXEC_COMPARE_H_
#define ONNX_BCAST_RUNTIME_EXEC_COMPARE_H_

#include <cstdint>
#include <string>

#include "runtime/value.h"

namespace onnx_bcast::rt {

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
  /// "max abs 1.2e-05, max rel 3.4e-06, max ULP 12".
  std::string Figures() const;
};

/// Compares `actual` with `expected`; `name` labels the output in the message.
Comparison CompareValues(const Value& actual, const Value& expected, const std::string& name,
                         const Tolerance& tolerance = {});

}  // namespace onnx_bcast::rt

#endif  // ONNX_BCAST_RUNTIME_EXEC_COMPARE_H_
