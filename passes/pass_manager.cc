// The pass manager (see pass_manager.h).
#include "passes/pass_manager.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "proto/onnx_checks.h"
#include "proto/opsets.h"
#include "proto/tensor_util.h"
#include "support/status_macros.h"

namespace onnx_bcast::passes {
namespace {

std::vector<std::string> Interface(const onnx::GraphProto& g) {
  std::vector<std::string> names;
  for (const auto& vi : g.input()) names.push_back(absl::StrCat("in:", vi.name()));
  for (const auto& vi : g.output()) names.push_back(absl::StrCat("out:", vi.name()));
  return names;
}

// A pass's step outcome for the progress display: the counts opt's report prints.
std::string PassOutcome(const PassStats& stats) {
  if (!stats.changed()) return "no change";
  std::vector<std::string> parts;
  if (stats.nodes_inserted > 0) {
    parts.push_back(absl::StrCat(support::FormatCount(stats.nodes_inserted), " inserted"));
  }
  if (stats.nodes_removed > 0) {
    parts.push_back(absl::StrCat(support::FormatCount(stats.nodes_removed), " removed"));
  }
  if (stats.initializers_rewritten > 0) {
    parts.push_back(
        absl::StrCat(support::FormatCount(stats.initializers_rewritten), " initializers rewritten"));
  }
  if (parts.empty()) {
    parts.push_back(absl::StrCat(support::FormatCount(stats.rewrites), " rewrites"));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace

absl::Status VerifyShapeTables(const proto::Model& model, const analysis::ShapeTables& kept) {
  BCAST_ASSIGN_OR_RETURN(analysis::ShapeTables fresh, analysis::ComputeShapeTables(model));
  return analysis::CompareShapeTables(kept, fresh, /*elems=*/true);
}

absl::Status VerifyModelTables(const proto::Model& model, const analysis::ShapeTables& main,
                               const std::map<std::string, analysis::ShapeTables>& graphs) {
  BCAST_ASSIGN_OR_RETURN(analysis::ModelTables fresh, analysis::ComputeModelTables(model));
  BCAST_RETURN_IF_ERROR(analysis::CompareShapeTables(main, fresh.main, /*elems=*/true));
  for (const auto& [path, table] : fresh.graphs) {
    auto it = graphs.find(path);
    if (it == graphs.end()) {
      return absl::InternalError(absl::StrCat("graph ", path, ": no kept tables"));
    }
    if (absl::Status s = analysis::CompareShapeTables(it->second, table, /*elems=*/false);
        !s.ok()) {
      return absl::InternalError(absl::StrCat("graph ", path, ": ", s.message()));
    }
  }
  for (const auto& [path, table] : graphs) {
    if (fresh.graphs.count(path) == 0) {
      return absl::InternalError(
          absl::StrCat("graph ", path, ": kept tables of a graph a fresh analysis does not walk"));
    }
  }
  return absl::OkStatus();
}

ModelSummary Summarize(const onnx::ModelProto& model) {
  ModelSummary s;
  s.nodes = model.graph().node_size();
  s.initializers = model.graph().initializer_size();
  for (const auto& t : model.graph().initializer()) {
    if (t.data_location() == onnx::TensorProto::EXTERNAL) continue;
    int64_t count = 1;
    for (int64_t d : t.dims()) count *= d;
    s.initializer_bytes += proto::RawByteSize(t.data_type(), count);
  }
  s.opset = proto::DefaultOpset(model);
  return s;
}

absl::StatusOr<std::vector<const PassInfo*>> ResolvePasses(absl::Span<const std::string> names) {
  std::vector<const PassInfo*> out;
  for (const std::string& name : names) {
    const PassInfo* info = FindPass(name);
    if (info == nullptr) {
      std::vector<std::string> known;
      for (const PassInfo& p : AllPasses()) known.push_back(p.name);
      return absl::InvalidArgumentError(absl::StrCat("unknown pass '", name, "' (known: none, ",
                                                     absl::StrJoin(known, ", "), ")"));
    }
    out.push_back(info);
  }
  return out;
}

absl::StatusOr<ResolvedPipeline> ResolvePipeline(const PipelineRequest& request) {
  const int given = static_cast<int>(!request.target.empty()) +
                    static_cast<int>(!request.target_file.empty()) +
                    static_cast<int>(!request.passes.empty());
  if (given > 1) {
    return absl::InvalidArgumentError("give one of --target, --target-file and --passes");
  }
  ResolvedPipeline out;
  std::vector<std::string> names = request.passes;
  if (!request.target_file.empty()) {
    BCAST_ASSIGN_OR_RETURN(targets::TargetProfile t,
                           targets::LoadTargetProfile(request.target_file, IsRegisteredPass));
    out.profile = std::move(t);
  } else if (request.passes.empty()) {
    const std::string name = request.target.empty() ? kDefaultTarget : request.target;
    const targets::TargetProfile* t = targets::FindTarget(name);
    if (t == nullptr) {
      std::vector<std::string> known;
      for (const targets::TargetProfile& p : targets::BuiltinTargets()) known.push_back(p.name);
      return absl::InvalidArgumentError(
          absl::StrCat("unknown target '", name, "' (known: ", absl::StrJoin(known, ", "), ")"));
    }
    out.profile = *t;
  }
  if (out.profile.has_value()) names = out.profile->passes;
  if (std::find(names.begin(), names.end(), "none") != names.end()) {
    if (names.size() > 1) {
      return absl::InvalidArgumentError("pass 'none' (load and save only) stands alone");
    }
    names.clear();
  }
  BCAST_ASSIGN_OR_RETURN(std::vector<const PassInfo*> passes, ResolvePasses(names));
  out.passes = std::move(passes);
  for (const PassInfo* p : out.passes) {
    if (p->needs_target && !out.profile.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pass '", p->name, "' needs a target's table: give --target-file (or --target) instead"));
    }
  }
  return out;
}

absl::Status RunPipeline(proto::Model* model, absl::Span<const PassInfo* const> pipeline,
                         const PipelineOptions& options, std::vector<PassRun>* runs) {
  const std::vector<std::string> interface = Interface(model->proto.graph());
  bool check_full = false;
  bool check_structure = false;
  if (options.verify_each) {
    check_full = proto::CheckModel(*model, /*full=*/true).ok();
    check_structure = check_full || proto::CheckModel(*model, /*full=*/false).ok();
  }
  // Labels of unnamed nodes need their original index; a graph whose nodes all have names
  // (most large ones) skips building that table.
  std::unordered_map<std::string, int> original_index;
  bool unnamed = false;
  for (const auto& n : model->proto.graph().node()) unnamed |= n.name().empty();
  if (unnamed) {
    for (int i = 0; i < model->proto.graph().node_size(); ++i) {
      const auto& n = model->proto.graph().node(i);
      if (n.output_size() > 0) original_index.emplace(n.output(0), i);
    }
  }
  PassOptions pass_options = options.pass_options;
  pass_options.original_index = &original_index;
  // The pipeline's analyses: computed by the first pass that asks, then kept current by every
  // pass that preserves them (see analysis_manager.h).
  std::optional<analysis::AnalysisManager> own_analyses;
  analysis::AnalysisManager* analyses = options.analyses;
  if (analyses == nullptr) analyses = &own_analyses.emplace(model);
  pass_options.analyses = analyses;
  for (const PassInfo* info : pipeline) {
    PassRun run;
    run.pass = info->name;
    run.stats.keep_log = options.keep_rewrite_log;
    support::ProgressStep step(options.progress, absl::StrCat("pass ", info->name));
    // A pass that does not keep the tables current starts without them; what it hands back
    // (Return) it computed of the graph as it leaves it (fold-constants, when its last
    // analysis was followed by no edit).
    if (!info->preserves_shapes) analyses->Invalidate();
    const auto start = std::chrono::steady_clock::now();
    absl::Status s = info->factory()->Run(model, pass_options, &run.stats);
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!s.ok()) analyses->Invalidate();
    runs->push_back(std::move(run));
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(info->name, ": ", s.message()));
    if (Interface(model->proto.graph()) != interface) {
      return absl::InternalError(
          absl::StrCat(info->name, " broke the graph: graph input or output names changed"));
    }
    if (check_structure) {
      if (absl::Status c = proto::CheckModel(*model, check_full); !c.ok()) {
        return absl::InternalError(absl::StrCat(info->name, " broke the graph: ", c.message()));
      }
    }
    if (options.verify_each && analyses->held() != nullptr) {
      if (absl::Status c =
              analyses->held_graphs() != nullptr
                  ? VerifyModelTables(*model, *analyses->held(), *analyses->held_graphs())
                  : VerifyShapeTables(*model, *analyses->held());
          !c.ok()) {
        return absl::InternalError(absl::StrCat(info->name, " left stale shapes: ", c.message()));
      }
    }
    if (step.active()) step.End(PassOutcome(runs->back().stats));
  }
  return absl::OkStatus();
}

}  // namespace onnx_bcast::passes
