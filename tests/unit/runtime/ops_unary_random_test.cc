// Fast unary kernels, Clip and Cast against the reference kernels on seeded random data:
// every op, every dtype it allows, rank 0, zero-size, in place and threaded sizes. Exact ops
// must agree bit for bit; libm-based ones within a per-op tolerance in output ULPs.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/kernels/reference/unary.h"
#include "runtime/kernels/reference/unary_quantize.h"
#include "runtime/kernels/unary.h"
#include "runtime/kernels/unary_quantize.h"
#include "runtime/thread_pool.h"
#include "tests/unit/runtime/test_util.h"

namespace onnx_bcast::runtime {
namespace {

using testing::FirstMismatch;
using testing::Poison;
using testing::RandomTensor;

ThreadPool& TestPool() {
  static ThreadPool* pool = new ThreadPool(2);
  return *pool;
}

// Allowed difference: `ulps` units in the last place of the output type, plus `abs` for
// results near zero that come out of a cancellation (HardSwish near -3, Sin near k*pi).
struct Tolerance {
  double ulps = 0;
  double abs = 0;
};

Tolerance ToleranceOf(UnaryKind op) {
  switch (op) {
    case UnaryKind::kAbs:
    case UnaryKind::kNeg:
    case UnaryKind::kSign:
    case UnaryKind::kFloor:
    case UnaryKind::kCeil:
    case UnaryKind::kRound:
    case UnaryKind::kReciprocal:
    case UnaryKind::kSqrt:
    case UnaryKind::kRelu:
    case UnaryKind::kLeakyRelu:
    case UnaryKind::kThresholdedRelu:
    case UnaryKind::kShrink:
    case UnaryKind::kNot:
    case UnaryKind::kBitwiseNot:
    case UnaryKind::kIsNaN:
    case UnaryKind::kIsInf:
      return {0, 0};  // correctly rounded in both kernels
    case UnaryKind::kHardSigmoid:
    case UnaryKind::kHardSwish:
    case UnaryKind::kSoftsign:
      return {2, 1e-6};
    default:
      return {4, 1e-6};
  }
}

double UlpOf(DType dtype, double v) {
  const double a = std::max(std::fabs(v), 1e-300);
  const int e = std::ilogb(a);
  switch (dtype) {
    case DType::kFloat16:
      return std::ldexp(1.0, std::max(e, -14) - 10);
    case DType::kBFloat16:
      return std::ldexp(1.0, std::max(e, -126) - 7);
    case DType::kFloat32:
      return std::ldexp(1.0, std::max(e, -126) - 23);
    default:
      return std::ldexp(1.0, std::max(e, -1022) - 52);
  }
}

// Index of the first element outside tolerance, or -1. Exact tolerance means bit equality
// (NaN equals NaN).
int64_t FirstOutOfTolerance(const Tensor& got, const Tensor& want, Tolerance tol) {
  if (tol.ulps == 0 && tol.abs == 0) return FirstMismatch(got, want);
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) return 0;
  return VisitDType(got.dtype(), int64_t{0}, [&](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < got.num_elements(); ++i) {
      double g, w;
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        g = ToFloat(got.data<T>()[i]);
        w = ToFloat(want.data<T>()[i]);
      } else {
        g = static_cast<double>(got.data<T>()[i]);
        w = static_cast<double>(want.data<T>()[i]);
      }
      if (std::isnan(g) && std::isnan(w)) continue;
      if (g == w) continue;
      if (std::isinf(g) || std::isinf(w) || std::isnan(g) || std::isnan(w)) {
        // Overflow at the edge of the range: allow one side to saturate to inf.
        if (std::isinf(g) != std::isinf(w) && !std::isnan(g) && !std::isnan(w) &&
            std::signbit(g) == std::signbit(w)) {
          const double finite = std::isinf(g) ? w : g;
          if (std::fabs(finite) >= 0.5 * 65504.0 && got.dtype() == DType::kFloat16) continue;
        }
        return i;
      }
      const double allowed = tol.ulps * UlpOf(got.dtype(), w) + tol.abs;
      if (std::fabs(g - w) > allowed) return i;
    }
    return -1;
  });
}

std::string ElementString(const Tensor& t, int64_t i) {
  return VisitDType(t.dtype(), std::string("?"), [&](auto tag) -> std::string {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      return absl::StrCat(ToFloat(t.data<T>()[i]));
    } else {
      return absl::StrCat(t.data<T>()[i]);
    }
  });
}

UnaryParams ParamsFor(UnaryKind op, std::mt19937_64& rng) {
  UnaryParams p;
  std::uniform_real_distribution<float> u(0.1f, 2.0f);
  p.alpha = u(rng);
  p.beta = u(rng) - 1.0f;
  p.gamma = u(rng);
  p.lambd = u(rng);
  p.bias = u(rng) - 1.0f;
  p.detect_negative = (rng() & 1) != 0;
  p.detect_positive = (rng() & 1) != 0;
  if (op == UnaryKind::kHardSigmoid) p.alpha = 0.2f;
  return p;
}

std::vector<std::vector<int64_t>> TestShapes() {
  return {{}, {0}, {1}, {7}, {3, 5}, {2, 0, 3}, {4, 3, 2, 5}, {65}};
}

TEST(UnaryRandom, FastMatchesReferenceForEveryOpAndDType) {
  std::mt19937_64 rng(20261122);
  int checked = 0;
  for (UnaryKind op : kAllUnaryKinds) {
    for (DType dtype : kAllDTypes) {
      if (!UnaryAccepts(op, dtype)) continue;
      for (const auto& shape : TestShapes()) {
        const UnaryParams p = ParamsFor(op, rng);
        Tensor x = RandomTensor(rng, dtype, shape);
        const DType out_type = UnaryOutputDType(op, dtype);
        Tensor fast = Tensor::Allocate(out_type, shape).value();
        Tensor ref = Tensor::Allocate(out_type, shape).value();
        Poison(fast);
        ASSERT_TRUE(Unary(op, p, x, &fast).ok());
        ASSERT_TRUE(reference::Unary(op, p, x, &ref).ok());
        const int64_t bad = FirstOutOfTolerance(fast, ref, ToleranceOf(op));
        ASSERT_EQ(bad, -1) << UnaryKindName(op) << " " << dtype << ShapeToString(shape) << " at "
                           << bad << ": x=" << ElementString(x, bad)
                           << " fast=" << ElementString(fast, bad)
                           << " reference=" << ElementString(ref, bad);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 500);
}

TEST(UnaryRandom, InPlaceAndThreadedMatchSingleThreaded) {
  std::mt19937_64 rng(7);
  UnaryOptions threaded;
  threaded.threads = 3;
  threaded.pool = &TestPool();
  threaded.parallel_threshold = 1000;
  for (UnaryKind op : {UnaryKind::kRelu, UnaryKind::kExp, UnaryKind::kSigmoid, UnaryKind::kNeg}) {
    for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kFloat64}) {
      Tensor x = RandomTensor(rng, dtype, {3, 1237});
      Tensor one = Tensor::Allocate(dtype, x.shape()).value();
      Tensor many = Tensor::Allocate(dtype, x.shape()).value();
      ASSERT_TRUE(Unary(op, {}, x, &one).ok());
      ASSERT_TRUE(Unary(op, {}, x, &many, threaded).ok());
      EXPECT_EQ(FirstMismatch(one, many), -1) << UnaryKindName(op) << " " << dtype;
      Tensor in_place = x.Clone();
      ASSERT_TRUE(Unary(op, {}, in_place, &in_place, threaded).ok());
      EXPECT_EQ(FirstMismatch(one, in_place), -1) << UnaryKindName(op) << " " << dtype;
    }
  }
}

TEST(UnaryRandom, RejectsDTypesOnnxDoesNotDefine) {
  Tensor i = Tensor::FromValues<int32_t>({2}, {1, 2}).value();
  Tensor o = Tensor::Allocate(DType::kInt32, {2}).value();
  EXPECT_FALSE(Unary(UnaryKind::kExp, {}, i, &o).ok());
  Tensor u = Tensor::FromValues<uint8_t>({2}, {1, 2}).value();
  Tensor uo = Tensor::Allocate(DType::kUInt8, {2}).value();
  EXPECT_FALSE(Unary(UnaryKind::kNeg, {}, u, &uo).ok());
  Tensor wrong = Tensor::Allocate(DType::kInt32, {3}).value();
  EXPECT_FALSE(Unary(UnaryKind::kAbs, {}, i, &wrong).ok());
}

TEST(ClipRandom, FastMatchesReference) {
  std::mt19937_64 rng(11);
  for (DType dtype : kAllDTypes) {
    if (dtype == DType::kBool) continue;
    for (const auto& shape : TestShapes()) {
      Tensor x = RandomTensor(rng, dtype, shape);
      Tensor lo = RandomTensor(rng, dtype, {});
      Tensor hi = RandomTensor(rng, dtype, {1});
      for (int which = 0; which < 4; ++which) {
        const Tensor* l = (which & 1) ? &lo : nullptr;
        const Tensor* h = (which & 2) ? &hi : nullptr;
        Tensor fast = Tensor::Allocate(dtype, shape).value();
        Tensor ref = Tensor::Allocate(dtype, shape).value();
        ASSERT_TRUE(Clip(x, l, h, &fast).ok());
        ASSERT_TRUE(reference::Clip(x, l, h, &ref).ok());
        EXPECT_EQ(FirstMismatch(fast, ref), -1) << dtype << ShapeToString(shape) << " " << which;
      }
    }
  }
}

TEST(CastRandom, FastMatchesReferenceForEveryPair) {
  std::mt19937_64 rng(13);
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      for (const auto& shape : TestShapes()) {
        Tensor x = RandomTensor(rng, from, shape);
        Tensor fast = Tensor::Allocate(to, shape).value();
        Tensor ref = Tensor::Allocate(to, shape).value();
        Poison(fast);
        ASSERT_TRUE(Cast(x, &fast).ok());
        ASSERT_TRUE(reference::Cast(x, &ref).ok());
        const int64_t bad = FirstMismatch(fast, ref);
        ASSERT_EQ(bad, -1) << from << "->" << to << ShapeToString(shape) << " at " << bad
                           << ": x=" << ElementString(x, bad)
                           << " fast=" << ElementString(fast, bad)
                           << " reference=" << ElementString(ref, bad);
      }
    }
  }
}

TEST(CastRandom, DoubleToHalfRoundsOnce) {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> u(-70000.0, 70000.0);
  for (int i = 0; i < 200000; ++i) {
    const double d = i % 2 ? u(rng) : std::ldexp(u(rng), -30);
    ASSERT_EQ(DoubleToHalfBits(d), reference::RoundToHalfBits(d)) << d;
    ASSERT_EQ(DoubleToBFloat16Bits(d * 1e30), reference::RoundToBFloat16Bits(d * 1e30)) << d;
  }
  // 1 + 2^-11 + 2^-40 lies just above a half tie: a double -> float -> half chain rounds to
  // the tie and then down to even; rounding once goes up.
  const double above_tie = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(DoubleToHalfBits(above_tie), 0x3c01);
}

TEST(QuantizeRandom, FastMatchesReferencePerTensorAndPerAxis) {
  std::mt19937_64 rng(19);
  const std::vector<int64_t> shape = {2, 3, 4, 5};
  for (DType x_type : {DType::kFloat32, DType::kFloat16, DType::kInt32}) {
    for (DType q_type : {DType::kUInt8, DType::kInt8}) {
      for (int64_t axis : {-1, 0, 1, 3}) {
        const int64_t channels = axis < 0 ? 1 : shape[axis];
        int64_t inner = 1;
        for (int64_t k = axis + 1; axis >= 0 && k < 4; ++k) inner *= shape[k];
        if (axis < 0) inner = 120;
        Tensor x = RandomTensor(rng, x_type, shape);
        Tensor scale = Tensor::Allocate(DType::kFloat32, {channels}).value();
        for (float& s : scale.values<float>()) {
          s = std::uniform_real_distribution<float>(0.05f, 3.0f)(rng);
        }
        Tensor zp = RandomTensor(rng, q_type, {channels});
        Tensor fast = Tensor::Allocate(q_type, shape).value();
        Tensor ref = Tensor::Allocate(q_type, shape).value();
        ASSERT_TRUE(QuantizeLinear(x, scale, &zp, inner, &fast).ok());
        ASSERT_TRUE(
            reference::QuantizeLinear(x, scale, &zp, std::max<int64_t>(axis, 0), &ref).ok());
        EXPECT_EQ(FirstMismatch(fast, ref), -1) << x_type << "->" << q_type << " axis " << axis;

        Tensor back = Tensor::Allocate(DType::kFloat32, shape).value();
        Tensor back_ref = Tensor::Allocate(DType::kFloat32, shape).value();
        ASSERT_TRUE(DequantizeLinear(fast, scale, &zp, inner, &back).ok());
        ASSERT_TRUE(
            reference::DequantizeLinear(fast, scale, &zp, std::max<int64_t>(axis, 0), &back_ref)
                .ok());
        EXPECT_EQ(FirstMismatch(back, back_ref), -1) << q_type << " axis " << axis;
      }
    }
  }
}

TEST(QuantizeRandom, ThreadedMatchesSingleThreaded) {
  std::mt19937_64 rng(23);
  Tensor x = RandomTensor(rng, DType::kFloat32, {7, 333});
  Tensor scale = Tensor::FromValues<float>({7}, {0.1f, 0.2f, 0.3f, 0.5f, 1, 2, 4}).value();
  UnaryOptions threaded;
  threaded.threads = 3;
  threaded.pool = &TestPool();
  threaded.parallel_threshold = 100;
  Tensor one = Tensor::Allocate(DType::kInt8, x.shape()).value();
  Tensor many = Tensor::Allocate(DType::kInt8, x.shape()).value();
  Tensor zp = Tensor::Allocate(DType::kInt8, {7}).value();
  ASSERT_TRUE(QuantizeLinear(x, scale, &zp, 333, &one).ok());
  ASSERT_TRUE(QuantizeLinear(x, scale, &zp, 333, &many, threaded).ok());
  EXPECT_EQ(FirstMismatch(one, many), -1);
}

template <class T>
void CheckRoundingEdges() {
  const T inf = std::numeric_limits<T>::infinity();
  const std::vector<T> values = {T(0),
                                 -T(0),
                                 T(0.3),
                                 T(-0.3),
                                 T(0.5),
                                 T(-0.5),
                                 T(0.7),
                                 T(-0.7),
                                 T(1.5),
                                 T(-1.5),
                                 T(2.5),
                                 T(-2.5),
                                 T(8388607.5),
                                 T(-8388607.5),
                                 T(8388608),
                                 T(1e10),
                                 T(-1e10),
                                 inf,
                                 -inf,
                                 T(1e-40),
                                 T(-1e-40),
                                 std::numeric_limits<T>::quiet_NaN(),
                                 T(4503599627370495.5),
                                 T(-4503599627370495.5)};
  Tensor x = Tensor::FromValues<T>({static_cast<int64_t>(values.size())}, values).value();
  Tensor y = Tensor::Allocate(DTypeOf<T>(), x.shape()).value();
  for (UnaryKind op : {UnaryKind::kFloor, UnaryKind::kCeil, UnaryKind::kRound}) {
    ASSERT_TRUE(Unary(op, {}, x, &y).ok());
    for (size_t i = 0; i < values.size(); ++i) {
      const T v = values[i];
      const T want = op == UnaryKind::kFloor  ? std::floor(v)
                     : op == UnaryKind::kCeil ? std::ceil(v)
                                              : std::nearbyint(v);
      const T got = y.data<T>()[i];
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << UnaryKindName(op) << " " << v;
        continue;
      }
      EXPECT_EQ(got, want) << UnaryKindName(op) << " " << v;
      EXPECT_EQ(std::signbit(got), std::signbit(want)) << UnaryKindName(op) << " " << v;
    }
  }
}

TEST(UnaryEdges, FloorCeilRoundMatchLibmIncludingSignedZeros) {
  CheckRoundingEdges<float>();
  CheckRoundingEdges<double>();
}

}  // namespace
}  // namespace onnx_bcast::runtime
