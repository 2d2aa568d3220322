// What every rewrite pass shares: the use-def index of the graph it edits, the shapes and
// element types of its tensors (the pipeline's analysis, analysis_manager.h, kept current as the
// pass edits), deterministic builders for the nodes passes insert (Unsqueeze, Expand, Shape,
// constants) and the rewrite log. The operand rewrites built on it (align a rank, expand to a
// shape) are in operand_rewrites.h.
#ifndef ONNX_BCAST_PASSES_REWRITE_CONTEXT_H_
#define ONNX_BCAST_PASSES_REWRITE_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "analysis/analysis_manager.h"
#include "analysis/broadcast_ops.h"
#include "analysis/decide_node.h"
#include "broadcast/shape.h"
#include "passes/pass.h"
#include "proto/graph.h"
#include "proto/model_io.h"

namespace onnx_bcast::passes {

/// Where a context works when it is not (only) the model's main graph; see RewriteEveryGraph.
struct GraphScope {
  /// The analysis path of the graph ("main/If 'c'.then_branch", or a function call site).
  std::string path = "main";
  /// The enclosing graphs' shape tables, innermost first (outer-scope values of a body).
  std::vector<const analysis::ShapeTables*> outer;
  /// Every name of every graph and function body of the model; fresh names avoid them all.
  std::unordered_set<std::string>* names = nullptr;
  /// Names also taken but not to be added to (a trial rewrite's view of the model's names).
  const std::unordered_set<std::string>* frozen_names = nullptr;
  /// A body (If/Loop/Scan, or a function body): new constants are Constant nodes and no
  /// value_info is written (the element types of body tensors are not tracked).
  bool body = false;
  /// A function body: its opset is the function's own and cannot be raised.
  bool function = false;
  int64_t opset = 0;
};

/// Raises IR < 4 to 4 (logged) so that initializers need not be graph inputs: every pass that
/// adds an initializer calls it first.
void AllowInitializers(proto::Model* model, PassStats* stats);

class RewriteContext {
 public:
  RewriteContext(proto::Model* model, std::string pass, const PassOptions& options,
                 PassStats* stats);
  /// Hands the shape tables, kept current with every edit, back: to options.analyses (Init), or
  /// to where InitScoped was told.
  ~RewriteContext();
  RewriteContext(const RewriteContext&) = delete;
  RewriteContext& operator=(const RewriteContext&) = delete;

  /// Takes the main graph's shape tables (options.analyses; computed when it holds none) and
  /// indexes the main graph. Call once, before anything else.
  absl::Status Init();
  /// Instead of Init: works on `graph` (the main graph or a body) with `tables` from the one
  /// analysis of the model (RewriteEveryGraph), and hands them back to `hand_back` (when not
  /// null) as the context ends, kept current with every edit (a body's with no element types,
  /// as the analysis gives them).
  void InitScoped(onnx::GraphProto* graph, GraphScope scope, analysis::ShapeTables tables,
                  analysis::ShapeTables* hand_back);
  /// The analysis path of the graph this context edits ("main" for the main graph).
  const std::string& path() const { return scope_.path; }
  /// A name unused anywhere in the model (and in this graph), starting with `base`.
  std::string FreshName(std::string_view base);
  /// Applies the queued edits (one linear rebuild of the node list).
  void Commit();

  proto::Model& model() { return *model_; }
  proto::GraphEditor& graph() { return *graph_; }
  const PassOptions& options() const { return options_; }
  PassStats& stats() { return *stats_; }
  int64_t opset() const { return opset_; }
  /// Raises the default-domain opset (callers check that nothing else changes meaning).
  void SetOpset(int64_t opset);

  /// False when the target the pass works for takes shapes only as constants
  /// (TargetProfile::runtime_shapes): no Shape-derived Expand may be inserted then.
  bool RuntimeShapesAllowed() const;

  /// The node's broadcasting form at the model's opset.
  analysis::BroadcastOp OpOf(int id) const;

  /// OpOf(id) when the node broadcasts in numpy form (the rewrite passes' subject); nullopt for
  /// non-broadcasting ops, Expand, and legacy forms (which get a debug note: run
  /// upgrade-legacy-broadcast first).
  std::optional<analysis::BroadcastOp> NumpyFormBroadcast(int id);
  /// The node's name, or "<op>#<index>" (its index in the original graph) when unnamed.
  std::string Label(int id) const;

  /// DecideNode of node `id` at the context's opset from the shapes the context holds now (an
  /// Expand's target from a constant, or Shape(z)'s as z's shape), named by Label(id) and
  /// path(): every pass decides a broadcast with the routine `check` uses. False where
  /// DecideNode is.
  bool Decide(int id, analysis::NodeVerdict* v);
  /// The same at other shapes of the node's inputs (node-input order): a candidate rewrite.
  bool DecideWith(int id, absl::Span<const broadcast::Shape> inputs, analysis::NodeVerdict* v);

  /// The tensor's shape (unknown rank when not known) and element type (0 when not known).
  /// (A reference into the context's table: valid until that tensor's shape is set again.)
  const broadcast::Shape& ShapeOf(const std::string& name) const;
  /// ShapeOf(input `slot` of node `id`), by the id the editor resolved when the tables and the
  /// editor share ids (the main graph); unknown rank for a missing or empty input.
  const broadcast::Shape& ShapeOfInput(int id, int slot) const;
  int32_t ElemOf(const std::string& name) const;
  /// Records the shape of a new or changed tensor, and writes its value_info when it is an
  /// intermediate tensor (not a graph input, output or initializer).
  void SetShape(const std::string& name, int32_t elem, const broadcast::Shape& shape);

  /// An int64 1-D constant initializer, shared by equal values (raises IR 3 to 4, see
  /// AllowInitializers).
  std::string Int64Constant(const std::vector<int64_t>& values, const std::string& base,
                            int anchor);
  /// `Unsqueeze(x, axes)` before node `anchor`, shared by equal (x, axes).
  std::string InsertUnsqueeze(const std::string& x, const std::vector<int64_t>& axes, int anchor);
  /// `Reshape(x, shape)` before `anchor` (allowzero=1 from opset 14 when a target dim is 0).
  std::string InsertReshape(const std::string& x, const std::vector<int64_t>& shape,
                            const broadcast::Shape& out, int anchor);
  /// `Shape(x)` before `anchor`, shared by equal x.
  std::string InsertShape(const std::string& x, int anchor);
  /// `Expand(x, shape_tensor)` before `anchor`, whose output has shape `out`.
  std::string InsertExpand(const std::string& x, const std::string& shape_tensor,
                           const broadcast::Shape& out, int anchor);

  /// Inserts the built `node` before `anchor` with one output, FreshName(out_base), and counts
  /// it; returns the output's name (its shape is the caller's to set). Every builder ends here.
  std::string InsertBuiltNode(onnx::NodeProto node, const std::string& out_base, int anchor);
  /// `op(inputs)` before `anchor` with integer attributes `ints`, one output named after
  /// `out_base`, of element type `elem` and shape `out`.
  std::string InsertNode(const std::string& op, const std::vector<std::string>& inputs,
                         const std::vector<std::pair<std::string, int64_t>>& ints,
                         const std::string& out_base, int32_t elem, const broadcast::Shape& out,
                         int anchor);
  /// The broadcast fold limit in force: PassOptions::fold_limit_bytes, or what
  /// SetFoldLimitBytes set (legalize-measured's last resort for one node; -1 restores).
  int64_t fold_limit_bytes() const {
    return fold_limit_override_ >= 0 ? fold_limit_override_ : options_.fold_limit_bytes;
  }
  void SetFoldLimitBytes(int64_t bytes) { fold_limit_override_ = bytes; }

  /// Adds `rewrite` to the log (node label and op filled from `id` when >= 0).
  void Record(int id, Rewrite rewrite);
  /// A "does not apply" reason, shown under --debug.
  void Debug(int id, const std::string& why);

  /// Requires default-domain opset >= `needed` for a node the pass inserts, raising it when
  /// only ops that keep their meaning change in between; else Unimplemented.
  absl::Status RequireOpset(int64_t needed, const std::string& why);

  /// IR < 4 requires every initializer to be a graph input (and Constant before opset 9 holds
  /// only floats); raises ir_version to 4, which only relaxes that rule, and logs it.
  void AllowInitializers();
  /// Removes initializer (or Constant node) `name` when nothing reads it any more.
  void DropIfUnused(const std::string& name);

  /// Constants folded by this pass keep their value_info in sync.
  void ConstantShapeChanged(const std::string& name, const broadcast::Shape& shape);
  /// Records the shape and element type of a new initializer (which has no value_info).
  void NoteInitializerShape(const std::string& name, int32_t elem, const broadcast::Shape& shape);

  /// The copies of shared constants the operand rewrites (operand_rewrites.h) made in this
  /// graph: another use that wants the same copy reads it instead of a second one.
  struct ConstantCopies {
    /// (constant, rank) -> the copy with leading 1s up to that rank.
    std::map<std::pair<std::string, int64_t>, std::string> aligned;
    /// (constant, shape text) -> the copy broadcast to that shape.
    std::map<std::pair<std::string, std::string>, std::string> broadcast;
  };
  ConstantCopies& constant_copies() { return constant_copies_; }

 private:
  proto::Model* model_;
  GraphScope scope_;
  std::string pass_;
  PassOptions options_;
  PassStats* stats_;
  std::unique_ptr<proto::GraphEditor> graph_;
  int64_t opset_ = 0;
  bool scoped_ = false;  // set up by InitScoped (RewriteEveryGraph)
  analysis::ShapeTables* hand_back_ = nullptr;  // where a scoped context's tables go
  int64_t fold_limit_override_ = -1;
  bool shared_ids_ = false;  // the editor indexes into the tables' ids (Init)
  analysis::ShapeTables tables_;
  std::map<std::vector<int64_t>, std::string> int64_constants_;
  std::map<std::pair<std::string, std::vector<int64_t>>, std::string> unsqueezes_;
  std::map<std::string, std::string> shape_of_;
  ConstantCopies constant_copies_;
};

/// Runs `rewrite` over every graph of `model` that a rewrite can reach, then commits each:
/// If/Loop/Scan bodies (recursively, innermost first, outer-scope values visible with the
/// shapes of the one analysis), model-local function bodies, and the main graph last. A
/// function body is rewritten once when the rewrite comes out the same for every call site's
/// shapes; otherwise each group of call sites with the same rewrite gets its own copy of the
/// function (the first group keeps the original), so every call runs a body rewritten for its
/// own shapes. Call sites that cannot be retargeted (inside another function body) leave such a
/// function as it is, with a debug reason; the target check then lists its nodes. Graphs
/// nested inside function bodies are not rewritten either. A model without bodies or functions
/// takes the single-graph path (Init, with the pipeline's tables). Otherwise every graph's tables
/// come from options.analyses (AnalysisManager::TakeModel: held, or one analysis of the model)
/// and go back to it kept current with the edits, under the paths a fresh analysis would give
/// them; when a path cannot be followed (a pass that added or removed a body or a call) only the
/// main graph's are handed back.
absl::Status RewriteEveryGraph(proto::Model* model, const std::string& pass,
                               const PassOptions& options, PassStats* stats,
                               const std::function<absl::Status(RewriteContext&)>& rewrite);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_REWRITE_CONTEXT_H_
