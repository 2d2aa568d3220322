// verify: correct rewrites pass bit-exact, wrong ones are caught and bisected to the node,
// bugs that only show at batch > 1 are caught, unsupported models are checked node by node.
#include "verify/verify.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "report/opt_report.h"
#include "report/report_json.h"
#include "verify/inputs.h"

namespace onnx_bcast::verify {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

proto::Model Parse(const std::string& text) {
  absl::StatusOr<proto::Model> m = proto::ParseModelText(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return *m;
}

// Verify of the models `original` and `rewritten` in ONNX text form.
absl::StatusOr<VerifyResult> VerifyTexts(const std::string& original, const std::string& rewritten,
                                         const VerifyOptions& options = {}) {
  return Verify(Parse(original), Parse(rewritten), options);
}

// A model of x [2,3,4,3] and a bias b [3] with the nodes `body` and the output `out`.
std::string BiasModel(const std::string& body, const std::string& out = "y") {
  return absl::StrCat("<ir_version: 8, opset_import: [\"\" : 15]>\n",
                      "g (float[2,3,4,3] x, float[3] b) => (float[2,3,4,3] ", out, ") {\n", body,
                      "\n}");
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
  const proto::Model b = Parse(BiasModel(
      "axes = Constant<value = int64[3] {0, 1, 2}>()  b4 = Unsqueeze(b, axes)  t = Add(x, b4)"
      "  y = Relu(t)"));
  EXPECT_TRUE(OnlyExactOpsChanged(a, b));
  absl::StatusOr<VerifyResult> r = Verify(a, b, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->match) << FormatVerifyText(*r, "a", "b");
  EXPECT_TRUE(r->tolerance.exact);
  EXPECT_EQ(r->mode, "whole-model");
  EXPECT_EQ(r->samples.size(), 3u);
}

// The bias aligned to axis 1 instead of the last axis: same shapes, wrong values. Its Add
// (unnamed, like 2,499 of the 2,512 nodes of the ONNX test data) is node 2 here, node 0 in
// the original.
const char kWrongAxis[] = R"(
  <ir_version: 8, opset_import: ["" : 15]>
  g (float[2,3,4,3] x, float[3] b) => (float[2,3,4,3] y) {
    shape = Constant<value = int64[3] {3, 1, 1}>()
    b3 = Reshape(b, shape)
    t = Add(x, b3)
    y = Relu(t)
  })";

TEST(Verify, WrongAxisIsCaughtAndBisectedToTheNode) {
  absl::StatusOr<VerifyResult> r = VerifyTexts(kOriginal, kWrongAxis);
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

// Local mode computes what does not depend on the inputs' values (a weight behind an
// exporter's Identity, a Constant, a shape computation) on both sides: fold-constants turns them
// into initializers in the rewrite, and feeding the original noise there made every such node
// DIFFERENT. It also reads through a Dropout opt removed (Swin's attention). A scaled weight is
// still caught.
TEST(Verify, LocalModeComputesFixedValuesOnBothSides) {
  const proto::Model a = Parse(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.example" : 1]>
    g (float[N,3,4] x) => (float[N,3,4] y) <float[4] w0 = {1, 2, 3, 4}> {
      w = Identity(w0)
      two = Constant<value = float {2}>()
      n = Shape(x)
      last = Constant<value = int64[1] {2}>()
      k = Gather(n, last)
      kf = Cast<to = 1>(k)
      t = Mul(x, w)
      d = Dropout(t)
      u = Pow(d, two)
      v = Add(u, kf)
      y = com.example.Mystery(v)
    })");
  // The rewrite with w, two and kf folded into initializers, w = `w`.
  auto folded_with = [](const std::string& w) {
    return Parse(absl::StrCat(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.example" : 1]>
    g (float[N,3,4] x) => (float[N,3,4] y)
      <float[4] w = )",
                              w, R"(, float two = {2}, float[1] kf = {4}> {
      t = Mul(x, w)
      u = Pow(t, two)
      v = Add(u, kf)
      y = com.example.Mystery(v)
    })"));
  };
  const proto::Model folded = folded_with("{1, 2, 3, 4}");
  VerifyOptions options;
  options.local = true;
  absl::StatusOr<VerifyResult> r = Verify(a, folded, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->local.size(), 3u) << FormatVerifyText(*r, "a", "folded");
  for (const LocalResult& l : r->local) EXPECT_FALSE(l.skipped) << l.op << ": " << l.detail;
  EXPECT_TRUE(r->match) << FormatVerifyText(*r, "a", "folded");

  const proto::Model scaled = folded_with("{1, 2, 3, 5}");
  r = Verify(a, scaled, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->match);
  EXPECT_EQ(r->local[0].op, "Mul");
  EXPECT_FALSE(r->local[0].match) << r->local[0].detail;
}

TEST(Verify, MissingOrExtraOutputsAreMismatches) {
  absl::StatusOr<VerifyResult> r =
      VerifyTexts(kOriginal, BiasModel("t = Add(x, b)  z = Relu(t)", "z"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->match);
  ASSERT_EQ(r->structural.size(), 2u);
  EXPECT_THAT(r->structural[0], HasSubstr("'y' is missing"));
}

TEST(Verify, ToleranceIsLooseWhenArithmeticChanged) {
  const proto::Model a = Parse(kOriginal);
  const proto::Model b = Parse(BiasModel("t = Add(b, x)  m = Max(t, t)  y = Relu(m)"));
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

broadcast::Expr Sym(const char* s) { return broadcast::Expr::Symbol(s); }

// Conditions as the analysis states them: a finite set, a congruence, a relation of several
// symbols; every sample must satisfy them, values > 1 distinct where the sets allow.
TEST(Inputs, SamplesSatisfyTheCombinedCondition) {
  broadcast::ConditionSet in_set;  // N ∈ {1, 5}
  in_set.Add(broadcast::Clause::InSet("N", {1, 5}));
  broadcast::ConditionSet even;  // H mod 2 == 0 (1 is not allowed)
  even.Add(broadcast::Atom::EqExpr(*broadcast::Expr::Mod(Sym("H"), broadcast::Expr::Const(2)),
                               broadcast::Expr::Const(0)));
  broadcast::ConditionSet mask;  // total == past + seq or total == 1, and total <= past + seq
  mask.Add(broadcast::Clause::Of(
      {broadcast::Atom::EqExpr(Sym("total"), Sym("past") + Sym("seq")), broadcast::Atom::Eq("total", 1)}));
  mask.Add(broadcast::Atom::EqExpr(broadcast::Expr::Max(Sym("total"), Sym("past") + Sym("seq")),
                               Sym("past") + Sym("seq")));
  const std::set<std::string> symbols = {"B", "H", "N", "past", "seq", "total"};
  for (const broadcast::ConditionSet* c : {&in_set, &even, &mask}) {
    const std::vector<Bindings> b = SampleBindings(symbols, 5, /*edge_cases=*/false, *c);
    ASSERT_EQ(b.size(), 5u);
    for (size_t k = 0; k < b.size(); ++k) {
      EXPECT_EQ(c->Evaluate(b[k]), true) << c->ToString() << " at " << BindingsToString(b[k]);
      for (const auto& [s, v] : b[k]) {
        if (k == 0) {
          EXPECT_EQ(v, c->symbol_sets().count(s) && !c->symbol_sets().at(s).Contains(1) ? 2 : 1)
              << s;
        } else {
          EXPECT_GT(v, 1) << s << " in sample " << k;
        }
      }
    }
  }
  // Unconstrained symbols keep the plain scheme: distinct within and between samples.
  const std::vector<Bindings> m = SampleBindings(symbols, 3, false, mask);
  EXPECT_NE(m[1].at("B"), m[2].at("B"));
  EXPECT_NE(m[1].at("past"), m[1].at("seq"));
  EXPECT_EQ(m[1].at("total"), m[1].at("past") + m[1].at("seq"));
  // N ∈ {1, 5}: 1, then 5.
  const std::vector<Bindings> n = SampleBindings({"N"}, 3, false, in_set);
  EXPECT_EQ(n[0].at("N"), 1);
  EXPECT_EQ(n[1].at("N"), 5);
  // H even: 2, 4, 6, ... distinct between samples.
  const std::vector<Bindings> h = SampleBindings({"H"}, 4, false, even);
  EXPECT_EQ(h[0].at("H"), 2);
  EXPECT_EQ(h[1].at("H"), 4);
  EXPECT_EQ(h[2].at("H"), 6);
}

TEST(Inputs, ViolatingBindingBreaksTheCondition) {
  broadcast::ConditionSet mask;
  mask.Add(broadcast::Clause::Of(
      {broadcast::Atom::EqExpr(Sym("total"), Sym("past") + Sym("seq")), broadcast::Atom::Eq("total", 1)}));
  const std::set<std::string> symbols = {"N", "past", "seq", "total"};
  std::optional<Bindings> bad = ViolatingBinding(symbols, mask);
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(mask.Evaluate(*bad), false) << BindingsToString(*bad);
  for (const auto& [s, v] : *bad) EXPECT_GE(v, 1);
  broadcast::ConditionSet in_set;
  in_set.Add(broadcast::Clause::InSet("N", {1, 5}));
  bad = ViolatingBinding(symbols, in_set);
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->at("N"), 2);
  // Nothing to violate: no condition, or one on symbols the inputs do not have.
  EXPECT_FALSE(ViolatingBinding(symbols, broadcast::ConditionSet()).has_value());
  broadcast::ConditionSet other;
  other.Add(broadcast::Clause::InSet("nz:0:0", {1, 3}));
  EXPECT_FALSE(ViolatingBinding(symbols, other).has_value());
}

const char kConditional[] = R"(
  <ir_version: 8, opset_import: ["" : 15]>
  g (float[N,3] a, float[5,3] b) => (float[5,3] y) { y = Add(a, b) })";

TEST(Verify, RandomSamplesStayInsideTheConditionAndTheEdgeCaseFailsInBoth) {
  const proto::Model a = Parse(kConditional);
  VerifyOptions options;
  options.edge_cases = true;
  absl::StatusOr<VerifyResult> r = Verify(a, a, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->match) << FormatVerifyText(*r, "a", "a");
  // N=1, N=5, N=5 (N ∈ {1, 5}), N=0 skipped (the original rejects it: listed with why, issue
  // 44 item 4), then N=2 outside.
  ASSERT_EQ(r->samples.size(), 5u) << FormatVerifyText(*r, "a", "a");
  EXPECT_THAT(r->samples[0].label, HasSubstr("(N=1)"));
  EXPECT_THAT(r->samples[1].label, HasSubstr("(N=5)"));
  EXPECT_TRUE(r->samples[3].skipped);
  EXPECT_EQ(r->samples[3].label, "edge case: every dim 0 (N=0; empty tensors)");
  EXPECT_THAT(r->samples[3].note, HasSubstr("the original rejects these inputs: "));
  EXPECT_THAT(FormatVerifyText(*r, "a", "a"),
              HasSubstr("  edge case: every dim 0 (N=0; empty tensors): skipped: the original "
                        "rejects these inputs: "));
  EXPECT_TRUE(r->samples[4].expect_failure);
  EXPECT_TRUE(r->samples[4].match);
  EXPECT_THAT(r->samples[4].label, HasSubstr("edge case outside the broadcast condition (N=2)"));
  EXPECT_THAT(r->samples[4].note,
              HasSubstr("check: Add 'Add#0': A [2,3] and B [5,3] are not broadcastable"));
  EXPECT_THAT(FormatVerifyText(*r, "a", "a"), HasSubstr("(N=2): both fail\n"));
}

TEST(Verify, AModelThatRunsWhereCheckSaysItMustFailIsReported) {
  const proto::Model a = Parse(kConditional);
  // Equal to the original for N ∈ {1, 5}, but it also runs for other N.
  const proto::Model b = Parse(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[N,3] a, float[5,3] b) => (float[5,3] y) {
      c = Concat<axis = 0>(a, a, a, a, a)
      st = Constant<value = int64[1] {0}>()
      en = Constant<value = int64[1] {5}>()
      ax = Constant<value = int64[1] {0}>()
      a5 = Slice(c, st, en, ax)
      y = Add(a5, b)
    })");
  VerifyOptions options;
  absl::StatusOr<VerifyResult> r = Verify(a, b, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->match) << FormatVerifyText(*r, "a", "b");
  options.edge_cases = true;
  r = Verify(a, b, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->match);
  const SampleResult& edge = r->samples.back();
  EXPECT_TRUE(edge.expect_failure);
  EXPECT_FALSE(edge.match);
  EXPECT_THAT(edge.error, HasSubstr("the rewritten model runs where check says it must fail "
                                    "(Add 'Add#0': A [2,3] and B [5,3]"));
  EXPECT_THAT(FormatVerifyText(*r, "a", "b"), HasSubstr("(N=2): RUNS\n"));
}

TEST(Compare, ReportsFiguresUlpsAndExactness) {
  auto v = [](std::vector<int64_t> shape, std::initializer_list<float> values) {
    return runtime::Value::Of(
        std::make_shared<runtime::Tensor>(*runtime::Tensor::FromValues<float>(shape, values)));
  };
  runtime::Comparison c =
      runtime::CompareValues(v({2, 2}, {1, 2.5f, NAN, 4}), v({2, 2}, {1, 2, NAN, 4}), "y");
  EXPECT_FALSE(c.match);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_DOUBLE_EQ(c.max_abs_error, 0.5);
  EXPECT_THAT(c.message, HasSubstr("index 1 [0,1]"));
  EXPECT_THAT(c.message, HasSubstr("max ULP"));
  EXPECT_TRUE(runtime::CompareValues(v({2}, {1, 2.5f}), v({2}, {1, 2}), "y", {0.5, 0}).match);
  // One ULP apart: within the default tolerance, not bit-exact.
  const float one_up = std::nextafter(1.0f, 2.0f);
  EXPECT_TRUE(runtime::CompareValues(v({1}, {one_up}), v({1}, {1.0f}), "y").match);
  runtime::Comparison exact = runtime::CompareValues(v({1}, {one_up}), v({1}, {1.0f}), "y", {0, 0, true});
  EXPECT_FALSE(exact.match);
  EXPECT_EQ(exact.max_ulp, 1);
  EXPECT_FALSE(runtime::CompareValues(v({1}, {-0.0f}), v({1}, {0.0f}), "y", {0, 0, true}).match);
  EXPECT_THAT(runtime::CompareValues(v({4}, {1, 2, 3, 4}), v({2, 2}, {1, 2, 3, 4}), "y").message,
              HasSubstr("shape"));
}

report::OptReport ReportNamingTheAdd() {
  report::OptReport report;
  passes::PassRun run;
  run.pass = "align-ranks";
  passes::Rewrite rw;
  rw.node = "Add#0";  // the label opt gives it: its index in the model opt started from
  rw.output = "t";
  rw.op = "Add";
  rw.action = "inserted";
  rw.tensor = "b";
  rw.before = "[3]";
  rw.after = "[3,1,1]";
  rw.detail = "Reshape";
  run.stats.log.push_back(rw);
  report.runs.push_back(run);
  return report;
}

// Options that read the rewrites from `report`.
VerifyOptions ReportedBy(const report::OptReport& report) {
  VerifyOptions options;
  options.report = &report;
  return options;
}

TEST(Verify, UnnamedNodeIsAttributedByItsOutputThroughInsertions) {
  const proto::Model a = Parse(kOriginal);
  const proto::Model b = Parse(kWrongAxis);
  const report::OptReport report = ReportNamingTheAdd();
  VerifyOptions options = ReportedBy(report);
  absl::StatusOr<VerifyResult> r = Verify(a, b, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->divergence.has_value());
  EXPECT_EQ(r->divergence->node_output, "t");
  EXPECT_EQ(r->divergence->pass, "align-ranks");
  EXPECT_EQ(r->divergence->node, "Add#0");
  EXPECT_THAT(FormatVerifyText(*r, "a", "b"), HasSubstr("introduced by pass align-ranks"));

  // The same through the JSON document, as `verify --report FILE` reads it.
  VerifyOptions from_json;
  from_json.report_json = report::FormatOptJson(report);
  r = Verify(a, b, from_json);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->divergence.has_value());
  EXPECT_EQ(r->divergence->pass, "align-ranks");

  // Without a report the unnamed node has its position in the rewritten model, which is not
  // the one the report gives: only the output identifies it across both.
  r = Verify(a, b, {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->divergence.has_value());
  EXPECT_EQ(r->divergence->node, "Add#2");
  EXPECT_EQ(r->divergence->pass, "");
}

TEST(Verify, MalformedReportsAreErrors) {
  const proto::Model a = Parse(kOriginal);
  for (const char* doc : {"{\"passes\": ", "[1, 2]", "{\"model\": \"m\"}", "{\"passes\": {}}",
                          "{\"schema_version\": 99, \"passes\": []}", "{\"passes\": [3]}"}) {
    VerifyOptions options;
    options.report_json = doc;
    absl::StatusOr<VerifyResult> r = Verify(a, a, options);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << doc;
  }
  VerifyOptions missing;
  missing.report_path = "/nonexistent/report.json";
  EXPECT_EQ(Verify(a, a, missing).status().code(), absl::StatusCode::kNotFound);
}

TEST(VerifyJson, OneDocumentWithTheSchemaVersion) {
  const proto::Model a = Parse(kOriginal);
  const proto::Model b = Parse(kWrongAxis);
  const report::OptReport report = ReportNamingTheAdd();
  VerifyOptions options = ReportedBy(report);
  options.samples = 2;
  absl::StatusOr<VerifyResult> r = Verify(a, b, options);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<report::Json> j = report::ParseJson(FormatVerifyJson(*r, "a.onnx", "b.onnx"));
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ((*j)["schema_version"], report::kReportSchemaVersion);
  EXPECT_EQ((*j)["kind"], "verify");
  EXPECT_EQ((*j)["original"], "a.onnx");
  EXPECT_EQ((*j)["rewritten"], "b.onnx");
  EXPECT_EQ((*j)["match"], false);
  ASSERT_EQ((*j)["samples"].size(), 2u);
  const report::Json& out = (*j)["samples"][0]["outputs"][0];
  EXPECT_EQ(out["output"], "y");
  EXPECT_EQ(out["match"], false);
  EXPECT_GT(out["mismatches"].get<int64_t>(), 0);
  // Only exact ops changed, so the comparison is bit-exact: no tolerance applies.
  EXPECT_EQ((*j)["tolerance"]["exact"], true);
  EXPECT_TRUE(out["passing_atol"].is_null());
  EXPECT_GT((*j)["max_abs_error"].get<double>(), 0);
  EXPECT_EQ((*j)["divergence"]["pass"], "align-ranks");
  EXPECT_EQ((*j)["divergence"]["node_output"], "t");
}

TEST(ReportJson, ParsesAndRejects) {
  absl::StatusOr<report::Json> v = report::ParseJson(
      R"({"passes": [{"pass": "align-ranks", "rewrites": [{"node": "n\u00e9", "x": [1, 2.5, true, null]}]}]})");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ((*v)["passes"][0]["rewrites"][0]["node"], "né");
  EXPECT_EQ((*v)["passes"][0]["rewrites"][0]["x"][1], 2.5);
  EXPECT_THAT(std::string(report::ParseJson("{\"a\": }").status().message()), HasSubstr("byte"));
  // Nesting costs no stack: the parser and destructor are iterative.
  EXPECT_TRUE(report::ParseJson(std::string(100000, '[') + std::string(100000, ']')).ok());
  EXPECT_FALSE(report::ParseJson(std::string(500, '[')).ok());
}

// ---- what each model accepts (issue 31 item 1) ------------------------------------------

// `opt --dim N=1` wrote a Reshape to a constant [1,2,4] and declared x as [1,8]: correct at
// N = 1, the only batch the written model accepts. verify used to sample N = 2 and 3 and call
// it DIFFERENT.
const char kDynamicBatch[] = R"(
  <ir_version: 8, opset_import: ["" : 15]>
  g (float[N,8] x) => (float[N,2,4] y) {
    shape = Constant<value = int64[3] {-1, 2, 4}>()
    y = Reshape(x, shape)
  })";
const char kBoundToOne[] = R"(
  <ir_version: 8, opset_import: ["" : 15]>
  g (float[1,8] x) => (float[1,2,4] y) {
    shape = Constant<value = int64[3] {1, 2, 4}>()
    y = Reshape(x, shape)
  })";

TEST(VerifyBound, ADimTheRewrittenModelFixedIsBoundInEverySample) {
  const proto::Model a = Parse(kDynamicBatch);
  const proto::Model b = Parse(kBoundToOne);
  absl::StatusOr<VerifyResult> r = Verify(a, b, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->match) << FormatVerifyText(*r, "a", "b");
  ASSERT_EQ(r->bound.size(), 1u);
  EXPECT_EQ(r->bound[0].symbol, "N");
  EXPECT_EQ(r->bound[0].value, 1);
  EXPECT_EQ(r->bound[0].by, "the rewritten model");
  const std::string text = FormatVerifyText(*r, "a.onnx", "b.onnx");
  EXPECT_THAT(text.substr(0, text.find('\n')),
              HasSubstr("EQUAL (whole-model, bit-exact; N bound to 1 by the rewritten model)"));
  EXPECT_THAT(text, Not(HasSubstr("N=2")));
  EXPECT_THAT(FormatVerifyJson(*r, "a", "b"), HasSubstr(R"("by": "the rewritten model")"));
  // The same from the other side: the original declares the number.
  r = Verify(b, a, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->match);
  ASSERT_EQ(r->bound.size(), 1u);
  EXPECT_EQ(r->bound[0].by, "the original model");
}

// An elementwise rewrite runs at any batch, but the written model accepts only N = 1: samples
// at N = 2 and 3 used to say EQUAL on inputs `run` refuses for it.
TEST(VerifyBound, NoSampleFeedsAnInputTheDeclarationRefuses) {
  const proto::Model a = Parse(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[N,3] x) => (float[N,3] y) { y = Relu(x) })");
  const proto::Model b = Parse(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[1,3] x) => (float[1,3] y) { y = Relu(x) })");
  absl::StatusOr<VerifyResult> r = Verify(a, b, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->match);
  ASSERT_EQ(r->samples.size(), 3u);
  for (const SampleResult& s : r->samples) EXPECT_THAT(s.label, Not(HasSubstr("N=")));
  ASSERT_EQ(r->bound.size(), 1u);
}

TEST(VerifyBound, ExplicitDimsBindAndAreChecked) {
  const proto::Model a = Parse(kDynamicBatch);
  VerifyOptions options;
  options.dims = {{"N", 4}};
  absl::StatusOr<VerifyResult> r = Verify(a, a, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->bound.size(), 1u);
  EXPECT_EQ(r->bound[0].by, "--dim");
  for (const SampleResult& s : r->samples) EXPECT_THAT(s.label, Not(HasSubstr("N=")));
  // A dim the rewritten model fixes to another value: no common input.
  r = Verify(a, Parse(kBoundToOne), options);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsUsageError(r.status()));
  EXPECT_THAT(r.status().message(),
              HasSubstr("--dim N=4: the rewritten model accepts only N=1 (input 'x' axis 0)"));
  // A name neither model has, listed with the ones they have.
  options.dims = {{"Q", 2}};
  options.dims_label = "dims";
  r = Verify(a, a, options);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsUsageError(r.status()));
  EXPECT_THAT(r.status().message(),
              HasSubstr("dims Q: neither model's inputs have a symbol 'Q' (they have N)"));
}

TEST(VerifyBound, ModelsWithNoCommonInputAreAUsageErrorNamingTheDims) {
  const proto::Model two = Parse(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[2,3] x) => (float[2,3] y) { y = Relu(x) })");
  const proto::Model one = Parse(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[1,3] x) => (float[1,3] y) { y = Relu(x) })");
  absl::StatusOr<VerifyResult> r = Verify(two, one, {});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsUsageError(r.status()));
  EXPECT_THAT(r.status().message(),
              HasSubstr("accept no common input: input 'x' axis 0 is 2 in the original model and "
                        "1 in the rewritten model"));
  // One symbol pinned to two numbers by two inputs.
  const proto::Model sym = Parse(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[N,3] x, float[N,3] z) => (float[N,3] y) { y = Add(x, z) })");
  const proto::Model pinned = Parse(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[1,3] x, float[2,3] z) => (float[N,3] y) { y = Add(x, z) })");
  r = Verify(sym, pinned, {});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsUsageError(r.status()));
  EXPECT_THAT(r.status().message(), HasSubstr("N is 1 in the rewritten model (input 'x' axis 0) "
                                              "and 2 in the rewritten model (input 'z' axis 0)"));
  // A rank that differs.
  r = Verify(sym, Parse(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[3] x, float[N,3] z) => (float[N,3] y) { y = Add(x, z) })"),
             {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("input 'x' has rank 2 in the original model and 1"));
}

// A test data input the rewritten model's declaration refuses is never fed: refused as `run`
// refuses it, not compared.
TEST(VerifyBound, TestDataThatContradictsADeclarationIsRefused) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / absl::StrCat("verify_bound_", ::getpid());
  std::filesystem::create_directories(dir);
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(2);
  t.add_dims(8);
  for (int i = 0; i < 16; ++i) t.add_float_data(static_cast<float>(i));
  {
    std::ofstream f(dir / "input_0.pb", std::ios::binary);
    f << t.SerializeAsString();
  }
  VerifyOptions options;
  options.test_data = {dir.string()};
  const proto::Model a = Parse(kDynamicBatch);
  absl::StatusOr<VerifyResult> r = Verify(a, Parse(kBoundToOne), options);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsBadInputError(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("does not accept this input"));
  // The same data fits the original against itself.
  r = Verify(a, a, options);
  EXPECT_TRUE(r.ok()) << r.status();
  std::filesystem::remove_all(dir);
}

TEST(ReportJson, OptReportRoundTrips) {
  report::OptReport report = ReportNamingTheAdd();
  report.model_path = "m.onnx";
  report.target = "explicit";
  report.before.nodes = 2;
  report.after.nodes = 4;
  report.violations = {"Add 'x': rank"};
  absl::StatusOr<report::OptReport> back = report::ParseOptReport(report::FormatOptJson(report));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(report::FormatOptJson(*back), report::FormatOptJson(report));
}

}  // namespace
}  // namespace onnx_bcast::verify
