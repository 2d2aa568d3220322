// Numeric comparison of runtime values: bit-exact or within rtol/atol, NaN and infinities
// matched by position, with the figures a user needs to judge a mismatch (max abs and rel
// error, ULP distance, the first differing index and both values).
#pragma once

#include <cstdint>
#include <string>

#include "runtime/tensor.h"
#include "runtime/value.h"

namespace onnx_bcast::verify {

struct Tolerance {
  /// Bit-exact: every element identical (NaN payloads aside).
  bool exact = false;
  double rtol = 1e-3;
  double atol = 1e-7;
};

/// The outcome of comparing one pair of values.
struct Comparison {
  bool match = true;
  std::string reason;      ///< why not: dtype, shape, kind, or "values differ"
  int64_t mismatches = 0;  ///< elements outside the tolerance
  int64_t first_index = -1;  ///< flat index of the first, or -1
  std::string expected_value, actual_value;  ///< at first_index
  double max_abs = 0, max_rel = 0;
  int64_t max_ulp = 0;  ///< float types only
  /// One line: "max abs 1.2e-05, max rel 3.4e-06, max ULP 12; first at index 7 [0,1,3]: 0.5 vs 0.50001".
  std::string Summary() const;
};

/// Compares `actual` against `expected` (same dtype and shape required). Integers and bools are
/// always compared exactly.
Comparison CompareTensors(const rt::Tensor& expected, const rt::Tensor& actual,
                          const Tolerance& tolerance);

/// Tensors, sequences (element by element) and empty optionals.
Comparison CompareValues(const rt::Value& expected, const rt::Value& actual,
                         const Tolerance& tolerance);

}  // namespace onnx_bcast::verify
