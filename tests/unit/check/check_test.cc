// `check` analysis: verdicts, messages, conditions combined across nodes, subgraphs and
// functions, lint, annotation, JSON; and agreement with the ONNX test data's recorded outputs.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/shape_propagation.h"
#include "engines/lints.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "proto/shapes.h"
#include "report/check_report.h"
#include "report/report_json.h"

namespace onnx_bcast::analysis {
namespace {

namespace fs = std::filesystem;
using broadcast::Verdict;
using ::testing::HasSubstr;

Analysis Analyze(const std::string& text, bool lint = false,
                 onnx::ModelProto* annotated = nullptr) {
  absl::StatusOr<proto::Model> model = proto::ParseModelText(text);
  EXPECT_TRUE(model.ok()) << model.status();
  AnalysisOptions options;
  options.lint = lint;
  // What the driver hands in: the engines' lints (the analysis names no engine).
  options.binary_lints = engines::EngineLints();
  absl::StatusOr<Analysis> a = AnalyzeBroadcasts(*model, options, annotated);
  EXPECT_TRUE(a.ok()) << a.status();
  return *a;
}

const NodeVerdict& Only(const Analysis& a) {
  EXPECT_EQ(a.nodes.size(), 1u);
  return a.nodes.at(0);
}

struct Case {
  std::string name;
  std::string text;
  Verdict verdict;
  std::string message;  // exact, for errors and conditions
  std::string output;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class CheckCase : public ::testing::TestWithParam<Case> {};

TEST_P(CheckCase, VerdictAndMessage) {
  const Case& c = GetParam();
  Analysis a = Analyze(c.text);
  const NodeVerdict& v = Only(a);
  EXPECT_EQ(v.verdict, c.verdict) << v.message;
  EXPECT_EQ(v.message, c.message);
  EXPECT_EQ(v.output.ToString(), c.output);
  EXPECT_EQ(a.HasError(), c.verdict == Verdict::kError);
}

std::string Model(const std::string& inputs, const std::string& outputs, const std::string& body,
                  int opset = 15, const std::string& inits = "") {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\n g (" + inputs +
         ") => (" + outputs + ") " + inits + " {\n" + body + "\n}";
}

std::vector<Case> Cases() {
  return {
      {"GemmCDoesNotFitMN",
       Model("float[M,5] a, float[5,5] b", "float[M,5] y", "y = Gemm(a, b, c)", 15,
             "<float[7] c = {1.0,2.0,3.0,4.0,5.0,6.0,7.0}>"),
       Verdict::kError,
       "Gemm 'Gemm#0': C [7] is not unidirectionally broadcastable to (M,N) [M,5] (axis 1: 7 vs 5)",
       "[M,5]"},
      {"GemmTransposedVectorBias",
       Model("float[4,M] a, float[10,4] b, float[10] c", "float[M,10] y",
             "y = Gemm<transA=1, transB=1>(a, b, c)"),
       Verdict::kOk, "", "[M,10]"},
      {"PReluSlopeDoesNotFit", Model("float[2,3] x, float[4] s", "float[2,3] y", "y = PRelu(x, s)"),
       Verdict::kError,
       "PRelu 'PRelu#0': slope [4] is not unidirectionally broadcastable to X [2,3] (axis 1: 4 vs "
       "3)",
       "[2,3]"},
      {"PReluPerChannelSlope",
       Model("float[N,3,4,4] x, float[3,1,1] s", "float[N,3,4,4] y", "y = PRelu(x, s)"),
       Verdict::kOk, "", "[N,3,4,4]"},
      {"AddMismatch", Model("float[2,3] a, float[4,3] b", "float[2,3] y", "y = Add(a, b)"),
       Verdict::kError,
       "Add 'Add#0': A [2,3] and B [4,3] are not broadcastable (numpy rule, axis 0: 2 vs 4)",
       "[?,3]"},
      {"WhereConditionConflicts",
       Model("bool[4] c, float[2,3] x, float[2,3] z", "float[2,3] y", "y = Where(c, x, z)"),
       Verdict::kError,
       "Where 'Where#0': condition [4], X [2,3] and Y [2,3] are not broadcastable (numpy rule, "
       "axis 1: 4 vs 3; condition 'c' conflicts)",
       "[2,?]"},
      {"SumThirdInputConflicts",
       Model("float[2,3] a, float[1,3] b, float[4,3] c", "float[2,3] y", "y = Sum(a, b, c)"),
       Verdict::kError,
       "Sum 'Sum#0': data_0 [2,3], data_1 [1,3] and data_2 [4,3] are not broadcastable (numpy "
       "rule, axis 0: 2 vs 4; data_2 'c' conflicts)",
       "[?,3]"},
      {"SymbolicConditional", Model("float[N,3] a, float[5,3] b", "float[5,3] y", "y = Add(a, b)"),
       Verdict::kConditional,
       "Add 'Add#0': A [N,3] and B [5,3] broadcast (numpy rule) only if N ∈ {1, 5}", "[5,3]"},
      {"TwoSymbols", Model("float[N,3] a, float[M,3] b", "float[N,3] y", "y = Mul(a, b)"),
       Verdict::kConditional,
       "Mul 'Mul#0': A [N,3] and B [M,3] broadcast (numpy rule) only if N == M or N == 1 or M == 1",
       "[max(M, N),3]"},
      // An unnamed input dim is the symbol "<input>:<axis>" (docs/symbolic-shapes.md).
      {"UnnamedDimIsASymbol", Model("float[?,3] a, float[5,3] b", "float[5,3] y", "y = Add(a, b)"),
       Verdict::kConditional,
       "Add 'Add#0': A [a:0,3] and B [5,3] broadcast (numpy rule) only if a:0 ∈ {1, 5}", "[5,3]"},
      {"ZeroSizeWithOne", Model("float[0,3] a, float[1,3] b", "float[0,3] y", "y = Add(a, b)"),
       Verdict::kOk, "", "[0,3]"},
      {"ZeroSizeWithThree", Model("float[0,3] a, float[2,3] b", "float[0,3] y", "y = Add(a, b)"),
       Verdict::kError,
       "Add 'Add#0': A [0,3] and B [2,3] are not broadcastable (numpy rule, axis 0: 0 vs 2)",
       "[?,3]"},
      {"RankZeroWithRankOne", Model("float a, float[1] b", "float[1] y", "y = Add(a, b)"),
       Verdict::kOk, "", "[1]"},
      {"RankTwelve",
       Model("float[2,1,3,1,2,1,2,1,2,1,2,3] a, float[1,4,1,5,1,1,1,1,1,1,1,3] b",
             "float[2,4,3,5,2,1,2,1,2,1,2,3] y", "y = Add(a, b)"),
       Verdict::kOk, "", "[2,4,3,5,2,1,2,1,2,1,2,3]"},
      {"MatMulBatchMismatch",
       Model("float[2,3,4] a, float[5,4,6] b", "float[2,3,6] y", "y = MatMul(a, b)"),
       Verdict::kError,
       "MatMul 'MatMul#0': A [2,3,4] and B [5,4,6] are not broadcastable (matmul rule, axis 0: 2 "
       "vs 5)",
       "[?,3,6]"},
      {"MatMulBatchBroadcast",
       Model("float[2,1,3,4] a, float[5,4,6] b", "float[2,5,3,6] y", "y = MatMul(a, b)"),
       Verdict::kOk, "", "[2,5,3,6]"},
      {"ExpandConstantShape",
       Model("float[3,1] x", "float[2,3,4] y",
             "s = Constant<value = int64[3] {2, 3, 4}>()\n"
             "y = Expand(x, s)"),
       Verdict::kOk, "", "[2,3,4]"},
      {"ExpandIncompatible",
       Model("float[3,1] x", "float[2,4] y",
             "s = Constant<value = int64[2] {2, 4}>()\n"
             "y = Expand(x, s)"),
       Verdict::kError,
       "Expand 'Expand#1': input [3,1] cannot be expanded to shape [2,4] (bidirectional rule, "
       "axis 0: 3 vs 2)",
       "[?,4]"},
      {"LegacyAxisOk",
       Model("float[1,3,4,5] a, float[3] b", "float[1,3,4,5] y",
             "y = Add<broadcast=1, axis=1>(a, b)", 6),
       Verdict::kOk, "", "[1,3,4,5]"},
      {"LegacyAxisWrong",
       Model("float[1,3,4,5] a, float[4] b", "float[1,3,4,5] y",
             "y = Add<broadcast=1, axis=1>(a, b)", 6),
       Verdict::kError,
       "Add 'Add#0' (opset 6, broadcast=1, axis=1): B [4] does not fit A [1,3,4,5] (legacy-axis rule, "
       "axis 1: 3 vs 4)",
       "[1,3,4,5]"},
      {"LegacyNoBroadcastNeedsSameShape",
       Model("float[2,3] a, float[3] b", "float[2,3] y", "y = Mul(a, b)", 6), Verdict::kError,
       "Mul 'Mul#0' (opset 6): A [2,3] and B [3] must have the same shape (none rule, rank 2 vs 1)",
       "[2,3]"},
      {"VariadicBeforeOpset8NeedsSameShape",
       Model("float[2,3] a, float[3] b", "float[2,3] y", "y = Max(a, b)", 7), Verdict::kError,
       "Max 'Max#0' (opset 7): data_0 [2,3] and data_1 [3] must have the same shape (none rule, "
       "rank 2 vs 1)",
       "[2,3]"},
  };
}

INSTANTIATE_TEST_SUITE_P(Check, CheckCase, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

TEST(Check, ExpandToTheShapeOfAnotherTensor) {
  Analysis a = Analyze(Model("float[N,1,16] x, float[N,8,1] y", "float[N,8,16] z",
                             "s = Shape(y)\n e = Expand(x, s)\n z = Add(e, y)"));
  ASSERT_EQ(a.nodes.size(), 2u);
  EXPECT_EQ(a.nodes[0].op, "Expand");
  EXPECT_EQ(a.nodes[0].verdict, Verdict::kOk);
  EXPECT_EQ(a.nodes[0].output.ToString(), "[N,8,16]");
  EXPECT_EQ(a.nodes[1].inputs[0].ToString(), "[N,8,16]");
}

TEST(Check, DataDependentDimsAreFreshSymbolsNotLibonnxInventions) {
  // libonnx names the unknown output dims of NonZero "unk__<n>"; those are never taken as model
  // symbols. The analysis gives the count a fresh symbol named after the node instead, so both
  // operands of Add(n, n) have the same extent and the broadcast is ok.
  Analysis a = Analyze(Model("float[3,4] x", "int64[2,?] y", "n = NonZero(x)\n y = Add(n, n)"));
  const NodeVerdict& v = Only(a);
  EXPECT_EQ(v.verdict, Verdict::kOk) << v.message;
  EXPECT_EQ(v.output.ToString(), "[2,`NonZero#0:0:1`]");
}

TEST(Check, ExpressionDimsSurviveOpsOnlyLibonnxInfers) {
  // Mul gives the expression dim max(M, N); Transpose (libonnx's inference) sees it as an
  // opaque dim_param token and the walk maps it back to the same expression.
  Analysis a = Analyze(Model("float[N,3] a, float[M,3] b, float[3,1] c", "float[3,?] y",
                             "t = Mul(a, b)\n tr = Transpose<perm=[1,0]>(t)\n y = Add(tr, c)"));
  ASSERT_EQ(a.nodes.size(), 2u);
  EXPECT_EQ(a.nodes[0].output.ToString(), "[max(M, N),3]");
  EXPECT_EQ(a.nodes[1].inputs[0].ToString(), "[3,max(M, N)]");
  EXPECT_EQ(a.nodes[1].verdict, Verdict::kOk) << a.nodes[1].message;
}

TEST(Check, LegacyMessagesNameTheRule) {
  Analysis a = Analyze(Model("float[1,3,4,5] a, float[4] b", "float[1,3,4,5] y",
                             "y = Add<broadcast=1, axis=1>(a, b)", 6));
  EXPECT_THAT(Only(a).message, HasSubstr("legacy-axis rule"));
  EXPECT_EQ(Only(a).rule, broadcast::RuleFamily::kLegacyAxis);
  a = Analyze(Model("float[2,3] a, float[3] b", "float[2,3] y", "y = Mul(a, b)", 6));
  EXPECT_THAT(Only(a).message, HasSubstr("must have the same shape (none rule"));
}

TEST(Check, ConditionsCombineAcrossNodes) {
  Analysis a = Analyze(Model("float[N,3] a, float[5,3] b, float[7,3] c",
                             "float[5,3] y, float[7,3] z", "y = Add(a, b)\n z = Mul(a, c)"));
  ASSERT_EQ(a.nodes.size(), 2u);
  EXPECT_EQ(a.nodes[0].condition.ToString(), "N ∈ {1, 5}");
  EXPECT_EQ(a.nodes[1].condition.ToString(), "N ∈ {1, 7}");
  EXPECT_EQ(a.combined.ToString(), "N == 1");
  EXPECT_FALSE(a.HasError());
}

TEST(Check, ContradictingConditionsAreAnError) {
  // PRelu pins N to 5 (slope 5 vs X's N); the Add allows only 1 or 7.
  Analysis a = Analyze(Model("float[N,3] x, float[5,3] s, float[7,3] c",
                             "float[N,3] y, float[7,3] z", "y = PRelu(x, s)\n z = Add(x, c)"));
  EXPECT_TRUE(a.HasError());
  EXPECT_THAT(a.contradiction, HasSubstr("cannot all hold"));
  EXPECT_THAT(a.contradiction, HasSubstr("PRelu#0"));
  EXPECT_THAT(a.contradiction, HasSubstr("Add#1"));
}

TEST(Check, ConflictInsideIfBranchIsFoundAndLocated) {
  Analysis a = Analyze(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (bool c, float[2,3] x, float[4,3] z) => (float[2,3] y) {
      y = If (c) <
        then_branch = t () => (float[2,3] ty) { ty = Add(x, z) },
        else_branch = e () => (float[2,3] ey) { ey = Identity(x) }
      >
    })");
  const NodeVerdict& v = Only(a);
  EXPECT_EQ(v.verdict, Verdict::kError);
  EXPECT_EQ(v.graph, "main/If 'If#0'.then_branch");
  EXPECT_THAT(v.message, HasSubstr("axis 0: 2 vs 4"));
}

// The main graph's walk frees each value after its last use. A value whose last reader is an
// If body (outer scope), after its last direct use, must still be seen by the body; values
// nobody reads, graph outputs and initializers keep their shapes in the recorded tables.
TEST(Check, ValuesLiveUntilTheirLastReaderIncludingBodies) {
  Analysis a = Analyze(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (bool c, float[N,3] x, float[3] w) => (float[N,3] y, float[N,3] dead_out) {
      s = Relu(x)
      unused = Neg(s)
      dead_out = Abs(x)
      y = If (c) <
        then_branch = t () => (float[N,3] ty) { ty = Add(s, w) },
        else_branch = e () => (float[N,3] ey) { ey = Mul(s, x) }
      >
    })");
  ASSERT_EQ(a.nodes.size(), 2u);
  for (const NodeVerdict& v : a.nodes) {
    EXPECT_EQ(v.verdict, Verdict::kOk) << v.message;
    EXPECT_EQ(v.inputs[0].ToString(), "[N,3]") << v.node;
  }
  const auto& main = a.shapes.at("main");
  for (const char* name : {"x", "w", "s", "unused", "dead_out", "y"}) {
    ASSERT_TRUE(main.count(name) > 0) << name;
  }
  EXPECT_EQ(main.at("unused").ToString(), "[N,3]");
  EXPECT_EQ(main.at("y").ToString(), "[N,3]");
  EXPECT_EQ(main.at("w").ToString(), "[3]");
  EXPECT_EQ(a.elems.at("unused"), 1);
}

TEST(Check, FunctionBodiesUseCallSiteShapes) {
  Analysis a = Analyze(R"(
    <ir_version: 8, opset_import: ["" : 15, "local" : 1]>
    g (float[2,3] a, float[4,3] b) => (float[2,3] y) { y = local.F(a, b) }
    <domain: "local", opset_import: ["" : 15]>
    F (x, z) => (r) { r = Add(x, z) })");
  const NodeVerdict& v = Only(a);
  EXPECT_EQ(v.verdict, Verdict::kError);
  EXPECT_THAT(v.graph, HasSubstr("function local.F"));
}

TEST(Check, ShapesFlowThroughNonBroadcastingOps) {
  // Relu and Transpose come from libonnx; the Add after them is ours.
  Analysis a = Analyze(Model("float[N,4,3] a, float[3,4] b", "float[N,3,4] y",
                             "r = Relu(a)\n t = Transpose<perm=[0,2,1]>(r)\n y = Add(t, b)"));
  const NodeVerdict& v = Only(a);
  EXPECT_EQ(v.inputs[0].ToString(), "[N,3,4]");
  EXPECT_EQ(v.verdict, Verdict::kOk);
  EXPECT_EQ(v.broadcast_class, broadcast::BroadcastClass::kInnerAxis);
}

TEST(Check, ClassesOfTheExampleModel) {
  absl::StatusOr<proto::Model> m = proto::LoadModel(BCAST_SOURCE_DIR "/models/cnn_block.onnx");
  ASSERT_TRUE(m.ok());
  absl::StatusOr<Analysis> a = AnalyzeBroadcasts(*m, {});
  ASSERT_TRUE(a.ok());
  std::map<std::string, std::string> classes;
  for (const NodeVerdict& v : a->nodes) classes[v.node] = BroadcastClassText(v);
  EXPECT_EQ(classes["bias_add"], "per-channel");
  EXPECT_EQ(classes["prelu"], "unidirectional");
  EXPECT_EQ(classes["row_mul"], "inner-axis");
  EXPECT_EQ(classes["center"], "outer-axis");
  EXPECT_EQ(classes["fc"], "unidirectional");
  EXPECT_EQ(a->CountVerdict(Verdict::kOk), 5);
}

TEST(Check, LintFlagsPortabilityHazards) {
  Analysis a = Analyze(Model("float[1,3,4,3] x, float[3] s", "float[1,3,4,3] y", "y = PRelu(x, s)"),
                       /*lint=*/true);
  ASSERT_EQ(Only(a).lints.size(), 1u);
  EXPECT_EQ(Only(a).lints[0].lint_class, "prelu-slope-axis");
  a = Analyze(Model("float[2,2] a, float[2] b", "float[2,2] y", "y = Add(a, b)"), true);
  ASSERT_EQ(Only(a).lints.size(), 1u);
  EXPECT_EQ(Only(a).lints[0].lint_class, "ncnn-outer-axis");
  a = Analyze(Model("float[3,2] a, float[2] b", "float[3,2] y", "y = Add(a, b)"), true);
  EXPECT_TRUE(Only(a).lints.empty()) << "ncnn's rank-1 outer-axis rule agrees with numpy here";
  a = Analyze(Model("float[1,3,4,5] a, float[3] b", "float[1,3,4,5] y",
                    "y = Add<broadcast=1, axis=1>(a, b)", 6),
              true);
  ASSERT_EQ(Only(a).lints.size(), 1u);
  EXPECT_EQ(Only(a).lints[0].lint_class, "legacy-axis");
  a = Analyze(Model("float[2,2] a, float[2] b", "float[2,2] y", "y = Add(a, b)"), false);
  EXPECT_TRUE(Only(a).lints.empty()) << "lint is off by default";
}

TEST(Check, AnnotateWritesInferredValueInfo) {
  onnx::ModelProto annotated;
  Analyze(Model("float[N,3] a, float[5,3] b", "float[5,3] y", "t = Add(a, b)\n y = Relu(t)"), false,
          &annotated);
  bool found = false;
  for (const auto& vi : annotated.graph().value_info()) {
    if (vi.name() == "t") {
      found = true;
      EXPECT_EQ(proto::ShapeOfType(vi.type()).ToString(), "[5,3]");
      EXPECT_EQ(vi.type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
    }
  }
  EXPECT_TRUE(found);
}

TEST(Check, AnnotateWritesExpressionDimsAsDimParams) {
  onnx::ModelProto annotated;
  Analyze(Model("float[N,3] a, float[M,3] b", "float[?,3] y", "t = Mul(a, b)\n y = Relu(t)"), false,
          &annotated);
  std::string t_dims;
  for (const auto& vi : annotated.graph().value_info()) {
    if (vi.name() != "t") continue;
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      t_dims += d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param();
      t_dims += ";";
    }
  }
  EXPECT_EQ(t_dims, "max(M, N);3;");
  // The graph output's unnamed dim is completed from the analysis.
  EXPECT_EQ(annotated.graph().output(0).type().tensor_type().shape().dim(0).dim_param(),
            "max(M, N)");
}

TEST(Check, AnnotateWritesASymbolAsPeopleReadIt) {
  // A fresh symbol (TopK's computed K) is no plain name: its dim_param is backquoted, as the
  // analysis prints it; a plain one is written as it is.
  onnx::ModelProto annotated;
  Analyze(Model("float[N,8] x, int64[1] k", "float[N,?] y", "t, i = TopK(x, k)\n y = Relu(t)"),
          false, &annotated);
  std::string t_dims;
  for (const auto& vi : annotated.graph().value_info()) {
    if (vi.name() != "t") continue;
    for (const auto& d : vi.type().tensor_type().shape().dim()) t_dims += d.dim_param() + ";";
  }
  EXPECT_EQ(t_dims, "N;`TopK#0:0:1`;");
}

TEST(Check, JsonCarriesEveryField) {
  Analysis a = Analyze(Model("float[N,3] a, float[5,3] b", "float[5,3] y", "y = Add(a, b)"));
  const std::string json = report::FormatCheckJson(a, "m.onnx", false);
  for (const char* field :
       {"\"node\": \"Add#0\"", "\"op\": \"Add\"", "\"shape\": [\"N\", 3]", "\"rule\": \"numpy\"",
        "\"class\": \"general\"", "\"verdict\": \"conditional\"", "\"text\": \"N ∈ {1, 5}\"",
        "\"conditional\": 1", "\"summary\""}) {
    EXPECT_THAT(json, HasSubstr(field));
  }
  const std::string text = report::FormatCheckText(a, "m.onnx", false);
  EXPECT_THAT(text, HasSubstr("1 conditional"));
  EXPECT_THAT(text, HasSubstr("combined: N ∈ {1, 5}"));
}

// check --json is handed on in pieces as it is written (issue 46 item 4): a large report is
// never whole in memory, the pieces make FormatCheckJson's bytes, and a failing sink stops it.
TEST(Check, JsonIsWrittenInBoundedPieces) {
  std::string body = "t0 = Add(a, b)";
  constexpr int kNodes = 800;  // about 300 bytes of JSON each: several 64 KiB pieces
  for (int i = 1; i < kNodes; ++i) absl::StrAppend(&body, "\n t", i, " = Add(t", i - 1, ", b)");
  Analysis a = Analyze(Model("float[N,3] a, float[1,3] b", absl::StrCat("float[N,3] t", kNodes - 1),
                             body));
  ASSERT_EQ(a.nodes.size(), static_cast<size_t>(kNodes));
  std::vector<size_t> pieces;
  std::string joined;
  ASSERT_TRUE(report::WriteCheckJson(a, "m.onnx", true, nullptr, [&](std::string_view piece) {
                pieces.push_back(piece.size());
                joined.append(piece);
                return absl::OkStatus();
              }).ok());
  EXPECT_EQ(joined, report::FormatCheckJson(a, "m.onnx", true));
  EXPECT_GE(pieces.size(), 3u);
  for (size_t size : pieces) EXPECT_LE(size, size_t{80} << 10);
  int calls = 0;
  const absl::Status failed =
      report::WriteCheckJson(a, "m.onnx", false, nullptr, [&calls](std::string_view) {
        ++calls;
        return absl::UnavailableError("disk full");
      });
  EXPECT_EQ(failed, absl::UnavailableError("disk full"));
  EXPECT_EQ(calls, 1);
}

// check --json is written through JsonText and its word-at-a-time scan (issue 46 item 4). A
// report of thousands of nodes of several kinds must be in DumpJson's layout (it reads back
// and dumps to the same bytes), list the nodes in the analysis's order, come in bounded
// pieces, and stop at whichever piece the sink fails.
TEST(Check, JsonOfThousandsOfNodesKeepsTheirOrderAndLayout) {
  std::string body = "t0 = Add(a, b)";
  constexpr int kNodes = 5000;
  for (int i = 1; i < kNodes; ++i) {
    // Every fifth node conditional, so records differ in size and content.
    absl::StrAppend(&body, "\n t", i, " = ", i % 5 == 0 ? "Mul(t" : "Add(t", i - 1,
                    i % 5 == 0 ? ", c)" : ", b)");
  }
  Analysis a = Analyze(Model("float[N,3] a, float[1,3] b, float[M,3] c",
                             absl::StrCat("float[N,3] t", kNodes - 1), body));
  ASSERT_EQ(a.nodes.size(), static_cast<size_t>(kNodes));
  std::string joined;
  std::vector<size_t> pieces;
  ASSERT_TRUE(report::WriteCheckJson(a, "m.onnx", true, nullptr, [&](std::string_view piece) {
                pieces.push_back(piece.size());
                joined.append(piece);
                return absl::OkStatus();
              }).ok());
  // The last piece is the document's tail, whose combined condition names each of the 999
  // conditional nodes.
  ASSERT_GE(pieces.size(), 10u);
  EXPECT_LE(*std::max_element(pieces.begin(), pieces.end() - 1), size_t{80} << 10);
  absl::StatusOr<report::Json> doc = report::ParseJson(joined);
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(report::DumpJson(*doc), joined);
  const report::Json& nodes = (*doc)["nodes"];
  ASSERT_EQ(nodes.size(), a.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    ASSERT_EQ(nodes[i]["node"], a.nodes[i].node) << "record " << i;
    ASSERT_EQ(nodes[i]["verdict"], std::string(broadcast::VerdictName(a.nodes[i].verdict)));
  }
  for (int fail_at : {1, 2, 5, 20}) {
    int calls = 0;
    const absl::Status failed =
        report::WriteCheckJson(a, "m.onnx", false, nullptr, [&](std::string_view) {
          return ++calls == fail_at ? absl::UnavailableError("disk full") : absl::OkStatus();
        });
    EXPECT_EQ(failed, absl::UnavailableError("disk full"));
    EXPECT_EQ(calls, fail_at);
  }
}

// The report's order and detail levels (issue 16): a model whose graph order is the reverse
// of the report's (unknown, conditional, ok, error).
const char kMixedModel[] = R"(
  <ir_version: 8, opset_import: ["" : 15, "custom" : 1]>
  g (float[2,3] a, float[4,3] b, float[N,3] c, float[5,3] d)
      => (float[2,3] u, float[5,3] w, float[2,3] o, float[2,3] e) {
    k = custom.Foo(a)
    u = Add(k, a)
    w = Add(c, d)
    o = Mul(a, a)
    e = Sub(a, b)
  })";

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(CheckReport, SummaryThenErrorsConditionsUnknownsEachNodeOnce) {
  const Analysis a = Analyze(kMixedModel);
  const std::string text = report::FormatCheckText(a, "m.onnx", false);
  EXPECT_THAT(text, ::testing::StartsWith(
                        "m.onnx: 4 broadcasting nodes: 1 ok, 1 error, 1 conditional, 1 unknown\n"));
  const size_t errors = text.find("\nErrors:\n  Sub 'Sub#4': A [2,3] and B [4,3]");
  const size_t conditions = text.find("\nConditions:\n  Add 'Add#2': A [N,3] and B [5,3]");
  const size_t combined = text.find("\n  combined: N ∈ {1, 5}\n");
  const size_t unknown = text.find("\nUnknown:\n  Add 'Add#1': ");
  ASSERT_NE(errors, std::string::npos) << text;
  ASSERT_NE(conditions, std::string::npos) << text;
  ASSERT_NE(combined, std::string::npos) << text;
  ASSERT_NE(unknown, std::string::npos) << text;
  EXPECT_LT(errors, conditions);
  EXPECT_LT(conditions, combined);
  EXPECT_LT(combined, unknown);
  // The unknown names where its shape was lost.
  EXPECT_THAT(text.substr(unknown), HasSubstr("comes from custom op Foo 'Foo#0' (domain custom)"));
  for (const char* node : {"'Sub#4'", "'Add#2'", "'Add#1'"}) {
    EXPECT_EQ(Occurrences(text, node), 1u) << node << " in\n" << text;
  }
  // Ok nodes are counted, not listed.
  EXPECT_THAT(text, ::testing::Not(HasSubstr("Mul")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("By class")));
  EXPECT_EQ(text, report::FormatCheckText(a, "m.onnx", false, nullptr, report::CheckDetail::kIssues));
}

TEST(CheckReport, SummaryDetailIsTheFirstLineAlone) {
  const Analysis a = Analyze(kMixedModel, /*lint=*/true);
  const std::string full = report::FormatCheckText(a, "m.onnx", true);
  const std::string summary = report::FormatCheckText(a, "m.onnx", true, nullptr, report::CheckDetail::kSummary);
  EXPECT_EQ(summary, full.substr(0, full.find('\n') + 1));
  EXPECT_EQ(Occurrences(summary, "\n"), 1u);
  EXPECT_THAT(summary, HasSubstr("lint warnings"));
}

TEST(CheckReport, AllDetailAddsEveryNodeByClassAfterTheIssues) {
  const Analysis a = Analyze(kMixedModel);
  const std::string issues = report::FormatCheckText(a, "m.onnx", false);
  const std::string all = report::FormatCheckText(a, "m.onnx", false, nullptr, report::CheckDetail::kAll);
  EXPECT_THAT(all, ::testing::StartsWith(issues));
  const std::string listing = all.substr(issues.size());
  EXPECT_THAT(listing, ::testing::StartsWith("\nBy class:\n"));
  EXPECT_THAT(listing, HasSubstr("    Mul 'Mul#3': [2,3] , [2,3] -> [2,3]  [numpy, ok]\n"));
  for (const char* node : {"'Sub#4'", "'Add#2'", "'Add#1'"}) {
    EXPECT_THAT(listing, HasSubstr(node));
  }
}

TEST(CheckReport, LintComesAfterTheIssues) {
  const Analysis a = Analyze(Model("float[2,2] x, float[2] s, float[N,2] c, float[3,2] d",
                                   "float[2,2] y, float[3,2] z", "y = Add(x, s)\n z = Add(c, d)"),
                             /*lint=*/true);
  const std::string text = report::FormatCheckText(a, "m.onnx", true);
  const size_t lint = text.find("\nLint:\n  warning [ncnn-outer-axis] ");
  ASSERT_NE(lint, std::string::npos) << text;
  EXPECT_LT(text.find("\nConditions:\n"), lint);
  EXPECT_THAT(text, ::testing::Not(HasSubstr("By class")));
}

// Analyzes `text` with main-graph node `index` named `name` (libonnx 1.12's text form has no
// node names).
Analysis AnalyzeNamed(const std::string& text, int index, const std::string& name) {
  absl::StatusOr<proto::Model> model = proto::ParseModelText(text);
  EXPECT_TRUE(model.ok()) << model.status();
  model->proto.mutable_graph()->mutable_node(index)->set_name(name);
  absl::StatusOr<Analysis> a = AnalyzeBroadcasts(*model, AnalysisOptions());
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *a : Analysis();
}

TEST(CheckReport, NodesInIfBranchesHaveShortPaths) {
  const Analysis a = AnalyzeNamed(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (bool c, float[2,3] x, float[4,3] z) => (float[2,3] y, float[2,3] w) {
      y = If (c) <
        then_branch = t () => (float[2,3] ty) { ty = Add(x, z) },
        else_branch = e () => (float[2,3] ey) { ey = Mul(x, x) }
      >
      w = If (c) <
        then_branch = t2 () => (float[2,3] ty2) { ty2 = Identity(x) },
        else_branch = e2 () => (float[2,3] ey2) { ey2 = Sub(x, z) }
      >
    })",
                                  1, "gate");
  ASSERT_EQ(a.nodes.size(), 3u);
  EXPECT_EQ(a.nodes[0].short_graph, "If#0/then");
  EXPECT_EQ(a.nodes[1].short_graph, "If#0/else");
  EXPECT_EQ(report::NodePath(a.nodes[1]), "If#0/else/Mul#0");
  EXPECT_EQ(report::NodePath(a.nodes[2]), "gate/else/Sub#0");
  const std::string text = report::FormatCheckText(a, "m.onnx", false, nullptr, report::CheckDetail::kAll);
  EXPECT_THAT(text, HasSubstr("\nErrors:\n  Add 'If#0/then/Add#0': A [2,3] and B [4,3] are not "
                              "broadcastable (numpy rule, axis 0: 2 vs 4)\n"
                              "  Sub 'gate/else/Sub#0': A [2,3] and B [4,3]"));
  EXPECT_THAT(text, HasSubstr("    Mul 'If#0/else/Mul#0': [2,3] , [2,3] -> [2,3]  [numpy, ok]\n"));
  // The long path stays the analysis's (and the JSON's) name of the graph.
  EXPECT_EQ(a.nodes[0].graph, "main/If 'If#0'.then_branch");
  EXPECT_THAT(text, ::testing::Not(HasSubstr("then_branch")));
  EXPECT_THAT(report::FormatCheckJson(a, "m.onnx", false),
              HasSubstr("\"graph\": \"main/If 'If#0'.then_branch\""));
}

TEST(CheckReport, NodesInFunctionBodiesHaveShortPaths) {
  const Analysis a = AnalyzeNamed(R"(
    <ir_version: 8, opset_import: ["" : 15, "local" : 1]>
    g (float[2,3] a, float[4,3] b, bool c) => (float[2,3] y, float[2,3] z) {
      y = local.F(a, b)
      z = local.G (a, b, c)
    }
    <domain: "local", opset_import: ["" : 15]>
    F (x, w) => (r) { r = Add(x, w) }
    <domain: "local", opset_import: ["" : 15]>
    G (x, w, k) => (r) {
      r = If (k) <
        then_branch = t () => (float[2,3] tr) { tr = Mul(x, w) },
        else_branch = e () => (float[2,3] er) { er = Identity(x) }
      >
    })",
                                  1, "outer");
  ASSERT_EQ(a.nodes.size(), 2u);
  EXPECT_EQ(report::NodePath(a.nodes[0]), "F#0/F/Add#0");
  EXPECT_EQ(report::NodePath(a.nodes[1]), "outer/G/If#0/then/Mul#0");
  const std::string text = report::FormatCheckText(a, "m.onnx", false);
  EXPECT_THAT(text, HasSubstr("\n  Add 'F#0/F/Add#0': A [2,3] and B [4,3] are not broadcastable"));
  EXPECT_THAT(text, HasSubstr("\n  Mul 'outer/G/If#0/then/Mul#0': A [2,3] and B [4,3]"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("function local")));
}

TEST(CheckReport, MessagesOfAnotherFormGetTheGraphAppended) {
  NodeVerdict v;
  v.graph = "main/Loop 'L'.body";
  v.short_graph = "L/body";
  v.node = "Add#1";
  v.op = "Add";
  EXPECT_EQ(report::LocatedMessage(v, "Add 'Add#1': x"), "Add 'L/body/Add#1': x");
  EXPECT_EQ(report::LocatedMessage(v, "something else"), "something else [in L/body]");
  v.short_graph.clear();  // an Analysis built by hand: the long path, never nothing
  EXPECT_EQ(report::NodePath(v), "main/Loop 'L'.body/Add#1");
  v.graph = "main";
  EXPECT_EQ(report::LocatedMessage(v, "Add 'Add#1': x"), "Add 'Add#1': x");
}

// Every model of the ONNX test data: no error verdict, and inferred output shapes agree with
// the recorded outputs wherever both are known.
TEST(Check, TestDataModelsHaveNoErrorsAndShapesAgree) {
  const fs::path root = "/usr/share/libonnx-testdata/data";
  int models = 0, compared = 0;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.path().filename() != "model.onnx") continue;
    ++models;
    absl::StatusOr<proto::Model> m = proto::LoadModel(e.path().string());
    ASSERT_TRUE(m.ok()) << m.status();
    absl::StatusOr<Analysis> a = AnalyzeBroadcasts(*m, {});
    ASSERT_TRUE(a.ok()) << e.path();
    for (const NodeVerdict& v : a->nodes) {
      EXPECT_NE(v.verdict, Verdict::kError) << e.path() << ": " << v.message;
    }
    EXPECT_TRUE(a->contradiction.empty()) << e.path() << ": " << a->contradiction;
    const fs::path data = e.path().parent_path() / "test_data_set_0";
    const auto& shapes = a->shapes.at("main");
    for (int k = 0; k < m->proto.graph().output_size(); ++k) {
      const fs::path pb = data / ("output_" + std::to_string(k) + ".pb");
      if (!fs::exists(pb)) continue;
      std::ifstream in(pb, std::ios::binary);
      onnx::TensorProto t;
      if (!t.ParseFromIstream(&in)) continue;  // sequences/maps are stored otherwise
      auto it = shapes.find(m->proto.graph().output(k).name());
      if (it == shapes.end() || !it->second.IsFullyKnown()) continue;
      EXPECT_EQ(it->second.ToString(), proto::ShapeOfTensor(t).ToString())
          << e.path() << " output " << k;
      ++compared;
    }
  }
  EXPECT_GT(models, 1000);
  EXPECT_GT(compared, 800);
}

}  // namespace
}  // namespace onnx_bcast::analysis
