// DecideNode (analysis/decide_node.h), the one verdict routine: on a model of every op family
// it gives the walk's verdict whether it reads the walk's live values, the analysis's tables
// (the target check), explicit shapes (a pass's candidate) or a verdict's own shapes again
// (dim evaluation); and Gemm's C, PRelu's slope and the legacy axis forms decide as before.
// The walk calls DecideNode too, so agreeing with it proves nothing about the verdicts
// themselves: each source is also held to a verdict written here by hand (issue 43 item 3).
#include "analysis/decide_node.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/analysis_manager.h"
#include "analysis/shape_propagation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"

namespace onnx_bcast::analysis {
namespace {

using ::testing::ElementsAre;

proto::Model Parse(const std::string& text) {
  absl::StatusOr<proto::Model> m = proto::ParseModelText(text);
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << text;
  return m.ok() ? *std::move(m) : proto::Model();
}

Analysis Analyze(const proto::Model& m) {
  absl::StatusOr<Analysis> a = AnalyzeBroadcasts(m, AnalysisOptions());
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *std::move(a) : Analysis();
}

ConstantTensors Constants(const onnx::GraphProto& g) {
  ConstantTensors out;
  for (const onnx::TensorProto& t : g.initializer()) out.emplace(t.name(), &t);
  return out;
}

// Every field the reports and the target check read.
void ExpectSameVerdict(const NodeVerdict& got, const NodeVerdict& want, const std::string& how) {
  const std::string where = how + " " + want.node;
  EXPECT_EQ(got.node, want.node) << where;
  EXPECT_EQ(got.op, want.op) << where;
  EXPECT_EQ(got.rule, want.rule) << where;
  EXPECT_EQ(got.legacy_axis, want.legacy_axis) << where;
  EXPECT_EQ(got.broadcast_class, want.broadcast_class) << where;
  EXPECT_EQ(got.batch_class, want.batch_class) << where;
  EXPECT_EQ(got.verdict, want.verdict) << where;
  EXPECT_EQ(got.inputs, want.inputs) << where;
  EXPECT_EQ(got.input_names, want.input_names) << where;
  EXPECT_EQ(got.output, want.output) << where;
  EXPECT_EQ(got.condition.ToString(), want.condition.ToString()) << where;
  EXPECT_EQ(got.message, want.message) << where;
}

// One node of every family: numpy (binary, comparison, logic, variadic, Where), PRelu, Gemm's
// C (transposed), MatMul's batch dims, Expand; ok, conditional and error verdicts.
constexpr char kFamilies[] = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[N,3,4] x, float[3,1] b, float[5] c, float[4,3] a, float[5,4] w, float[2,1,4,3] p,
   float[7,3,6] q, bool[3,4] m, float[N] n, bool[N,3,4] bx, float[2,3] bad)
  => (float[N,3,4] y0, float[N,3,4] y1, bool[N,3,4] y2, bool[N,3,4] y3, float[N,3,4] y4,
      float[N,3,4] y5, float[N,3,4] y6, float[4,5] y7, float[2,7,4,6] y8, float[N,3,4] y9,
      float[N,3,4] y10, float[2,3,4] y11, float[N,3,4] y12)
  <int64[3] s = {2,3,4}> {
  y0 = Add (x, b)
  y1 = Pow (x, n)
  y2 = Less (x, b)
  y3 = And (bx, m)
  y4 = Sum (x, b, n)
  y5 = Where (m, x, b)
  y6 = PRelu (x, b)
  y7 = Gemm <transB = 1> (a, w, c)
  y8 = MatMul (p, q)
  y9 = Max (x, bad)
  sh = Shape (x)
  y10 = Expand (b, sh)
  y11 = Expand (b, s)
  y12 = Mul (x, bad)
})";

// The legacy forms of opset 6: broadcast=1 with an axis, broadcast=0, per-channel PRelu, Gemm
// with and without broadcast, and a variadic op that needs equal shapes.
constexpr char kLegacy[] = R"(<ir_version: 3, opset_import: ["" : 6]>
g (float[2,3,4,5] x, float[3,4] b, float[3] s, float[4,3] a, float[3,5] w, float[5] c,
   float[4,5] d, float[2,3,4,5] e)
  => (float[2,3,4,5] y0, float[2,3,4,5] y1, float[2,3,4,5] y2, float[4,5] y3, float[4,5] y4,
      float[2,3,4,5] y5, float[2,3,4,5] y6) {
  y0 = Sub <broadcast = 1, axis = 1> (x, b)
  y1 = Add <broadcast = 1> (x, c)
  y2 = PRelu (x, s)
  y3 = Gemm <broadcast = 1> (a, w, c)
  y4 = Gemm (a, w, d)
  y5 = Sum (x, e)
  y6 = Mul <broadcast = 1, axis = 2> (x, b)
})";

// One verdict on one line: every field ExpectSameVerdict compares but the place.
std::string Line(const NodeVerdict& v) {
  std::vector<std::string> inputs;
  for (const broadcast::Shape& s : v.inputs) inputs.push_back(s.ToString());
  std::string line =
      absl::StrCat(v.node, " ", std::string(broadcast::RuleName(v.rule)), " ", BroadcastClassText(v),
                   " ", std::string(broadcast::VerdictName(v.verdict)), " ", absl::StrJoin(inputs, " "),
                   " -> ", v.output.ToString());
  if (v.legacy_axis) absl::StrAppend(&line, " axis ", *v.legacy_axis);
  if (const std::string c = v.condition.ToString(); !c.empty() && c != "true") {
    absl::StrAppend(&line, " if ", c);
  }
  if (!v.message.empty()) absl::StrAppend(&line, ": ", v.message);
  return line;
}

// The verdicts of kFamilies' broadcasting nodes, in graph order, written by hand (node, rule,
// class, verdict, input shapes in report order -> output, condition, message).
const std::vector<std::string>& FamiliesVerdicts() {
  static const auto* const kLines = new std::vector<std::string>{
      "Add#0 numpy per-channel ok [N,3,4] [3,1] -> [N,3,4]",
      "Pow#1 numpy general conditional [N,3,4] [N] -> [N,3,4] if N ∈ {1, 4}: Pow 'Pow#1': A "
      "[N,3,4] and B [N] broadcast (numpy rule) only if N ∈ {1, 4}",
      "Less#2 numpy per-channel ok [N,3,4] [3,1] -> [N,3,4]",
      "And#3 numpy inner-axis ok [N,3,4] [3,4] -> [N,3,4]",
      "Sum#4 numpy general conditional [N,3,4] [3,1] [N] -> [N,3,4] if N ∈ {1, 4}: Sum 'Sum#4': "
      "data_0 [N,3,4], data_1 [3,1] and data_2 [N] broadcast (numpy rule) only if N ∈ {1, 4}",
      "Where#5 numpy general ok [3,4] [N,3,4] [3,1] -> [N,3,4]",
      "PRelu#6 unidirectional unidirectional ok [N,3,4] [3,1] -> [N,3,4]",
      "Gemm#7 unidirectional unidirectional ok [5] [4,5] -> [4,5]",
      "MatMul#8 matmul matmul-batch:bidirectional ok [2,1,4,3] [7,3,6] -> [2,7,4,6]",
      "Max#9 numpy invalid error [N,3,4] [2,3] -> [N,?,?]: Max 'Max#9': data_0 [N,3,4] and "
      "data_1 [2,3] are not broadcastable (numpy rule, axis 1: 3 vs 2)",
      "Expand#11 bidirectional bidirectional ok [3,1] [N,3,4] -> [N,3,4]",
      "Expand#12 bidirectional bidirectional ok [3,1] [2,3,4] -> [2,3,4]",
      "Mul#13 numpy invalid error [N,3,4] [2,3] -> [N,?,?]: Mul 'Mul#13': A [N,3,4] and B [2,3] "
      "are not broadcastable (numpy rule, axis 1: 3 vs 2)",
  };
  return *kLines;
}

// The same for kLegacy (opset 6).
const std::vector<std::string>& LegacyVerdicts() {
  static const auto* const kLines = new std::vector<std::string>{
      "Sub#0 legacy-axis legacy-axis ok [2,3,4,5] [3,4] -> [2,3,4,5] axis 1",
      "Add#1 legacy-axis legacy-axis ok [2,3,4,5] [5] -> [2,3,4,5]",
      "PRelu#2 legacy-axis legacy-axis ok [2,3,4,5] [3] -> [2,3,4,5] axis 1",
      "Gemm#3 unidirectional unidirectional ok [5] [4,5] -> [4,5]",
      "Gemm#4 none unidirectional ok [4,5] [4,5] -> [4,5]",
      "Sum#5 none same ok [2,3,4,5] [2,3,4,5] -> [2,3,4,5]",
      "Mul#6 legacy-axis invalid error [2,3,4,5] [3,4] -> [2,3,4,5] axis 2: Mul 'Mul#6' (opset 6, "
      "broadcast=1, axis=2): B [3,4] does not fit A [2,3,4,5] (legacy-axis rule, axis 2: 4 vs 3)",
  };
  return *kLines;
}

// Whatever the source, DecideNode gives the walk's verdict of every node, and that verdict is
// the one written in `want` (one line per broadcasting node, in graph order).
void ExpectEverySourceAgrees(const std::string& text, const std::vector<std::string>& want) {
  const proto::Model m = Parse(text);
  const Analysis a = Analyze(m);
  absl::StatusOr<ShapeTables> tables = ComputeShapeTables(m);
  ASSERT_TRUE(tables.ok()) << tables.status();
  const onnx::GraphProto& g = m.proto.graph();
  const ConstantTensors constants = Constants(g);
  const TableShapes from_tables(*tables, &constants, m.base_dir);
  const int64_t opset = m.proto.opset_import(0).version();
  size_t next = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    DecideOptions main;
    main.main_graph_index = i;
    NodeVerdict v;
    if (!DecideNode(n, opset, from_tables, &v, main)) continue;
    ASSERT_LT(next, a.nodes.size());
    const NodeVerdict& walk = a.nodes[next++];
    ExpectSameVerdict(v, walk, "tables");
    if (next <= want.size()) {
      EXPECT_EQ(Line(v), want[next - 1]);
    }
    if (n.op_type() != "Expand") {
      // A pass hands the shapes in the node's input order.
      std::vector<broadcast::Shape> given;
      for (const std::string& in : n.input()) {
        const broadcast::Shape* s = tables->FindShape(in);
        given.push_back(s != nullptr ? *s : broadcast::Shape::UnknownRank());
      }
      NodeVerdict p;
      ASSERT_TRUE(DecideNode(n, opset, GivenShapes(given), &p, main));
      ExpectSameVerdict(p, walk, "given");
    }
    NodeVerdict again;
    ASSERT_TRUE(DecideAgain(walk, walk.inputs, &again)) << walk.node;
    ExpectSameVerdict(again, walk, "again");
  }
  // Both counts, against the number written by hand: two empty lists would agree.
  EXPECT_EQ(next, want.size());
  EXPECT_EQ(a.nodes.size(), want.size());
}

TEST(DecideNode, EveryFamilyDecidesAsTheWalkFromEverySource) {
  ExpectEverySourceAgrees(kFamilies, FamiliesVerdicts());
}

TEST(DecideNode, LegacyFormsDecideAsTheWalkFromEverySource) {
  ExpectEverySourceAgrees(kLegacy, LegacyVerdicts());
}

// What the walk (and so DecideNode) says of the forms with their own rule.
TEST(DecideNode, GemmPReluAndLegacyAxisKeepTheirRules) {
  const Analysis modern = Analyze(Parse(kFamilies));
  const NodeVerdict& prelu = modern.nodes[6];
  EXPECT_EQ(prelu.op, "PRelu");
  EXPECT_EQ(prelu.rule, broadcast::RuleFamily::kUnidirectional);
  EXPECT_EQ(BroadcastClassText(prelu), "unidirectional");
  EXPECT_EQ(prelu.verdict, broadcast::Verdict::kOk);
  const NodeVerdict& gemm = modern.nodes[7];
  EXPECT_EQ(gemm.rule, broadcast::RuleFamily::kUnidirectional);
  EXPECT_EQ(gemm.verdict, broadcast::Verdict::kOk);
  EXPECT_THAT(gemm.input_names, ElementsAre("c", "(M,N) of a·w"));
  EXPECT_EQ(gemm.inputs[1].ToString(), "[4,5]");  // transB: N from w's first axis
  EXPECT_EQ(BroadcastClassText(modern.nodes[8]), "matmul-batch:bidirectional");

  const Analysis legacy = Analyze(Parse(kLegacy));
  ASSERT_EQ(legacy.nodes.size(), 7u);
  EXPECT_EQ(legacy.nodes[0].rule, broadcast::RuleFamily::kLegacyAxis);
  EXPECT_EQ(legacy.nodes[0].legacy_axis, 1);
  EXPECT_EQ(BroadcastClassText(legacy.nodes[0]), "legacy-axis");
  EXPECT_EQ(legacy.nodes[0].verdict, broadcast::Verdict::kOk);
  EXPECT_EQ(legacy.nodes[2].rule, broadcast::RuleFamily::kLegacyAxis);  // per-channel slope
  EXPECT_EQ(legacy.nodes[2].legacy_axis, 1);
  EXPECT_EQ(legacy.nodes[2].verdict, broadcast::Verdict::kOk);
  EXPECT_EQ(legacy.nodes[3].rule, broadcast::RuleFamily::kUnidirectional);
  EXPECT_EQ(legacy.nodes[4].rule, broadcast::RuleFamily::kNone);  // Gemm-6 without broadcast
  EXPECT_EQ(legacy.nodes[4].verdict, broadcast::Verdict::kOk);
  EXPECT_EQ(legacy.nodes[5].rule, broadcast::RuleFamily::kNone);
  EXPECT_EQ(BroadcastClassText(legacy.nodes[5]), "same");
  EXPECT_EQ(legacy.nodes[6].verdict, broadcast::Verdict::kError);  // [3,4] at axis 2 of [2,3,4,5]
  EXPECT_EQ(BroadcastClassText(legacy.nodes[6]), "invalid");
}

// The same nodes at other shapes: Gemm's C against a new (M,N), the legacy axis kept.
TEST(DecideNode, DecideAgainKeepsGemmsOperandOrderAndTheLegacyAxis) {
  const Analysis modern = Analyze(Parse(kFamilies));
  const NodeVerdict& gemm = modern.nodes[7];
  NodeVerdict v;
  ASSERT_TRUE(DecideAgain(gemm, {broadcast::Shape::Of({3}), broadcast::Shape::Of({4, 5})}, &v));
  EXPECT_EQ(v.verdict, broadcast::Verdict::kError);
  EXPECT_EQ(v.message,
            "Gemm 'Gemm#7': C [3] is not unidirectionally broadcastable to (M,N) [4,5] (axis 1: "
            "3 vs 5)");
  ASSERT_TRUE(DecideAgain(gemm, {broadcast::Shape::Of({4, 1}), broadcast::Shape::Of({4, 5})}, &v));
  EXPECT_EQ(v.verdict, broadcast::Verdict::kOk);
  EXPECT_THAT(v.input_names, ElementsAre("c", "(M,N) of a·w"));

  const Analysis legacy = Analyze(Parse(kLegacy));
  ASSERT_TRUE(
      DecideAgain(legacy.nodes[0], {broadcast::Shape::Of({2, 3, 4, 5}), broadcast::Shape::Of({4, 5})}, &v));
  EXPECT_EQ(v.verdict, broadcast::Verdict::kError);  // axis 1 still: [4,5] against 3,4
  EXPECT_EQ(v.legacy_axis, 1);
  ASSERT_TRUE(DecideAgain(legacy.nodes[4], {broadcast::Shape::Of({5}), broadcast::Shape::Of({4, 5})}, &v));
  EXPECT_EQ(v.rule, broadcast::RuleFamily::kNone);
  EXPECT_EQ(v.verdict, broadcast::Verdict::kError);
}

}  // namespace
}  // namespace onnx_bcast::analysis
