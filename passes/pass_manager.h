// Runs a pipeline of passes over a model: per-pass counts and timings, the analyses the passes
// share (AnalysisManager: computed once, kept current by the passes that preserve them), the
// graph's interface (input and output names, in order) checked after every pass, and with
// `verify_each` libonnx's full check and a fresh analysis against the kept tables after every
// pass; a pass that breaks the graph stops the pipeline (InternalError).
#ifndef ONNX_BCAST_PASSES_PASS_MANAGER_H_
#define ONNX_BCAST_PASSES_PASS_MANAGER_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "analysis/analysis_manager.h"
#include "passes/pass.h"
#include "passes/registry.h"
#include "proto/model_io.h"
#include "support/progress.h"
#include "targets/targets.h"

namespace onnx_bcast::passes {

struct PipelineOptions {
  PassOptions pass_options;
  /// Validate the graph after every pass with libonnx's checker (full when the input passes
  /// the full check, else the structural one).
  bool verify_each = false;
  /// Told of each pass as a step (null: nobody listens, as for library callers).
  support::ProgressSink* progress = nullptr;
  /// The analyses the passes share; the caller keeps it to read the final tables (the target
  /// check). Null: the pipeline owns one for its run.
  analysis::AnalysisManager* analyses = nullptr;
  /// PassStats::keep_log of every run: off when no reader of the rewrite log is asked for.
  bool keep_rewrite_log = true;
};

/// One pass's run.
struct PassRun {
  std::string pass;
  PassStats stats;
  double seconds = 0;
};

/// Size facts of a model, for the report's summary.
struct ModelSummary {
  int64_t nodes = 0;
  int64_t initializers = 0;
  int64_t initializer_bytes = 0;  ///< inline payloads (external data not counted)
  int64_t opset = 0;
};

ModelSummary Summarize(const onnx::ModelProto& model);

/// Compares tables a pipeline kept current with a fresh analysis of `model`: InternalError
/// naming the first tensor whose shape or element type differs (run after every pass with
/// `verify_each`).
absl::Status VerifyShapeTables(const proto::Model& model, const analysis::ShapeTables& kept);
/// The same for every graph's tables (AnalysisManager::held_graphs): the main graph's, and one
/// per analysis path a fresh analysis walks, no more and no fewer.
absl::Status VerifyModelTables(const proto::Model& model, const analysis::ShapeTables& main,
                               const std::map<std::string, analysis::ShapeTables>& graphs);

/// Runs `pipeline` over `model` in order, appending one PassRun per pass that ran (also the
/// failing one). The first error stops the pipeline and is returned with the pass named.
absl::Status RunPipeline(proto::Model* model, absl::Span<const PassInfo* const> pipeline,
                         const PipelineOptions& options, std::vector<PassRun>* runs);

/// Resolves pass names; InvalidArgument naming an unknown one and listing the known ones.
absl::StatusOr<std::vector<const PassInfo*>> ResolvePasses(absl::Span<const std::string> names);

/// What the user asked `opt` (or the API's Optimize) to run: at most one of the three.
struct PipelineRequest {
  std::string target;               ///< a built-in target's name
  std::string target_file;          ///< a target profile file
  std::vector<std::string> passes;  ///< pass names in order; {"none"} alone: no pass at all
};

/// The default target when a request names nothing: onnxsim and onnxoptimizer do their job
/// by default, and so does opt.
inline constexpr char kDefaultTarget[] = "explicit";

/// A request resolved into passes (and the profile whose promise the result must keep).
struct ResolvedPipeline {
  std::vector<const PassInfo*> passes;
  std::optional<targets::TargetProfile> profile;
};

/// Resolves `request` before any work starts, so that every mistake is refused up front:
/// InvalidArgument for two of target/target_file/passes, an unknown target or pass (listing
/// the known names), "none" beside other passes, or a pass that needs a target's table
/// ('legalize') without one; the profile file's own errors as LoadTargetProfile gives them.
/// An empty request is the default target. One function for the CLI and the API.
absl::StatusOr<ResolvedPipeline> ResolvePipeline(const PipelineRequest& request);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_PASS_MANAGER_H_
