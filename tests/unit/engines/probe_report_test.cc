// From measured cells to a profile, mechanically: the rank limit from `same`, `aligned` when
// only equal-rank cells run, the worst failure otherwise; the profile parses back; the table
// has one row per cell. And the grid covers every class `check` reports; engine outputs compare
// by value and element type, for every type.
#include <set>
#include <string>
#include <type_traits>

#include "engines/engine_probe.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/dtype.h"
#include "runtime/exec/error_model.h"
#include "runtime/tensor.h"
#include "targets/targets.h"

namespace onnx_bcast::engines {
namespace {

using targets::FormSupport;
using ::testing::HasSubstr;

ProbeCell Cell(const std::string& op, const std::string& pattern, const std::string& cls,
               int out_rank, bool aligned, CellResult result) {
  ProbeCell c;
  c.op = op;
  c.operands = {ProbeOperand{std::vector<int64_t>(static_cast<size_t>(out_rank), 2)}};
  c.output_shape = std::vector<int64_t>(static_cast<size_t>(out_rank), 2);
  c.kind_pattern = pattern;
  c.broadcast_class = cls;
  c.form_class = cls;
  c.aligned = aligned;
  c.result = result;
  return c;
}

// A report of `engine` at `version` whose computed `same` Add cells of ranks `from` to `to`
// run and match up to rank `limit` and are refused above it.
ProbeReport SameAddUpTo(const std::string& engine, const std::string& version, int from, int to,
                        int limit) {
  ProbeReport r;
  r.engine = engine;
  r.version = version;
  for (int rank = from; rank <= to; ++rank) {
    r.cells.push_back(Cell("Add", "computed", "same", rank, true,
                           rank <= limit ? CellResult::kRunsAndMatches : CellResult::kRefused));
  }
  return r;
}

ProbeReport Report() {
  // Add runs `same` up to rank 4 only.
  ProbeReport r = SameAddUpTo("toy", "2.7.1", 1, 6, 4);
  const auto ok = CellResult::kRunsAndMatches;
  r.cells.push_back(Cell("Add", "computed", "inner-axis", 3, false, CellResult::kRefused));
  r.cells.push_back(Cell("Add", "computed", "inner-axis", 3, true, ok));
  // Beyond the rank limit: decides nothing.
  r.cells.push_back(Cell("Add", "computed", "inner-axis", 6, true, CellResult::kCrashed));
  r.cells.push_back(Cell("Add", "constant_b", "general", 3, true, CellResult::kRefused));
  r.cells.push_back(Cell("Add", "constant_b", "general", 4, false, CellResult::kWrong));
  r.cells.push_back(Cell("Add", "constant_b", "scalar", 4, false, ok));
  r.cells.push_back(Cell("Pow", "computed", "same", 1, true, CellResult::kRefused));
  r.cells.push_back(Cell("Pow", "computed", "same", 2, true, ok));
  r.cells.push_back(Cell("Pow", "computed", "bidirectional", 2, true, CellResult::kCrashed));
  return r;
}

TEST(ProfileFromProbe, MapsCellsToRulesMechanically) {
  const targets::TargetProfile p = ProfileFromProbe(Report());
  EXPECT_EQ(p.name, "toy-2.7");
  const targets::OpRule& add = p.op_rules.at("Add");
  EXPECT_EQ(add.max_rank, 4);
  EXPECT_EQ(add.forms.at("computed").at("same"), FormSupport::kRuns);
  EXPECT_EQ(add.forms.at("computed").at("inner-axis"), FormSupport::kRunsAligned);
  EXPECT_EQ(add.forms.at("constant_b").at("general"), FormSupport::kWrong);  // worst
  EXPECT_EQ(add.forms.at("constant_b").at("scalar"), FormSupport::kRuns);
  const targets::OpRule& pow = p.op_rules.at("Pow");
  EXPECT_EQ(pow.max_rank, 0);
  EXPECT_EQ(pow.min_rank, 2);  // rank 1 fails, 2 runs
  EXPECT_EQ(pow.forms.at("computed").at("same"), FormSupport::kRuns);
  EXPECT_EQ(pow.forms.at("computed").at("bidirectional"), FormSupport::kCrashed);
  // Global classes: what both elementwise ops run with computed operands.
  EXPECT_THAT(p.native_classes, ::testing::ElementsAre("same"));
}

// Exact-shape cells (form "exact", issue 35 item 3) become `op.<Op>.<kinds>.shapes` entries
// keyed by where their 1s are, the worse result where two share a key, and decide no class
// rule; the table shows them in their own section, marked where the class rules differ.
ProbeCell Exact(const std::string& op, const std::string& pattern, std::vector<int64_t> a,
                std::vector<int64_t> b, CellResult result) {
  ProbeCell c;
  c.op = op;
  c.form = "exact";
  c.operands = {ProbeOperand{a, OperandKind::kComputed},
                ProbeOperand{b, pattern == "constant_b" ? OperandKind::kInitializer
                                                        : OperandKind::kComputed}};
  c.output_shape = a;
  c.kind_pattern = pattern;
  c.broadcast_class = "scalar";
  c.form_class = "scalar";
  c.result = result;
  return c;
}

TEST(ProfileFromProbe, ExactCellsBecomeShapeLinesOutsideTheClassRules) {
  ProbeReport r = Report();
  r.cells.push_back(Exact("Add", "computed", {1, 6}, {1, 1}, CellResult::kRefused));
  r.cells.push_back(Exact("Add", "computed", {1, 32}, {1, 1}, CellResult::kWrong));
  r.cells.push_back(
      Exact("Add", "computed", {1, 1, 1, 6}, {1, 1, 1, 1}, CellResult::kRunsAndMatches));
  r.cells.push_back(Exact("Add", "constant_b", {1, 4, 6}, {1, 4, 1}, CellResult::kRefused));
  ProbeCell expand = Exact("Expand", "constant_b", {1, 1}, {2}, CellResult::kRunsAndMatches);
  expand.operands[1].int64_values = {1, 6};
  r.cells.push_back(expand);
  const targets::TargetProfile p = ProfileFromProbe(r);
  const targets::TargetProfile without = ProfileFromProbe(Report());
  // The class rules are the grid's alone.
  EXPECT_EQ(p.op_rules.at("Add").forms, without.op_rules.at("Add").forms);
  const std::string text = FormatProbeProfile(r);
  EXPECT_THAT(text, HasSubstr("op.Add.computed.shapes = [1,N] [1,1]: wrong, "
                              "[1,1,1,N] [1,1,1,1]\n"));
  EXPECT_THAT(text, HasSubstr("op.Add.constant_b.shapes = [1,N,N] [1,N,1]: refused\n"));
  EXPECT_THAT(text, HasSubstr("op.Expand.constant_b.shapes = [1,1] [1,N]\n"));
  absl::StatusOr<targets::TargetProfile> back =
      targets::ParseTargetProfile(text.substr(text.find("name = ")), "probe.profile");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->op_rules, p.op_rules);
  const std::string table = FormatProbeTable(r);
  EXPECT_THAT(table, HasSubstr("## Shape-dependent cells"));
  EXPECT_THAT(table, HasSubstr("| [1,1,1,6] | [1,1,1,1] | runs (class: refused) |"));
  EXPECT_THAT(table, HasSubstr("| [1,1] | [1,6] | runs |"));  // the Expand, class not measured
  EXPECT_THAT(FormatProbeTable(Report()), ::testing::Not(HasSubstr("Shape-dependent")));
}

// The exact-shape cells are in every engine's grid as they are (they carry a batch of 1, the
// shapes a model bound with --dim N=1 has), not in ProbeGrid (whose direct cells other tests
// run through opt).
TEST(ProbeGrid, ExactShapeCellsAsTheyAreForEveryEngine) {
  auto exact = [](const std::vector<ProbeCell>& cells) {
    int n = 0;
    for (const ProbeCell& c : cells) n += c.form == "exact";
    return n;
  };
  EXPECT_EQ(exact(ProbeGridFor("opencv")), static_cast<int>(ShapeDependentCells().size()));
  EXPECT_EQ(exact(ProbeGridFor("ncnn")), static_cast<int>(ShapeDependentCells().size()));
  for (const ProbeCell& c : ProbeGridFor("ncnn")) {
    if (c.form != "exact" || c.op != "Sub" || c.operands[0].shape != std::vector<int64_t>{}) {
      continue;
    }
    EXPECT_EQ(c.operands[1].shape, std::vector<int64_t>{});  // rank 0 kept, no batch added
  }
  EXPECT_EQ(exact(ProbeGrid()), 0);
  // Unit axes in every position of A, T = 1 and T > 1, both orders and the three kinds.
  std::set<std::string> seen;
  for (const ProbeCell& c : ShapeDependentCells()) {
    if (c.op != "Sub") continue;
    std::string key;
    for (const ProbeOperand& o : c.operands) {
      key += std::string(OperandKindName(o.kind)) + "[";
      for (int64_t d : o.shape) key += std::to_string(d) + ",";
      key += "]";
    }
    seen.insert(key);
  }
  EXPECT_TRUE(seen.count("computed[1,1,6,]computed[1,1,1,]"));
  EXPECT_TRUE(seen.count("computed[1,4,6,]computed[1,4,1,]"));
  EXPECT_TRUE(seen.count("computed[1,4,1,6,]computed[1,4,1,1,]"));
  EXPECT_TRUE(seen.count("computed[1,1,1,6,]initializer[1,1,1,1,]"));
  EXPECT_TRUE(seen.count("initializer[1,4,3,6,]computed[1,4,3,1,]"));
  EXPECT_TRUE(seen.count("computed[1,4,6,]computed[1,1,6,]"));
  EXPECT_TRUE(seen.count("computed[1,1,]computed[1,6,]"));  // B first
  EXPECT_TRUE(seen.count("computed[]computed[]"));
}

TEST(ProfileFromProbe, UnalignedWhenOnlyLowerRankConstantsRunAndRuntimeShapesMeasured) {
  ProbeReport r = Report();
  ProbeCell below = Cell("Add", "constant_b", "per-channel", 4, false, CellResult::kRunsAndMatches);
  below.constants_below = true;
  r.cells.push_back(below);
  r.cells.push_back(Cell("Add", "constant_b", "per-channel", 4, true, CellResult::kRefused));
  EXPECT_EQ(ProfileFromProbe(r).op_rules.at("Add").forms.at("constant_b").at("per-channel"),
            FormSupport::kRunsUnaligned);
  // No run-time shape cell: not measured, the default. A symbolic-dim chain that computes a
  // wrong shape: shapes only as constants.
  EXPECT_TRUE(ProfileFromProbe(r).runtime_shapes);
  ProbeCell shape;
  shape.op = "Reshape";
  shape.form = "runtime-shape";
  shape.result = CellResult::kWrong;
  r.cells.push_back(shape);
  const targets::TargetProfile p = ProfileFromProbe(r);
  EXPECT_FALSE(p.runtime_shapes);
  EXPECT_EQ(p.op_rules.count("Reshape"), 0u);
  EXPECT_THAT(p.passes, ::testing::ElementsAre("upgrade-legacy-broadcast", "fold-constants",
                                               "legalize-measured"));
}

// `first-full` when only the cells with the full operand first run; a rank whose cells run
// where the class as a whole does not gets its own `<class>@<rank>` entry.
TEST(ProfileFromProbe, FirstFullAndPerRankEntries) {
  ProbeReport r = Report();
  const auto ok = CellResult::kRunsAndMatches;
  for (int rank : {2, 3}) {
    ProbeCell first = Cell("Add", "computed", "outer-axis", rank, true, ok);
    first.first_full = true;
    r.cells.push_back(first);
    r.cells.push_back(Cell("Add", "computed", "outer-axis", rank, true, CellResult::kWrong));
  }
  // per-channel: runs at rank 2 whatever the order, refused at rank 3.
  r.cells.push_back(Cell("Add", "computed", "per-channel", 2, true, ok));
  r.cells.push_back(Cell("Add", "computed", "per-channel", 3, true, CellResult::kRefused));
  const targets::OpRule add = ProfileFromProbe(r).op_rules.at("Add");
  const auto& forms = add.forms.at("computed");
  EXPECT_EQ(forms.at("outer-axis"), FormSupport::kRunsFirstFull);
  EXPECT_EQ(forms.count("outer-axis@2"), 0u);  // same as the class: no entry
  EXPECT_EQ(forms.at("per-channel"), FormSupport::kRefused);
  EXPECT_EQ(forms.at("per-channel@2"), FormSupport::kRuns);
  EXPECT_EQ(forms.count("per-channel@3"), 0u);  // fails there: the class's entry decides
}

TEST(ProfileFromProbe, TheFileParsesBackToTheSameProfile) {
  const ProbeReport r = Report();
  const std::string text = FormatProbeProfile(r);
  EXPECT_THAT(text, HasSubstr("# toy 2.7.1, measured by"));
  EXPECT_THAT(text, HasSubstr("op.Add.computed = inner-axis:aligned, same\n"));
  absl::StatusOr<targets::TargetProfile> back = targets::ParseTargetProfile(text, "toy");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->op_rules, ProfileFromProbe(r).op_rules);
  EXPECT_EQ(targets::FormatTargetProfile(*back), targets::FormatTargetProfile(ProfileFromProbe(r)));
}

TEST(FormatProbeTable, OneRowPerCellAndTheCounts) {
  const std::string table = FormatProbeTable(Report());
  EXPECT_THAT(table, HasSubstr("# toy 2.7.1: measured broadcast support"));
  EXPECT_THAT(table, HasSubstr("| runs-and-matches | 7 |"));
  EXPECT_THAT(table, HasSubstr("| 15 | Pow | bidirectional |"));
  EXPECT_THAT(table, ::testing::Not(HasSubstr("| 16 |")));
}

TEST(ProbeGrid, CoversEveryClassCheckReportsAtRanksOneToSix) {
  std::set<std::string> ops;
  std::set<size_t> ranks;
  for (const ProbeCell& c : ProbeGrid()) {
    ops.insert(c.op);
    ranks.insert(c.operands[0].shape.size());
  }
  EXPECT_THAT(ops, ::testing::IsSupersetOf({"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum",
                                            "Mean", "Where", "PRelu", "Gemm", "MatMul", "Expand",
                                            "Equal", "Greater", "Less"}));
  EXPECT_THAT(ranks, ::testing::IsSupersetOf({1u, 2u, 3u, 4u, 5u, 6u}));
}

// ---- The engine comparison (runtime::CompareToReference in the engine's representation): every
// element type is read, and the types themselves compared ----

// An engine's `actual` against our `expected` without a float64 reference (the comparison's
// fallback rule for floats; integers and bools exactly).
runtime::Comparison EngineCompare(const runtime::Tensor& expected, const runtime::Tensor& actual) {
  runtime::OutputReference ref;
  ref.name = "y";
  ref.computed = runtime::Value::Of(std::make_shared<runtime::Tensor>(expected.Clone()));
  runtime::CompareOptions options;
  options.engine_representation = true;
  return runtime::CompareToReference(runtime::Value::Of(std::make_shared<runtime::Tensor>(actual.Clone())), ref,
                                runtime::ErrorModel{}, options);
}

// A tensor of `dtype` and shape [4] holding 0, 1, 2, 3 (with `last` in place of 3), written
// through float for the half types.
runtime::Tensor Ramp(runtime::DType dtype, double last = 3) {
  runtime::Tensor t = runtime::Tensor::Allocate(dtype, {4}).value();
  runtime::VisitDType(dtype, 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int k = 0; k < 4; ++k) {
      const double v = k == 3 ? last : k;
      if constexpr (std::is_same_v<T, runtime::Float16>) {
        p[k] = runtime::ToFloat16(static_cast<float>(v));
      } else if constexpr (std::is_same_v<T, runtime::BFloat16>) {
        p[k] = runtime::ToBFloat16(static_cast<float>(v));
      } else if constexpr (std::is_same_v<T, bool>) {
        p[k] = v != 0 && k % 2 == 1;
      } else {
        p[k] = static_cast<T>(v);
      }
    }
    return 0;
  });
  return t;
}

TEST(EngineComparison, ReadsEveryElementTypeAndSeesADifference) {
  for (runtime::DType dtype : runtime::kAllDTypes) {
    SCOPED_TRACE(runtime::DTypeName(dtype));
    EXPECT_TRUE(EngineCompare(Ramp(dtype), Ramp(dtype)).match);
    if (dtype == runtime::DType::kBool) {
      runtime::Tensor flipped = Ramp(dtype);
      flipped.data<bool>()[0] = true;
      EXPECT_FALSE(EngineCompare(Ramp(dtype), flipped).match);
    } else {
      // 3 against 100: far outside any tolerance, in every type's range.
      EXPECT_FALSE(EngineCompare(Ramp(dtype), Ramp(dtype, 100)).match);
    }
  }
}

TEST(EngineComparison, ComparesTheElementTypes) {
  // An engine's wider or float representation of integers and bools holds their values: the
  // values decide, exactly.
  EXPECT_TRUE(EngineCompare(Ramp(runtime::DType::kInt64), Ramp(runtime::DType::kInt32)).match);
  // Ramp's bools are 0, 1, 0, 1.
  const runtime::Tensor as_float = runtime::Tensor::FromValues<float>({4}, {0, 1, 0, 1}).value();
  EXPECT_TRUE(EngineCompare(Ramp(runtime::DType::kBool), as_float).match);
  const runtime::Tensor wrong_float = runtime::Tensor::FromValues<float>({4}, {0, 1, 1, 1}).value();
  EXPECT_FALSE(EngineCompare(Ramp(runtime::DType::kBool), wrong_float).match);
  runtime::Tensor near = Ramp(runtime::DType::kFloat32, 3.0001);
  EXPECT_FALSE(EngineCompare(Ramp(runtime::DType::kInt64), near).match);
  // A float expected and an integer returned: truncation must not pass unseen.
  const runtime::Comparison a = EngineCompare(Ramp(runtime::DType::kFloat32), Ramp(runtime::DType::kInt32));
  EXPECT_FALSE(a.match);
  EXPECT_THAT(a.message, testing::HasSubstr("element type int32, expected float32"));
  EXPECT_TRUE(EngineCompare(Ramp(runtime::DType::kFloat16), Ramp(runtime::DType::kFloat32)).match);
}

// An engine's shape compares up to dims of 1 (OpenCV's N x 1 for a 1-D tensor, ncnn's dropped
// batch of 1), never beyond: the same values in another arrangement differ.
TEST(EngineComparison, ShapesCompareUpToOnes) {
  const runtime::Tensor want = runtime::Tensor::FromValues<float>({4}, {0, 1, 2, 3}).value();
  EXPECT_TRUE(
      EngineCompare(want, runtime::Tensor::FromValues<float>({4, 1}, {0, 1, 2, 3}).value()).match);
  EXPECT_TRUE(
      EngineCompare(want, runtime::Tensor::FromValues<float>({1, 4}, {0, 1, 2, 3}).value()).match);
  const runtime::Comparison square =
      EngineCompare(want, runtime::Tensor::FromValues<float>({2, 2}, {0, 1, 2, 3}).value());
  EXPECT_FALSE(square.match);
  EXPECT_THAT(square.message, testing::HasSubstr("output shape [2,2], expected [4]"));
  EXPECT_FALSE(EngineCompare(want, runtime::Tensor::FromValues<float>({3}, {0, 1, 2}).value()).match);
}

// A rank-0 `same` cell that runs counts as passing (ncnn's rank-0 cells): the limit above it
// still holds; a cell refused with the converter's "<op> not supported yet" lists the op as
// unsupported, and the cells outside the grid's own (form "op", "batch") decide no rule.
TEST(ProfileFromProbe, RankZeroPassesAndConverterRefusalsNameTheOp) {
  ProbeReport r = SameAddUpTo("ncnn", "1.0.20260722", 0, 7, 5);
  ProbeCell batch = Cell("Add", "computed", "same", 3, true, CellResult::kRefused);
  batch.form = "batch";
  r.cells.push_back(batch);
  ProbeCell gather = Cell("Gather", "", "", 4, false, CellResult::kRefused);
  gather.form = "op";
  gather.form_class.clear();
  gather.message = "load: Gather not supported yet!";
  r.cells.push_back(gather);
  ProbeCell expand = Cell("Expand", "computed", "same", 2, true, CellResult::kRefused);
  expand.message = "load: Expand not supported yet!";
  r.cells.push_back(expand);
  const targets::TargetProfile p = ProfileFromProbe(r);
  EXPECT_EQ(p.name, "ncnn-20260722");  // the date tells ncnn builds apart, not "1.0"
  EXPECT_EQ(p.op_rules.at("Add").max_rank, 5);
  EXPECT_EQ(p.op_rules.at("Add").forms.at("computed").at("same"), FormSupport::kRuns);
  EXPECT_EQ(p.op_rules.count("Gather"), 0u);
  EXPECT_THAT(p.unsupported_ops, ::testing::ElementsAre("Expand", "Gather"));
  absl::StatusOr<targets::TargetProfile> back =
      targets::ParseTargetProfile(targets::FormatTargetProfile(p), "t");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->unsupported_ops, p.unsupported_ops);
}

// ncnn's grid: every operand at the output's rank has a batch of 1 (ncnn has no batch axis),
// every graph input starts with 1 or has rank 1 or less, plus the batch, rank-0/1,
// constant-shape and single-op cells; OpenCV's grid is the grid and the exact-shape cells.
TEST(ProbeGridFor, NcnnCarriesABatchOfOneAndItsOwnCells) {
  EXPECT_EQ(ProbeGridFor("opencv").size(), ProbeGrid().size() + ShapeDependentCells().size());
  std::set<std::string> forms, ops;
  for (const ProbeCell& c : ProbeGridFor("ncnn")) {
    forms.insert(c.form);
    if (c.form == "op") ops.insert(c.op);
    if (c.form == "batch") continue;
    for (const ProbeOperand& o : c.operands) {
      // (An Unsqueeze's input one axis short of its result keeps its rank: Unsqueeze needs an
      // axis to insert.)
      if (o.kind != OperandKind::kInput || o.shape.size() < 2 || c.form == "Unsqueeze") continue;
      EXPECT_EQ(o.shape[0], 1) << c.op << " " << c.form;
    }
  }
  EXPECT_THAT(forms, ::testing::IsSupersetOf({"direct", "batch", "constant-shape", "op"}));
  EXPECT_THAT(ops, ::testing::IsSupersetOf({"Conv", "Gather", "LayerNormalization", "Cast"}));
}

// MNN: its files are named by the date its version carries after a '+' (MNN keeps 3.6.1 for
// months of commits); MNNConvert's "These Op Not Support: ONNX::<op>" and the runtime's
// "Don't support type [<op>]" list the op as unsupported, an op merely named in another op's
// refusal does not.
TEST(ProfileFromProbe, MnnIsNamedByItsDateAndItsConvertersRefusalsNameTheOp) {
  ProbeReport r = SameAddUpTo("mnn", "3.6.1+20260820", 1, 7, 6);
  EXPECT_EQ(r.Label(), "mnn-20260820");
  auto op_cell = [&](const std::string& op, const std::string& message) {
    ProbeCell c = Cell(op, "", "", 4, false, CellResult::kRefused);
    c.form = "op";
    c.form_class.clear();
    c.message = message;
    r.cells.push_back(c);
  };
  op_cell("Hardmax", "load: These Op Not Support: ONNX::Hardmax | ONNX::Det");
  op_cell("Dropout", "run: resizeSession failed to compute the shapes: Don't support type "
                     "[Dropout]; Create execution error : 21");
  op_cell("Det", "load: MNNConvert crashed (signal 11)");
  op_cell("Max", "load: These Op Not Support: ONNX::MaxRoiPool");
  const targets::TargetProfile p = ProfileFromProbe(r);
  EXPECT_EQ(p.name, "mnn-20260820");
  EXPECT_THAT(p.unsupported_ops, ::testing::ElementsAre("Dropout", "Hardmax"));
  // The table says where the extra cells come from.
  EXPECT_THAT(FormatProbeTable(r), ::testing::HasSubstr("mnn keeps its batch axis"));
  // Versions without a date keep major.minor.
  r.engine = "opencv";
  r.version = "4.6.0";
  EXPECT_EQ(r.Label(), "opencv-4.6");
}

// MNN's grid: the grid with its batch axes as they are (MNN has one), the exact-shape cells,
// and the extra cells ncnn's has (a batch of 2, rank-0/1 operands, a constant Reshape, one node
// per corpus op); OpenCV's committed table was measured without the extra cells.
TEST(ProbeGridFor, MnnKeepsItsBatchAxesAndAddsTheExtraCells) {
  EXPECT_TRUE(EngineGetsExtraCells("mnn"));
  EXPECT_FALSE(EngineGetsExtraCells("opencv"));
  EXPECT_FALSE(EngineDropsBatchAxis("mnn"));
  const std::vector<ProbeCell> grid = ProbeGrid();
  const std::vector<ProbeCell> mnn = ProbeGridFor("mnn");
  ASSERT_GT(mnn.size(), grid.size() + ShapeDependentCells().size());
  for (size_t i = 0; i < grid.size(); ++i) {
    ASSERT_EQ(mnn[i].operands.size(), grid[i].operands.size());
    for (size_t k = 0; k < grid[i].operands.size(); ++k) {
      EXPECT_EQ(mnn[i].operands[k].shape, grid[i].operands[k].shape) << i << " " << mnn[i].op;
    }
  }
  std::set<std::string> forms, ops;
  for (const ProbeCell& c : mnn) {
    forms.insert(c.form);
    if (c.form == "op") ops.insert(c.op);
  }
  EXPECT_THAT(forms, ::testing::IsSupersetOf({"direct", "exact", "batch", "constant-shape", "op"}));
  EXPECT_THAT(ops, ::testing::IsSupersetOf({"Conv", "Gather", "LayerNormalization", "Cast"}));
}

}  // namespace
}  // namespace onnx_bcast::engines
