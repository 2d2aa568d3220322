// Helpers shared by the pass tests (see pass_test_util.h).
#include "tests/support/pass_test_util.h"

#include <algorithm>
#include <map>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/shape_propagation.h"
#include "gtest/gtest.h"
#include "passes/registry.h"
#include "proto/onnx_text.h"
#include "proto/opsets.h"
#include "runtime/exec/constant_eval.h"

namespace onnx_bcast::test_support {

using passes::ConstantEvaluator;
using passes::FindPass;
using passes::PassInfo;
using passes::PassOptions;
using passes::PassRun;
using passes::PassStats;
using passes::PipelineOptions;
using passes::ResolvePasses;
using passes::RunPipeline;

std::string GoldenForm(const onnx::ModelProto& model) {
  std::string out = absl::StrCat("opset: ", proto::DefaultOpset(model), "\n");
  for (const auto& t : model.graph().initializer()) {
    absl::StrAppend(
        &out, "init ", t.name(), ": ",
        onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(t.data_type())),
        "[", absl::StrJoin(t.dims(), ","), "]\n");
  }
  absl::StrAppend(&out, proto::PrintGraph(model.graph()));
  for (const auto& f : model.functions()) absl::StrAppend(&out, "\n", proto::PrintFunction(f));
  return out;
}

proto::Model Parse(const std::string& text) {
  absl::StatusOr<proto::Model> m = proto::ParseModelText(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : proto::Model();
}

const ConstantEvaluator* Executor() {
  static const auto* const kEvaluator = new ConstantEvaluator(
      [](const proto::Model& fragment) { return runtime::EvaluateConstantModel(fragment); });
  return kEvaluator;
}

absl::Status RunPass(const std::string& name, proto::Model* model, PassStats* stats,
                     const PassOptions& options) {
  const PassInfo* info = FindPass(name);
  if (info == nullptr) return absl::NotFoundError(name);
  PassStats local;
  PassOptions with_executor = options;
  if (with_executor.evaluator == nullptr) with_executor.evaluator = Executor();
  return info->factory()->Run(model, with_executor, stats != nullptr ? stats : &local);
}

absl::Status RunTarget(const targets::TargetProfile& target, proto::Model* model,
                       std::vector<PassRun>* runs, const PassOptions& options) {
  absl::StatusOr<std::vector<const PassInfo*>> pipeline = ResolvePasses(target.passes);
  if (!pipeline.ok()) return pipeline.status();
  PipelineOptions po;
  po.pass_options = options;
  po.pass_options.target = &target;
  if (po.pass_options.evaluator == nullptr) po.pass_options.evaluator = Executor();
  po.verify_each = true;
  std::vector<PassRun> local;
  return RunPipeline(model, *pipeline, po, runs != nullptr ? runs : &local);
}

namespace {

std::vector<std::string> Mismatches(const proto::Model& model, bool shapes) {
  std::vector<std::string> out;
  absl::StatusOr<analysis::Analysis> a =
      analysis::AnalyzeBroadcasts(model, analysis::AnalysisOptions());
  EXPECT_TRUE(a.ok()) << a.status();
  if (!a.ok()) return out;
  for (const analysis::NodeVerdict& v : a->nodes) {
    if (v.graph != "main" || v.rule != broadcast::RuleFamily::kNumpy) continue;
    bool known = true;
    for (const broadcast::Shape& s : v.inputs) {
      known &= s.rank_known;
      // Unknown dims and symbols libonnx invents per run (unk__N, and the analysis's
      // bcast(...) of them) decide nothing.
      for (const broadcast::Dim& d : s.dims) {
        known &=
            !d.is_unknown() && !(d.is_symbol() && (d.symbol().find("unk__") != std::string::npos));
      }
    }
    if (!known || v.inputs.empty()) continue;
    for (const broadcast::Shape& s : v.inputs) {
      const bool differ = shapes ? !(s == v.inputs[0]) : s.rank() != v.inputs[0].rank();
      if (differ) {
        std::vector<std::string> texts;
        for (const broadcast::Shape& t : v.inputs) texts.push_back(t.ToString());
        out.push_back(absl::StrCat(v.op, " '", v.node, "': ", absl::StrJoin(texts, " and ")));
        break;
      }
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> RankMismatches(const proto::Model& model) {
  return Mismatches(model, false);
}

std::vector<std::string> ShapeMismatches(const proto::Model& model) {
  return Mismatches(model, true);
}

}  // namespace onnx_bcast::test_support

namespace onnx_bcast::test_support {

std::vector<absl::StatusOr<targets::LiveVerdict>> ScriptedOracle::Decide(
    const std::vector<const proto::Model*>& fragments) {
  std::vector<absl::StatusOr<targets::LiveVerdict>> out;
  for (const proto::Model* f : fragments) {
    ++calls;
    const onnx::GraphProto& g = f->proto.graph();
    seen.push_back(g);
    // Each tensor's declared dims: value_info, inputs, outputs, initializers.
    std::map<std::string, std::vector<int64_t>> dims;
    auto declare = [&dims](const onnx::ValueInfoProto& vi) {
      std::vector<int64_t>& d = dims[vi.name()];
      for (const auto& x : vi.type().tensor_type().shape().dim()) d.push_back(x.dim_value());
    };
    for (const onnx::ValueInfoProto& vi : g.value_info()) declare(vi);
    for (const onnx::ValueInfoProto& vi : g.input()) declare(vi);
    for (const onnx::ValueInfoProto& vi : g.output()) declare(vi);
    for (const onnx::TensorProto& t : g.initializer()) {
      dims[t.name()] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
    }
    targets::LiveVerdict v;
    v.matches = true;
    for (const onnx::NodeProto& n : g.node()) {
      auto it = dims.find(n.output(0));
      if (it == dims.end()) continue;
      const std::string form = absl::StrCat(n.op_type(), "@", it->second.size());
      // "Op@rank*": only where the node broadcasts (some operand's dims differ from the
      // output's).
      bool broadcasts = false;
      if (n.op_type() != "Reshape" && n.op_type() != "Transpose") {
        for (const std::string& in : n.input()) {
          auto d = dims.find(in);
          broadcasts |= d != dims.end() && d->second != it->second;
        }
      }
      const bool listed = std::find(wrong_.begin(), wrong_.end(), form) != wrong_.end() ||
                          (broadcasts && std::find(wrong_.begin(), wrong_.end(),
                                                   absl::StrCat(form, "*")) != wrong_.end());
      if (listed) {
        v.matches = false;
        v.why = absl::StrCat("runs, but wrong: ", form, " computes one element");
      }
    }
    out.push_back(v);
  }
  return out;
}

std::vector<std::string> ViolationLines(const proto::Model& model,
                                        const targets::TargetProfile& profile,
                                        const analysis::ShapeTables* tables) {
  absl::StatusOr<std::vector<targets::TargetViolation>> v =
      targets::CheckTarget(model, profile, nullptr, tables);
  EXPECT_TRUE(v.ok()) << v.status();
  std::vector<std::string> lines;
  if (v.ok()) {
    for (const targets::TargetViolation& t : *v) lines.push_back(t.node + ": " + t.why);
  }
  return lines;
}

std::string ProfileLineError(const std::string& line) {
  return std::string(targets::ParseTargetProfile("name = e\nclasses = same\n" + line + "\n", "f")
                         .status()
                         .message());
}

void ExpectProfileRoundTrips(const targets::TargetProfile& p, const std::string& text) {
  absl::StatusOr<targets::TargetProfile> back = targets::ParseTargetProfile(text, "again");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->op_rules, p.op_rules);
  EXPECT_EQ(targets::FormatTargetProfile(*back), text);
}

}  // namespace onnx_bcast::test_support
