// The analyses a pipeline's passes share, owned by the pass manager as in MLIR: computed on the
// first request, kept current by every pass that preserves them, dropped before any other (which
// may hand back tables it computed of the graph as it leaves it).
//
// The analysis is the broadcast analysis's shape and element type of every tensor: the main
// graph's tables and, in a model with If/Loop/Scan bodies or model-local functions, one table per
// further analysis path (a body, or a function body as walked for one call site; see
// Analysis::shapes). A pass takes them (RewriteContext::Init for one graph, TakeModel in
// RewriteEveryGraph for every graph), edits them along with the graphs (RewriteContext::SetShape
// and the builders), and hands them back when it is done; the pass manager keeps them only when
// the pass's registry entry says it preserves them. The target check then reads the same tables
// instead of analysing the model again.
//
// Requires: a model admitted by driver:: (structure checked). Guarantees: the tables held
// describe every graph as it is now, for every tensor a node or the interface names (a table
// that could not be kept current is not held: the next request analyses the model again); the
// analysis runs at most once per pipeline on a model whose passes all preserve it
// (computations() counts the runs; tests hold it to that and compare the kept tables with a
// fresh analysis after every pass).
#ifndef ONNX_BCAST_ANALYSIS_ANALYSIS_MANAGER_H_
#define ONNX_BCAST_ANALYSIS_ANALYSIS_MANAGER_H_

#include <cstdint>
#include <map>
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

/// Every graph's tables of a model: the main graph's (as ComputeShapeTables gives them) and, per
/// analysis path other than "main", the shapes the walk inferred there. A body's element types
/// are not tracked (GraphScope::body): its tables hold shapes only.
struct ModelTables {
  ShapeTables main;
  std::map<std::string, ShapeTables> graphs;
};

/// One analysis of `model`, every graph's tables (see ModelTables).
absl::StatusOr<ModelTables> ComputeModelTables(const proto::Model& model);

/// The first difference between `kept` and `fresh` tables of one graph (InternalError naming
/// the tensor), or OK. Data-dependent symbols are named after their node's label, which an
/// insertion before an unnamed node shifts: the tables agree up to a one-to-one renaming of
/// symbols. Element types are compared with `elems`. Entries of tensors a pass removed may
/// linger in `kept` (nothing reads them).
absl::Status CompareShapeTables(const ShapeTables& kept, const ShapeTables& fresh, bool elems);

class AnalysisManager {
 public:
  explicit AnalysisManager(const proto::Model* model) : model_(model) {}
  AnalysisManager(const AnalysisManager&) = delete;
  AnalysisManager& operator=(const AnalysisManager&) = delete;

  /// Moves the tables out to a pass: the ones held, else freshly computed. The pass edits them
  /// with the graph and hands them back (Return) when it is done.
  absl::StatusOr<ShapeTables> Take();
  /// Hands back tables that describe the main graph as it now is (the other graphs' are not
  /// held after this: the pass kept only the main graph's current).
  void Return(ShapeTables tables);
  /// Every graph's tables (RewriteEveryGraph): the ones held when every graph's are, else
  /// freshly computed (one analysis). The pass hands them back (ReturnModel) when it is done.
  absl::StatusOr<ModelTables> TakeModel();
  /// Hands back tables that describe every graph as it now is, one per path a fresh analysis
  /// would give.
  void ReturnModel(ModelTables tables);
  /// Forgets the tables (after a pass that does not keep them current, or a failed one).
  void Invalidate() {
    held_.reset();
    graphs_.reset();
  }
  /// The main graph's tables held, or null.
  const ShapeTables* held() const { return held_ ? &*held_ : nullptr; }
  /// The other graphs' tables by analysis path, or null when they are not held.
  const std::map<std::string, ShapeTables>* held_graphs() const {
    return graphs_ ? &*graphs_ : nullptr;
  }
  /// How many times the analysis ran.
  int computations() const { return computations_; }

 private:
  const proto::Model* model_;
  std::optional<ShapeTables> held_;
  // Held only together with held_, both of the same model state.
  std::optional<std::map<std::string, ShapeTables>> graphs_;
  int computations_ = 0;
};

}  // namespace onnx_bcast::analysis

#endif  // ONNX_BCAST_ANALYSIS_ANALYSIS_MANAGER_H_
