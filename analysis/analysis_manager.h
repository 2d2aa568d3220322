// The analyses a pipeline's passes share, owned by the pass manager as in MLIR: computed on the
// first request, kept current by every pass that preserves them, dropped before any other (which
// may hand back tables it computed of the graph as it leaves it).
//
// Today there is one analysis, the main graph's shape tables (the broadcast analysis's shape
// and element type of every tensor). A pass takes the tables (RewriteContext::Init), edits them
// along with the graph (RewriteContext::SetShape and the builders), and hands them back when it
// is done; the pass manager keeps them only when the pass's registry entry says it preserves
// them. The target check then reads the same tables instead of analysing the model again.
//
// Requires: a model admitted by driver:: (structure checked). Guarantees: the tables held
// describe the main graph as it is now, for every tensor a node or the interface names; the
// analysis runs at most once per pipeline on a model whose passes all preserve it
// (computations() counts the runs; tests hold it to that and compare the kept tables with a
// fresh analysis after every pass).
#ifndef ONNX_BCAST_ANALYSIS_ANALYSIS_MANAGER_H_
#define ONNX_BCAST_ANALYSIS_ANALYSIS_MANAGER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "analysis/shape_propagation.h"
#include "analysis/shape_tables.h"
#include "broadcast/shape.h"
#include "proto/model_io.h"

namespace onnx_bcast::analysis {

/// Overwrites `tables`' element types with the element types `graph` declares: its initializers',
/// and with `interface` its inputs' and outputs' (where the declared type names one). Declared
/// types take precedence over inferred ones, as in the model.
void ApplyDeclaredElems(const onnx::GraphProto& graph, bool interface, ShapeTables* tables);

/// The broadcast analysis's shape tables of `model`'s main graph (shapes only, no verdicts),
/// with the declared element types of the interface and the initializers taking precedence.
/// With `values`, the same walk also records the main graph's tensors known as numbers
/// (AnalysisOptions::main_values; fold-constants).
absl::StatusOr<ShapeTables> ComputeShapeTables(
    const proto::Model& model, absl::flat_hash_map<std::string, KnownValue>* values = nullptr);

class AnalysisManager {
 public:
  explicit AnalysisManager(const proto::Model* model) : model_(model) {}
  AnalysisManager(const AnalysisManager&) = delete;
  AnalysisManager& operator=(const AnalysisManager&) = delete;

  /// Moves the tables out to a pass: the ones held, else freshly computed. The pass edits them
  /// with the graph and hands them back (Return) when it is done.
  absl::StatusOr<ShapeTables> Take();
  /// Hands back tables that describe the graph as it now is.
  void Return(ShapeTables tables);
  /// Forgets the tables (after a pass that does not keep them current, or a failed one).
  void Invalidate() { held_.reset(); }
  /// The tables held, or null.
  const ShapeTables* held() const { return held_ ? &*held_ : nullptr; }
  /// How many times the analysis ran.
  int computations() const { return computations_; }

 private:
  const proto::Model* model_;
  std::optional<ShapeTables> held_;
  int computations_ = 0;
};

}  // namespace onnx_bcast::analysis

#endif  // ONNX_BCAST_ANALYSIS_ANALYSIS_MANAGER_H_
