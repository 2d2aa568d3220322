// Symbolic shape propagation over every graph of a model, with the project's broadcast rules,
// and a verdict for every broadcasting node (subgraphs and model-local functions included).
// This is the analysis behind `onnx-bcast check`; rewrite passes use the same shapes.
//
// Requires: a model that passed the structure checks (proto/onnx_checks: no cycles, names
// defined before use, no recursive functions).
// Guarantees: one walk, node by node, linear in the model: the main graph, If/Loop/Scan bodies
// (outer-scope names seen through the enclosing scopes) and model-local function bodies once
// per call site. Broadcasting ops are derived with broadcast/ (libonnx 1.12 takes a symbol as
// compatible with any number and never checks Gemm's C or PRelu's slope); other ops with
// passes/shape_functions (InferSymbolic), and what that leaves unknown with libonnx's per-node
// inference. Graph-input dims that are not numbers are symbols (the dim_param, or
// "<input>:<axis>" when unnamed); extents that depend on data are fresh symbols named after
// their node; `unknown` remains only where a shape cannot be seen, and its message names the
// node it comes from. Functions nested deeper than `max_function_depth` are an error
// (Unimplemented), never skipped silently.
#ifndef ONNX_BCAST_ANALYSIS_SHAPE_PROPAGATION_H_
#define ONNX_BCAST_ANALYSIS_SHAPE_PROPAGATION_H_

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "analysis/shape_tables.h"
#include "broadcast/condition.h"
#include "broadcast/rules.h"
#include "broadcast/shape.h"
#include "proto/model_io.h"

namespace onnx_bcast::analysis {

/// A graph's shapes and element types by tensor name, open addressing (no allocation or pointer
/// chase per entry). No caller iterates them into output: their order is not stable.
using ShapeTable = absl::flat_hash_map<std::string, broadcast::Shape>;
using ElemTable = absl::flat_hash_map<std::string, int32_t>;

/// A portability warning (check --lint).
struct LintWarning {
  std::string lint_class;  ///< "prelu-slope-axis", "ncnn-outer-axis", "legacy-axis"
  std::string message;
};

/// The verdict for one broadcasting node.
struct NodeVerdict {
  std::string graph;  ///< "main", or a path such as "main/If 'cond'.then_branch"
  /// The same path compact, for people: "" in the main graph, else the owning node (its name
  /// or "<op>#<index>") and the attribute ("then", "else", "body", other names as they are) or
  /// the called function's name per level, e.g. "cond/then" or "Loop#2/body/layer_1/Block".
  std::string short_graph;
  std::string node;  ///< node name, or "<op>#<index>" when unnamed
  std::string op;
  std::string domain;
  int64_t opset = 0;
  std::vector<std::string> input_names;
  std::vector<broadcast::Shape> inputs;
  broadcast::Shape output;
  broadcast::RuleFamily rule = broadcast::RuleFamily::kNumpy;
  /// The `axis` of a legacy-axis broadcast (opset < 7 `broadcast=1`; PRelu's is 1).
  std::optional<int64_t> legacy_axis;
  /// How it broadcasts; kInvalid for a proven error. Text only in reports: BroadcastClassText.
  broadcast::BroadcastClass broadcast_class = broadcast::BroadcastClass::kGeneral;
  /// MatMul (kMatMulBatch) with known batch dims: their class.
  std::optional<broadcast::BroadcastClass> batch_class;
  broadcast::Verdict verdict = broadcast::Verdict::kOk;
  broadcast::ConditionSet condition;
  std::string message;  ///< one line naming node, op, shapes, rule and reason (non-ok)
  std::vector<LintWarning> lints;
};

/// The contents of a small integer tensor, known as numbers (fold-constants).
struct KnownValue {
  int32_t elem = 0;             ///< onnx::TensorProto::DataType (INT64, INT32, ...)
  std::vector<int64_t> dims;    ///< rank 0 or 1
  std::vector<int64_t> values;  ///< row-major
};

/// A portability lint of a valid numpy broadcast of a binary op (Add, Mul, ...) that a layer
/// above supplies (engines/: how an engine aligns operands); it may append to `v->lints`.
using BinaryLint = void (*)(NodeVerdict* v);

struct AnalysisOptions {
  bool lint = false;
  /// With `lint`, also these, in order, after the analysis's own (driver/ hands in
  /// engines::EngineLints(); the analysis itself knows no engine).
  std::vector<BinaryLint> binary_lints;
  /// Maximum depth of model-local function calls followed; deeper is an Unimplemented
  /// error naming the call (the analysis cannot vouch for what it did not see).
  int max_function_depth = 16;
  /// False: shapes and element types only (what rewrite passes read); `nodes`, `combined`
  /// and `contradiction` stay empty.
  bool verdicts = true;
  /// False: `shapes` and `elems` stay empty (callers that read only the verdicts).
  bool record_shapes = true;
  /// With record_shapes, the main graph's shapes and element types go here (dense, as the
  /// pass manager keeps them) instead of `shapes["main"]` and `elems`.
  ShapeTables* main_tables = nullptr;
  /// With it, every main-graph tensor whose every element the analysis knows as a number (the
  /// shape arithmetic exporters write: Gather of a Shape, Concat of dims, ...) goes here by
  /// name, initializers and graph inputs left out.
  absl::flat_hash_map<std::string, KnownValue>* main_values = nullptr;
};

/// The nodes of each verdict (Analysis::CountVerdicts).
struct VerdictCounts {
  int64_t ok = 0, error = 0, conditional = 0, unknown = 0;
  int64_t of(broadcast::Verdict v) const;
};

/// Everything `check` reports.
struct Analysis {
  std::vector<NodeVerdict> nodes;
  /// The conditions of all nodes combined (symbols are model-wide).
  broadcast::ConditionSet combined;
  /// Non-empty when the combined conditions contradict: names the symbol and the nodes.
  std::string contradiction;
  /// Inferred shapes per tensor, keyed by graph path then tensor name.
  std::map<std::string, ShapeTable> shapes;
  /// Element types of the main graph's tensors (where known).
  ElemTable elems;
  /// Kept for API compatibility; the walk infers node by node and leaves it empty.
  std::string inference_note;

  /// Every verdict's count in one pass over the nodes: a report needing several asks once
  /// (each CountVerdict reads every node again: 219 MB of them at 1M nodes).
  VerdictCounts CountVerdicts() const;
  int64_t CountVerdict(broadcast::Verdict v) const;
  /// True when a node is proven wrong or the combined conditions contradict.
  bool HasError() const;
};

/// Analyzes every broadcasting node of `model`. With `annotated` non-null, it receives a copy
/// of the model with value_info for every intermediate tensor whose shape was inferred (every
/// graph; symbolic dims as dim_param strings of the printed symbol or expression).
/// Unimplemented when model-local functions nest deeper than `max_function_depth`.
absl::StatusOr<Analysis> AnalyzeBroadcasts(const proto::Model& model,
                                           const AnalysisOptions& options,
                                           onnx::ModelProto* annotated = nullptr);

/// A broadcasting node's verdict from shapes other than the walk's (the target check's tables,
/// a pass's candidate, bound dims): DecideNode in analysis/decide_node.h.

/// A node's class as reports and profiles write it: "same", ..., "matmul-batch:<batch class>".
std::string BroadcastClassText(broadcast::BroadcastClass broadcast_class,
                               std::optional<broadcast::BroadcastClass> batch_class = std::nullopt);
inline std::string BroadcastClassText(const NodeVerdict& v) {
  return BroadcastClassText(v.broadcast_class, v.batch_class);
}

/// True when `op_type` in the default domain broadcasts its inputs (any opset).
bool IsBroadcastingOp(const std::string& op_type);

}  // namespace onnx_bcast::analysis

#endif  // ONNX_BCAST_ANALYSIS_SHAPE_PROPAGATION_H_
