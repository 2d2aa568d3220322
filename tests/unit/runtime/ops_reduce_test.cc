// Reduce*, ArgMax/ArgMin and the Softmax family: fast kernels against the reference on random
// shapes and axis sets, and ops against hand-computed values.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/reduce.h"
#include "runtime/kernels/reference/reduce.h"
#include "tests/unit/runtime/ops_harness.h"

namespace onnx_bcast::runtime {
namespace {

using kernels::ReduceKind;
using testing::IntAttr;
using testing::IntsAttr;
using testing::MakeNode;
using testing::RunNode;

constexpr ReduceKind kAllKinds[] = {
    ReduceKind::kSum,       ReduceKind::kMean,      ReduceKind::kMax, ReduceKind::kMin,
    ReduceKind::kProd,      ReduceKind::kL1,        ReduceKind::kL2,  ReduceKind::kLogSum,
    ReduceKind::kLogSumExp, ReduceKind::kSumSquare,
};

TEST(ReduceKernel, FastMatchesReferenceOnRandomShapesAndAxes) {
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 300; ++iter) {
    const int rank = static_cast<int>(rng() % 5);
    std::vector<int64_t> shape(rank);
    std::vector<bool> reduce(rank);
    int64_t total = 1, out = 1;
    for (int d = 0; d < rank; ++d) {
      shape[d] = static_cast<int64_t>(rng() % 4) + (iter % 17 == 0 ? 0 : 1);
      reduce[d] = rng() & 1;
      total *= shape[d];
      out *= reduce[d] ? 1 : shape[d];
    }
    std::vector<double> x(total);
    std::uniform_real_distribution<double> dist(0.1, 2.0);
    for (double& v : x) v = dist(rng);
    for (ReduceKind kind : kAllKinds) {
      std::vector<double> fast(out), ref(out);
      kernels::Reduce<double>(kind, x.data(), shape, reduce, fast.data());
      kernels::reference::Reduce<double>(kind, x.data(), shape, reduce, ref.data());
      for (int64_t i = 0; i < out; ++i) {
        if (fast[i] == ref[i]) continue;
        if (std::isnan(ref[i])) {
          EXPECT_TRUE(std::isnan(fast[i]));
        } else {
          EXPECT_NEAR(fast[i], ref[i], 1e-9 * (1 + std::fabs(ref[i])))
              << "kind " << static_cast<int>(kind) << " iter " << iter;
        }
      }
    }
  }
}

// The contiguous-row Sum/Mean path (four partial sums) on float rows of every length 0-70,
// including infinities and NaN, against the reference's one sequential sum.
TEST(ReduceKernel, FloatRowSumsMatchReference) {
  std::mt19937_64 rng(24);
  std::uniform_real_distribution<float> dist(-3, 3);
  for (int64_t n = 0; n <= 70; ++n) {
    const int64_t rows = static_cast<int64_t>(rng() % 5) + 1;
    std::vector<float> x(rows * n);
    for (float& v : x) v = dist(rng);
    if (n > 3)
      x[rng() % x.size()] = (n % 3 == 0) ? std::numeric_limits<float>::quiet_NaN()
                                         : std::numeric_limits<float>::infinity();
    const std::vector<int64_t> shape{rows, n};
    const std::vector<bool> reduce{false, true};
    for (ReduceKind kind : {ReduceKind::kSum, ReduceKind::kMean}) {
      std::vector<float> fast(rows), ref(rows);
      kernels::Reduce<float>(kind, x.data(), shape, reduce, fast.data());
      kernels::reference::Reduce<float>(kind, x.data(), shape, reduce, ref.data());
      for (int64_t i = 0; i < rows; ++i) {
        if (std::isnan(ref[i]) || std::isinf(ref[i])) {
          EXPECT_EQ(std::isnan(fast[i]), std::isnan(ref[i])) << n;
          if (std::isinf(ref[i])) {
            EXPECT_EQ(fast[i], ref[i]) << n;
          }
        } else {
          EXPECT_NEAR(fast[i], ref[i], 1e-6f * (1 + std::fabs(ref[i]))) << n;
        }
      }
    }
  }
}

TEST(ReduceKernel, IntegerSumAndMaxMatchReference) {
  std::mt19937_64 rng(3);
  for (int iter = 0; iter < 100; ++iter) {
    std::vector<int64_t> shape = {static_cast<int64_t>(rng() % 4 + 1),
                                  static_cast<int64_t>(rng() % 4 + 1),
                                  static_cast<int64_t>(rng() % 4 + 1)};
    std::vector<bool> reduce = {static_cast<bool>(rng() & 1), static_cast<bool>(rng() & 1),
                                static_cast<bool>(rng() & 1)};
    std::vector<int32_t> x(shape[0] * shape[1] * shape[2]);
    for (int32_t& v : x) v = static_cast<int32_t>(rng() % 200) - 100;
    for (ReduceKind kind : kAllKinds) {
      std::vector<int32_t> fast(x.size()), ref(x.size());
      kernels::Reduce<int32_t>(kind, x.data(), shape, reduce, fast.data());
      kernels::reference::Reduce<int32_t>(kind, x.data(), shape, reduce, ref.data());
      EXPECT_EQ(fast, ref);
    }
  }
}

Tensor Floats(std::vector<int64_t> shape, std::vector<float> v) {
  return *Tensor::FromValues<float>(std::move(shape), absl::Span<const float>(v));
}

TEST(ReduceOps, SumWithAxesInputKeepdims) {
  Node node = MakeNode("ReduceSum", 2, 1, 13);
  Tensor x = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor axes = *Tensor::FromValues<int64_t>({1}, {1});
  auto out = RunNode(node, {&x, &axes});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ((*out)[0].tensor->data<float>()[0], 6);
  EXPECT_EQ((*out)[0].tensor->data<float>()[1], 15);
}

TEST(ReduceOps, MeanAxesAttributeBeforeOpset18NoKeepdims) {
  Node node = MakeNode("ReduceMean", 1, 1, 13);
  node.attrs["axes"] = IntsAttr({0});
  node.attrs["keepdims"] = IntAttr(0);
  Tensor x = Floats({2, 2}, {1, 2, 3, 6});
  auto out = RunNode(node, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ((*out)[0].tensor->data<float>()[0], 2);
  EXPECT_EQ((*out)[0].tensor->data<float>()[1], 4);
}

TEST(ReduceOps, EmptyAxesNoopIsIdentity) {
  Node node = MakeNode("ReduceMax", 2, 1, 18);
  node.attrs["noop_with_empty_axes"] = IntAttr(1);
  Tensor x = Floats({3}, {1, 5, 2});
  Tensor axes = *Tensor::FromValues<int64_t>({0}, absl::Span<const int64_t>());
  auto out = RunNode(node, {&x, &axes});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->shape(), (std::vector<int64_t>{3}));
}

TEST(ReduceOps, LogSumExpIsStableForLargeValues) {
  Node node = MakeNode("ReduceLogSumExp", 1, 1, 13);
  Tensor x = Floats({2}, {1000, 1000});
  auto out = RunNode(node, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].tensor->data<float>()[0], 1000 + std::log(2.0), 1e-3);
}

TEST(ReduceOps, IntegerLogSumOfZerosSaturatesInsteadOfOverflowing) {
  Node node = MakeNode("ReduceLogSum", 1, 1, 13);
  Tensor x = *Tensor::FromValues<int32_t>({2}, {0, 0});
  auto out = RunNode(node, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->data<int32_t>()[0], std::numeric_limits<int32_t>::lowest());
  Node lse = MakeNode("ReduceLogSumExp", 1, 1, 13);
  Tensor y = *Tensor::FromValues<int32_t>({2}, {3, 3});
  out = RunNode(lse, {&y});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->data<int32_t>()[0], 3);  // 3 + log(2), truncated
}

TEST(ReduceOps, BadAxisNamesTheNode) {
  Node node = MakeNode("ReduceSum", 1, 1, 11);
  node.attrs["axes"] = IntsAttr({3});
  Tensor x = Floats({2}, {1, 2});
  auto out = RunNode(node, {&x});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("ReduceSum_test"), std::string::npos);
}

TEST(ArgOps, SelectLastIndexAndKeepdims) {
  Node node = MakeNode("ArgMax", 1, 1, 13);
  node.attrs["axis"] = IntAttr(1);
  node.attrs["select_last_index"] = IntAttr(1);
  Tensor x = Floats({2, 3}, {1, 3, 3, 4, 2, 4});
  auto out = RunNode(node, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ((*out)[0].tensor->data<int64_t>()[0], 2);
  EXPECT_EQ((*out)[0].tensor->data<int64_t>()[1], 2);
  node.op_type = "ArgMin";
  node.attrs["select_last_index"] = IntAttr(0);
  node.attrs["keepdims"] = IntAttr(0);
  out = RunNode(node, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ((*out)[0].tensor->data<int64_t>()[0], 0);
  EXPECT_EQ((*out)[0].tensor->data<int64_t>()[1], 1);
}

// The fast Softmax (float rows through the vector exp) and its other cases against the
// reference on seeded random [outer, n, inner] shapes: rows up to 70 long, values up to +-90,
// some -inf (exp 0) and some rows of only -inf (NaN, as in the reference).
// Swin's shifted-window masks (-100 on part of a row) give exps near 1e-44: flushed to zero
// by the fast path, within the test's absolute 1.3e-38 of the reference; and the thread's
// floating-point mode is back to normal afterwards (denormals survive again).
TEST(SoftmaxKernel, MaskedRowsFlushDenormalsAndRestoreTheMode) {
  std::vector<float> x(64), fast(64), ref(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i % 16 < 8 ? -100.0f : 0.0f) + 0.01f * i;
  kernels::Softmax<float>(kernels::SoftmaxKind::kSoftmax, x.data(), 4, 16, 1, fast.data());
  kernels::reference::Softmax<float>(kernels::SoftmaxKind::kSoftmax, x.data(), 4, 16, 1,
                                     ref.data());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(fast[i], ref[i], 4e-7 * std::fabs(ref[i]) + 1.3e-38) << i;
  }
  volatile float tiny = std::numeric_limits<float>::min();
  EXPECT_GT(tiny / 4.0f, 0.0f);
}

TEST(SoftmaxKernel, FastMatchesReferenceOnRandomRows) {
  std::mt19937_64 rng(20261127);
  for (int iter = 0; iter < 400; ++iter) {
    const int64_t outer = rng() % 6 + 1, n = rng() % 70 + 1,
                  inner = iter % 3 == 0 ? rng() % 3 + 1 : 1;
    const auto kind = static_cast<kernels::SoftmaxKind>(iter % 5 == 0 ? rng() % 3 : 0);
    std::uniform_real_distribution<float> dist(-1, 1);
    const float scale = iter % 4 == 0 ? 90.0f : 4.0f;
    std::vector<float> x(outer * n * inner);
    for (float& v : x)
      v = rng() % 50 == 0 ? -std::numeric_limits<float>::infinity() : scale * dist(rng);
    if (iter % 37 == 0)
      std::fill(x.begin(), x.begin() + n * inner, -std::numeric_limits<float>::infinity());
    std::vector<float> fast(x.size()), ref(x.size());
    kernels::Softmax<float>(kind, x.data(), outer, n, inner, fast.data());
    kernels::reference::Softmax<float>(kind, x.data(), outer, n, inner, ref.data());
    for (size_t i = 0; i < x.size(); ++i) {
      if (fast[i] == ref[i]) continue;  // -inf from LogSoftmax included
      if (std::isnan(ref[i])) {
        EXPECT_TRUE(std::isnan(fast[i])) << iter << " " << i;
      } else {
        // libmvec's expf is within 2 ULP, then one rounding of the scaled value; exps below
        // 1.3e-38 are flushed to 0.
        EXPECT_NEAR(fast[i], ref[i], 4e-7 * std::fabs(ref[i]) + 1.3e-38) << iter << " " << i;
      }
    }
  }
}

TEST(SoftmaxOps, LegacyCoercesTo2DAndNewIsPerAxis) {
  Tensor x = Floats({1, 2, 2}, {0, 0, 0, 0});
  Node legacy = MakeNode("Softmax", 1, 1, 11);  // axis 1: rows of 4
  auto out = RunNode(legacy, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FLOAT_EQ((*out)[0].tensor->data<float>()[0], 0.25f);
  Node current = MakeNode("Softmax", 1, 1, 13);  // axis -1: rows of 2
  out = RunNode(current, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FLOAT_EQ((*out)[0].tensor->data<float>()[0], 0.5f);
}

TEST(SoftmaxOps, LogSoftmaxAndHardmaxValues) {
  Tensor x = Floats({3}, {1, 2, 3});
  Node log_softmax = MakeNode("LogSoftmax", 1, 1, 13);
  auto out = RunNode(log_softmax, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_NEAR((*out)[0].tensor->data<float>()[2], 3 - lse, 1e-6);
  Node hardmax = MakeNode("Hardmax", 1, 1, 13);
  out = RunNode(hardmax, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->data<float>()[0], 0);
  EXPECT_EQ((*out)[0].tensor->data<float>()[2], 1);
}

TEST(SoftmaxOps, Float16GoesThroughFloat) {
  Tensor x = *Tensor::FromValues<Float16>({2}, {ToFloat16(0), ToFloat16(0)});
  Node node = MakeNode("Softmax", 1, 1, 13);
  auto out = RunNode(node, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToFloat((*out)[0].tensor->data<Float16>()[1]), 0.5f);
}

}  // namespace
}  // namespace onnx_bcast::runtime
