// The one verdict routine. Every broadcasting node (Add ... Where, PRelu's slope, Gemm's C,
// MatMul's batch dims, the opset < 7 broadcast/axis forms) and Expand is decided by DecideNode,
// whoever knows its operands' shapes: the walk (its live values), the target check (the
// analysis's shape tables), a pass (the shapes a candidate rewrite would give), dim evaluation
// (a verdict's shapes at bound dims). Each used to have its own routine, and the one wrong
// refusal we shipped came from two of them disagreeing (#33).
#ifndef ONNX_BCAST_ANALYSIS_DECIDE_NODE_H_
#define ONNX_BCAST_ANALYSIS_DECIDE_NODE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "analysis/shape_propagation.h"
#include "analysis/shape_tables.h"
#include "broadcast/shape.h"
#include "proto/onnx.h"

namespace onnx_bcast::analysis {

/// Expand's target shape as a source knows it (the first of these that is set decides).
struct ExpandTarget {
  /// The shape tensor's contents as dims, symbols allowed (the walk tracks Shape(y) through).
  std::optional<broadcast::Shape> shape;
  /// Its contents read from a constant; a negative extent is a proven error.
  std::optional<std::vector<int64_t>> values;
  /// Neither known: where the shape tensor comes from, appended to the reason of the unknown
  /// verdict (" ('s' comes from Shape 'n')"), or empty.
  std::string origin;
};

/// What DecideNode reads of a node's operands.
class ShapeSource {
 public:
  virtual ~ShapeSource() = default;
  /// The shape of input `k` (node-input order) named `name` (never empty), or null when none
  /// is known (decided as an unknown rank).
  virtual const broadcast::Shape* InputShape(int k, const std::string& name) const = 0;
  /// The target of Expand node `node` (its input 1). A source that sees no contents knows none.
  virtual ExpandTarget TargetOf(const onnx::NodeProto& node) const;
};

/// Shapes given in the node's input order; an input beyond them has an unknown rank.
class GivenShapes : public ShapeSource {
 public:
  explicit GivenShapes(absl::Span<const broadcast::Shape> shapes) : shapes_(shapes) {}
  const broadcast::Shape* InputShape(int k, const std::string& name) const override;

 private:
  absl::Span<const broadcast::Shape> shapes_;
};

/// Names of tensors with constant contents (initializers, Constant outputs) and the tensors.
using ConstantTensors = absl::flat_hash_map<std::string_view, const onnx::TensorProto*>;

/// The main graph's shape tables (analysis_manager.h), for deciding a graph without walking it.
/// An Expand's target is read from a constant in `constants` (relative to `base_dir` when
/// stored outside), else it is what the tables record as the Expand's output: the analysis
/// broadcast the input to it.
class TableShapes : public ShapeSource {
 public:
  TableShapes(const ShapeTables& tables, const ConstantTensors* constants, std::string base_dir)
      : tables_(tables), constants_(constants), base_dir_(std::move(base_dir)) {}
  /// The ids of the next node's inputs in the tables' id space (see proto::NodeTensorIds; a
  /// hint, each checked against the input's name), or null.
  void SetInputIds(const int* ids) { ids_ = ids; }
  const broadcast::Shape* InputShape(int k, const std::string& name) const override;
  ExpandTarget TargetOf(const onnx::NodeProto& node) const override;

 private:
  const ShapeTables& tables_;
  const ConstantTensors* constants_;
  std::string base_dir_;
  const int* ids_ = nullptr;
};

/// How much of a verdict DecideNode writes.
struct DecideOptions {
  /// Resolves attribute references (`ref_attr_name`) of a node inside a function body.
  const onnx::NodeProto* caller = nullptr;
  /// Name the numpy forms' broadcast class (Where's is always named).
  bool classify = true;
  /// Write the message of a node that is not ok.
  bool describe = true;
  /// Add the portability warnings of `check --lint`.
  bool lint = false;
  /// With `lint`, the lints of the layers above (AnalysisOptions::binary_lints).
  absl::Span<const BinaryLint> binary_lints;
  /// >= 0: the node is main-graph node `main_graph_index`, and DecideNode sets its place
  /// (graph "main", its name or "<op>#<index>"), only for a node it decides.
  int main_graph_index = -1;
};

/// Decides default-domain node `node` at opset `opset` from `shapes` into `*v`, reusing its
/// buffers (one record serves every node of a large graph): op, opset, input names and shapes
/// in report order (Gemm's C and (M,N); Expand's input and target), rule, broadcast class,
/// verdict, output, condition, and per `options` the message and lints. `v`'s place (graph,
/// short_graph, node; the message names it) is the caller's to set beforehand, unless
/// `options.main_graph_index` says it. False for a node that does not broadcast at
/// `opset` (or is in another domain) and for one with the wrong number of inputs; `*v` is
/// then unspecified.
bool DecideNode(const onnx::NodeProto& node, int64_t opset, const ShapeSource& shapes,
                NodeVerdict* v, const DecideOptions& options = {});

/// DecideNode of the node `decided` describes, at other shapes of its inputs given in
/// `decided.inputs`' order (dim evaluation: the verdict and message at bound dims). False
/// where DecideNode is.
bool DecideAgain(const NodeVerdict& decided, absl::Span<const broadcast::Shape> inputs, NodeVerdict* v);

}  // namespace onnx_bcast::analysis

#endif  // ONNX_BCAST_ANALYSIS_DECIDE_NODE_H_
