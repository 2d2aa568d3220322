// Checked int64 arithmetic for shape work on model data (attributes, dims, input values):
// every sum and product of values a model chooses goes through here, so an overflow is a
// refusal naming the node instead of undefined behaviour (UBSan) or a wrapped size. absl has
// no checked int64 helpers in Debian 12's version; these are the compiler builtins.
#ifndef ONNX_BCAST_RUNTIME_CHECKED_INT_H_
#define ONNX_BCAST_RUNTIME_CHECKED_INT_H_

#include <cstdint>
#include <optional>

#include "absl/types/span.h"

namespace onnx_bcast::runtime {

/// An int64 that remembers whether any operation producing it overflowed. Write the
/// expression as usual, then ask value() once:
///   CheckedInt out = (CheckedInt(in) + pb + pe - ek) / s + 1;
///   if (!out.ok()) return ctx.Error("... overflows int64");
class CheckedInt {
 public:
  constexpr CheckedInt(int64_t v) : v_(v) {}  // NOLINT: implicit, so literals mix in
  constexpr bool ok() const { return ok_; }
  /// The value, or nullopt when an operation overflowed (or divided by zero).
  constexpr std::optional<int64_t> value() const {
    return ok_ ? std::optional<int64_t>(v_) : std::nullopt;
  }

  friend CheckedInt operator+(CheckedInt a, CheckedInt b) {
    CheckedInt r(0);
    r.ok_ = a.ok_ && b.ok_ && !__builtin_add_overflow(a.v_, b.v_, &r.v_);
    return r;
  }
  friend CheckedInt operator-(CheckedInt a, CheckedInt b) {
    CheckedInt r(0);
    r.ok_ = a.ok_ && b.ok_ && !__builtin_sub_overflow(a.v_, b.v_, &r.v_);
    return r;
  }
  friend CheckedInt operator*(CheckedInt a, CheckedInt b) {
    CheckedInt r(0);
    r.ok_ = a.ok_ && b.ok_ && !__builtin_mul_overflow(a.v_, b.v_, &r.v_);
    return r;
  }
  /// Truncating division; dividing by 0 or INT64_MIN / -1 fails.
  friend CheckedInt operator/(CheckedInt a, CheckedInt b) {
    CheckedInt r(0);
    r.ok_ = a.ok_ && b.ok_ && b.v_ != 0 && !(a.v_ == INT64_MIN && b.v_ == -1);
    if (r.ok_) r.v_ = a.v_ / b.v_;
    return r;
  }
  CheckedInt& operator+=(CheckedInt b) { return *this = *this + b; }
  CheckedInt& operator-=(CheckedInt b) { return *this = *this - b; }
  CheckedInt& operator*=(CheckedInt b) { return *this = *this * b; }

 private:
  int64_t v_;
  bool ok_ = true;
};

/// Product of `dims`, or nullopt when it overflows int64. A zero dim makes it 0 whatever the
/// others (a zero-size tensor's other dims may be huge).
inline std::optional<int64_t> CheckedProduct(absl::Span<const int64_t> dims) {
  CheckedInt p = 1;
  for (int64_t d : dims) {
    if (d == 0) return 0;
    p *= d;
  }
  return p.value();
}

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_CHECKED_INT_H_
