// Hand-computed element semantics of the binary kernels: integer Div/Mod sign rules, fmod,
// Pow with mixed types, BitShift, Max/Min NaN, Where, PRelu, wrapping, and error reporting.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/kernels/binary.h"
#include "runtime/kernels/reference/binary.h"

namespace onnx_bcast::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

template <class T>
Tensor Make(std::vector<int64_t> shape, std::initializer_list<T> values) {
  return Tensor::FromValues<T>(std::move(shape), values).value();
}

// Runs the fast and the reference kernel; checks both succeed and agree, returns the fast
// result as a vector of TO.
template <class TO>
std::vector<TO> RunBoth(OpKind op, const Tensor& a, const Tensor& b, std::vector<int64_t> out_shape,
                        BinaryAttributes attrs = {}) {
  Tensor out = Tensor::Allocate(DTypeOf<TO>(), out_shape).value();
  Tensor ref = Tensor::Allocate(DTypeOf<TO>(), out_shape).value();
  BinaryOptions opts;
  opts.attrs = attrs;
  absl::Status s = BinaryOp(op, a, b, &out, opts);
  EXPECT_TRUE(s.ok()) << s;
  s = reference::BinaryOp(op, a, b, &ref, attrs);
  EXPECT_TRUE(s.ok()) << s;
  std::vector<TO> fast(out.values<TO>().begin(), out.values<TO>().end());
  std::vector<TO> slow(ref.values<TO>().begin(), ref.values<TO>().end());
  if constexpr (std::is_floating_point_v<TO>) {
    for (size_t i = 0; i < fast.size(); ++i) {
      EXPECT_TRUE(fast[i] == slow[i] || (std::isnan(fast[i]) && std::isnan(slow[i]))) << i;
    }
  } else {
    EXPECT_EQ(fast, slow);
  }
  return fast;
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();

TEST(BinarySemanticsTest, IntegerDivTruncatesTowardZero) {
  Tensor a = Make<int32_t>({6}, {7, -7, 7, -7, 5, kI32Min});
  Tensor b = Make<int32_t>({6}, {2, 2, -2, -2, 0, -1});
  // x / 0 = 0 and MIN / -1 wraps to MIN (documented choices).
  EXPECT_THAT(RunBoth<int32_t>(OpKind::kDiv, a, b, {6}), ElementsAre(3, -3, -3, 3, 0, kI32Min));
  Tensor u = Make<uint8_t>({3}, {200, 7, 9});
  Tensor v = Make<uint8_t>({3}, {3, 0, 10});
  EXPECT_THAT(RunBoth<uint8_t>(OpKind::kDiv, u, v, {3}), ElementsAre(66, 0, 0));
  Tensor c = Make<int8_t>({2}, {-128, -100});
  Tensor d = Make<int8_t>({2}, {-1, 7});
  EXPECT_THAT(RunBoth<int8_t>(OpKind::kDiv, c, d, {2}), ElementsAre(-128, -14));
}

TEST(BinarySemanticsTest, IntegerModTakesTheDivisorsSign) {
  // ONNX Mod examples (mod_mixed_sign_int*): fmod=0 follows the divisor's sign.
  Tensor x = Make<int32_t>({6}, {-4, 7, 5, 4, -7, 8});
  Tensor y = Make<int32_t>({6}, {2, -3, 8, -2, 3, 5});
  EXPECT_THAT(RunBoth<int32_t>(OpKind::kMod, x, y, {6}), ElementsAre(0, -2, 5, 0, 2, 3));
  Tensor x8 = Make<int8_t>({4}, {-4, 4, -128, 9});
  Tensor y8 = Make<int8_t>({4}, {3, -3, -1, 0});
  EXPECT_THAT(RunBoth<int8_t>(OpKind::kMod, x8, y8, {4}), ElementsAre(2, -2, 0, 0));
}

TEST(BinarySemanticsTest, FmodTakesTheDividendsSign) {
  Tensor x = Make<int32_t>({6}, {-4, 7, 5, 4, -7, 8});
  Tensor y = Make<int32_t>({6}, {2, -3, 8, -2, 3, 5});
  EXPECT_THAT(RunBoth<int32_t>(OpKind::kMod, x, y, {6}, {.fmod = true}),
              ElementsAre(0, 1, 5, 0, -1, 3));
  Tensor fx = Make<float>({6}, {-4.3f, 7.2f, 5.0f, 4.3f, -7.2f, 8.0f});
  Tensor fy = Make<float>({6}, {2.1f, -3.4f, 8.0f, -2.1f, 3.4f, 5.0f});
  const std::vector<float> got = RunBoth<float>(OpKind::kMod, fx, fy, {6}, {.fmod = true});
  const float want[] = {std::fmod(-4.3f, 2.1f), std::fmod(7.2f, -3.4f), 5.0f,
                        std::fmod(4.3f, -2.1f), std::fmod(-7.2f, 3.4f), 3.0f};
  EXPECT_THAT(got, ElementsAreArray(want));
  EXPECT_LT(got[0], 0.0f);
  EXPECT_GT(got[1], 0.0f);
}

TEST(BinarySemanticsTest, FloatModWithoutFmodIsRejected) {
  Tensor x = Make<float>({1}, {1.0f});
  Tensor out = Tensor::Allocate(DType::kFloat32, {1}).value();
  absl::Status s = BinaryOp(OpKind::kMod, x, x, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("fmod"));
}

TEST(BinarySemanticsTest, PowFloatAndBroadcast) {
  Tensor x = Make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y = Make<float>({3}, {1, 2, 3});
  EXPECT_THAT(RunBoth<float>(OpKind::kPow, x, y, {2, 3}), ElementsAre(1, 4, 27, 4, 25, 216));
}

TEST(BinarySemanticsTest, PowIntegerBaseIntegerExponentIsExact) {
  Tensor base = Make<int64_t>({7}, {2, -3, 2, 1, -1, 0, 3});
  Tensor exponent = Make<int32_t>({7}, {10, 3, -1, -5, -3, -1, 39});
  EXPECT_THAT(RunBoth<int64_t>(OpKind::kPow, base, exponent, {7}),
              ElementsAre(1024, -27, 0, 1, -1, 0, 4052555153018976267LL));
  // int32 wraps: 2^31 = MIN.
  Tensor b32 = Make<int32_t>({1}, {2});
  Tensor e8 = Make<uint8_t>({1}, {31});
  EXPECT_THAT(RunBoth<int32_t>(OpKind::kPow, b32, e8, {1}), ElementsAre(kI32Min));
}

TEST(BinarySemanticsTest, PowMixedTypes) {
  // Integer base, float exponent: computed in double, truncated, saturated, NaN -> 0.
  Tensor base = Make<int32_t>({4}, {4, 2, -8, 10});
  Tensor exponent = Make<float>({4}, {0.5f, 40.0f, 1.0f / 3.0f, -1.0f});
  EXPECT_THAT(RunBoth<int32_t>(OpKind::kPow, base, exponent, {4}), ElementsAre(2, kI32Max, 0, 0));
  // Float base, integer exponent.
  Tensor fbase = Make<float>({3}, {2.0f, -2.0f, 0.5f});
  Tensor iexp = Make<int64_t>({3}, {-2, 3, 4});
  EXPECT_THAT(RunBoth<float>(OpKind::kPow, fbase, iexp, {3}), ElementsAre(0.25f, -8.0f, 0.0625f));
  // float16 base, int8 exponent; double base, float16 exponent.
  Tensor hbase = Make<Float16>({2}, {ToFloat16(1.5f), ToFloat16(-3.0f)});
  Tensor i8exp = Make<int8_t>({1}, {2});
  const std::vector<Float16> h = RunBoth<Float16>(OpKind::kPow, hbase, i8exp, {2});
  EXPECT_EQ(ToFloat(h[0]), 2.25f);
  EXPECT_EQ(ToFloat(h[1]), 9.0f);
  Tensor dbase = Make<double>({1}, {9.0});
  Tensor hexp = Make<Float16>({1}, {ToFloat16(0.5f)});
  EXPECT_THAT(RunBoth<double>(OpKind::kPow, dbase, hexp, {1}), ElementsAre(3.0));
}

TEST(BinarySemanticsTest, PowRejectsUnsupportedBase) {
  Tensor a = Make<int8_t>({1}, {2});
  Tensor out = Tensor::Allocate(DType::kInt8, {1}).value();
  EXPECT_EQ(BinaryOp(OpKind::kPow, a, a, &out).code(), absl::StatusCode::kInvalidArgument);
}

TEST(BinarySemanticsTest, BitShift) {
  Tensor x = Make<uint8_t>({5}, {16, 4, 1, 255, 1});
  Tensor y = Make<uint8_t>({5}, {1, 2, 3, 1, 8});
  EXPECT_THAT(RunBoth<uint8_t>(OpKind::kBitShift, x, y, {5}), ElementsAre(32, 16, 8, 254, 0));
  EXPECT_THAT(RunBoth<uint8_t>(OpKind::kBitShift, x, y, {5}, {.direction = ShiftDirection::kRight}),
              ElementsAre(8, 1, 0, 127, 0));
  Tensor x32 = Make<uint32_t>({2}, {1, 0x80000000u});
  Tensor y32 = Make<uint32_t>({2}, {32, 31});
  EXPECT_THAT(
      RunBoth<uint32_t>(OpKind::kBitShift, x32, y32, {2}, {.direction = ShiftDirection::kRight}),
      ElementsAre(0, 1));
  Tensor x64 = Make<uint64_t>({1}, {1});
  Tensor y64 = Make<uint64_t>({1}, {63});
  EXPECT_THAT(RunBoth<uint64_t>(OpKind::kBitShift, x64, y64, {1}), ElementsAre(1ULL << 63));
  Tensor signed_x = Make<int32_t>({1}, {1});
  Tensor out = Tensor::Allocate(DType::kInt32, {1}).value();
  EXPECT_EQ(BinaryOp(OpKind::kBitShift, signed_x, signed_x, &out).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(BinarySemanticsTest, MaxMinPropagateNaN) {
  Tensor a = Make<float>({4}, {kNaN, 1.0f, 2.0f, -1.0f});
  Tensor b = Make<float>({4}, {1.0f, kNaN, 1.0f, 3.0f});
  const std::vector<float> mx = RunBoth<float>(OpKind::kMax, a, b, {4});
  const std::vector<float> mn = RunBoth<float>(OpKind::kMin, a, b, {4});
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_EQ(mx[2], 2.0f);
  EXPECT_EQ(mx[3], 3.0f);
  EXPECT_TRUE(std::isnan(mn[0]));
  EXPECT_TRUE(std::isnan(mn[1]));
  EXPECT_EQ(mn[2], 1.0f);
  EXPECT_EQ(mn[3], -1.0f);
  Tensor h = Make<BFloat16>({2}, {ToBFloat16(kNaN), ToBFloat16(5.0f)});
  Tensor k = Make<BFloat16>({1}, {ToBFloat16(4.0f)});
  const std::vector<BFloat16> hm = RunBoth<BFloat16>(OpKind::kMin, h, k, {2});
  EXPECT_TRUE(std::isnan(ToFloat(hm[0])));
  EXPECT_EQ(ToFloat(hm[1]), 4.0f);
  Tensor i = Make<int64_t>({2}, {-5, 7});
  Tensor j = Make<int64_t>({2}, {3, 2});
  EXPECT_THAT(RunBoth<int64_t>(OpKind::kMax, i, j, {2}), ElementsAre(3, 7));
  EXPECT_THAT(RunBoth<int64_t>(OpKind::kMin, i, j, {2}), ElementsAre(-5, 2));
}

TEST(BinarySemanticsTest, ComparisonsWithNaNAreFalse) {
  Tensor a = Make<float>({3}, {kNaN, 1.0f, 2.0f});
  Tensor b = Make<float>({3}, {kNaN, 1.0f, 1.0f});
  EXPECT_THAT(RunBoth<bool>(OpKind::kEqual, a, b, {3}), ElementsAre(false, true, false));
  EXPECT_THAT(RunBoth<bool>(OpKind::kGreater, a, b, {3}), ElementsAre(false, false, true));
  EXPECT_THAT(RunBoth<bool>(OpKind::kGreaterOrEqual, a, b, {3}), ElementsAre(false, true, true));
  EXPECT_THAT(RunBoth<bool>(OpKind::kLess, a, b, {3}), ElementsAre(false, false, false));
  EXPECT_THAT(RunBoth<bool>(OpKind::kLessOrEqual, a, b, {3}), ElementsAre(false, true, false));
  Tensor s = Make<int8_t>({2}, {-1, 5});
  Tensor t = Make<int8_t>({}, {0});
  EXPECT_THAT(RunBoth<bool>(OpKind::kLess, s, t, {2}), ElementsAre(true, false));
}

TEST(BinarySemanticsTest, LogicAndBitwise) {
  Tensor p = Make<bool>({4}, {false, false, true, true});
  Tensor q = Make<bool>({4}, {false, true, false, true});
  EXPECT_THAT(RunBoth<bool>(OpKind::kAnd, p, q, {4}), ElementsAre(false, false, false, true));
  EXPECT_THAT(RunBoth<bool>(OpKind::kOr, p, q, {4}), ElementsAre(false, true, true, true));
  EXPECT_THAT(RunBoth<bool>(OpKind::kXor, p, q, {4}), ElementsAre(false, true, true, false));
  EXPECT_THAT(RunBoth<bool>(OpKind::kEqual, p, q, {4}), ElementsAre(true, false, false, true));
  Tensor x = Make<int16_t>({2}, {0x0ff0, -1});
  Tensor y = Make<int16_t>({2}, {0x00ff, 0x1234});
  EXPECT_THAT(RunBoth<int16_t>(OpKind::kBitwiseAnd, x, y, {2}), ElementsAre(0x00f0, 0x1234));
  EXPECT_THAT(RunBoth<int16_t>(OpKind::kBitwiseOr, x, y, {2}), ElementsAre(0x0fff, -1));
  EXPECT_THAT(RunBoth<int16_t>(OpKind::kBitwiseXor, x, y, {2}), ElementsAre(0x0f0f, ~0x1234));
}

TEST(BinarySemanticsTest, IntegerArithmeticWraps) {
  Tensor a = Make<int8_t>({2}, {127, -128});
  Tensor one = Make<int8_t>({}, {1});
  EXPECT_THAT(RunBoth<int8_t>(OpKind::kAdd, a, one, {2}), ElementsAre(-128, -127));
  EXPECT_THAT(RunBoth<int8_t>(OpKind::kSub, a, one, {2}), ElementsAre(126, 127));
  Tensor u = Make<uint16_t>({1}, {65535});
  EXPECT_THAT(RunBoth<uint16_t>(OpKind::kMul, u, u, {1}), ElementsAre(1));
  Tensor m = Make<int32_t>({1}, {kI32Max});
  EXPECT_THAT(RunBoth<int32_t>(OpKind::kMul, m, m, {1}), ElementsAre(1));
}

TEST(BinarySemanticsTest, HalfPrecisionComputesThroughFloat) {
  Tensor a = Make<Float16>({3}, {ToFloat16(1.0f), ToFloat16(2048.0f), ToFloat16(65504.0f)});
  Tensor b = Make<Float16>({3}, {ToFloat16(2.0f), ToFloat16(1.0f), ToFloat16(65504.0f)});
  const std::vector<Float16> sum = RunBoth<Float16>(OpKind::kAdd, a, b, {3});
  EXPECT_EQ(ToFloat(sum[0]), 3.0f);
  EXPECT_EQ(ToFloat(sum[1]), 2048.0f);  // 2049 is a tie between 2048 and 2050: even wins
  EXPECT_TRUE(std::isinf(ToFloat(sum[2])));
  Tensor c = Make<BFloat16>({1}, {ToBFloat16(1.0f)});
  Tensor d = Make<BFloat16>({1}, {ToBFloat16(3.0f)});
  EXPECT_EQ(ToFloat(RunBoth<BFloat16>(OpKind::kDiv, c, d, {1})[0]), ToFloat(ToBFloat16(1.0f / 3)));
}

TEST(BinarySemanticsTest, PRelu) {
  Tensor x = Make<float>({5}, {-2, -1, 0, 1, 2});
  Tensor slope = Make<float>({1}, {0.5f});
  EXPECT_THAT(RunBoth<float>(OpKind::kPRelu, x, slope, {5}), ElementsAre(-1, -0.5f, 0, 1, 2));
  // Per-channel slope [C,1,1] against [N,C,H,W].
  Tensor xc = Make<int32_t>({1, 2, 1, 2}, {-3, 3, -3, 3});
  Tensor sc = Make<int32_t>({2, 1, 1}, {2, -1});
  EXPECT_THAT(RunBoth<int32_t>(OpKind::kPRelu, xc, sc, {1, 2, 1, 2}), ElementsAre(-6, 3, 3, 3));
  Tensor xu = Make<uint32_t>({2}, {0, 0xffffffffu});
  Tensor su = Make<uint32_t>({1}, {7});
  EXPECT_THAT(RunBoth<uint32_t>(OpKind::kPRelu, xu, su, {2}), ElementsAre(0, 0xffffffffu));
}

TEST(BinarySemanticsTest, Where) {
  // ONNX Where example.
  Tensor cond = Make<bool>({2, 2}, {true, false, true, true});
  Tensor x = Make<int64_t>({2, 2}, {1, 2, 3, 4});
  Tensor y = Make<int64_t>({2, 2}, {9, 8, 7, 6});
  Tensor out = Tensor::Allocate(DType::kInt64, {2, 2}).value();
  ASSERT_TRUE(Where(cond, x, y, &out).ok());
  EXPECT_THAT(out.values<int64_t>(), ElementsAre(1, 8, 3, 4));
  // All three broadcast: cond [2,1], x [1,3], y scalar.
  Tensor c2 = Make<bool>({2, 1}, {true, false});
  Tensor x2 = Make<float>({1, 3}, {1, 2, 3});
  Tensor y2 = Make<float>({}, {-1});
  Tensor out2 = Tensor::Allocate(DType::kFloat32, {2, 3}).value();
  ASSERT_TRUE(Where(c2, x2, y2, &out2).ok());
  EXPECT_THAT(out2.values<float>(), ElementsAre(1, 2, 3, -1, -1, -1));
  Tensor bad = Make<int32_t>({1}, {1});
  EXPECT_EQ(Where(bad, x2, y2, &out2).code(), absl::StatusCode::kInvalidArgument);
}

TEST(BinarySemanticsTest, ErrorsNameOpShapesAndDTypes) {
  Tensor a = Make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = Make<float>({4}, {1, 2, 3, 4});
  Tensor out = Tensor::Allocate(DType::kFloat32, {2, 3}).value();
  absl::Status s = BinaryOp(OpKind::kAdd, a, b, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("Add"));
  EXPECT_THAT(s.message(), HasSubstr("[4]"));
  EXPECT_THAT(s.message(), HasSubstr("[2,3]"));
  Tensor flags = Make<bool>({1}, {true});
  Tensor flags_out = Tensor::Allocate(DType::kBool, {1}).value();
  s = BinaryOp(OpKind::kAdd, flags, flags, &flags_out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("bool"));
  Tensor wrong_dtype = Tensor::Allocate(DType::kFloat32, {2, 3}).value();
  s = BinaryOp(OpKind::kLess, a, a, &wrong_dtype);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("expected bool"));
  Tensor int_b = Make<int32_t>({3}, {1, 2, 3});
  s = BinaryOp(OpKind::kMul, a, int_b, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace onnx_bcast::runtime
