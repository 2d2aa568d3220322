// A use-def index over one GraphProto and batched, linear-time edits: rewrite passes query
// producers and consumers in O(1), queue insertions and removals, and Commit() rebuilds the
// node list once. Names of new nodes and tensors are deterministic and never collide.
#ifndef ONNX_BCAST_PROTO_GRAPH_H_
#define ONNX_BCAST_PROTO_GRAPH_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/types/span.h"
#include "broadcast/shape.h"
#include "proto/onnx.h"
#include "proto/tensor_ids.h"

namespace onnx_bcast::proto {

/// Calls `read(name)` for every name the subgraphs of `node` (If/Loop/Scan bodies, at any
/// depth) read, once per read. Over-approximates their outer-scope reads: a name a body
/// defines itself still counts, which only makes its readers more careful.
template <typename Fn>
void ForEachSubgraphRead(const onnx::NodeProto& node, const Fn& read) {
  for (const auto& attr : node.attribute()) {
    const auto walk = [&](const onnx::GraphProto& g) {
      for (const auto& inner : g.node()) {
        for (const std::string& name : inner.input()) {
          if (!name.empty()) read(name);
        }
        ForEachSubgraphRead(inner, read);
      }
    };
    if (attr.has_g()) walk(attr.g());
    for (const auto& sub : attr.graphs()) walk(sub);
  }
}

/// Appends the INT attribute `name` = `value` to `node`.
void AddIntAttribute(onnx::NodeProto* node, const std::string& name, int64_t value);
/// Appends the INTS attribute `name` = `values` to `node`.
void AddIntsAttribute(onnx::NodeProto* node, const std::string& name,
                      const std::vector<int64_t>& values);

/// One use of a tensor as a node input.
struct Use {
  int node = -1;  ///< node id (see GraphEditor)
  int slot = -1;  ///< input index
};

/// Use-def index and editor of one graph. Node ids are the graph's node indices at
/// construction; inserted nodes get ids from `original_node_count()` upward. Ids stay valid
/// until Commit(). Subgraphs (If/Loop/Scan bodies) are not edited, but every name they read
/// from this graph counts as a use that no pass may rewire.
class GraphEditor {
 public:
  /// Indexes `graph`, which must outlive the editor. With `ids`, tensor ids are those of that
  /// space (the pass's shape tables), which must outlive the editor too: names are then
  /// interned once for both.
  /// `hint`: ids already resolved for the nodes (in `ids`' space); each is used only when its
  /// name still matches the node's, so a stale hint costs time, never correctness.
  explicit GraphEditor(onnx::GraphProto* graph, TensorIds* ids = nullptr,
                       const NodeTensorIds* hint = nullptr);

  GraphEditor(const GraphEditor&) = delete;
  GraphEditor& operator=(const GraphEditor&) = delete;

  onnx::GraphProto* graph() { return graph_; }
  int original_node_count() const { return original_count_; }
  /// Every node id, in graph order with pending insertions placed before their anchor.
  std::vector<int> NodeOrder() const;

  const onnx::NodeProto& node(int id) const;
  onnx::NodeProto* mutable_node(int id);
  bool alive(int id) const { return !dead_[id]; }

  /// The id of the node producing `name`, or -1 (graph input, initializer, unknown).
  int Producer(const std::string& name) const;
  /// The id (in the editor's TensorIds) of input `slot` of node `id`, resolved when the node was
  /// indexed and checked against its current name; -1 for a missing or empty input.
  int InputId(int id, int slot) const;
  /// Every node's input and output ids in graph order (see NodeTensorIds), for the next walk
  /// over the graph. Right after Commit node ids are graph indices; other times it is stale
  /// (a hint is checked by name, so that costs time only).
  NodeTensorIds ExportNodeIds() const;
  /// Live node inputs reading `name` (subgraph and graph-output uses are not listed), valid
  /// until the next edit.
  absl::Span<const Use> Consumers(const std::string& name) const;
  /// Consumers(name) copied, for a caller that edits while it walks them.
  std::vector<Use> ConsumerList(const std::string& name) const;
  /// Consumers + 1 if a graph output + 1 if read inside a subgraph.
  int UseCount(const std::string& name) const;
  bool IsGraphInput(const std::string& name) const;
  bool IsGraphOutput(const std::string& name) const;
  bool IsUsedBySubgraph(const std::string& name) const;

  /// The initializer named `name`, or null.
  onnx::TensorProto* Initializer(const std::string& name);
  /// A value fixed at load time: an initializer that is not also a graph input (IR < 4
  /// lists initializers among the inputs, where a caller may override them), or the `value`
  /// of a Constant node. Null otherwise.
  const onnx::TensorProto* ConstantValue(const std::string& name);
  /// Like ConstantValue, but writable (the initializer or the Constant node's attribute).
  onnx::TensorProto* MutableConstantValue(const std::string& name);

  /// A fresh name starting with `base` ("base", then "base_1", "base_2", ...), unused by any
  /// tensor, node, initializer or value_info of this graph or its subgraphs.
  std::string UniqueName(std::string_view base);

  /// Queues `node` to be placed right before node `anchor` (an original id; inserting before
  /// an inserted node places it before that node's anchor). Names in `node` must be fresh.
  /// Returns the new node's id.
  int InsertBefore(int anchor, onnx::NodeProto node);
  /// Points input `slot` of node `id` at `name`.
  void SetInput(int id, int slot, const std::string& name);
  /// Removes node `id` (its outputs must have no uses left).
  void RemoveNode(int id);
  /// Adds an initializer (its name must be fresh); returns it.
  onnx::TensorProto* AddInitializer(onnx::TensorProto tensor);
  /// Removes the initializer `name` at Commit.
  void RemoveInitializer(const std::string& name);

  /// Sets (or replaces) the value_info of `name`; elem 0 keeps the existing element type.
  void SetValueInfo(const std::string& name, int32_t elem, const broadcast::Shape& shape);
  /// Drops the value_info of `name` (its shape changed and is now unknown, or it is gone).
  void DropValueInfo(const std::string& name);

  /// Applies the queued edits: one pass over the nodes, initializers and value_info.
  void Commit();

 private:
  void Index(int id, const int* hinted = nullptr);
  void Unindex(int id);
  void AddName(const std::string& name);
  // Queues the graph's value_info entry of `name`, if any, to go at Commit.
  void NoteDroppedValueInfo(const std::string& name);
  void CollectNames(const onnx::GraphProto& g, bool nested);
  void CollectAllNames();

  // What the index knows of one tensor name: 24 bytes, one per tensor (a std::vector of uses
  // in each took 40 bytes plus a heap block: 84 MiB on a million-node graph, where most
  // tensors have one reader).
  struct Tensor {
    int producer = -1;
    /// >= 0: index into the graph's initializers; < 0: -(k + 1) into new_initializers_.
    int initializer = kNoInitializer;
    bool graph_input = false;
    bool graph_output = false;
    bool subgraph_use = false;
    /// >= 0: the uses are spills_[spill] (once the tensor had two at a time); else `one`.
    int spill = -1;
    Use one;  ///< the only use while spill < 0 (node -1: none)
  };
  static constexpr int kNoInitializer = -(1 << 30);

  // The id of `name`, interned on first sight (tensors_ grows with ids_).
  int Intern(std::string_view name);
  const Tensor* TensorOf(const std::string& name) const;
  // The uses of tensor `t`, in the order they were added.
  absl::Span<const Use> UsesOf(const Tensor& t) const;
  void AddUse(int t, Use use);
  void RemoveUse(int t, Use use);

  onnx::GraphProto* graph_;
  int original_count_;
  // Every per-tensor table is a vector over dense ids: string-keyed maps held a copy of each
  // name per table and were the largest part of the index on million-node graphs.
  TensorIds own_ids_;
  TensorIds* ids_;  // own_ids_ or the caller's
  std::vector<Tensor> tensors_;
  std::vector<std::vector<Use>> spills_;  // uses of the tensors read more than once
  // Node id -> offset of its input ids, then its output ids, in node_ids_ (-1: not indexed);
  // kept by SetInput.
  std::vector<int> node_at_;
  std::vector<int> node_ids_;
  std::vector<std::unique_ptr<onnx::NodeProto>> inserted_;
  std::vector<int> inserted_anchor_;
  std::vector<int64_t> insert_rank_;
  int64_t next_rank_ = 0;
  std::vector<bool> dead_;
  std::vector<std::unique_ptr<onnx::TensorProto>> new_initializers_;
  std::unordered_set<std::string> removed_initializers_;
  std::unordered_map<std::string, onnx::ValueInfoProto> new_value_info_;
  std::unordered_set<std::string> dropped_value_info_;
  bool names_collected_ = false;
  bool removed_any_ = false;
  std::unordered_set<std::string> names_;
  std::unordered_map<std::string, int> next_suffix_;
};

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_GRAPH_H_
