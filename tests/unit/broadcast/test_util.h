// Assertion helpers for broadcast rule tests: compare a BroadcastResult's
// verdict, printed output shape, condition, reason and error axis exactly.
#ifndef ONNX_BCAST_TESTS_UNIT_BROADCAST_TEST_UTIL_H_
#define ONNX_BCAST_TESTS_UNIT_BROADCAST_TEST_UTIL_H_

#include <string>
#include <string_view>

#include "broadcast/rules.h"
#include "broadcast/shape.h"
#include "gtest/gtest.h"

namespace onnx_bcast::broadcast::testing {

/// Shorthand for `Shape::Parse`.
inline Shape S(std::string_view text) { return Shape::Parse(text); }

inline std::string Describe(const BroadcastResult& r) {
  return std::string(VerdictName(r.verdict)) + " output=" + r.output.ToString() + " condition=\"" +
         r.condition.ToString() + "\" reason=\"" + r.reason +
         "\" error_axis=" + std::to_string(r.error_axis);
}

/// kOk with exactly this output, no condition and no reason.
inline ::testing::AssertionResult IsOk(const BroadcastResult& r, std::string_view output) {
  if (r.verdict == Verdict::kOk && r.output.ToString() == output && r.condition.empty() &&
      r.reason.empty() && r.error_axis == -1) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "expected ok " << output << ", got " << Describe(r);
}

/// kError at `axis` with exactly this reason.
inline ::testing::AssertionResult IsError(const BroadcastResult& r, int axis,
                                          std::string_view reason) {
  if (r.verdict == Verdict::kError && r.error_axis == axis && r.reason == reason &&
      r.condition.empty()) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "expected error at axis " << axis << " \"" << reason << "\", got " << Describe(r);
}

/// kConditional with exactly this output and printed condition.
inline ::testing::AssertionResult IsConditional(const BroadcastResult& r, std::string_view output,
                                                std::string_view condition) {
  if (r.verdict == Verdict::kConditional && r.output.ToString() == output &&
      r.condition.ToString() == condition && r.error_axis == -1) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "expected conditional " << output << " if \"" << condition << "\", got " << Describe(r);
}

/// kUnknown with exactly this best output and reason.
inline ::testing::AssertionResult IsUnknown(const BroadcastResult& r, std::string_view output,
                                            std::string_view reason) {
  if (r.verdict == Verdict::kUnknown && r.output.ToString() == output && r.reason == reason &&
      r.condition.empty() && r.error_axis == -1) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "expected unknown " << output << " \"" << reason << "\", got " << Describe(r);
}

/// numpy of two shapes given as text.
inline BroadcastResult Numpy2(std::string_view a, std::string_view b) {
  const Shape shapes[] = {S(a), S(b)};
  return BroadcastNumpy(shapes);
}

}  // namespace onnx_bcast::broadcast::testing

#endif  // ONNX_BCAST_TESTS_UNIT_BROADCAST_TEST_UTIL_H_
