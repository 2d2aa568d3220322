// The main graph fold-constants edits in one round, with its index (producers, graph inputs and
// outputs, constants) and the bookkeeping every fold shares: labels, rewrite records, dead
// nodes, inlined branches. The folds themselves are fold_cleanups.h and fold_values.h.
#ifndef ONNX_BCAST_PASSES_FOLD_GRAPH_H_
#define ONNX_BCAST_PASSES_FOLD_GRAPH_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "passes/pass.h"
#include "proto/model_io.h"
#include "proto/onnx.h"

namespace onnx_bcast::passes::fold {

/// The main graph of `model` as one fold round sees it. Edits that remove nodes mark them dead
/// (Kill) and take effect at Rebuild, which also splices inlined If branches in.
class FoldGraph {
 public:
  FoldGraph(proto::Model* model, const PassOptions& options, PassStats* stats,
            std::unordered_set<std::string>* kept)
      : model_(model),
        g_(model->proto.mutable_graph()),
        options_(options),
        stats_(stats),
        kept_(kept) {}

  proto::Model* model() const { return model_; }
  onnx::GraphProto* graph() const { return g_; }
  const PassOptions& options() const { return options_; }
  PassStats& stats() const { return *stats_; }
  /// Results kept as nodes for their size or type, across rounds.
  std::unordered_set<std::string>& kept() const { return *kept_; }

  bool dead(int i) const { return dead_[static_cast<size_t>(i)]; }
  std::unordered_map<std::string, int>& producer() { return producer_; }
  const std::unordered_set<std::string>& inputs() const { return inputs_; }
  const std::unordered_set<std::string>& outputs() const { return outputs_; }
  /// Initializers that are not graph inputs, and the values folded so far.
  const std::unordered_set<std::string>& constants() const { return constants_; }
  /// Nodes to insert before node i at the next Rebuild (an inlined If branch).
  std::unordered_map<int, std::vector<onnx::NodeProto>>& splice() { return splice_; }

  /// Names, producers, graph inputs and outputs, initializers of the graph as it is now.
  void Index();
  std::string Label(int i) const;
  /// Whether the target loads a constant of this element type (a node whose result it does
  /// not load stays a node: an engine may refuse a model with a bool initializer at load).
  bool TypeLoads(int32_t data_type) const;
  void AddInitializer(onnx::TensorProto t);
  void Log(int i, std::string action, const std::string& tensor, std::string detail,
           std::string after, int64_t bytes);
  void Kill(int i);
  /// Drops dead nodes and splices inlined branches into the node list.
  void Rebuild();
  /// Every name read by a live node or a subgraph anywhere, counted.
  std::unordered_map<std::string, int> Readers() const;
  /// The tensor of constant `name` (an initializer or a Constant node's value), or null.
  const onnx::TensorProto* ConstantTensor(const std::string& name) const;
  void DropValueInfo(const std::string& name);

 private:
  proto::Model* model_;
  onnx::GraphProto* g_;
  const PassOptions& options_;
  PassStats* stats_;
  std::unordered_set<std::string>* kept_;
  std::vector<bool> dead_;
  std::unordered_map<std::string, int> producer_;
  std::unordered_set<std::string> inputs_, outputs_, constants_;
  std::unordered_map<int, std::vector<onnx::NodeProto>> splice_;
};

bool DefaultDomain(const onnx::NodeProto& n);
bool HasSubgraph(const onnx::NodeProto& n);
/// False for ops whose value is not a function of their inputs, or that produce
/// sequences/optionals (which are not tensors an initializer can hold).
bool Foldable(const onnx::NodeProto& n);
/// The payload size of a tensor (what the fold limit counts).
int64_t PayloadBytes(const onnx::TensorProto& t);
std::string DimsText(const onnx::TensorProto& t);
/// Renames reads of `from` to `to` in `nodes` and, at any depth, in their subgraphs, except in
/// a subgraph that defines `from` itself (it shadows the outer name there).
void RenameReads(google::protobuf::RepeatedPtrField<onnx::NodeProto>* nodes,
                 const std::string& from, const std::string& to);

}  // namespace onnx_bcast::passes::fold

#endif  // ONNX_BCAST_PASSES_FOLD_GRAPH_H_
