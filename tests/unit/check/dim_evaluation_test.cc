// check --dim's evaluation (passes/dim_evaluation): outcomes against brute force, failing
// messages equal to the proven error of the same model with the numbers written in, the JSON
// and text forms, and usage errors.
#include "analysis/dim_evaluation.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "analysis/decide_node.h"
#include "analysis/shape_propagation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "report/check_report.h"
#include "report/report_json.h"

namespace onnx_bcast::analysis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kFixtures = BCAST_SOURCE_DIR "/tests/fixtures/check/";

Analysis AnalyzeText(const std::string& text) {
  absl::StatusOr<proto::Model> m = proto::ParseModelText(text);
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << text;
  if (!m.ok()) return Analysis();
  absl::StatusOr<Analysis> a = AnalyzeBroadcasts(*m, AnalysisOptions());
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *a : Analysis();
}

Analysis AnalyzeFile(const std::string& name) {
  absl::StatusOr<proto::Model> m = proto::LoadModel(kFixtures + name);
  EXPECT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Analysis> a = AnalyzeBroadcasts(*m, AnalysisOptions());
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *a : Analysis();
}

DimEvaluation Eval(const Analysis& a, const DimBindings& b) {
  absl::StatusOr<DimEvaluation> e = EvaluateAtDims(a, b);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? *e : DimEvaluation();
}

TEST(DimEvaluation, ConditionalNodeHoldsExactlyWhereItsConditionDoes) {
  const Analysis a = AnalyzeFile("symbolic_batch.onnxtxt");
  ASSERT_EQ(a.nodes.size(), 1u);
  ASSERT_EQ(a.nodes[0].verdict, broadcast::Verdict::kConditional);
  for (int64_t n = 1; n <= 12; ++n) {
    const DimEvaluation e = Eval(a, {{"N", n}});
    const bool holds = n == 1 || n == 5;
    EXPECT_EQ(e.nodes[0].outcome, holds ? DimOutcome::kHolds : DimOutcome::kFails) << n;
    EXPECT_EQ(e.fails, holds ? 0 : 1);
    EXPECT_EQ(e.first_failure, holds ? -1 : 0);
    EXPECT_EQ(e.combined, holds);
  }
  const DimEvaluation e = Eval(a, {{"N", 3}});
  EXPECT_EQ(e.nodes[0].message,
            "Add 'Add#0': A [3,3] and B [5,3] are not broadcastable (numpy rule, axis 0: 3 vs 5)");
  EXPECT_THAT(e.nodes[0].inputs, ElementsAre(broadcast::Shape::Of({3, 3}), broadcast::Shape::Of({5, 3})));
}

TEST(DimEvaluation, UnboundSymbolsStayConditional) {
  const Analysis a = AnalyzeFile("golden_fpn_lateral.onnxtxt");
  ASSERT_EQ(a.nodes.size(), 1u);
  const DimEvaluation partial = Eval(a, {{"H", 4}});
  EXPECT_EQ(partial.nodes[0].outcome, DimOutcome::kConditional);
  EXPECT_THAT(partial.nodes[0].unbound, ElementsAre("W"));
  // What remains once H is known.
  EXPECT_EQ(partial.nodes[0].message, "W == 1 or W mod 2 == 0");
  EXPECT_THAT(partial.unbound, ElementsAre("W"));
  EXPECT_EQ(partial.conditional, 1);
  EXPECT_FALSE(partial.combined.has_value());
  // A binding that already breaks the condition fails whatever the unbound symbols are.
  const DimEvaluation broken = Eval(a, {{"H", 3}});
  EXPECT_EQ(broken.nodes[0].outcome, DimOutcome::kFails);
  EXPECT_EQ(broken.combined, false);
  // No bindings: the verdicts as they are.
  const DimEvaluation none = Eval(a, {});
  EXPECT_EQ(none.conditional, 1);
  EXPECT_THAT(none.unbound, ElementsAre("H", "W"));
}

// The outcome at (H, W) against numpy broadcasting of the shapes computed by hand: a
// stride-2 3x3 conv with pad 1 gives ceil(H/2), upsampled x2; the lateral path keeps H.
TEST(DimEvaluation, FpnLateralAgreesWithBruteForce) {
  const Analysis a = AnalyzeFile("golden_fpn_lateral.onnxtxt");
  auto fits = [](int64_t d) {
    const int64_t up = 2 * ((d + 1) / 2);
    return d == up || d == 1 || up == 1;
  };
  for (int64_t h = 1; h <= 40; ++h) {
    for (int64_t w = 1; w <= 40; w += 3) {
      const DimEvaluation e = Eval(a, {{"N", 2}, {"H", h}, {"W", w}});
      const bool holds = fits(h) && fits(w);
      ASSERT_EQ(e.nodes[0].outcome, holds ? DimOutcome::kHolds : DimOutcome::kFails)
          << "H=" << h << " W=" << w;
      if (!holds) {
        EXPECT_THAT(e.nodes[0].message, HasSubstr("are not broadcastable (numpy rule, axis "));
        EXPECT_THAT(e.nodes[0].message,
                    HasSubstr(absl::StrCat("A [2,1,", h, ",", w, "] and B [2,1,", 2 * ((h + 1) / 2),
                                           ",", 2 * ((w + 1) / 2), "]")));
      }
    }
  }
}

// The message at bound dims is the proven error of the same model with those numbers in its
// input shapes: one code path for both.
struct MessageCase {
  std::string model;  // with symbols
  DimBindings failing;
};

std::string Bind(std::string text, const DimBindings& b) {
  std::vector<std::pair<std::string, std::string>> repl;
  for (const auto& [s, v] : b) repl.push_back({absl::StrCat("$", s), absl::StrCat(v)});
  return absl::StrReplaceAll(text, repl);
}

TEST(DimEvaluation, FailingMessageEqualsTheProvenErrorWithNumbersWrittenIn) {
  const std::vector<MessageCase> cases = {
      {R"(<ir_version: 8, opset_import: ["" : 15]>
          g (float[$N,3] a, float[5,3] b) => (float[5,3] y) { y = Add(a, b) })",
       {{"N", 4}}},
      {R"(<ir_version: 8, opset_import: ["" : 15]>
          g (float[$M,8] a, float[8,4] b, float[$P] c) => (float[$M,4] y) { y = Gemm(a, b, c) })",
       {{"M", 2}, {"P", 3}}},
      {R"(<ir_version: 8, opset_import: ["" : 15]>
          g (float[2,$C,5] x, float[$S,1] s) => (float[2,$C,5] y) { y = PRelu(x, s) })",
       {{"C", 3}, {"S", 2}}},
      {R"(<ir_version: 8, opset_import: ["" : 15]>
          g (float[$B,3,4] a, float[2,4,5] b) => (float[2,3,5] y) { y = MatMul(a, b) })",
       {{"B", 3}}},
      {R"(<ir_version: 8, opset_import: ["" : 15]>
          g (float[$N,3] a, float[$M,3] b, float[4,3] c) => (float[4,3] y) { y = Sum(a, b, c) })",
       {{"M", 4}, {"N", 2}}},
      {R"(<ir_version: 8, opset_import: ["" : 15]>
          g (bool[$N] c, float[3] x, float[3] y) => (float[3] z) { z = Where(c, x, y) })",
       {{"N", 2}}},
      {R"(<ir_version: 8, opset_import: ["" : 15]>
          g (float[$N,1] x, float[$M,3] t) => (float[$M,3] y) {
            s = Shape(t)
            y = Expand(x, s)
          })",
       {{"M", 2}, {"N", 5}}},
  };
  for (const MessageCase& c : cases) {
    DimBindings symbolic_names;
    std::string symbolic = c.model;
    for (const auto& [s, v] : c.failing) {
      symbolic = absl::StrReplaceAll(symbolic, {{absl::StrCat("$", s), s}});
    }
    const Analysis a = AnalyzeText(symbolic);
    const Analysis concrete = AnalyzeText(Bind(c.model, c.failing));
    ASSERT_EQ(a.nodes.size(), 1u) << symbolic;
    ASSERT_EQ(concrete.nodes.size(), 1u);
    EXPECT_EQ(a.nodes[0].verdict, broadcast::Verdict::kConditional) << a.nodes[0].message;
    ASSERT_EQ(concrete.nodes[0].verdict, broadcast::Verdict::kError) << concrete.nodes[0].message;
    const DimEvaluation e = Eval(a, c.failing);
    EXPECT_EQ(e.nodes[0].outcome, DimOutcome::kFails) << symbolic;
    EXPECT_EQ(e.nodes[0].message, concrete.nodes[0].message) << symbolic;
  }
}

// DecideAgain on a verdict's own shapes reproduces every verdict and message the walk wrote.
TEST(DimEvaluation, RuleReplayReproducesTheWalksMessages) {
  for (const char* name :
       {"add_mismatch.onnxtxt", "gemm_bad_c.onnxtxt", "prelu_bad_slope.onnxtxt",
        "sum_third_conflicts.onnxtxt", "where_bad_condition.onnxtxt", "symbolic_batch.onnxtxt",
        "golden_fpn_lateral.onnxtxt", "golden_unnamed_dims.onnxtxt", "golden_pow_scalar.onnxtxt"}) {
    const Analysis a = AnalyzeFile(name);
    ASSERT_FALSE(a.nodes.empty()) << name;
    for (const NodeVerdict& v : a.nodes) {
      NodeVerdict again;
      ASSERT_TRUE(DecideAgain(v, v.inputs, &again)) << name << " " << v.node;
      EXPECT_EQ(again.verdict, v.verdict) << name << " " << v.node;
      EXPECT_EQ(again.message, v.message) << name << " " << v.node;
      EXPECT_EQ(again.broadcast_class, v.broadcast_class) << name << " " << v.node;
      EXPECT_EQ(again.output, v.output) << name << " " << v.node;
    }
  }
}

TEST(DimEvaluation, UsageErrorsNameTheModelsSymbols) {
  const Analysis a = AnalyzeFile("golden_fpn_lateral.onnxtxt");
  EXPECT_THAT(AnalysisSymbols(a), ElementsAre("H", "N", "W"));
  absl::StatusOr<DimEvaluation> e = EvaluateAtDims(a, {{"Q", 3}});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(e.status().message(), "--dim Q: the model has no symbol 'Q' (its symbols: H, N, W)");
  e = EvaluateAtDims(a, {{"H", 0}});
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("extents >= 1"));
}

TEST(DimEvaluation, PartialBindingLeavesTheResidualOfARelation) {
  const Analysis a = AnalyzeText(R"(<ir_version: 8, opset_import: ["" : 15]>
      g (float[N,S,P] x, float[N,1,T] m) => (float[N,S,P] y) { y = Add(x, m) })");
  ASSERT_EQ(a.nodes.size(), 1u);
  const DimEvaluation e = Eval(a, {{"P", 7}});
  EXPECT_EQ(e.nodes[0].outcome, DimOutcome::kConditional);
  EXPECT_EQ(e.nodes[0].message, "T ∈ {1, 7}");
  EXPECT_THAT(e.nodes[0].unbound, ElementsAre("T"));
}

TEST(DimEvaluation, ValuesThatOverflowAreUnknownNotConditional) {
  // T == A + B or T == 1 (A + B >= 2): A + B overflows at these values.
  const Analysis a = AnalyzeText(R"(<ir_version: 8, opset_import: ["" : 15]>
      g (float[A] x, float[B] y, float[T] m) => (float[?] z) {
        c = Concat<axis = 0>(x, y)
        z = Add(c, m)
      })");
  ASSERT_EQ(a.nodes.size(), 1u);
  ASSERT_EQ(a.nodes[0].verdict, broadcast::Verdict::kConditional) << a.nodes[0].message;
  EXPECT_EQ(Eval(a, {{"A", 2}, {"B", 3}, {"T", 5}}).nodes[0].outcome, DimOutcome::kHolds);
  EXPECT_EQ(Eval(a, {{"A", 2}, {"B", 3}, {"T", 4}}).nodes[0].outcome, DimOutcome::kFails);
  const DimEvaluation e = Eval(a, {{"A", INT64_MAX}, {"B", 5}, {"T", 4}});
  EXPECT_EQ(e.nodes[0].outcome, DimOutcome::kUnknown);
  EXPECT_THAT(e.nodes[0].message, HasSubstr("int64 overflow"));
  EXPECT_TRUE(e.unbound.empty());
  EXPECT_EQ(e.unknown, 1);
}

TEST(DimEvaluation, MultiSymbolConditionsEvaluateExactly) {
  // Two unnamed dims: x:0 == m:0 or either is 1.
  const Analysis a = AnalyzeText(R"(<ir_version: 8, opset_import: ["" : 15]>
      g (float[?,3] x, float[?,1] m) => (float[?,3] y) { y = Add(x, m) })");
  ASSERT_EQ(a.nodes.size(), 1u);
  ASSERT_EQ(a.nodes[0].verdict, broadcast::Verdict::kConditional);
  for (int64_t p = 1; p <= 6; ++p) {
    for (int64_t q = 1; q <= 6; ++q) {
      const DimEvaluation e = Eval(a, {{"x:0", p}, {"m:0", q}});
      EXPECT_EQ(e.nodes[0].outcome,
                p == q || p == 1 || q == 1 ? DimOutcome::kHolds : DimOutcome::kFails);
    }
  }
}

TEST(DimEvaluationReport, TextNamesFailuresAndUnboundSymbols) {
  const Analysis a = AnalyzeFile("golden_fpn_lateral.onnxtxt");
  DimEvaluation e = Eval(a, {{"H", 3}, {"W", 4}});
  std::string text = report::FormatCheckText(a, "m.onnx", false, &e);
  EXPECT_THAT(text, HasSubstr("\nAt H=3, W=4: 1 fail, 0 hold, 0 still conditional, 0 unknown\n"
                              "  fails: Add 'Add#3': A [N,1,3,4] and B [N,1,4,4] are not "
                              "broadcastable (numpy rule, axis 2: 3 vs 4)\n"));
  e = Eval(a, {{"H", 4}});
  text = report::FormatCheckText(a, "m.onnx", false, &e);
  EXPECT_THAT(text, HasSubstr("At H=4: 0 fail, 0 hold, 1 still conditional (symbols not bound: "
                              "W), 0 unknown\n  conditional: Add 'Add#3' needs "));
  // Without bindings the report is unchanged.
  EXPECT_EQ(report::FormatCheckText(a, "m.onnx", false), report::FormatCheckText(a, "m.onnx", false, nullptr));
  EXPECT_THAT(report::FormatCheckText(a, "m.onnx", false), ::testing::Not(HasSubstr("\nAt ")));
}

TEST(DimEvaluationReport, JsonGivesConditionsAsDataAndTheEvaluation) {
  const Analysis a = AnalyzeText(R"(<ir_version: 8, opset_import: ["" : 15]>
      g (float[N,3] a, float[5,3] b, float[T] m, float[P,S] q) => (float[5,3] y, float[P,?] z) {
        y = Add(a, b)
        z = Add(q, m)
      })");
  ASSERT_EQ(a.nodes.size(), 2u);
  const DimEvaluation e = Eval(a, {{"N", 5}, {"S", 4}, {"T", 3}});
  absl::StatusOr<report::Json> j = report::ParseJson(report::FormatCheckJson(a, "m.onnx", false, &e));
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ((*j)["schema_version"], report::kReportSchemaVersion);
  EXPECT_EQ((*j)["kind"], "check");
  const report::Json& nodes = (*j)["nodes"];
  ASSERT_EQ(nodes.size(), 2u);
  // Node 0: N ∈ {1, 5}, holds at N=5.
  const report::Json& add = nodes[0];
  const report::Json& cond = add["condition"];
  ASSERT_TRUE(cond.is_object());
  EXPECT_EQ(cond["symbols"], report::Json::array({"N"}));
  const report::Json& atom = cond["clauses"][0][0];
  EXPECT_EQ(atom["lhs"], "N");
  EXPECT_EQ(atom["rhs"], "1");
  EXPECT_EQ(atom["symbols"][0], "N");
  const report::Json& set = cond["sets"]["N"];
  EXPECT_EQ(set["text"], "N ∈ {1, 5}");
  EXPECT_EQ(set["small"].size(), 2u);
  EXPECT_TRUE(set["residues"].empty());
  EXPECT_EQ(add["at_dims"]["outcome"], "holds");
  // Node 1: S == T or S == 1 or T == 1 (several symbols), fails at S=4, T=3.
  const report::Json& z = nodes[1];
  const report::Json& zc = z["condition"];
  ASSERT_EQ(zc["symbols"].size(), 2u);
  bool related = false;
  for (const report::Json& clause : zc["clauses"]) {
    for (const report::Json& at : clause) related |= at["symbols"].size() == 2;
  }
  EXPECT_TRUE(related);
  EXPECT_EQ(z["at_dims"]["outcome"], "fails");
  EXPECT_THAT(z["at_dims"]["message"].get<std::string>(), HasSubstr("A [P,4] and B [3]"));
  // The combined condition per symbol, with the node imposing each part.
  const report::Json& per = (*j)["combined_condition"]["per_symbol"];
  EXPECT_EQ(per["N"]["set"], "N ∈ {1, 5}");
  ASSERT_EQ(per["N"]["imposed_by"].size(), 1u);
  EXPECT_EQ(per["N"]["imposed_by"][0]["node"], "Add#0");
  EXPECT_TRUE(per["S"]["set"].is_null());
  EXPECT_EQ(per["S"]["clauses"].size(), 1u);
  EXPECT_EQ(per["T"]["imposed_by"][0]["node"], "Add#1");
  // The document's evaluation.
  const report::Json& at = (*j)["at_dims"];
  EXPECT_EQ(at["bindings"]["N"], 5);
  EXPECT_EQ(at["fails"], 1);
  EXPECT_EQ(at["holds"], 1);
  EXPECT_EQ(at["combined"], false);
  EXPECT_EQ(at["first_failure"]["node"], "Add#1");
  // Without bindings: no evaluation members.
  j = report::ParseJson(report::FormatCheckJson(a, "m.onnx", false));
  ASSERT_TRUE(j.ok());
  EXPECT_FALSE(j->contains("at_dims"));
  EXPECT_FALSE((*j)["nodes"][0].contains("at_dims"));
}

}  // namespace
}  // namespace onnx_bcast::analysis
