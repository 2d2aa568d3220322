// Runs a pipeline of passes over a model: per-pass counts and timings, the graph's interface
// (input and output names, in order) checked after every pass, and with `verify_each` libonnx's
// full check after every pass; a pass that breaks the graph stops the pipeline (InternalError).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "passes/pass.h"
#include "passes/registry.h"
#include "proto/model_io.h"

namespace onnx_bcast::passes {

struct PipelineOptions {
  PassOptions pass_options;
  /// Validate the graph after every pass with libonnx's checker (full when the input passes
  /// the full check, else the structural one).
  bool verify_each = false;
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

/// Runs `pipeline` over `model` in order, appending one PassRun per pass that ran (also the
/// failing one). The first error stops the pipeline and is returned with the pass named.
absl::Status RunPipeline(proto::Model* model, absl::Span<const PassInfo* const> pipeline,
                         const PipelineOptions& options, std::vector<PassRun>* runs);

/// Resolves comma-separated pass names; InvalidArgument naming an unknown one.
absl::StatusOr<std::vector<const PassInfo*>> ResolvePasses(absl::Span<const std::string> names);

}  // namespace onnx_bcast::passes
