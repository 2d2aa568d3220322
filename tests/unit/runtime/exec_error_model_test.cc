// The error model (runtime/exec/error_model.h): rounding passes, a wrong answer does not.
// "Engines" here are float32 computations written in the test: the same products summed in
// other orders (rounding), and broadcasts along the wrong axis or from the wrong operand
// (wrong answers). The figures the docs quote (docs/error-model.md) come from these cases.
#include <cfloat>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/onnx_text.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/error_model.h"

namespace onnx_bcast::runtime {
namespace {

proto::Model Parse(const std::string& text) {
  absl::StatusOr<proto::Model> m = proto::ParseModelText(text, "error_model_test");
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

std::shared_ptr<Tensor> Floats(std::vector<int64_t> shape, const std::vector<float>& v) {
  return std::make_shared<Tensor>(Tensor::FromValues<float>(std::move(shape), v).value());
}

std::vector<float> Uniform(size_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

// A [M,K] x [K,N] product in float32, each sum taken in the order `order` gives (0: forward,
// 1: backward, 2: pairwise halves): what another engine's kernel does.
std::vector<float> MatMul32(const std::vector<float>& a, const std::vector<float>& b, int m, int k,
                            int n, int order) {
  std::vector<float> out(static_cast<size_t>(m) * n);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      std::vector<float> terms(k);
      for (int p = 0; p < k; ++p) terms[p] = a[i * k + p] * b[p * n + j];
      float s = 0;
      if (order == 0) {
        for (int p = 0; p < k; ++p) s += terms[p];
      } else if (order == 1) {
        for (int p = k - 1; p >= 0; --p) s += terms[p];
      } else {
        for (int width = 1; width < k; width *= 2) {
          for (int p = 0; p + width < k; p += 2 * width) terms[p] += terms[p + width];
        }
        s = terms[0];
      }
      out[i * n + j] = s;
    }
  }
  return out;
}

std::string MatMulModel(int m, int k, int n) {
  return absl::StrCat("<ir_version: 8, opset_import: [\"\" : 13]>\ng (float[", m, ",", k,
                      "] a, float[", k, ",", n, "] b) => (float[", m, ",", n,
                      "] y) {\n  y = MatMul (a, b)\n}\n");
}

Comparison Judge(const Reference& ref, std::shared_ptr<Tensor> actual, bool engine = true) {
  CompareOptions options;
  options.engine_representation = engine;
  return CompareToReference(Value::Of(std::move(actual)), ref.outputs[0], ref.model, options);
}

TEST(ErrorModel, SumsInOtherOrdersPassAtEveryInnerLength) {
  for (int k : {16, 128, 1024}) {
    SCOPED_TRACE(absl::StrCat("k=", k));
    const int m = 4, n = 32;
    const std::vector<float> a = Uniform(static_cast<size_t>(m) * k, 1 + k);
    const std::vector<float> b = Uniform(static_cast<size_t>(k) * n, 2 + k);
    const proto::Model model = Parse(MatMulModel(m, k, n));
    Feeds feeds = {{"a", Value::Of(Floats({m, k}, a))}, {"b", Value::Of(Floats({k, n}, b))}};
    absl::StatusOr<Reference> ref = ComputeReference(model, feeds);
    ASSERT_TRUE(ref.ok()) << ref.status();
    ASSERT_TRUE(ref->fallback.empty()) << ref->fallback;
    ASSERT_NE(ref->outputs[0].reference, nullptr);
    EXPECT_EQ(ref->outputs[0].terms, k);
    for (int order : {0, 1, 2}) {
      const Comparison c = Judge(*ref, Floats({m, n}, MatMul32(a, b, m, k, n, order)));
      EXPECT_TRUE(c.match) << "order " << order << ": " << c.message;
      EXPECT_LT(c.bound_ratio, 1.0);
    }
  }
}

// The issue's case: a product that cancels to near zero keeps an error of the size of its
// terms. verify's old rule (rtol 1e-3 of the result, atol 1e-7) called it wrong; the bound,
// proportional to k u sum|a_i b_i|, does not.
TEST(ErrorModel, CancellationNearZeroIsRoundingNotAWrongAnswer) {
  const int m = 1, k = 128, n = 8;
  std::vector<float> a = Uniform(k, 11);
  std::vector<float> b = Uniform(static_cast<size_t>(k) * n, 12);
  // Column 0 of b: the first half of the terms cancels the second half, up to rounding.
  for (int p = 0; p < k / 2; ++p) {
    a[k / 2 + p] = a[p];
    b[(k / 2 + p) * n] = -b[p * n] * (1 + 1e-6f * static_cast<float>(p % 3));
  }
  const proto::Model model = Parse(MatMulModel(m, k, n));
  Feeds feeds = {{"a", Value::Of(Floats({m, k}, a))}, {"b", Value::Of(Floats({k, n}, b))}};
  absl::StatusOr<Reference> ref = ComputeReference(model, feeds);
  ASSERT_TRUE(ref.ok()) << ref.status();
  const double exact = ref->outputs[0].reference->data<double>()[0];
  ASSERT_LT(std::fabs(exact), 1e-4);
  // An engine off by a few roundings of the terms on that element (as a blocked or vectorized
  // kernel is), every other element exact.
  std::vector<float> engine(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j)
    engine[j] = static_cast<float>(ref->outputs[0].reference->data<double>()[j]);
  double terms = 0;
  for (int p = 0; p < k; ++p) terms += std::fabs(static_cast<double>(a[p]) * b[p * n]);
  engine[0] = static_cast<float>(exact + 8 * 0x1p-24 * terms);
  const Comparison c = Judge(*ref, Floats({m, n}, engine));
  EXPECT_TRUE(c.match) << c.message;
  // The old rule calls the same answer wrong.
  OutputReference old = ref->outputs[0];
  old.reference = nullptr;
  old.bound = nullptr;
  old.computed = Value::Of(Floats({m, n}, [&] {
    std::vector<float> v(engine);
    v[0] = static_cast<float>(exact);
    return v;
  }()));
  CompareOptions options;
  options.engine_representation = true;
  EXPECT_FALSE(
      CompareToReference(Value::Of(Floats({m, n}, engine)), old, ref->model, options).match);
}

// Wrong answers: a bias added along the wrong axis, a scalar taken for a vector, one element
// from the wrong operand. Each stays far outside the bound.
TEST(ErrorModel, BroadcastsAlongTheWrongAxisAreCaught) {
  const proto::Model model = Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3,4] x, float[3,1] b) => (float[2,3,4] y) {
  y = Add (x, b)
}
)");
  const std::vector<float> x = Uniform(24, 21);
  const std::vector<float> b = {0.25f, -0.5f, 0.75f};
  Feeds feeds = {{"x", Value::Of(Floats({2, 3, 4}, x))}, {"b", Value::Of(Floats({3, 1}, b))}};
  absl::StatusOr<Reference> ref = ComputeReference(model, feeds);
  ASSERT_TRUE(ref.ok()) << ref.status();
  std::vector<float> right(24), axis0(24), scalar(24);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int c = 0; c < 4; ++c) {
        const int at = (i * 3 + j) * 4 + c;
        right[at] = x[at] + b[j];
        axis0[at] = x[at] + b[i];  // along the batch axis
        scalar[at] = x[at] + b[0];
      }
    }
  }
  EXPECT_TRUE(Judge(*ref, Floats({2, 3, 4}, right)).match);
  for (const auto& wrong : {axis0, scalar}) {
    const Comparison c = Judge(*ref, Floats({2, 3, 4}, wrong));
    EXPECT_FALSE(c.match);
    EXPECT_GT(c.bound_ratio, 1e4) << c.message;
    EXPECT_THAT(c.message, testing::HasSubstr("elements differ"));
  }
  std::vector<float> one = right;
  one[17] = x[17];  // the bias missing on one element
  const Comparison c = Judge(*ref, Floats({2, 3, 4}, one));
  EXPECT_FALSE(c.match);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_THAT(c.message, testing::HasSubstr("worst at 17 [1,1,1]"));
}

// The yardstick: a deep chain's own float32 error lets an engine differ by as much, times the
// margin; the bound of a data-movement output is a few ulps only.
TEST(ErrorModel, TheYardstickIsOurOwnFloat32Distance) {
  const proto::Model model = Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[64] x) => (float[64] y, float[64] z) {
  e = Exp (x)
  s = Sigmoid (e)
  y = Div (s, x)
  z = Identity (x)
}
)");
  Feeds feeds = {{"x", Value::Of(Floats({64}, Uniform(64, 31, 0.5f, 2.0f)))}};
  absl::StatusOr<Reference> ref = ComputeReference(model, feeds);
  ASSERT_TRUE(ref.ok()) << ref.status();
  ASSERT_EQ(ref->outputs.size(), 2u);
  EXPECT_GT(ref->outputs[0].yardstick, 0);
  EXPECT_EQ(ref->outputs[1].yardstick, 0);
  EXPECT_EQ(ref->outputs[0].op, "Div");
  EXPECT_EQ(ref->outputs[1].op, "Identity");
  // Identity's bound: a few ulps (and FLT_MIN), nothing from a yardstick of 0.
  const double x0 = ref->outputs[1].reference->data<double>()[0];
  EXPECT_NEAR(ref->outputs[1].bound->data<double>()[0],
              ref->model.exact_ulps * Float32Ulp(x0) + FLT_MIN, 1e-300);
}

TEST(ErrorModel, IntegersCompareExactlyAndShapesUpToOnesForEngines) {
  const proto::Model model = Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (int64[4] x) => (int64[4] y) {
  y = Identity (x)
}
)");
  auto ints = std::make_shared<Tensor>(Tensor::FromValues<int64_t>({4}, {1, 2, 3, 4}).value());
  absl::StatusOr<Reference> ref = ComputeReference(model, {{"x", Value::Of(ints)}});
  ASSERT_TRUE(ref.ok()) << ref.status();
  EXPECT_EQ(ref->outputs[0].reference, nullptr);
  auto as_int32 =
      std::make_shared<Tensor>(Tensor::FromValues<int32_t>({1, 4}, {1, 2, 3, 4}).value());
  EXPECT_TRUE(Judge(*ref, as_int32).match);
  EXPECT_FALSE(Judge(*ref, as_int32, /*engine=*/false).match);  // verify: types must be equal
  auto off = std::make_shared<Tensor>(Tensor::FromValues<int32_t>({4}, {1, 2, 3, 5}).value());
  EXPECT_FALSE(Judge(*ref, off).match);
}

// The same elements in another shape are a wrong answer: an engine's shape may differ from
// ours only by dims of 1, and verify's not at all (issue 43: a mutant that skipped the shape
// check passed every test, as the values alone were equal).
TEST(ErrorModel, TheSameValuesInAnotherShapeAreWrong) {
  const proto::Model model = Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x) => (float[2,3] y) {
  y = Identity (x)
}
)");
  const std::vector<float> v = {1, 2, 3, 4, 5, 6};
  absl::StatusOr<Reference> ref = ComputeReference(model, {{"x", Value::Of(Floats({2, 3}, v))}});
  ASSERT_TRUE(ref.ok()) << ref.status();
  EXPECT_TRUE(Judge(*ref, Floats({2, 3}, v)).match);
  EXPECT_TRUE(Judge(*ref, Floats({1, 2, 3}, v)).match);  // a unit axis: the engine's own form
  const Comparison transposed = Judge(*ref, Floats({3, 2}, v));
  EXPECT_FALSE(transposed.match);
  EXPECT_THAT(transposed.message, ::testing::HasSubstr("output shape"));
  EXPECT_FALSE(Judge(*ref, Floats({6}, v)).match);
  EXPECT_FALSE(Judge(*ref, Floats({1, 2, 3}, v), /*engine=*/false).match);
}

// Outputs the model does not compute in float32 (float16 here) get no float64 reference: they
// compare with our run within rtol 1e-3, atol 1e-7, and the comparison says so.
TEST(ErrorModel, OtherFloatTypesCompareWithinTheTolerance) {
  const proto::Model model = Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float16[4] x) => (float16[4] y) {
  y = Add (x, x)
}
)");
  absl::StatusOr<Tensor> x = Tensor::Allocate(DType::kFloat16, {4});
  ASSERT_TRUE(x.ok());
  for (int k = 0; k < 4; ++k) x->data<Float16>()[k] = ToFloat16(0.5f + static_cast<float>(k));
  absl::StatusOr<Reference> ref =
      ComputeReference(model, {{"x", Value::Of(std::make_shared<Tensor>(*std::move(x)))}});
  ASSERT_TRUE(ref.ok()) << ref.status();
  EXPECT_EQ(ref->outputs[0].reference, nullptr);
  const Tensor& y = *ref->outputs[0].computed.tensor;
  EXPECT_TRUE(Judge(*ref, std::make_shared<Tensor>(y.Clone())).match);
  auto off = std::make_shared<Tensor>(y.Clone());
  off->data<Float16>()[3] = ToFloat16(ToFloat(off->data<Float16>()[3]) + 1);
  const Comparison c = Judge(*ref, off);
  EXPECT_FALSE(c.match);
  EXPECT_THAT(c.message, testing::HasSubstr("beyond rtol 1e-3, atol 1e-7"));
}

TEST(ErrorModel, Float32UlpIsTheSpacingOfFloats) {
  EXPECT_EQ(Float32Ulp(1.0), 0x1p-23);
  EXPECT_EQ(Float32Ulp(1.5), 0x1p-23);
  EXPECT_EQ(Float32Ulp(-2.0), 0x1p-22);
  EXPECT_EQ(Float32Ulp(0.0), 0x1p-149);
  EXPECT_EQ(Float32Ulp(1e-40), 0x1p-149);
}

// Every float32 value of a model computes in float64 after promotion: Constant's value_float,
// Cast to float, ConstantOfShape without a value, and Resize's float32 scales (cast back).
TEST(ErrorModel, PromotionKeepsTheModelRunnable) {
  const proto::Model model = Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,2,2] x, int64[2] n) => (float[1,1,4,4] y, float[2] c, float[3,2] z) {
  h = Constant <value_float = 0.5> ()
  i = Cast <to = 1> (n)
  c = Mul (i, h)
  s = Constant <value = float[4] {1, 1, 2, 2}> ()
  r = Constant <value = float[0] {}> ()
  y = Resize <mode = "linear"> (x, r, s)
  shape = Constant <value = int64[2] {3, 2}> ()
  z = ConstantOfShape (shape)
}
)");
  auto n = std::make_shared<Tensor>(Tensor::FromValues<int64_t>({2}, {3, 5}).value());
  Feeds feeds = {{"x", Value::Of(Floats({1, 1, 2, 2}, {1, 2, 3, 4}))}, {"n", Value::Of(n)}};
  absl::StatusOr<Reference> ref = ComputeReference(model, feeds);
  ASSERT_TRUE(ref.ok()) << ref.status();
  EXPECT_EQ(ref->fallback, "");
  for (const OutputReference& o : ref->outputs) {
    ASSERT_NE(o.reference, nullptr) << o.name;
    EXPECT_EQ(o.reference->dtype(), DType::kFloat64);
  }
  EXPECT_EQ(ref->outputs[1].reference->data<double>()[1], 2.5);
}

}  // namespace
}  // namespace onnx_bcast::runtime
