// The pass manager's analyses (analysis/analysis_manager.h): computed once per pipeline on a
// one-graph model, kept current through every pass (a fresh analysis agrees after each), read by
// the target check, dropped after a pass that does not preserve them; VerifyShapeTables finds a
// stale entry and tolerates data-dependent symbols renamed by an insertion.
#include "analysis/analysis_manager.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/pass_manager.h"
#include "targets/targets.h"
#include "tests/support/pass_test_util.h"

namespace onnx_bcast::analysis {
namespace {

using ::testing::HasSubstr;

// Rank-mismatched operands (align-ranks rewrites both Adds) and an unnamed NonZero whose
// data-dependent extent is a symbol named after its position, which the Unsqueeze inserted
// before it shifts.
const char kModel[] = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[3] x, float[N,2,3] y) => (int64[?,?] z, float[N,2,3] w) {
    a = Add(x, y)
    n = NonZero(a)
    z = Transpose(n)
    w = Mul(a, x)
  })";

std::vector<const passes::PassInfo*> Explicit() {
  absl::StatusOr<std::vector<const passes::PassInfo*>> p = passes::ResolvePasses(targets::FindTarget("explicit")->passes);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : std::vector<const passes::PassInfo*>{};
}

TEST(AnalysisManager, OneAnalysisServesEveryPassAndTheTargetCheck) {
  proto::Model model = test_support::Parse(kModel);
  AnalysisManager analyses(&model);
  passes::PipelineOptions options;
  options.analyses = &analyses;
  options.verify_each = true;  // compares the kept tables with a fresh analysis after each pass
  std::vector<passes::PassRun> runs;
  const absl::Status s = passes::RunPipeline(&model, Explicit(), options, &runs);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_TRUE(runs[1].stats.changed());  // align-ranks rewrote the graph
  EXPECT_EQ(analyses.computations(), 1);
  ASSERT_NE(analyses.held(), nullptr);
  EXPECT_TRUE(passes::VerifyShapeTables(model, *analyses.held()).ok());
  // The target check over the kept tables finds what a fresh analysis finds (here: nothing).
  const targets::TargetProfile& target = *targets::FindTarget("explicit");
  absl::StatusOr<std::vector<targets::TargetViolation>> from_tables =
      targets::CheckTarget(model, target, nullptr, analyses.held());
  absl::StatusOr<std::vector<targets::TargetViolation>> fresh = targets::CheckTarget(model, target);
  ASSERT_TRUE(from_tables.ok() && fresh.ok());
  EXPECT_TRUE(from_tables->empty());
  EXPECT_TRUE(fresh->empty());
  // A second pipeline starts from the held tables: no new analysis.
  ASSERT_TRUE(passes::RunPipeline(&model, Explicit(), options, &runs).ok());
  EXPECT_EQ(analyses.computations(), 1);
}

// fold-constants does not keep the tables current through its edits, so it starts without them;
// when its last analysis is followed by no edit (here a Shape of a symbolic batch: nothing to
// fold) it hands that analysis on, and the next pass and the check use it: one analysis in all.
// When it folds, the next pass analyses the folded graph afresh.
TEST(AnalysisManager, FoldConstantsHandsOnItsAnalysisWhenItEditsNothingAfterIt) {
  const std::vector<const passes::PassInfo*> pipeline = [] {
    absl::StatusOr<std::vector<const passes::PassInfo*>> p =
        passes::ResolvePasses(std::vector<std::string>{"fold-constants", "align-ranks"});
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : std::vector<const passes::PassInfo*>{};
  }();
  ASSERT_EQ(pipeline.size(), 2u);
  proto::Model model = test_support::Parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3] x, float[3] b) => (float[N,3] z) {
      s = Shape(x)
      r = Reshape(x, s)
      z = Add(r, b)
    })");
  AnalysisManager analyses(&model);
  passes::PipelineOptions options;
  options.analyses = &analyses;
  options.verify_each = true;  // the handed-on tables must equal a fresh analysis
  std::vector<passes::PassRun> runs;
  absl::Status s = passes::RunPipeline(&model, pipeline, options, &runs);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_FALSE(runs[0].stats.changed());
  EXPECT_TRUE(runs[1].stats.changed());   // align-ranks rewrote the Add
  EXPECT_EQ(analyses.computations(), 0);  // align-ranks took fold-constants' tables
  ASSERT_NE(analyses.held(), nullptr);
  EXPECT_TRUE(passes::VerifyShapeTables(model, *analyses.held()).ok());

  proto::Model folds = test_support::Parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x, float[3] b) => (float[2,3] z) {
      s = Shape(x)
      r = Reshape(x, s)
      z = Add(r, b)
    })");
  AnalysisManager fresh(&folds);
  options.analyses = &fresh;
  runs.clear();
  s = passes::RunPipeline(&folds, pipeline, options, &runs);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(runs[0].stats.changed());  // Shape of static dims folded
  EXPECT_EQ(fresh.computations(), 1);    // the folded graph analysed again, once
}

// Without a reader of the rewrite list the pipeline counts the rewrites and keeps none, and
// rewrites exactly as it does with the list kept.
TEST(PassManager, AnUnkeptRewriteLogStillCountsAndChangesNothingElse) {
  proto::Model logged = test_support::Parse(kModel);
  proto::Model counted = test_support::Parse(kModel);
  passes::PipelineOptions options;
  std::vector<passes::PassRun> logged_runs, counted_runs;
  ASSERT_TRUE(passes::RunPipeline(&logged, Explicit(), options, &logged_runs).ok());
  options.keep_rewrite_log = false;
  ASSERT_TRUE(passes::RunPipeline(&counted, Explicit(), options, &counted_runs).ok());
  ASSERT_EQ(logged_runs.size(), counted_runs.size());
  int64_t total = 0;
  for (size_t i = 0; i < logged_runs.size(); ++i) {
    const passes::PassStats& a = logged_runs[i].stats;
    const passes::PassStats& b = counted_runs[i].stats;
    EXPECT_EQ(static_cast<int64_t>(a.log.size()), a.rewrites) << logged_runs[i].pass;
    EXPECT_EQ(a.rewrites, b.rewrites) << logged_runs[i].pass;
    EXPECT_EQ(a.changed(), b.changed()) << logged_runs[i].pass;
    EXPECT_EQ(a.initializers_rewritten, b.initializers_rewritten) << logged_runs[i].pass;
    EXPECT_EQ(a.nodes_inserted, b.nodes_inserted) << logged_runs[i].pass;
    EXPECT_TRUE(b.log.empty()) << logged_runs[i].pass;
    total += b.rewrites;
  }
  EXPECT_GT(total, 0);  // align-ranks rewrote both Adds
  EXPECT_EQ(logged.proto.SerializeAsString(), counted.proto.SerializeAsString());
}

// The target check reads operand shapes by the ids the analysis or the last pass resolved per
// node. Ids that no longer match the node's names are looked up by name: the violations are
// those of a check by name alone.
TEST(AnalysisManager, TargetCheckIdHintsAreCheckedByName) {
  proto::Model model = test_support::Parse(kModel);  // not aligned: explicit finds the two Adds
  absl::StatusOr<ShapeTables> tables = ComputeShapeTables(model);
  ASSERT_TRUE(tables.ok()) << tables.status();
  const targets::TargetProfile& target = *targets::FindTarget("explicit");
  const auto violations = [&](const ShapeTables& t) {
    absl::StatusOr<std::vector<targets::TargetViolation>> v = targets::CheckTarget(model, target, nullptr, &t);
    EXPECT_TRUE(v.ok()) << v.status();
    std::vector<std::string> out;
    if (v.ok()) {
      for (const targets::TargetViolation& x : *v) out.push_back(x.ToString());
    }
    return out;
  };
  const proto::NodeTensorIds fresh = tables->node_ids();
  ASSERT_EQ(fresh.begin.size(), 5u);  // the analysis left a hint for the four nodes
  const std::vector<std::string> by_ids = violations(*tables);
  ASSERT_EQ(by_ids.size(), 2u);
  // Every id moved to the next tensor's: all stale.
  proto::NodeTensorIds stale = fresh;
  for (int& id : stale.ids) id = id >= 0 ? (id + 1) % tables->ids().size() : id;
  tables->AdoptNodeIds(stale);
  EXPECT_EQ(violations(*tables), by_ids);
  tables->AdoptNodeIds({});
  EXPECT_EQ(violations(*tables), by_ids);
}

// Shapes are stored once per distinct value: equal shapes share one record, and the records
// outlive the tables that made them as long as a copy lives.
TEST(ShapeTablesTest, EqualShapesAreSharedAndCopiesKeepThemValid) {
  const broadcast::Shape nchw = broadcast::Shape::FromDims(
      {broadcast::Dim::Symbol("N"), broadcast::Dim::Value(8), broadcast::Dim::Value(6), broadcast::Dim::Value(5)});
  std::optional<ShapeTables> tables(std::in_place);
  tables->SetShape("a", nchw);
  tables->SetShape("b", nchw);
  tables->SetShape("c", broadcast::Shape::Of({8, 6, 5}));
  tables->SetShape("u", broadcast::Shape::UnknownRank());
  EXPECT_EQ(tables->FindShape("a"), tables->FindShape("b"));
  EXPECT_NE(tables->FindShape("a"), tables->FindShape("c"));
  EXPECT_FALSE(tables->FindShape("u")->rank_known);
  ShapeTables copy = *tables;
  const broadcast::Shape* a = copy.FindShape("a");
  copy.SetShape("d", broadcast::Shape::Of({1}));  // the shared pool grows
  tables.reset();
  EXPECT_EQ(a->ToString(), "[N,8,6,5]");
  EXPECT_EQ(copy.FindShape("d")->ToString(), "[1]");
  ShapeTables moved = std::move(copy);
  copy = ShapeTables();  // a fresh table after a move works as a new one
  copy.SetShape("e", nchw);
  EXPECT_EQ(copy.FindShape("e")->ToString(), "[N,8,6,5]");
  EXPECT_EQ(moved.FindShape("a"), a);
}

TEST(ShapeTablesTest, AbsentIsNotUnknownAndReferencesSurviveGrowth) {
  ShapeTables t;
  EXPECT_EQ(t.FindShape("x"), nullptr);
  EXPECT_EQ(t.ElemOf("x"), 0);
  t.SetElem("x", 1);  // an element type alone records no shape
  EXPECT_EQ(t.FindShape("x"), nullptr);
  t.SetShape("u", broadcast::Shape::UnknownRank());
  ASSERT_NE(t.FindShape("u"), nullptr);  // recorded as unknown: not absent
  t.SetShape("x", broadcast::Shape::Parse("[N,3]"));
  const broadcast::Shape* x = t.FindShape("x");
  // RewriteContext::ShapeOf hands out references while passes record new tensors.
  for (int i = 0; i < 10000; ++i) t.SetShape("t" + std::to_string(i), broadcast::Shape::Of({i}));
  EXPECT_EQ(t.FindShape("x"), x);
  EXPECT_EQ(x->ToString(), "[N,3]");
  EXPECT_EQ(t.ElemOf("x"), 1);
  t.EraseShape("x");
  EXPECT_EQ(t.FindShape("x"), nullptr);
  EXPECT_EQ(t.ElemOf("x"), 1);
  std::vector<std::string> seen;
  t.ForEachShape([&](std::string_view name, const broadcast::Shape&) {
    if (seen.size() < 2) seen.emplace_back(name);
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"u", "t0"}));  // recording order, erased skipped
}

TEST(AnalysisManager, VerifyFindsAStaleShape) {
  proto::Model model = test_support::Parse(kModel);
  absl::StatusOr<ShapeTables> tables = ComputeShapeTables(model);
  ASSERT_TRUE(tables.ok());
  EXPECT_TRUE(passes::VerifyShapeTables(model, *tables).ok());
  tables->SetShape("w", broadcast::Shape::Parse("[N,3]"));
  const absl::Status s = passes::VerifyShapeTables(model, *tables);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("tensor 'w': kept shape [N,3], a fresh analysis gives"));
  tables->EraseShape("w");
  EXPECT_THAT(passes::VerifyShapeTables(model, *tables).message(), HasSubstr("'w': kept shape none"));
}

// A pass that edits the graph behind RewriteContext's back and says so.
class RenameOutputPass : public passes::Pass {
 public:
  absl::Status Run(proto::Model* model, const passes::PassOptions&, passes::PassStats*) override {
    model->proto.mutable_graph()->mutable_node(3)->set_op_type("Add");
    return absl::OkStatus();
  }
};

TEST(AnalysisManager, APassThatDoesNotPreserveDropsTheTables) {
  proto::Model model = test_support::Parse(kModel);
  AnalysisManager analyses(&model);
  passes::PipelineOptions options;
  options.analyses = &analyses;
  std::vector<passes::PassRun> runs;
  ASSERT_TRUE(passes::RunPipeline(&model, Explicit(), options, &runs).ok());
  ASSERT_NE(analyses.held(), nullptr);
  const passes::PassInfo editing{"test-edit", "edits without keeping the tables",
                         [] { return std::unique_ptr<passes::Pass>(new RenameOutputPass()); },
                         /*needs_target=*/false, /*preserves_shapes=*/false};
  const passes::PassInfo* pipeline[] = {&editing};
  ASSERT_TRUE(passes::RunPipeline(&model, pipeline, options, &runs).ok());
  EXPECT_EQ(analyses.held(), nullptr);
}

// Every graph's tables (ModelTables): a model with If/Loop bodies or model-local functions is
// analysed once per pipeline too, and after every pass the manager holds, for the main graph and
// for every path a fresh analysis walks, tables that agree with that fresh analysis.

// Runs each pass of `names` as its own pipeline over one manager and checks after each that the
// held tables are every graph's, current (VerifyModelTables), from one analysis.
void RunAndCheckEveryGraph(proto::Model* model, const std::vector<std::string>& names) {
  AnalysisManager analyses(model);
  passes::PipelineOptions options;
  options.analyses = &analyses;
  options.pass_options.evaluator = test_support::Executor();
  absl::StatusOr<std::vector<const passes::PassInfo*>> pipeline = passes::ResolvePasses(names);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  bool changed = false;
  for (const passes::PassInfo* info : *pipeline) {
    SCOPED_TRACE(info->name);
    std::vector<passes::PassRun> runs;
    const passes::PassInfo* one[] = {info};
    const absl::Status s = passes::RunPipeline(model, one, options, &runs);
    ASSERT_TRUE(s.ok()) << s;
    changed |= runs.back().stats.changed();
    EXPECT_EQ(analyses.computations(), 1);
    ASSERT_NE(analyses.held(), nullptr);
    ASSERT_NE(analyses.held_graphs(), nullptr);
    EXPECT_FALSE(analyses.held_graphs()->empty());
    const absl::Status fresh =
        passes::VerifyModelTables(*model, *analyses.held(), *analyses.held_graphs());
    EXPECT_TRUE(fresh.ok()) << fresh;
  }
  EXPECT_TRUE(changed);  // the passes had something to keep current
}

const std::vector<std::string> kPreserving = {"align-ranks", "materialize-broadcast",
                                              "eliminate-redundant-broadcast"};

TEST(AnalysisManager, IfAndLoopBodiesAreAnalysedOnceAndKeptCurrent) {
  absl::StatusOr<proto::Model> model = proto::LoadModel(
      std::string(BCAST_SOURCE_DIR) + "/tests/fixtures/exported/scripted_if_loop_op15.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  RunAndCheckEveryGraph(&*model, kPreserving);
}

// Unnamed owners after an insertion (their paths name their index), a function called from the
// main graph and from a body, three call sites that need the same rewrite (one body, a table
// each) and two that need another (a copy of the function, their calls renamed, its body's
// names drawn after the first group's).
const char kFunctionsAndBodies[] = R"(
  <ir_version: 8, opset_import: ["" : 15, "local" : 1]>
  g (bool c, float[N,20,120] x, float[120] row, float[20,120] m) => (float[N,20,120] y) {
    a = Add (x, row)
    t = local.scale (a, row)
    u = local.scale (t, row)
    v = local.scale (u, m)
    w = local.scale (v, m)
    y = If (c) <
      then_branch = then_g () => (float[N,20,120] p) { p = Mul (w, row) },
      else_branch = else_g () => (float[N,20,120] q) { q = local.scale (w, row) }
    >
  }
  <domain: "local", opset_import: ["" : 15]>
  scale (k, b) => (o) {
    o = Mul (k, b)
  })";

TEST(AnalysisManager, FunctionCallSitesAndBodiesAreAnalysedOnceAndKeptCurrent) {
  proto::Model model = test_support::Parse(kFunctionsAndBodies);
  RunAndCheckEveryGraph(&model, kPreserving);
  // The copy exists: the last two call sites' tables moved to the copy's path.
  ASSERT_EQ(model.proto.functions_size(), 2);
}

TEST(AnalysisManager, EveryGraphsTablesAreKeptThroughTheWholePipeline) {
  proto::Model model = test_support::Parse(kFunctionsAndBodies);
  AnalysisManager analyses(&model);
  passes::PipelineOptions options;
  options.analyses = &analyses;
  options.verify_each = true;  // VerifyModelTables after every pass
  std::vector<passes::PassRun> runs;
  const absl::Status s = passes::RunPipeline(&model, Explicit(), options, &runs);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(analyses.computations(), 1);
  ASSERT_NE(analyses.held_graphs(), nullptr);
}

}  // namespace
}  // namespace onnx_bcast::analysis
