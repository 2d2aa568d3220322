// Static shapes end to end (issue 22): `opt --dim/--input-shape`, fold-constants and the
// targets that take no run-time shapes, on the exporter corpus (tests/fixtures/exported) and
// the regression fixtures, through the CLI as a user runs it:
//   - every export, `opt --target ncnn --dim <its test dims> --verify`: no Shape, Size,
//     ConstantOfShape or Identity node, no node with only constant inputs, constant shape
//     inputs on every Reshape/Expand/Tile/Resize, equal to the original at those dims; the
//     exceptions are shapes that depend on data, each named with why it stays;
//   - one verdict: for every target, the violations opt reports (decided over the pipeline's
//     tables) equal those a fresh check of the written model finds, node by node;
//   - the FPN adds: nothing inserted once H and W are bound; without them, exit 3 naming H, W;
//   - the tf2onnx-style Max with an expanded [1,1,1,1] constant (dims named unk__N) meets `none`;
//   - usage errors (64) and bindings that break a broadcast (1, naming the node);
//   - fold-constants is idempotent on every written model.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "report/report_json.h"
#include "targets/targets.h"
#include "tests/support/cli_process.h"
#include "tests/support/corpus_bindings.h"
#include "tests/support/json_file.h"

namespace onnx_bcast {
namespace {

namespace fs = std::filesystem;
using report::Json;
using ::testing::HasSubstr;
using Bindings = test_support::CorpusBindings;

const std::string kCorpus = BCAST_SOURCE_DIR "/tests/fixtures/exported/";
const std::string kOpt = BCAST_SOURCE_DIR "/tests/fixtures/opt/";

// Models that keep run-time shape work at their test dims: what stays, and the words that say
// why. (data_dependent_op15 has none left: its TopK k and Expand shape come from the bound
// dims; NonZero's extents feed no shape input.)
const std::map<std::string, std::string>& DataDependent() {
  static const auto* const kModels = new std::map<std::string, std::string>{
      // A Loop over the input's length: its body slices by the iteration counter.
      {"scripted_if_loop_op15", "control-flow body"},
  };
  return *kModels;
}

class Scratch {
 public:
  Scratch() {
    dir_ =
        fs::temp_directory_path() / absl::StrCat("bcast_static_", ::getpid(), "_", counter_++, "_",
                                                 ::testing::UnitTest::GetInstance()->random_seed());
    fs::create_directories(dir_);
  }
  ~Scratch() { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  test_support::CliResult Run(const std::vector<std::string>& args) const {
    return test_support::RunCliIn(BCAST_CLI, args, dir_.string());
  }

 private:
  static inline int counter_ = 0;
  fs::path dir_;
};

using test_support::ReadJson;

std::vector<std::string> Models() {
  std::vector<std::string> names;
  const Json manifest = ReadJson(kCorpus + "manifest.json");  // items() must not outlive it
  for (const auto& [name, entry] : manifest.items()) names.push_back(name);
  return names;
}

// The manifest's first valid binding, of the symbols the model declares (the manifest names
// H and W for every image model; the ViT has fixed 32x32 inputs).
Bindings FirstBinding(const std::string& model) {
  absl::StatusOr<proto::Model> m = proto::LoadModel(kCorpus + model + ".onnx");
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return {};
  return test_support::FirstBinding(ReadJson(kCorpus + "manifest.json"), model, m->proto.graph());
}

// A node with only constant inputs names the same verdict either way; opt, which ran
// fold-constants, adds why the pass kept it (issue 44 item 7), which a check of the written
// model alone cannot know. Compared up to that verdict.
std::string UpToKeptConstant(std::string violation) {
  const size_t at = violation.find(": has only constant inputs");
  if (at != std::string::npos) violation.resize(at + std::strlen(": has only constant inputs"));
  return violation;
}

std::vector<std::string> Violations(const Json& report) {
  std::vector<std::string> out;
  for (const Json& v : report.at("summary").at("violations")) {
    out.push_back(UpToKeptConstant(v.get<std::string>()));
  }
  return out;
}

// What a static engine must not meet in `g`, one line per node.
std::vector<std::string> RuntimeShapeWork(const onnx::GraphProto& g) {
  std::set<std::string> constants;
  std::set<std::string> inputs;
  for (const auto& vi : g.input()) inputs.insert(vi.name());
  for (const auto& t : g.initializer()) {
    if (inputs.count(t.name()) == 0) constants.insert(t.name());
  }
  static const std::map<std::string, std::vector<int>> kShapeInputs = {
      {"Reshape", {1}}, {"Expand", {1}}, {"Tile", {1}}, {"Resize", {1, 2, 3}}, {"Upsample", {1}}};
  std::vector<std::string> out;
  for (const auto& n : g.node()) {
    const std::string& op = n.op_type();
    const std::string label = absl::StrCat(op, " '", n.name(), "'");
    if (op == "Shape" || op == "Size" || op == "ConstantOfShape" || op == "Identity") {
      out.push_back(label);
      continue;
    }
    if (auto it = kShapeInputs.find(op); it != kShapeInputs.end()) {
      for (int slot : it->second) {
        if (slot < n.input_size() && !n.input(slot).empty() &&
            constants.count(n.input(slot)) == 0) {
          out.push_back(absl::StrCat(label, " input ", slot, " computed"));
        }
      }
    }
    bool all_constant = n.input_size() > 0, has_body = false;
    for (const auto& in : n.input()) all_constant &= in.empty() || constants.count(in) > 0;
    for (const auto& a : n.attribute()) has_body |= a.has_g() || a.graphs_size() > 0;
    if (all_constant && !has_body && op != "Constant") {
      out.push_back(absl::StrCat(label, " has only constant inputs"));
    }
  }
  return out;
}

class CorpusTest : public ::testing::TestWithParam<std::string> {};

// The static ncnn pipeline on every export at its test dims, verified against the original.
TEST_P(CorpusTest, NcnnAtTestDimsIsStaticAndVerified) {
  const std::string model = GetParam();
  const Bindings dims = FirstBinding(model);
  Scratch s;
  const test_support::CliResult r = s.Run(
      {"opt", kCorpus + model + ".onnx", "-o", s.Path("out.onnx"), "--target", "ncnn", "--dim",
       test_support::DimList(dims), "--report", s.Path("r.json"), "--verify", "--allow-partial",
       // The table's promise, the same on every machine; the engine's is held to ncnn itself
       // in engines.NcnnCorpus.
       "--no-live-probe", "--no-verify-engine"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("dims bound: "));
  EXPECT_THAT(r.out, HasSubstr(": EQUAL"));
  const Json report = ReadJson(s.Path("r.json"));
  const std::vector<std::string> violations = Violations(report);
  absl::StatusOr<proto::Model> written = proto::LoadModel(s.Path("out.onnx"));
  ASSERT_TRUE(written.ok()) << written.status();
  // Every declared input dim the test binds is a number now.
  for (const auto& vi : written->proto.graph().input()) {
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      EXPECT_TRUE(d.has_dim_value()) << vi.name() << " keeps a symbolic dim " << d.dim_param();
    }
  }
  const std::vector<std::string> work = RuntimeShapeWork(written->proto.graph());
  auto dd = DataDependent().find(model);
  if (dd == DataDependent().end()) {
    EXPECT_THAT(work, ::testing::IsEmpty()) << absl::StrJoin(work, "\n");
    // Static: nothing left computes a shape at run time. What ncnn's measured table refuses
    // (batched MatMul, Expand, comparisons, a Where) stays named, with the table's reason.
    for (const std::string& v : violations) {
      EXPECT_THAT(v, ::testing::Not(HasSubstr("at run time"))) << v;
      EXPECT_THAT(v, HasSubstr("ncnn")) << v;
    }
  } else {
    // What stays is named, each with why.
    ASSERT_FALSE(violations.empty());
    for (const std::string& v : violations) EXPECT_THAT(v, HasSubstr(dd->second));
  }
  // fold-constants a second time finds nothing to do.
  const test_support::CliResult again =
      s.Run({"opt", s.Path("out.onnx"), "-o", s.Path("again.onnx"), "--passes", "fold-constants",
             "--report", s.Path("again.json")});
  ASSERT_EQ(again.code, 0) << again.err;
  const Json a = ReadJson(s.Path("again.json"));
  EXPECT_EQ(a.at("summary").at("rewrites").get<int64_t>(), 0) << again.out;
}

// One verdict: opt's violations (from the pipeline's tables) equal a fresh check of the written
// model, for every built-in target, both by the table (--no-live-probe, --no-verify-engine: the
// engine's verdicts are held to the engine in live_probe_test and the engine corpus tests).
TEST_P(CorpusTest, TargetCheckAgreesWithCheckOfTheWrittenModel) {
  const std::string model = GetParam();
  for (const targets::TargetProfile& target : targets::BuiltinTargets()) {
    SCOPED_TRACE(target.name);
    Scratch s;
    std::vector<std::string> args = {"opt",
                                     kCorpus + model + ".onnx",
                                     "-o",
                                     s.Path("o.onnx"),
                                     "--target",
                                     target.name,
                                     "--report",
                                     s.Path("r.json"),
                                     "--allow-partial",
                                     "--no-live-probe",
                                     "--no-verify-engine"};
    if (!target.runtime_shapes) {
      args.push_back("--dim");
      args.push_back(test_support::DimList(FirstBinding(model)));
    }
    const test_support::CliResult r = s.Run(args);
    ASSERT_EQ(r.code, 0) << r.err;
    absl::StatusOr<proto::Model> written = proto::LoadModel(s.Path("o.onnx"));
    ASSERT_TRUE(written.ok()) << written.status();
    absl::StatusOr<std::vector<std::string>> fresh = targets::FindTargetViolations(*written, target);
    ASSERT_TRUE(fresh.ok()) << fresh.status();
    for (std::string& v : *fresh) v = UpToKeptConstant(v);
    EXPECT_EQ(Violations(ReadJson(s.Path("r.json"))), *fresh);
  }
}

INSTANTIATE_TEST_SUITE_P(Exported, CorpusTest, ::testing::ValuesIn(Models()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// `r` exited `code` naming each of `said` on stderr, and `out` was not written.
void ExpectRefused(const test_support::CliResult& r, int code, const std::vector<std::string>& said,
                   const std::string& out) {
  EXPECT_EQ(r.code, code) << r.out << r.err;
  for (const std::string& s : said) EXPECT_THAT(r.err, HasSubstr(s));
  EXPECT_FALSE(fs::exists(out));
}

// The FPN adds are equal once H and W are numbers: legalize-measured inserts nothing. Unbound,
// they hold only when H and W are multiples of 32, and ncnn gets no run-time Expand: exit 3
// naming the dims to bind.
TEST(StaticShapes, FpnAddsNeedNothingOnceBound) {
  Scratch s;
  const test_support::CliResult bound =
      s.Run({"opt", kCorpus + "fpn_op11.onnx", "-o", s.Path("o.onnx"), "--target", "ncnn", "--dim",
             "N=1,H=640,W=640", "--report", s.Path("r.json")});
  ASSERT_EQ(bound.code, 0) << bound.out << bound.err;
  const Json report = ReadJson(s.Path("r.json"));
  for (const Json& run : report.at("passes")) {
    if (run.at("pass") == "legalize-measured") {
      EXPECT_EQ(run.at("nodes_inserted").get<int64_t>(), 0) << run.dump();
    }
  }
  const test_support::CliResult unbound =
      s.Run({"opt", kCorpus + "fpn_op11.onnx", "-o", s.Path("u.onnx"), "--target", "ncnn"});
  ExpectRefused(unbound, 3, {"bind H, N, W with --dim", "--dim"}, s.Path("u.onnx"));
}

// A binding where the adds differ fails like check --dim: exit 1 naming the node.
TEST(StaticShapes, BindingThatBreaksABroadcastNamesTheNode) {
  Scratch s;
  const test_support::CliResult r =
      s.Run({"opt", kCorpus + "fpn_op11.onnx", "-o", s.Path("o.onnx"), "--target", "ncnn", "--dim",
             "N=1", "--dim", "H=24", "--dim", "W=32"});
  ExpectRefused(r, 1, {"Add", "not broadcastable"}, s.Path("o.onnx"));
}

TEST(StaticShapes, UsageErrors) {
  Scratch s;
  const std::string fpn = kCorpus + "fpn_op11.onnx";
  // opt on fpn with `option` `value`, a usage error (exit 64): its stderr.
  auto usage_error = [&](const std::string& option, const std::string& value) {
    const test_support::CliResult r = s.Run({"opt", fpn, "-o", s.Path("o.onnx"), option, value});
    EXPECT_EQ(r.code, 64) << option << " " << value << ": " << r.err;
    return r.err;
  };
  // A symbol the model does not have: the message lists the ones it has.
  EXPECT_THAT(usage_error("--dim", "Q=3"), HasSubstr("Q"));
  // --input-shape of the wrong rank, of a name that is not an input, or against a declared 3.
  EXPECT_THAT(usage_error("--input-shape", "x=1,3,64"), HasSubstr("rank 4"));
  EXPECT_THAT(usage_error("--input-shape", "nope=1,3,64,64"), HasSubstr("not a graph input"));
  EXPECT_THAT(usage_error("--input-shape", "x=1,4,64,64"), HasSubstr("declared 3"));
  usage_error("--dim", "H=0");
  EXPECT_FALSE(fs::exists(s.Path("o.onnx")));
}

// --input-shape binds the symbols of the input's axes: the same model as --dim.
TEST(StaticShapes, InputShapeBindsLikeDim) {
  Scratch s;
  const std::string fpn = kCorpus + "fpn_op11.onnx";
  ASSERT_EQ(s.Run({"opt", fpn, "-o", s.Path("a.onnx"), "--target", "ncnn", "--input-shape",
                   "x=1,3,64,64"})
                .code,
            0);
  ASSERT_EQ(
      s.Run({"opt", fpn, "-o", s.Path("b.onnx"), "--target", "ncnn", "--dim", "N=1,H=64,W=64"})
          .code,
      0);
  absl::StatusOr<proto::Model> a = proto::LoadModel(s.Path("a.onnx"));
  absl::StatusOr<proto::Model> b = proto::LoadModel(s.Path("b.onnx"));
  ASSERT_TRUE(a.ok() && b.ok());
  std::string diff;
  EXPECT_TRUE(proto::ModelsEqual(a->proto, b->proto, &diff)) << diff;
}

// tf2onnx names dynamic dims unk__N. `none` expands the [1,1,1,1] constant of a Max with
// Expand(c, Shape(x)); its own target check must then decide Max as check does (equal shapes).
TEST(StaticShapes, Tf2onnxMaxWithExpandedConstantMeetsNone) {
  Scratch s;
  const test_support::CliResult r =
      s.Run({"opt", kOpt + "tf2onnx_max_const.onnxtxt", "-o", s.Path("o.onnx"), "--target", "none",
             "--report", s.Path("r.json")});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(Violations(ReadJson(s.Path("r.json"))), ::testing::IsEmpty());
  const test_support::CliResult check = s.Run({"check", s.Path("o.onnx")});
  EXPECT_EQ(check.code, 0) << check.out;
}

}  // namespace
}  // namespace onnx_bcast
