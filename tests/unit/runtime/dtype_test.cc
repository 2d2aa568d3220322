// DType numbering, sizes, names, and float16/bfloat16 conversion (exhaustive round trips,
// round-to-nearest-even, NaN and inf).
#include "runtime/dtype.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "gtest/gtest.h"

namespace onnx_bcast::runtime {
namespace {

TEST(DTypeTest, NumbersFollowOnnxTensorProto) {
  EXPECT_EQ(static_cast<int>(DType::kFloat32), 1);
  EXPECT_EQ(static_cast<int>(DType::kUInt8), 2);
  EXPECT_EQ(static_cast<int>(DType::kInt8), 3);
  EXPECT_EQ(static_cast<int>(DType::kUInt16), 4);
  EXPECT_EQ(static_cast<int>(DType::kInt16), 5);
  EXPECT_EQ(static_cast<int>(DType::kInt32), 6);
  EXPECT_EQ(static_cast<int>(DType::kInt64), 7);
  EXPECT_EQ(static_cast<int>(DType::kString), 8);
  EXPECT_EQ(static_cast<int>(DType::kBool), 9);
  EXPECT_EQ(static_cast<int>(DType::kFloat16), 10);
  EXPECT_EQ(static_cast<int>(DType::kFloat64), 11);
  EXPECT_EQ(static_cast<int>(DType::kUInt32), 12);
  EXPECT_EQ(static_cast<int>(DType::kUInt64), 13);
  EXPECT_EQ(static_cast<int>(DType::kBFloat16), 16);
}

TEST(DTypeTest, SizesNamesAndClasses) {
  EXPECT_EQ(DTypeSize(DType::kBool), 1u);
  EXPECT_EQ(DTypeSize(DType::kBFloat16), 2u);
  EXPECT_EQ(DTypeSize(DType::kFloat64), 8u);
  EXPECT_EQ(DTypeSize(DType::kString), 0u);
  EXPECT_FALSE(IsSupported(DType::kString));
  EXPECT_EQ(DTypeName(DType::kBFloat16), "bfloat16");
  EXPECT_EQ(DTypeName(DType::kUInt64), "uint64");
  EXPECT_TRUE(IsFloatingPoint(DType::kFloat16));
  EXPECT_TRUE(IsInteger(DType::kUInt8));
  EXPECT_FALSE(IsInteger(DType::kBool));
  EXPECT_FALSE(IsNumeric(DType::kBool));
  for (DType d : kAllDTypes) {
    EXPECT_TRUE(IsSupported(d)) << DTypeName(d);
    EXPECT_EQ(
        VisitDType(d, size_t{0}, [](auto tag) { return sizeof(typename decltype(tag)::type); }),
        DTypeSize(d));
    EXPECT_EQ(VisitDType(d, DType::kUndefined,
                         [](auto tag) { return DTypeOf<typename decltype(tag)::type>(); }),
              d);
  }
}

TEST(DTypeTest, HalfRoundTripsEveryBitPattern) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const uint16_t h = static_cast<uint16_t>(bits);
    const float f = HalfBitsToFloat(h);
    const bool is_nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
    if (is_nan) {
      ASSERT_TRUE(std::isnan(f)) << bits;
      ASSERT_EQ(FloatToHalfBits(f) & 0x7e00, 0x7e00) << bits;  // still NaN, quiet
      ASSERT_EQ(FloatToHalfBits(f) & 0x8000, h & 0x8000) << bits;
    } else {
      ASSERT_EQ(FloatToHalfBits(f), h) << bits;
    }
  }
}

TEST(DTypeTest, HalfRoundsToNearestEven) {
  EXPECT_EQ(FloatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalfBits(65519.0f), 0x7bff);
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7c00);  // tie with an odd mantissa: up, to inf
  EXPECT_EQ(FloatToHalfBits(1e10f), 0x7c00);
  EXPECT_EQ(FloatToHalfBits(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(FloatToHalfBits(1.0f + 0x1p-11f), 0x3c00);      // tie: even
  EXPECT_EQ(FloatToHalfBits(1.0f + 3 * 0x1p-11f), 0x3c02);  // tie: even (up)
  EXPECT_EQ(FloatToHalfBits(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
  EXPECT_EQ(FloatToHalfBits(0x1p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalfBits(0x1p-25f), 0x0000);  // tie: even (zero)
  EXPECT_EQ(FloatToHalfBits(3 * 0x1p-25f), 0x0002);
  EXPECT_EQ(FloatToHalfBits(0x1p-14f - 0x1p-25f), 0x0400);  // rounds up into the normals
  EXPECT_EQ(FloatToHalfBits(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalfBits(1e-30f), 0x0000);
}

// The nearest half to f (ties to even) by looking at neighbours in double.
uint16_t NearestHalf(float f) {
  const uint16_t h = FloatToHalfBits(f);
  const uint16_t sign = h & 0x8000;
  const uint16_t mag = h & 0x7fff;
  auto error = [&](uint16_t m) {
    return std::fabs(static_cast<double>(HalfBitsToFloat(sign | m)) - static_cast<double>(f));
  };
  uint16_t best = mag;
  for (int delta : {-1, 1}) {
    const int m = mag + delta;
    if (m < 0 || m > 0x7bff) continue;
    const double e = error(static_cast<uint16_t>(m));
    if (e < error(best) || (e == error(best) && (m & 1) == 0)) best = static_cast<uint16_t>(m);
  }
  return sign | best;
}

TEST(DTypeTest, HalfMatchesNearestOnRandomFloats) {
  std::mt19937 rng(16);
  std::uniform_real_distribution<float> dist(-70000.0f, 70000.0f);
  std::uniform_real_distribution<float> small(-1e-3f, 1e-3f);
  for (int i = 0; i < 200000; ++i) {
    const float f = (i & 1) ? dist(rng) : small(rng);
    if (std::fabs(f) >= 65504.0f) continue;
    ASSERT_EQ(FloatToHalfBits(f), NearestHalf(f)) << f;
  }
}

TEST(DTypeTest, BFloat16RoundTripsAndRounds) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const uint16_t b = static_cast<uint16_t>(bits);
    const float f = BFloat16BitsToFloat(b);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(BFloat16BitsToFloat(FloatToBFloat16Bits(f)))) << bits;
    } else {
      ASSERT_EQ(FloatToBFloat16Bits(f), b) << bits;
    }
  }
  EXPECT_EQ(FloatToBFloat16Bits(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBFloat16Bits(1.0f + 0x1p-8f), 0x3f80);      // tie: even
  EXPECT_EQ(FloatToBFloat16Bits(1.0f + 3 * 0x1p-8f), 0x3f82);  // tie: even (up)
  EXPECT_EQ(FloatToBFloat16Bits(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_EQ(FloatToBFloat16Bits(std::numeric_limits<float>::max()), 0x7f80);  // to inf
  EXPECT_EQ(FloatToBFloat16Bits(std::numeric_limits<float>::infinity()), 0x7f80);
  // A NaN whose payload sits only in the dropped bits stays NaN.
  EXPECT_TRUE(
      std::isnan(BFloat16BitsToFloat(FloatToBFloat16Bits(std::bit_cast<float>(0x7f800001u)))));
}

}  // namespace
}  // namespace onnx_bcast::runtime
