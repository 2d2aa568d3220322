// verify: correct rewrites pass bit-exact, wrong ones are caught and bisected to the node,
// bugs that only show at batch > 1 are caught, unsupported models are checked node by node.
#include "verify/verify.h"

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/json_parse.h"
#include "proto/model_io.h"
#include "verify/inputs.h"

namespace onnx_bcast::verify {
namespace {

using ::testing::HasSubstr;

proto::Model Parse(const std::string& text) {
  absl::StatusOr<proto::Model> m = proto::ParseModelText(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return *m;
}

const char kOriginal[] = R"(
  <ir_version: 8, opset_import: ["" : 15]>
  g (float[2,3,4,3] x, float[3] b) => (float[2,3,4,3] y) {
    t = Add(x, b)
    y = Relu(t)
  })";

TEST(Verify, CorrectRewritePassesBitExact) {
  const proto::Model a = Parse(kOriginal);
  // b aligned explicitly to the last axis, as align-ranks would.
  const proto::Model b = Parse(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[2,3,4,3] x, float[3] b) => (float[2,3,4,3] y) {
      axes = Constant<value = int64[3] {0, 1, 2}>()
      b4 = Unsqueeze(b, axes)
      t = Add(x, b4)
      y = Relu(t)
    })");
  EXPECT_TRUE(OnlyExactOpsChanged(a, b));
  absl::StatusOr<VerifyResult> r = Verify(a, b, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->match) << FormatVerifyText(*r, "a", "b");
  EXPECT_TRUE(r->tolerance.exact);
  EXPECT_EQ(r->mode, "whole-model");
  EXPECT_EQ(r->samples.size(), 3u);
}

TEST(Verify, WrongAxisIsCaughtAndBisectedToTheNode) {
  const proto::Model a = Parse(kOriginal);
  // The bias aligned to axis 1 instead of the last axis: same shapes, wrong values.
  const proto::Model b = Parse(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[2,3,4,3] x, float[3] b) => (float[2,3,4,3] y) {
      shape = Constant<value = int64[3] {3, 1, 1}>()
      b3 = Reshape(b, shape)
      t = Add(x, b3)
      y = Relu(t)
    })");
  absl::StatusOr<VerifyResult> r = Verify(a, b, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->match);
  ASSERT_TRUE(r->divergence.has_value()) << FormatVerifyText(*r, "a", "b");
  EXPECT_EQ(r->divergence->tensor, "t");
  EXPECT_EQ(r->divergence->op, "Add");
  EXPECT_THAT(r->divergence->input_shapes, ::testing::Contains("b3 [3,1,1]"));
  EXPECT_FALSE(r->divergence->comparison.match);
  const std::string text = FormatVerifyText(*r, "a.onnx", "b.onnx");
  EXPECT_THAT(text, HasSubstr("DIFFERENT"));
  EXPECT_THAT(text, HasSubstr("first divergence"));
}

TEST(Verify, BugThatOnlyShowsAtBatchAboveOneIsCaught) {
  const proto::Model a = Parse(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[N,3] x, float[N,1] s) => (float[N,3] y) { y = Mul(x, s) })");
  // s [N,1] reshaped to [1,N]: identical when N == 1, wrong (or failing) when N > 1.
  const proto::Model b = Parse(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[N,3] x, float[N,1] s) => (float[N,3] y) {
      shape = Constant<value = int64[2] {1, -1}>()
      s2 = Reshape(s, shape)
      y = Mul(x, s2)
    })");
  absl::StatusOr<VerifyResult> r = Verify(a, b, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->match);
  ASSERT_EQ(r->samples.size(), 3u);
  EXPECT_TRUE(r->samples[0].match) << "N = 1 hides the bug";
  EXPECT_FALSE(r->samples[1].match);
  EXPECT_THAT(r->samples[0].label, HasSubstr("N=1"));
  EXPECT_THAT(r->samples[1].label, HasSubstr("N=2"));
}

TEST(Verify, UnsupportedOpFallsBackToLocalChecks) {
  const proto::Model a = Parse(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.example" : 1]>
    g (float[N,3,4] x, float[4] b) => (float[N,3,4] y) {
      t = Add(x, b)
      y = com.example.Mystery(t)
    })");
  const proto::Model good = Parse(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.example" : 1]>
    g (float[N,3,4] x, float[4] b) => (float[N,3,4] y) {
      axes = Constant<value = int64[2] {0, 1}>()
      b3 = Unsqueeze(b, axes)
      t = Add(x, b3)
      y = com.example.Mystery(t)
    })");
  absl::StatusOr<VerifyResult> r = Verify(a, good, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->mode, "local");
  EXPECT_THAT(r->note, HasSubstr("cannot run"));
  ASSERT_EQ(r->local.size(), 1u);
  EXPECT_EQ(r->local[0].op, "Add");
  EXPECT_FALSE(r->local[0].skipped) << r->local[0].detail;
  EXPECT_TRUE(r->match) << FormatVerifyText(*r, "a", "good");

  const proto::Model bad = Parse(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.example" : 1]>
    g (float[N,3,4] x, float[4] b) => (float[N,3,4] y) {
      shape = Constant<value = int64[3] {4, 1, 1}>()
      b3 = Reshape(b, shape)
      t = Add(x, b3)
      y = com.example.Mystery(t)
    })");
  r = Verify(a, bad, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->match);
  ASSERT_EQ(r->local.size(), 1u);
  EXPECT_FALSE(r->local[0].match);
}

TEST(Verify, MissingOrExtraOutputsAreMismatches) {
  const proto::Model a = Parse(kOriginal);
  const proto::Model b = Parse(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[2,3,4,3] x, float[3] b) => (float[2,3,4,3] z) {
      t = Add(x, b)
      z = Relu(t)
    })");
  absl::StatusOr<VerifyResult> r = Verify(a, b, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->match);
  ASSERT_EQ(r->structural.size(), 2u);
  EXPECT_THAT(r->structural[0], HasSubstr("'y' is missing"));
}

TEST(Verify, ToleranceIsLooseWhenArithmeticChanged) {
  const proto::Model a = Parse(kOriginal);
  const proto::Model b = Parse(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[2,3,4,3] x, float[3] b) => (float[2,3,4,3] y) {
      t = Add(b, x)
      m = Max(t, t)
      y = Relu(m)
    })");
  EXPECT_FALSE(OnlyExactOpsChanged(a, b));
  absl::StatusOr<VerifyResult> r = Verify(a, b, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->tolerance.exact);
  EXPECT_TRUE(r->match);
}

TEST(Inputs, SymbolsAreOneThenDistinctAboveOne) {
  const std::vector<Bindings> b = SampleBindings({"M", "N"}, 3, /*edge_cases=*/true);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].at("M"), 1);
  EXPECT_EQ(b[0].at("N"), 1);
  EXPECT_GT(b[1].at("M"), 1);
  EXPECT_NE(b[1].at("M"), b[1].at("N"));
  EXPECT_NE(b[1].at("M"), b[2].at("M"));
  EXPECT_EQ(b[3].at("N"), 0);
}

TEST(Compare, ReportsFiguresUlpsAndExactness) {
  auto v = [](std::vector<int64_t> shape, std::initializer_list<float> values) {
    return rt::Value::Of(std::make_shared<rt::Tensor>(*rt::Tensor::FromValues<float>(shape, values)));
  };
  rt::Comparison c = rt::CompareValues(v({2, 2}, {1, 2.5f, NAN, 4}), v({2, 2}, {1, 2, NAN, 4}), "y");
  EXPECT_FALSE(c.match);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_DOUBLE_EQ(c.max_abs_error, 0.5);
  EXPECT_THAT(c.message, HasSubstr("index 1 [0,1]"));
  EXPECT_THAT(c.message, HasSubstr("max ULP"));
  EXPECT_TRUE(rt::CompareValues(v({2}, {1, 2.5f}), v({2}, {1, 2}), "y", {0.5, 0}).match);
  // One ULP apart: within the default tolerance, not bit-exact.
  const float one_up = std::nextafter(1.0f, 2.0f);
  EXPECT_TRUE(rt::CompareValues(v({1}, {one_up}), v({1}, {1.0f}), "y").match);
  rt::Comparison exact = rt::CompareValues(v({1}, {one_up}), v({1}, {1.0f}), "y", {0, 0, true});
  EXPECT_FALSE(exact.match);
  EXPECT_EQ(exact.max_ulp, 1);
  EXPECT_FALSE(rt::CompareValues(v({1}, {-0.0f}), v({1}, {0.0f}), "y", {0, 0, true}).match);
  EXPECT_THAT(rt::CompareValues(v({4}, {1, 2, 3, 4}), v({2, 2}, {1, 2, 3, 4}), "y").message,
              HasSubstr("shape"));
}

TEST(JsonParse, ReadsReports) {
  absl::StatusOr<passes::JsonValue> v = passes::ParseJson(
      R"({"passes": [{"pass": "align-ranks", "rewrites": [{"node": "n\u00e9", "x": [1, 2.5, true, null]}]}]})");
  ASSERT_TRUE(v.ok()) << v.status();
  const passes::JsonValue& rw = v->Get("passes")->array[0].Get("rewrites")->array[0];
  EXPECT_EQ(rw.GetString("node"), "né");
  EXPECT_EQ(rw.Get("x")->array[1].number, 2.5);
  EXPECT_FALSE(passes::ParseJson("{\"a\": }").ok());
  EXPECT_FALSE(passes::ParseJson(std::string(500, '[')).ok());
}

}  // namespace
}  // namespace onnx_bcast::verify
