// Fast binary kernels and Where against the reference kernels on seeded random
// broadcast-compatible shapes: every op, every dtype it allows, every kernel kind, rank 0-10.
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/broadcast_plan.h"
#include "runtime/kernels/binary.h"
#include "runtime/kernels/reference/binary.h"
#include "runtime/thread_pool.h"
#include "tests/unit/runtime/test_util.h"

namespace onnx_bcast::runtime {
namespace {

using testing::BroadcastShapes;
using testing::FirstMismatch;
using testing::Poison;
using testing::RandomShape;
using testing::RandomTensor;
using testing::ValueKind;

constexpr int kMaxRank = 10;
constexpr int64_t kBudget = 1024;  // output elements per random case

ThreadPool& TestPool() {
  static ThreadPool* pool = new ThreadPool(2);
  return *pool;
}

struct ShapePair {
  std::vector<int64_t> a, b;
};

std::vector<int64_t> Ones(size_t n) { return std::vector<int64_t>(n, 1); }

// A shape pair of output rank `rank` that should give plan kind `kind`; the caller retries
// until the plan agrees.
ShapePair Generate(std::mt19937_64& rng, KernelKind kind, int rank) {
  const int64_t max_dim = rank <= 3 ? 6 : 3;
  std::vector<int64_t> s = RandomShape(rng, rank, max_dim, kBudget);
  const int split = rank >= 2 ? std::uniform_int_distribution<int>(1, rank - 1)(rng) : 0;
  ShapePair p;
  switch (kind) {
    case KernelKind::kSameShape:
      p = {s, s};
      break;
    case KernelKind::kScalarLeft:
      p = {Ones(std::uniform_int_distribution<int>(0, rank)(rng)), s};
      break;
    case KernelKind::kScalarRight:
      p = {s, Ones(std::uniform_int_distribution<int>(0, rank)(rng))};
      break;
    case KernelKind::kRow: {
      std::vector<int64_t> small(s.begin() + split, s.end());
      const int lead = std::uniform_int_distribution<int>(0, split)(rng);
      small.insert(small.begin(), lead, 1);
      p = {s, small};
      if (rng() & 1) std::swap(p.a, p.b);
      break;
    }
    case KernelKind::kColumn: {
      std::vector<int64_t> small(s.begin(), s.begin() + split);
      small.resize(rank, 1);
      p = {s, small};
      if (rng() & 1) std::swap(p.a, p.b);
      break;
    }
    case KernelKind::kGeneral:
      p = {testing::RandomRank0OrSub(rng, s), testing::RandomRank0OrSub(rng, s)};
      break;
    case KernelKind::kEmpty: {
      if (rank == 0) return {{0}, {}};
      s[std::uniform_int_distribution<int>(0, rank - 1)(rng)] = 0;
      p = {testing::RandomRank0OrSub(rng, s), s};
      if (rng() & 1) std::swap(p.a, p.b);
      break;
    }
  }
  return p;
}

constexpr KernelKind kKinds[] = {
    KernelKind::kSameShape, KernelKind::kScalarLeft, KernelKind::kScalarRight, KernelKind::kRow,
    KernelKind::kColumn,    KernelKind::kGeneral,    KernelKind::kEmpty};

struct OpCase {
  OpKind op;
  DType a;
  DType b;
  BinaryAttributes attrs;
  std::string name;
};

std::vector<OpCase> AllOpCases() {
  std::vector<OpCase> cases;
  const OpKind ops[] = {
      OpKind::kAdd,        OpKind::kSub,         OpKind::kMul,        OpKind::kDiv,
      OpKind::kPow,        OpKind::kMod,         OpKind::kBitShift,   OpKind::kAnd,
      OpKind::kOr,         OpKind::kXor,         OpKind::kBitwiseAnd, OpKind::kBitwiseOr,
      OpKind::kBitwiseXor, OpKind::kEqual,       OpKind::kGreater,    OpKind::kGreaterOrEqual,
      OpKind::kLess,       OpKind::kLessOrEqual, OpKind::kMax,        OpKind::kMin,
      OpKind::kPRelu};
  for (OpKind op : ops) {
    std::vector<std::pair<BinaryAttributes, std::string>> variants = {{{}, ""}};
    if (op == OpKind::kMod) variants = {{{false}, "_floor"}, {{true}, "_fmod"}};
    if (op == OpKind::kBitShift) {
      variants = {{{false, ShiftDirection::kLeft}, "_left"},
                  {{false, ShiftDirection::kRight}, "_right"}};
    }
    for (const auto& [attrs, suffix] : variants) {
      for (DType a : kAllDTypes) {
        for (DType b : kAllDTypes) {
          if (op != OpKind::kPow && b != a) continue;
          if (!ResolveElemOp(op, a, b, attrs).ok()) continue;
          std::string name = absl::StrCat(OpKindName(op), suffix, "_", DTypeName(a));
          if (op == OpKind::kPow) absl::StrAppend(&name, "_", DTypeName(b));
          cases.push_back({op, a, b, attrs, name});
        }
      }
    }
  }
  return cases;
}

void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name; }

class BinaryRandomTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(BinaryRandomTest, FastMatchesReferenceForEveryKindAndRank) {
  const OpCase& c = GetParam();
  std::mt19937_64 rng(std::hash<std::string>{}(c.name));
  const ValueKind b_values = c.op == OpKind::kBitShift ? ValueKind::kShiftAmount : ValueKind::kAny;
  int runs = 0;
  for (KernelKind kind : kKinds) {
    for (int rank = 0; rank <= kMaxRank; ++rank) {
      // Find shapes whose plan has the wanted kind (some kinds need rank >= 1 or 2).
      ShapePair shapes;
      std::vector<int64_t> out_shape;
      bool found = false;
      for (int attempt = 0; attempt < 64 && !found; ++attempt) {
        shapes = Generate(rng, kind, rank);
        out_shape = BroadcastShapes(shapes.a, shapes.b);
        absl::StatusOr<BroadcastPlan> plan = BroadcastPlan::Create(shapes.a, shapes.b, out_shape);
        ASSERT_TRUE(plan.ok()) << plan.status();
        found = plan->kind() == kind;
      }
      if (!found) continue;
      const std::string where =
          absl::StrCat(c.name, " kind=", KernelKindName(kind), " a=", ShapeToString(shapes.a),
                       " b=", ShapeToString(shapes.b));
      Tensor a = RandomTensor(rng, c.a, shapes.a);
      Tensor b = RandomTensor(rng, c.b, shapes.b, b_values);
      const DType out_dtype = BinaryOutputDType(c.op, c.a);
      Tensor expected = Tensor::Allocate(out_dtype, out_shape).value();
      Tensor fast = Tensor::Allocate(out_dtype, out_shape).value();
      Tensor threaded = Tensor::Allocate(out_dtype, out_shape).value();
      Tensor streamed = Tensor::Allocate(out_dtype, out_shape).value();
      Poison(expected);
      Poison(fast);
      Poison(threaded);
      Poison(streamed);
      ASSERT_TRUE(reference::BinaryOp(c.op, a, b, &expected, c.attrs).ok()) << where;
      BinaryOptions opts;
      opts.attrs = c.attrs;
      ASSERT_TRUE(BinaryOp(c.op, a, b, &fast, opts).ok()) << where;
      opts.threads = 3;
      opts.pool = &TestPool();
      opts.parallel_threshold = 1;
      ASSERT_TRUE(BinaryOp(c.op, a, b, &threaded, opts).ok()) << where;
      // Non-temporal stores through the staging buffer (binary_stream_test.cc has the
      // long-row and alignment cases).
      opts.streaming_threshold_bytes = 0;
      ASSERT_TRUE(BinaryOp(c.op, a, b, &streamed, opts).ok()) << where;
      ASSERT_EQ(FirstMismatch(fast, expected), -1) << where;
      ASSERT_EQ(FirstMismatch(threaded, fast), -1) << where << " (threads=3)";
      ASSERT_EQ(FirstMismatch(streamed, fast), -1) << where << " (streamed)";
      ++runs;
    }
  }
  // Ranks 0-10 for same/empty, 1-10 for scalar, 2-10 for row/column/general.
  EXPECT_GE(runs, 60) << c.name;
}

INSTANTIATE_TEST_SUITE_P(AllOpsAllDTypes, BinaryRandomTest, ::testing::ValuesIn(AllOpCases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) {
                           return info.param.name;
                         });

class WhereRandomTest : public ::testing::TestWithParam<DType> {};

TEST_P(WhereRandomTest, FastMatchesReference) {
  const DType dtype = GetParam();
  std::mt19937_64 rng(static_cast<uint64_t>(dtype) * 7919);
  for (int rank = 0; rank <= kMaxRank; ++rank) {
    for (int rep = 0; rep < 6; ++rep) {
      std::vector<int64_t> s = RandomShape(rng, rank, rank <= 3 ? 6 : 3, kBudget);
      if (rep == 5 && rank > 0) s[rng() % rank] = 0;
      std::vector<int64_t> shapes[3];
      for (auto& shape : shapes) shape = rep == 0 ? s : testing::RandomRank0OrSub(rng, s);
      std::vector<int64_t> out_shape =
          BroadcastShapes(BroadcastShapes(shapes[0], shapes[1]), shapes[2]);
      const std::string where =
          absl::StrCat(DTypeName(dtype), " cond=", ShapeToString(shapes[0]),
                       " x=", ShapeToString(shapes[1]), " y=", ShapeToString(shapes[2]));
      Tensor cond = RandomTensor(rng, DType::kBool, shapes[0]);
      Tensor x = RandomTensor(rng, dtype, shapes[1]);
      Tensor y = RandomTensor(rng, dtype, shapes[2]);
      Tensor expected = Tensor::Allocate(dtype, out_shape).value();
      Tensor fast = Tensor::Allocate(dtype, out_shape).value();
      Tensor threaded = Tensor::Allocate(dtype, out_shape).value();
      Poison(fast);
      Poison(threaded);
      ASSERT_TRUE(reference::Where(cond, x, y, &expected).ok()) << where;
      ASSERT_TRUE(Where(cond, x, y, &fast).ok()) << where;
      BinaryOptions opts;
      opts.threads = 2;
      opts.pool = &TestPool();
      opts.parallel_threshold = 1;
      ASSERT_TRUE(Where(cond, x, y, &threaded, opts).ok()) << where;
      ASSERT_EQ(FirstMismatch(fast, expected), -1) << where;
      ASSERT_EQ(FirstMismatch(threaded, fast), -1) << where;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, WhereRandomTest, ::testing::ValuesIn(kAllDTypes),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(DTypeName(info.param));
                         });

TEST(BinaryKernelTest, Rank12GeneralMatchesReference) {
  std::mt19937_64 rng(12);
  const std::vector<int64_t> a = {2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1};
  const std::vector<int64_t> b = {1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 3};
  const std::vector<int64_t> out_shape = BroadcastShapes(a, b);
  absl::StatusOr<BroadcastPlan> plan = BroadcastPlan::Create(a, b, out_shape);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->rank(), 12);
  EXPECT_EQ(plan->kind(), KernelKind::kGeneral);
  Tensor ta = RandomTensor(rng, DType::kFloat32, a);
  Tensor tb = RandomTensor(rng, DType::kFloat32, b);
  Tensor expected = Tensor::Allocate(DType::kFloat32, out_shape).value();
  Tensor fast = Tensor::Allocate(DType::kFloat32, out_shape).value();
  ASSERT_TRUE(reference::BinaryOp(OpKind::kSub, ta, tb, &expected).ok());
  ASSERT_TRUE(BinaryOp(OpKind::kSub, *plan, ta, tb, &fast).ok());
  EXPECT_EQ(FirstMismatch(fast, expected), -1);
}

// Pow with a float exponent of 2 is computed as x * x: the correctly rounded square (the exact
// product in double, rounded once), bit for bit, on random values across magnitudes and on the
// special ones (signed zeros, infinities, NaN, subnormals, squares that overflow). std::pow, as
// GCC vectorizes it through libmvec, is up to an ULP off there. Other scalar exponents still go
// through std::pow and match the reference kernel.
TEST(BinaryKernelTest, PowOfTwoIsTheCorrectlyRoundedSquare) {
  std::mt19937_64 rng(2);
  std::vector<float> values = {0.0f,   -0.0f,   1.0f,   -1.0f,   INFINITY, -INFINITY,    NAN,
                               1e-45f, -1e-45f, 1e-38f, 3.4e38f, -3.4e38f, 1.8446744e19f};
  std::uniform_real_distribution<float> mantissa(-1, 1);
  std::uniform_int_distribution<int> exponent(-140, 120);
  while (values.size() < 4099) values.push_back(std::ldexp(mantissa(rng), exponent(rng)));
  const int64_t n = static_cast<int64_t>(values.size());
  Tensor a = Tensor::Allocate(DType::kFloat32, {n}).value();
  std::copy(values.begin(), values.end(), a.data<float>());
  // The exponent as one value and spelled out in full (materialize-broadcast's form): the
  // bits must not depend on the form, or verify would call the rewrite wrong.
  for (const bool full : {false, true})
    for (float e : {2.0f, 3.0f, 0.5f, -2.0f}) {
      SCOPED_TRACE(absl::StrCat(e, full ? " full" : " scalar"));
      const std::vector<int64_t> b_shape = full ? std::vector<int64_t>{n} : std::vector<int64_t>{};
      Tensor b = Tensor::Allocate(DType::kFloat32, b_shape).value();
      std::fill(b.data<float>(), b.data<float>() + b.num_elements(), e);
      absl::StatusOr<BroadcastPlan> plan = BroadcastPlan::Create({n}, b_shape, {n});
      ASSERT_TRUE(plan.ok());
      Tensor fast = Tensor::Allocate(DType::kFloat32, {n}).value();
      Tensor expected = Tensor::Allocate(DType::kFloat32, {n}).value();
      ASSERT_TRUE(BinaryOp(OpKind::kPow, *plan, a, b, &fast).ok());
      if (e == 2.0f) {
        for (int64_t i = 0; i < n; ++i) {
          const double x = values[static_cast<size_t>(i)];
          expected.data<float>()[i] = static_cast<float>(x * x);
        }
      } else {
        ASSERT_TRUE(reference::BinaryOp(OpKind::kPow, a, b, &expected).ok());
      }
      EXPECT_EQ(FirstMismatch(fast, expected), -1);
    }
}

TEST(BinaryKernelTest, OutputMayAliasAnInputOfTheSameShape) {
  std::mt19937_64 rng(5);
  for (int which = 0; which < 2; ++which) {
    Tensor a = RandomTensor(rng, DType::kFloat32, {7, 33});
    Tensor b = RandomTensor(rng, DType::kFloat32, {7, 33});
    Tensor bias = RandomTensor(rng, DType::kFloat32, {33});
    Tensor expected = Tensor::Allocate(DType::kFloat32, {7, 33}).value();
    ASSERT_TRUE(reference::BinaryOp(OpKind::kAdd, a, b, &expected).ok());
    Tensor& target = which == 0 ? a : b;
    Tensor alias = Tensor::Borrow(DType::kFloat32, {7, 33}, target.raw_data()).value();
    ASSERT_TRUE(BinaryOp(OpKind::kAdd, a, b, &alias).ok());
    EXPECT_EQ(FirstMismatch(target, expected), -1);
    // And with the other operand broadcast (a running Sum of a bias).
    Tensor expected2 = Tensor::Allocate(DType::kFloat32, {7, 33}).value();
    ASSERT_TRUE(reference::BinaryOp(OpKind::kMax, target, bias, &expected2).ok());
    ASSERT_TRUE(BinaryOp(OpKind::kMax, target, bias, &alias).ok());
    EXPECT_EQ(FirstMismatch(target, expected2), -1);
  }
}

TEST(BinaryKernelTest, TwoThreadsMatchOneThreadAboveTheDefaultThreshold) {
  std::mt19937_64 rng(2);
  const std::pair<std::vector<int64_t>, std::vector<int64_t>> cases[] = {
      {{3, 257, 301}, {3, 257, 301}},  // same
      {{3, 257, 301}, {}},             // scalar
      {{771, 301}, {301}},             // row
      {{771, 301}, {771, 1}},          // column
      {{3, 1, 301}, {257, 1}},         // general
  };
  for (const auto& [sa, sb] : cases) {
    const std::vector<int64_t> out_shape = BroadcastShapes(sa, sb);
    Tensor a = RandomTensor(rng, DType::kFloat32, sa);
    Tensor b = RandomTensor(rng, DType::kFloat32, sb);
    Tensor one = Tensor::Allocate(DType::kFloat32, out_shape).value();
    Tensor two = Tensor::Allocate(DType::kFloat32, out_shape).value();
    ASSERT_GE(one.num_elements(), BinaryOptions{}.parallel_threshold);
    BinaryOptions opts;
    ASSERT_TRUE(BinaryOp(OpKind::kDiv, a, b, &one, opts).ok());
    opts.threads = 2;
    ASSERT_TRUE(BinaryOp(OpKind::kDiv, a, b, &two, opts).ok());
    EXPECT_EQ(FirstMismatch(one, two), -1) << ShapeToString(sa) << " " << ShapeToString(sb);
  }
}

}  // namespace
}  // namespace onnx_bcast::runtime
