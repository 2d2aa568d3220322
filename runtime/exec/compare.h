// Numeric comparison of run outputs with expected values, with the ONNX backend tests'
// tolerances: |actual - expected| <= atol + rtol * |expected|; NaN matches NaN; integers and
// bools exactly; shapes, dtypes and value kinds must match.
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
};

/// The outcome of comparing one value.
struct Comparison {
  bool match = true;
  /// When !match: one line naming the output, the first differing (flat) index, both values
  /// and the largest absolute and relative errors over all elements.
  std::string message;
  double max_abs_error = 0;
  double max_rel_error = 0;
};

/// Compares `actual` with `expected`; `name` labels the output in the message.
Comparison CompareValues(const Value& actual, const Value& expected, const std::string& name,
                         const Tolerance& tolerance = {});

}  // namespace onnx_bcast::rt

#endif  // ONNX_BCAST_RUNTIME_EXEC_COMPARE_H_
