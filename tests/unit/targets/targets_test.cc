// Targets: the built-in tables, profile files, each target end to end on the example models
// (output passes libonnx's full check and satisfies the target's own table), the canonical
// round trip, and the legacy axis=1 upgrade against hand-computed values.
#include "targets/targets.h"

#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/registry.h"
#include "proto/model_io.h"
#include "proto/onnx_checks.h"
#include "proto/shapes.h"
#include "proto/tensor_data.h"
#include "targets/runtime_shapes.h"
#include "tests/support/pass_test_util.h"

namespace onnx_bcast::targets {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

using test_support::ViolationLines;

TEST(Targets, BuiltinsNameRegisteredPassesAndKnownClasses) {
  ASSERT_EQ(BuiltinTargets().size(), 6u);
  for (const TargetProfile& t : BuiltinTargets()) {
    for (const std::string& pass : t.passes) EXPECT_NE(passes::FindPass(pass), nullptr) << t.name;
    // The file form round-trips.
    absl::StatusOr<TargetProfile> back = ParseTargetProfile(FormatTargetProfile(t), "x");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->passes, t.passes);
    EXPECT_EQ(back->native_classes, t.native_classes);
    EXPECT_EQ(back->max_rank, t.max_rank);
    EXPECT_EQ(back->op_rules, t.op_rules) << t.name;
  }
  EXPECT_EQ(FindTarget("nope"), nullptr);
}

TEST(Targets, BuiltinMnnIsTheCommittedMeasurement) {
  // Measured on an MNN built from its public source (scripts/engines/build-mnn.sh,
  // `onnx-bcast probe-engine mnn`).
  const TargetProfile* mnn = FindTarget("mnn");
  ASSERT_NE(mnn, nullptr);
  absl::StatusOr<std::string> text =
      proto::ReadFileBytes(BCAST_SOURCE_DIR "/engines/profiles/mnn-20260820.profile", 1 << 20);
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<TargetProfile> file = ParseTargetProfile(*text, "mnn-20260820.profile");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->name, "mnn-20260820");
  EXPECT_THAT(mnn->description, HasSubstr("measured by onnx-bcast probe-engine"));
  EXPECT_EQ(mnn->op_rules, file->op_rules);
  EXPECT_EQ(mnn->unsupported_ops, file->unsupported_ops);
  EXPECT_EQ(mnn->initializer_types, file->initializer_types);
  EXPECT_EQ(mnn->runtime_shapes, file->runtime_shapes);
  EXPECT_THAT(mnn->passes, ::testing::ElementsAre("upgrade-legacy-broadcast", "fold-constants",
                                                  "legalize-measured"));
  // What the measurement found: MNN's binary ops broadcast every class, its converter keeps
  // shapes computed at run time, and its PRelu takes a lower-rank slope along the last axis
  // for one per channel (right only at rank 2, where the two are the same axis; a slope of the
  // input's rank is read right).
  EXPECT_TRUE(mnn->runtime_shapes);
  EXPECT_EQ(mnn->op_rules.at("Add").forms.at("computed").at("bidirectional"), FormSupport::kRuns);
  EXPECT_EQ(mnn->op_rules.at("PRelu").forms.at("constant_b").at("inner-axis"),
            FormSupport::kRunsAligned);
}

TEST(Targets, ProfileFileErrorsNameTheLine) {
  EXPECT_THAT(std::string(ParseTargetProfile("name = x\nclasses = same\nmax_rank = four\n", "f")
                              .status()
                              .message()),
              HasSubstr("f:3: max_rank 'four'"));
  EXPECT_THAT(
      std::string(ParseTargetProfile("name = x\nclasses = sideways\n", "f").status().message()),
      HasSubstr("f:2: unknown broadcast class 'sideways'"));
  EXPECT_THAT(std::string(ParseTargetProfile("name = x\nclasses = same\npasses = frob\n", "f",
                                             passes::IsRegisteredPass)
                              .status()
                              .message()),
              HasSubstr("f:3: unknown pass 'frob'"));
  EXPECT_THAT(std::string(ParseTargetProfile("colour = red\n", "f").status().message()),
              HasSubstr("f:1: unknown key 'colour'"));
  absl::StatusOr<TargetProfile> p =
      ParseTargetProfile("# my engine\nname = e\nclasses = same, scalar\nequal_rank = yes\n", "f");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->passes, (std::vector<std::string>{"upgrade-legacy-broadcast", "align-ranks",
                                                 "legalize-measured"}));
}

// A user-described engine: only same-shape and scalar broadcasts, rank <= 3.
TEST(Targets, ProfileFileDrivesTheGenericLegalizePass) {
  absl::StatusOr<TargetProfile> p = ParseTargetProfile(
      "name = tiny\nclasses = same, scalar\nmax_rank = 3\nequal_rank = true\n"
      "scalar_any_rank = true\n",
      "tiny.profile");
  ASSERT_TRUE(p.ok()) << p.status();
  proto::Model m = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3,4] x, float[4] b, float[1] s, float[3,1] c) => (float[2,3,4] y) {
  t = Add (x, b)
  u = Mul (t, s)
  y = Sub (u, c)
})");
  ASSERT_TRUE(test_support::RunTarget(*p, &m).ok());
  absl::StatusOr<std::vector<std::string>> v = FindTargetViolations(m, *p);
  ASSERT_TRUE(v.ok());
  EXPECT_THAT(*v, IsEmpty());
  EXPECT_TRUE(proto::CheckModel(m, true).ok());
  // The rank limit is refused with the node named.
  proto::Model big = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,2,3,4] x, float[4] b) => (float[2,2,3,4] y) {
  y = Add (x, b)
})");
  // The pass leaves it; the target check lists it (opt then exits 3).
  const std::unordered_map<std::string, int> index = OriginalNodeIndex(big.proto.graph());
  ASSERT_TRUE(test_support::RunTarget(*p, &big).ok());
  absl::StatusOr<std::vector<TargetViolation>> bv = CheckTarget(big, *p, &index);
  ASSERT_TRUE(bv.ok());
  ASSERT_EQ(bv->size(), 1u);
  EXPECT_EQ((*bv)[0].node, "Add#0");  // its index before the pipeline
  EXPECT_EQ((*bv)[0].graph, "main");
  EXPECT_THAT((*bv)[0].why, HasSubstr("exceeds tiny's maximum rank 3"));
  EXPECT_FALSE((*bv)[0].cannot_prove);
}

TEST(Targets, OpRuleKeysParseAndRoundTrip) {
  absl::StatusOr<TargetProfile> p = ParseTargetProfile(
      "name = e\nclasses = same\n"
      "op.Pow.min_rank = 2\n"
      "op.Pow.max_rank = 4\n"
      "op.Pow.computed = same, scalar:refused, inner-axis:aligned\n"
      "op.Pow.constant_b = scalar, same:wrong\n"
      "op.Mul.constant_ab = same, general:crashed\n"
      "op.MatMul.computed = matmul-batch:same, matmul-batch:general:refused\n"
      "op.Where.constant_c = bidirectional\n",
      "e.profile");
  ASSERT_TRUE(p.ok()) << p.status();
  const OpRule& pow = p->op_rules.at("Pow");
  EXPECT_EQ(pow.min_rank, 2);
  EXPECT_EQ(pow.max_rank, 4);
  EXPECT_EQ(pow.forms.at("computed").at("same"), FormSupport::kRuns);
  EXPECT_EQ(pow.forms.at("computed").at("scalar"), FormSupport::kRefused);
  EXPECT_EQ(pow.forms.at("computed").at("inner-axis"), FormSupport::kRunsAligned);
  EXPECT_EQ(pow.forms.at("constant_b").at("same"), FormSupport::kWrong);
  EXPECT_EQ(p->op_rules.at("Mul").forms.at("constant_ab").at("general"), FormSupport::kCrashed);
  EXPECT_EQ(p->op_rules.at("MatMul").forms.at("computed").at("matmul-batch:general"),
            FormSupport::kRefused);
  EXPECT_EQ(p->op_rules.at("Where").forms.at("constant_c").at("bidirectional"), FormSupport::kRuns);
  const std::string text = FormatTargetProfile(*p);
  EXPECT_THAT(text, HasSubstr("op.Pow.min_rank = 2\nop.Pow.max_rank = 4\n"));
  EXPECT_THAT(text, HasSubstr("op.Pow.computed = inner-axis:aligned, same, scalar:refused\n"));
  test_support::ExpectProfileRoundTrips(*p, text);
}

TEST(Targets, OpRuleErrorsNameTheLineAndKey) {
  const auto& error = test_support::ProfileLineError;
  EXPECT_THAT(error("op.Conv.computed = same"),
              HasSubstr("f:3: 'op.Conv.computed': 'Conv' is not a broadcasting op"));
  EXPECT_THAT(error("op.Add.sometimes = same"),
              HasSubstr("f:3: 'op.Add.sometimes': 'sometimes' is neither"));
  EXPECT_THAT(error("op.Add.constant_ba = same"), HasSubstr("is neither"));
  EXPECT_THAT(error("op.Add.computed = sideways"),
              HasSubstr("f:3: op.Add.computed: unknown form class 'sideways'"));
  EXPECT_THAT(
      error("op.Add.computed = same:maybe"),
      HasSubstr("'maybe' is not one of aligned, unaligned, first-full, refused, wrong, crashed"));
  EXPECT_THAT(error("op.Add.computed = same, same:refused"),
              HasSubstr("form class 'same' given twice"));
  EXPECT_THAT(error("op.Add.max_rank = -1"),
              HasSubstr("f:3: op.Add.max_rank '-1' is not a non-negative integer"));
  EXPECT_THAT(error("op.Add.min_rank = x"), HasSubstr("op.Add.min_rank 'x'"));
  EXPECT_THAT(error("op.Add = same"), HasSubstr("expected op.<Op>.min_rank"));
}

// The rule sees which operand is a constant: the same Pow passes with a constant scalar
// exponent and fails with a computed one, or with a constant of the base's shape.
TEST(Targets, CheckTargetAppliesOpRulesByOperandKind) {
  absl::StatusOr<TargetProfile> p = ParseTargetProfile(
      "name = eng\nclasses = same, scalar, inner-axis\n"
      "op.Pow.constant_b = scalar, same:refused\n"
      "op.Pow.computed = same:wrong\n"
      "op.Add.max_rank = 3\n"
      "op.Add.computed = same, inner-axis:aligned\n",
      "eng");
  ASSERT_TRUE(p.ok()) << p.status();
  proto::Model model = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x, float[2,3,4] z, float[4] r, float[1,1,4] r3, float[2,2,2,2] w) => (float[2,3] y, float[2,3] y2, float[2,3] y3, float[2,3,4] y4, float[2,3,4] y5, float[2,2,2,2] y6, float[2,3] y7) <float k = {2.0}, float[2,3] full = {1,2,3,4,5,6}> {
  y = Pow (x, k)
  two = Constant <value = float {2.0}> ()
  y2 = Pow (x, two)
  y3 = Pow (x, full)
  y4 = Add (z, r)
  y5 = Add (z, r3)
  y6 = Add (w, w)
  y7 = Pow (x, x)
})");
  const std::vector<std::string> lines = ViolationLines(model, *p);
  EXPECT_THAT(lines,
              ::testing::ElementsAre(
                  "Pow#3: broadcast as 'same' with constant_b operands, which eng refuses "
                  "(op.Pow.constant_b)",
                  "Add#4: broadcast as 'inner-axis' with computed operands of different ranks; "
                  "eng runs it only with equal ranks (op.Add.computed)",
                  "Add#6: -> [2,2,2,2] exceeds eng's maximum rank 3 for Add (op.Add.max_rank)",
                  "Pow#7: broadcast as 'same' with computed operands, which eng computes wrongly at "
                  "the shapes its class was measured at "
                  "(op.Pow.computed)"));
}

// `unaligned` runs only with each constant below the output's rank; an op's own rule decides
// the class over the global `classes` (a summary of all ops); DecideForm is the lookup.
TEST(Targets, UnalignedFormsAndOpRulesOverGlobalClasses) {
  absl::StatusOr<TargetProfile> p = ParseTargetProfile(
      "name = eng\n"
      "classes = same\n"
      "op.Add.constant_b = same, per-channel:unaligned\n"
      "op.Mul.computed = same, per-channel\n",
      "eng");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->op_rules.at("Add").forms.at("constant_b").at("per-channel"),
            FormSupport::kRunsUnaligned);
  EXPECT_THAT(FormatTargetProfile(*p),
              HasSubstr("op.Add.constant_b = per-channel:unaligned, same"));
  proto::Model model = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,8,4,4] x, float[1,8,1,1] s) => (float[1,8,4,4] y, float[1,8,4,4] y2, float[1,8,4,4] y3, float[1,8,4,4] y4) <float[8,1,1] b = {1,2,3,4,5,6,7,8}, float[1,8,1,1] b4 = {1,2,3,4,5,6,7,8}> {
  y = Add (x, b)
  y2 = Add (x, b4)
  y3 = Mul (x, s)
  y4 = Add (x, s)
})");
  const std::vector<std::string> lines = ViolationLines(model, *p);
  EXPECT_THAT(lines, ::testing::ElementsAre(
                         "Add#1: broadcast as 'per-channel' with constant_b operands, a constant "
                         "at the output's rank; eng runs it only with each constant below the "
                         "output's rank (op.Add.constant_b)",
                         "Add#3: broadcast as 'per-channel', which eng does not run natively"));
}

// `first-full` runs only when the first operand has the output's shape; `<class>@<rank>`
// decides nodes of that output rank before the class's own entry.
TEST(Targets, FirstFullAndPerRankEntries) {
  absl::StatusOr<TargetProfile> p = ParseTargetProfile(
      "name = eng\n"
      "classes = same\n"
      "op.Sub.computed = same, inner-axis:refused, inner-axis@2:first-full, "
      "per-channel:first-full\n",
      "eng");
  ASSERT_TRUE(p.ok()) << p.status();
  const auto& forms = p->op_rules.at("Sub").forms.at("computed");
  EXPECT_EQ(forms.at("inner-axis@2"), FormSupport::kRunsFirstFull);
  EXPECT_EQ(forms.at("inner-axis"), FormSupport::kRefused);
  EXPECT_THAT(FormatTargetProfile(*p),
              HasSubstr("op.Sub.computed = inner-axis:refused, inner-axis@2:first-full, "
                        "per-channel:first-full, same"));
  absl::StatusOr<TargetProfile> again = ParseTargetProfile(FormatTargetProfile(*p), "again");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->op_rules, p->op_rules);
  EXPECT_FALSE(ParseTargetProfile("name = e\nop.Sub.computed = same@x\n", "e").ok());
  EXPECT_FALSE(ParseTargetProfile("name = e\nop.Sub.computed = nothing@2\n", "e").ok());
  proto::Model model = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[4,3] x, float[1,3] m, float[2,4,3] x3, float[1,1,3] m3, float[1,4,1] c) => (float[4,3] y1, float[4,3] y2, float[2,4,3] y3, float[2,4,3] y4, float[2,4,3] y5) {
  y1 = Sub (x, m)
  y2 = Sub (m, x)
  y3 = Sub (x3, m3)
  y4 = Sub (x3, c)
  y5 = Sub (c, x3)
})");
  const std::vector<std::string> lines = ViolationLines(model, *p);
  EXPECT_THAT(lines,
              ::testing::ElementsAre(
                  "Sub#1: broadcast as 'inner-axis@2' with computed operands, the first not of "
                  "the output's shape; eng runs it only with the first operand of the output's "
                  "shape (op.Sub.computed)",
                  "Sub#2: broadcast as 'inner-axis' with computed operands, which eng refuses "
                  "(op.Sub.computed)",
                  "Sub#4: broadcast as 'per-channel' with computed operands, the first not of "
                  "the output's shape; eng runs it only with the first operand of the output's "
                  "shape (op.Sub.computed)"));
}

// Expand is judged by op.Expand (its input's class against its output, `general` along several
// axes), in both the analysis and the kept-tables paths; constants of a type outside
// initializer_types are named.
TEST(Targets, ExpandFormsAndConstantTypesAreJudgedByTheProfile) {
  absl::StatusOr<TargetProfile> p = ParseTargetProfile(
      "name = eng\n"
      "classes = same\n"
      "initializer_types = float32, int64\n"
      "op.Expand.constant_b = same, inner-axis, outer-axis:refused, general:refused\n",
      "eng");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(FormatTargetProfile(*p), HasSubstr("initializer_types = float32, int64\n"));
  EXPECT_FALSE(
      ParseTargetProfile("name = e\nclasses = same\ninitializer_types = float\n", "e").ok());
  proto::Model model = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,4] x, float[2,3,1] z, float[1,1,4] w) => (float[2,3,4] y, float[2,3,4] y2, float[2,3,4] y3, float[1] c) <int64[3] s = {2,3,4}, bool[1] m = {1}> {
  y = Expand (x, s)
  y2 = Expand (z, s)
  y3 = Expand (w, s)
  c = Cast <to = 1> (m)
})");
  const std::vector<std::string> lines = ViolationLines(model, *p);
  EXPECT_THAT(lines,
              ::testing::ElementsAre(
                  "Expand#1: broadcast as 'outer-axis' with constant_b operands, which eng "
                  "refuses (op.Expand.constant_b)",
                  "Expand#2: broadcast as 'general' with constant_b operands, which eng refuses "
                  "(op.Expand.constant_b)",
                  "m: a constant of type bool, which eng does not load (initializer_types = "
                  "float32, int64)"));
  // The kept tables of a pipeline decide the same.
  absl::StatusOr<analysis::ShapeTables> tables = analysis::ComputeShapeTables(model);
  ASSERT_TRUE(tables.ok()) << tables.status();
  EXPECT_EQ(ViolationLines(model, *p, &*tables), lines);
}

// An Expand to a constant with a negative extent is a proven error, in the walk and in the kept
// tables alike (the tables' own Expand routine used to say ok whenever the rank was known), and
// a target held in a Constant node is read as an initializer's is.
TEST(Targets, ExpandToANegativeExtentIsAnErrorFromTheTablesAsInTheWalk) {
  absl::StatusOr<TargetProfile> p = ParseTargetProfile(
      "name = eng\n"
      "classes = same\n"
      "op.Expand.constant_b = same, inner-axis, outer-axis, general\n",
      "eng");
  ASSERT_TRUE(p.ok()) << p.status();
  proto::Model model = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[3,1] x) => (float[2,3,4] y, float[2,3,4] z) <int64[3] s = {2,-1,4}> {
  y = Expand (x, s)
  t = Constant <value = int64[3] {2,3,-4}> ()
  z = Expand (x, t)
})");
  const std::vector<std::string> lines = ViolationLines(model, *p);
  EXPECT_THAT(lines, ::testing::ElementsAre(
                         "Expand#0: broadcast error: Expand 'Expand#0': input [3,1] cannot be "
                         "expanded to shape [3] (bidirectional rule, negative extent in target "
                         "shape [2,-1,4])",
                         "Expand#2: broadcast error: Expand 'Expand#2': input [3,1] cannot be "
                         "expanded to shape [3] (bidirectional rule, negative extent in target "
                         "shape [2,3,-4])"));
  absl::StatusOr<analysis::ShapeTables> tables = analysis::ComputeShapeTables(model);
  ASSERT_TRUE(tables.ok()) << tables.status();
  EXPECT_EQ(ViolationLines(model, *p, &*tables), lines);
}

// legalize-measured inserts only the Expands the table runs: an outer-axis operand is left for
// the check, an inner-axis one is aligned and expanded along one axis; fold-constants keeps a
// bool result a node.
TEST(Targets, LegalizeMeasuredInsertsOnlyRunningExpands) {
  absl::StatusOr<TargetProfile> p = ParseTargetProfile(
      "name = eng\n"
      "classes = same\n"
      "passes = fold-constants, legalize-measured\n"
      "runtime_shapes = false\n"
      "initializer_types = float32, int64\n"
      "op.Add.computed = same, inner-axis:refused, outer-axis:refused\n"
      "op.Expand.constant_b = same, inner-axis, outer-axis:refused, general:refused\n",
      "eng");
  ASSERT_TRUE(p.ok()) << p.status();
  proto::Model m = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3,4] x, float[3,4] b, float[2,3,1] c) => (float[2,3,4] y, float[2,3,4] z, bool[2] e) <float[2] k = {1, 2}> {
  y = Add (x, b)
  z = Add (x, c)
  e = Equal (k, k)
})");
  ASSERT_TRUE(test_support::RunTarget(*p, &m).ok());
  std::vector<std::string> ops;
  for (const auto& n : m.proto.graph().node()) ops.push_back(n.op_type());
  EXPECT_THAT(ops, ::testing::ElementsAre("Reshape", "Expand", "Add", "Add", "Equal"));
  for (const auto& t : m.proto.graph().initializer()) EXPECT_NE(t.data_type(), 9) << t.name();
  absl::StatusOr<std::vector<std::string>> v = FindTargetViolations(m, *p);
  ASSERT_TRUE(v.ok());
  // The Add no Expand places, and the kept Equal (only constant inputs: a static engine does
  // not compute it at run time either; its bool result cannot be a constant).
  ASSERT_EQ(v->size(), 2u) << ::testing::PrintToString(*v);
  EXPECT_THAT((*v)[0], HasSubstr("Add 'Add#3': [2,3,4] and [2,3,1]"));
  EXPECT_THAT((*v)[0], HasSubstr("outer-axis"));
  EXPECT_THAT((*v)[1], HasSubstr("Equal"));
}

// A constant whose broadcast is the only placement is folded beyond --fold-limit, up to
// fold-constants' limit, and not beyond that.
TEST(Targets, LegalizeMeasuredFoldsBeyondTheFoldLimitAsALastResort) {
  absl::StatusOr<TargetProfile> p = ParseTargetProfile(
      "name = eng\n"
      "classes = same\n"
      "passes = legalize-measured\n"
      "runtime_shapes = false\n"  // no Expand of a constant: a static engine folds it
      "op.Add.constant_b = same, general:refused\n",
      "eng");
  ASSERT_TRUE(p.ok()) << p.status();
  const char* text = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3,4] x) => (float[2,3,4] y) <float[2,1,4] c = {1, 2, 3, 4, 5, 6, 7, 8}> {
  y = Add (x, c)
})";
  for (const int64_t wider : {int64_t{1} << 20, int64_t{64}}) {
    proto::Model m = test_support::Parse(text);
    passes::PassOptions options;
    options.fold_limit_bytes = 16;  // c broadcast to [2,3,4] is 96 bytes
    options.constant_fold_limit_bytes = wider;
    ASSERT_TRUE(test_support::RunTarget(*p, &m, nullptr, options).ok());
    absl::StatusOr<std::vector<std::string>> v = FindTargetViolations(m, *p);
    ASSERT_TRUE(v.ok());
    if (wider > 96) {
      EXPECT_TRUE(v->empty()) << ::testing::PrintToString(*v);
      std::vector<std::string> inits;
      for (const auto& t : m.proto.graph().initializer()) {
        inits.push_back(absl::StrCat(t.name(), ":", absl::StrJoin(t.dims(), ",")));
      }
      EXPECT_THAT(inits, ::testing::ElementsAre("c:2,3,4"));  // folded in place (one reader)
    } else {
      EXPECT_EQ(v->size(), 1u) << ::testing::PrintToString(*v);
    }
  }
}

TEST(Targets, BuiltinNcnnAndOpenCvAreTheCommittedMeasurements) {
  // ncnn: measured on an ncnn built from its public source (scripts/engines/build-ncnn.sh,
  // `onnx-bcast probe-engine ncnn`), no longer the seed table read from documents.
  const TargetProfile* ncnn = FindTarget("ncnn");
  ASSERT_NE(ncnn, nullptr);
  absl::StatusOr<std::string> ncnn_text =
      proto::ReadFileBytes(BCAST_SOURCE_DIR "/engines/profiles/ncnn-20260722.profile", 1 << 20);
  ASSERT_TRUE(ncnn_text.ok()) << ncnn_text.status();
  absl::StatusOr<TargetProfile> ncnn_file = ParseTargetProfile(*ncnn_text, "ncnn.profile");
  ASSERT_TRUE(ncnn_file.ok()) << ncnn_file.status();
  EXPECT_THAT(ncnn->description, HasSubstr("measured by onnx-bcast probe-engine"));
  EXPECT_EQ(ncnn->op_rules, ncnn_file->op_rules);
  EXPECT_EQ(ncnn->unsupported_ops, ncnn_file->unsupported_ops);
  EXPECT_THAT(ncnn->passes, ::testing::ElementsAre("upgrade-legacy-broadcast", "fold-constants",
                                                   "legalize-measured"));
  // What the measurement found: onnx2ncnn has no Shape and no Expand layer, and ncnn's
  // BinaryOp runs two computed operands of equal rank even where neither has the output shape
  // (the seed table said it refuses them).
  EXPECT_FALSE(ncnn->runtime_shapes);
  EXPECT_THAT(ncnn->unsupported_ops, ::testing::IsSupersetOf({"Expand", "Shape"}));
  EXPECT_EQ(ncnn->op_rules.at("Expand").forms.at("constant_b").at("same"), FormSupport::kRefused);
  EXPECT_EQ(ncnn->op_rules.at("Add").forms.at("computed").at("bidirectional"),
            FormSupport::kRunsAligned);
  const TargetProfile* opencv = FindTarget("opencv");
  ASSERT_NE(opencv, nullptr);
  absl::StatusOr<std::string> text =
      proto::ReadFileBytes(BCAST_SOURCE_DIR "/engines/profiles/opencv-4.6.profile", 1 << 20);
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<TargetProfile> file = ParseTargetProfile(*text, "opencv-4.6.profile");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->name, "opencv-4.6");
  EXPECT_EQ(opencv->op_rules, file->op_rules);
  EXPECT_EQ(opencv->native_classes, file->native_classes);
  EXPECT_EQ(opencv->passes, file->passes);
  EXPECT_EQ(opencv->runtime_shapes, file->runtime_shapes);
  // Measured: a Shape chain on a symbolic dim computes the wrong shape (the importer fixes
  // every dim at load time).
  EXPECT_FALSE(opencv->runtime_shapes);
  EXPECT_THAT(opencv->passes, ::testing::ElementsAre("upgrade-legacy-broadcast", "fold-constants",
                                                     "legalize-measured"));
  // What the measurement found, as the profile says it: the exponent must stay a scalar.
  EXPECT_EQ(opencv->op_rules.at("Pow").forms.at("constant_b").at("scalar"), FormSupport::kRuns);
}

// A class's wrong cell decides nodes at other shapes by the table alone, and says so (issue 42):
// ncnn computes Gemm's scalar C wrongly against [1,5] and runs a one-output head's C [1]
// against [1,1], which only the engine itself tells apart (live, where ncnn is built:
// engines.NcnnCorpus, and the audio-head case in docs/engines-ncnn.md).
TEST(Targets, AWrongClassCellSaysItWasMeasuredAtOtherShapes) {
  const TargetProfile* ncnn = FindTarget("ncnn");
  ASSERT_NE(ncnn, nullptr);
  ASSERT_EQ(ncnn->op_rules.at("Gemm").forms.at("constant_a").at("scalar"), FormSupport::kWrong);
  for (int n : {1, 5}) {
    const proto::Model m = test_support::Parse(absl::StrCat(
        "<ir_version: 8, opset_import: [\"\" : 13]>\ng (float[1,8] x) => (float[1,", n,
        "] y) <float[", n, ",8] w = {", absl::StrJoin(std::vector<int>(8 * n, 1), ", "),
        "}, float[1] c = {0.5}> {\n  y = Gemm <transB = 1> (x, w, c)\n}\n"));
    absl::StatusOr<std::vector<std::string>> v = FindTargetViolations(m, *ncnn);
    ASSERT_TRUE(v.ok()) << v.status();
    ASSERT_EQ(v->size(), 1u) << n;
    EXPECT_THAT((*v)[0], HasSubstr("computes wrongly at the shapes its class was measured at "
                                   "(op.Gemm.constant_a)"));
  }
}

// A size only the data decides (NonZero's count) is not a dim a user can bind: the hint names
// the node it comes from, not the analysis's symbol (issue 34 item 8).
TEST(Targets, AHintForADataDependentSizeNamesTheNodeNotTheSymbol) {
  const proto::Model m = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x) => (float[K] y) <int64 zero = {0}, float k = {1.5}> {
  nz = NonZero (x)
  c = Cast <to = 1> (nz)
  r = Gather <axis = 0> (c, zero)
  y = Sub (r, k)
})");
  absl::StatusOr<std::vector<std::string>> v = FindTargetViolations(m, *FindTarget("opencv"));
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->size(), 1u) << ::testing::PrintToString(*v);
  EXPECT_THAT(v->front(), HasSubstr("depends on data at node 'NonZero#0'"));
  EXPECT_THAT(v->front(), ::testing::Not(HasSubstr("with --dim")));
  EXPECT_EQ(DataSymbolNode("/m/NonZero_172:0:1", "at"), "/m/NonZero_172");
  EXPECT_EQ(DataSymbolNode("/m/TopK:1:0#2", "at"), "/m/TopK");
  EXPECT_EQ(DataSymbolNode("opaque#7", "Add 'a'"), "Add 'a'");
}

std::vector<std::string> ExampleModels() {
  return {BCAST_SOURCE_DIR "/models/cnn_block.onnx", BCAST_SOURCE_DIR "/models/legacy_axis.onnx",
          BCAST_SOURCE_DIR "/models/external/mlp.onnx"};
}

TEST(Targets, EveryTargetOnTheExampleModelsSatisfiesItsTable) {
  for (const std::string& path : ExampleModels()) {
    absl::StatusOr<proto::Model> original = proto::LoadModel(path);
    ASSERT_TRUE(original.ok()) << original.status();
    for (const TargetProfile& t : BuiltinTargets()) {
      proto::Model m = *original;
      ASSERT_TRUE(test_support::RunTarget(t, &m).ok()) << path << " " << t.name;
      // (mlp.onnx's external weights are only found from its own directory.)
      if (proto::CheckModel(*original, true).ok()) {
        EXPECT_TRUE(proto::CheckModel(m, true).ok()) << path << " " << t.name;
      }
      absl::StatusOr<std::vector<std::string>> v = FindTargetViolations(m, t);
      ASSERT_TRUE(v.ok());
      if (t.name == "none") {
        // Gemm's C against a symbolic (M,N) is the one broadcast left (see materialize).
        for (const std::string& msg : *v) EXPECT_THAT(msg, HasSubstr("Gemm")) << path;
      } else if (t.name == "opencv" || t.name == "ncnn") {
        // (ncnn: a class the table does not list, "which op.Sub.computed of ncnn does not
        // list", as for cnn_block's [N,10] - [N,1] with N unbound.)
        // legalize-measured places what a rewrite can place; what remains breaks a measured
        // per-op rule, and each names it.
        for (const std::string& msg : *v) EXPECT_THAT(msg, HasSubstr("op.")) << path;
      } else {
        EXPECT_THAT(*v, IsEmpty()) << path << " " << t.name;
      }
      if (t.name == "explicit") {
        EXPECT_THAT(test_support::RankMismatches(m), IsEmpty()) << path;
      }
      if (t.name == "none") {
        EXPECT_THAT(test_support::ShapeMismatches(m), IsEmpty()) << path;
      }
      // Idempotent as a whole.
      proto::Model again = m;
      ASSERT_TRUE(test_support::RunTarget(t, &again).ok());
      EXPECT_TRUE(proto::ModelsEqual(m.proto, again.proto)) << path << " " << t.name;
    }
  }
}

TEST(Targets, CanonicalUndoesNone) {
  for (const std::string& path : ExampleModels()) {
    absl::StatusOr<proto::Model> original = proto::LoadModel(path);
    ASSERT_TRUE(original.ok());
    for (int64_t fold_limit : {int64_t{0}, int64_t{1} << 20}) {
      passes::PassOptions options;
      options.fold_limit_bytes = fold_limit;
      proto::Model m = *original;
      ASSERT_TRUE(test_support::RunTarget(*FindTarget("none"), &m, nullptr, options).ok());
      ASSERT_TRUE(test_support::RunTarget(*FindTarget("canonical"), &m, nullptr, options).ok());
      const passes::ModelSummary before = passes::Summarize(original->proto);
      const passes::ModelSummary after = passes::Summarize(m.proto);
      // legacy_axis gains the Unsqueeze the upgrade needs; nothing else may grow.
      const int64_t upgrade_nodes = path.find("legacy") != std::string::npos ? 1 : 0;
      EXPECT_LE(after.nodes, before.nodes + upgrade_nodes) << path;
      EXPECT_LE(after.initializer_bytes, before.initializer_bytes) << path;
      if (proto::CheckModel(*original, true).ok()) {
        EXPECT_TRUE(proto::CheckModel(m, true).ok()) << path;
      }
    }
  }
}

// A tiny evaluator for the ops the upgrade emits (Unsqueeze with an axes attribute, Add with
// numpy broadcasting), to check the upgraded graph against hand-computed values.
struct Tensor {
  std::vector<int64_t> dims;
  std::vector<float> data;
};

Tensor Eval(const onnx::GraphProto& g, std::map<std::string, Tensor> values) {
  for (const auto& n : g.node()) {
    const Tensor& a = values.at(n.input(0));
    if (n.op_type() == "Unsqueeze") {
      Tensor out = a;
      std::vector<int64_t> axes;
      for (const auto& attr : n.attribute()) axes.assign(attr.ints().begin(), attr.ints().end());
      std::sort(axes.begin(), axes.end());
      for (int64_t axis : axes) out.dims.insert(out.dims.begin() + axis, 1);
      values[n.output(0)] = out;
    } else if (n.op_type() == "Add") {
      const Tensor& b = values.at(n.input(1));
      const size_t rank = std::max(a.dims.size(), b.dims.size());
      auto pad = [&](std::vector<int64_t> d) {
        d.insert(d.begin(), rank - d.size(), 1);
        return d;
      };
      const std::vector<int64_t> da = pad(a.dims), db = pad(b.dims);
      Tensor out;
      for (size_t i = 0; i < rank; ++i) out.dims.push_back(std::max(da[i], db[i]));
      int64_t count = 1;
      for (int64_t d : out.dims) count *= d;
      for (int64_t k = 0; k < count; ++k) {
        int64_t rest = k, ia = 0, ib = 0, sa = 1, sb = 1;
        for (int64_t i = static_cast<int64_t>(rank) - 1; i >= 0; --i) {
          const int64_t idx = rest % out.dims[i];
          rest /= out.dims[i];
          ia += (da[i] == 1 ? 0 : idx) * sa;
          ib += (db[i] == 1 ? 0 : idx) * sb;
          sa *= da[i];
          sb *= db[i];
        }
        out.data.push_back(a.data[ia] + b.data[ib]);
      }
      values[n.output(0)] = out;
    } else {
      ADD_FAILURE() << "unexpected op " << n.op_type();
    }
  }
  return values.at(g.output(0).name());
}

TEST(UpgradeLegacyBroadcast, Axis1MatchesHandComputedValues) {
  absl::StatusOr<proto::Model> m = proto::LoadModel(BCAST_SOURCE_DIR "/models/legacy_axis.onnx");
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(test_support::RunPass("upgrade-legacy-broadcast", &*m).ok());
  // a = 0..59 in shape (1,3,4,5); b = {1, 10, 100} from the model's initializer.
  Tensor a{{1, 3, 4, 5}, {}};
  for (int i = 0; i < 60; ++i) a.data.push_back(static_cast<float>(i));
  const onnx::TensorProto& init = m->proto.graph().initializer(0);
  absl::StatusOr<std::string> raw = proto::ReadRawBytes(init, ".", 1 << 20);
  ASSERT_TRUE(raw.ok());
  Tensor b{{3}, std::vector<float>(3)};
  std::memcpy(b.data.data(), raw->data(), 12);
  ASSERT_EQ(b.data, (std::vector<float>{1, 10, 100}));
  const Tensor c = Eval(m->proto.graph(), {{"a", a}, {"b", b}});
  ASSERT_EQ(c.dims, (std::vector<int64_t>{1, 3, 4, 5}));
  // Legacy axis=1: c[0,i,j,k] = a[0,i,j,k] + b[i] (not b[k], which numpy would pair).
  for (int i = 0; i < 3; ++i) {
    for (int jk = 0; jk < 20; ++jk) {
      const int k = i * 20 + jk;
      EXPECT_EQ(c.data[k], static_cast<float>(k) + b.data[i]) << "at channel " << i;
    }
  }
  EXPECT_TRUE(proto::CheckModel(*m, true).ok());
}

}  // namespace
}  // namespace onnx_bcast::targets
