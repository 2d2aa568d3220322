// The graph a fold round edits and the helpers every fold shares (see fold_graph.h).
#include "passes/fold_graph.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "passes/rewrite_context.h"
#include "proto/graph.h"

namespace onnx_bcast::passes::fold {

bool DefaultDomain(const onnx::NodeProto& n) {
  return n.domain().empty() || n.domain() == "ai.onnx";
}

bool HasSubgraph(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute()) {
    if (a.has_g() || a.graphs_size() > 0) return true;
  }
  return false;
}

// Ops whose value is not a function of their inputs, or that produce sequences/optionals
// (which are not tensors an initializer can hold).
bool Foldable(const onnx::NodeProto& n) {
  if (!DefaultDomain(n) || HasSubgraph(n)) return false;
  static const auto* const kNever = new std::unordered_set<std::string>{"RandomNormal",
                                                                        "RandomUniform",
                                                                        "RandomNormalLike",
                                                                        "RandomUniformLike",
                                                                        "Multinomial",
                                                                        "Bernoulli",
                                                                        "Constant",
                                                                        "If",
                                                                        "Loop",
                                                                        "Scan",
                                                                        "SequenceMap",
                                                                        "SequenceConstruct",
                                                                        "SequenceEmpty",
                                                                        "SequenceInsert",
                                                                        "SequenceErase",
                                                                        "SequenceAt",
                                                                        "SequenceLength",
                                                                        "SplitToSequence",
                                                                        "ConcatFromSequence",
                                                                        "Optional",
                                                                        "OptionalGetElement",
                                                                        "OptionalHasElement"};
  return kNever->count(n.op_type()) == 0;
}

// The payload size of a tensor (what the fold limit counts).
int64_t PayloadBytes(const onnx::TensorProto& t) {
  if (t.has_raw_data()) return static_cast<int64_t>(t.raw_data().size());
  return static_cast<int64_t>(t.int64_data_size()) * 8 + t.int32_data_size() * 4 +
         t.float_data_size() * 4 + t.double_data_size() * 8 + t.uint64_data_size() * 8;
}

std::string DimsText(const onnx::TensorProto& t) {
  return absl::StrCat("[", absl::StrJoin(t.dims(), ","), "]");
}

// Renames reads of `from` to `to` in `nodes` and, at any depth, in their subgraphs, except in
// a subgraph that defines `from` itself (it shadows the outer name there).
void RenameReads(google::protobuf::RepeatedPtrField<onnx::NodeProto>* nodes,
                 const std::string& from, const std::string& to) {
  for (auto& n : *nodes) {
    for (auto& in : *n.mutable_input()) {
      if (in == from) in = to;
    }
    for (auto& a : *n.mutable_attribute()) {
      auto walk = [&](onnx::GraphProto* g) {
        for (const auto& vi : g->input()) {
          if (vi.name() == from) return;
        }
        for (const auto& t : g->initializer()) {
          if (t.name() == from) return;
        }
        for (const auto& inner : g->node()) {
          for (const auto& o : inner.output()) {
            if (o == from) return;
          }
        }
        RenameReads(g->mutable_node(), from, to);
        for (auto& o : *g->mutable_output()) {
          if (o.name() == from) o.set_name(to);
        }
      };
      if (a.has_g()) walk(a.mutable_g());
      for (auto& g : *a.mutable_graphs()) walk(&g);
    }
  }
}

// Names, producers, graph inputs and outputs, initializers of the main graph as it is now.
void FoldGraph::Index() {
  dead_.assign(static_cast<size_t>(g_->node_size()), false);
  producer_.clear();
  for (int i = 0; i < g_->node_size(); ++i) {
    for (const std::string& o : g_->node(i).output()) {
      if (!o.empty()) producer_[o] = i;
    }
  }
  inputs_.clear();
  for (const auto& vi : g_->input()) inputs_.insert(vi.name());
  outputs_.clear();
  for (const auto& vi : g_->output()) outputs_.insert(vi.name());
  constants_.clear();
  for (const auto& t : g_->initializer()) {
    // An initializer that is also a graph input is a default the caller may override.
    if (inputs_.count(t.name()) == 0) constants_.insert(t.name());
  }
}

std::string FoldGraph::Label(int i) const {
  const onnx::NodeProto& n = g_->node(i);
  if (!n.name().empty()) return n.name();
  int index = i;
  if (options_.original_index != nullptr && n.output_size() > 0) {
    if (auto it = options_.original_index->find(n.output(0));
        it != options_.original_index->end()) {
      index = it->second;
    }
  }
  return absl::StrCat(n.op_type(), "#", index);
}

bool FoldGraph::TypeLoads(int32_t data_type) const {
  return options_.target == nullptr || options_.target->InitializerTypeAllowed(data_type);
}

void FoldGraph::AddInitializer(onnx::TensorProto t) {
  passes::AllowInitializers(model_, stats_);
  constants_.insert(t.name());
  stats_->bytes_added += PayloadBytes(t);
  ++stats_->initializers_rewritten;
  *g_->add_initializer() = std::move(t);
}

void FoldGraph::Log(int i, std::string action, const std::string& tensor, std::string detail,
                    std::string after, int64_t bytes) {
  Rewrite r;
  r.node = Label(i);
  r.output = g_->node(i).output_size() > 0 ? g_->node(i).output(0) : "";
  r.op = g_->node(i).op_type();
  r.action = std::move(action);
  r.tensor = tensor;
  r.detail = std::move(detail);
  r.after = std::move(after);
  r.bytes = bytes;
  stats_->Log(std::move(r));
}

void FoldGraph::Kill(int i) {
  if (dead_[static_cast<size_t>(i)]) return;
  dead_[static_cast<size_t>(i)] = true;
  ++stats_->nodes_removed;
}

// Drops dead nodes and splices inlined branches into the node list.
void FoldGraph::Rebuild() {
  bool any = !splice_.empty();
  for (bool d : dead_) any |= d;
  if (!any) return;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (int i = 0; i < g_->node_size(); ++i) {
    if (auto it = splice_.find(i); it != splice_.end()) {
      for (auto& n : it->second) *nodes.Add() = std::move(n);
    }
    if (!dead_[static_cast<size_t>(i)]) *nodes.Add() = std::move(*g_->mutable_node(i));
  }
  g_->mutable_node()->Swap(&nodes);
  splice_.clear();
  Index();
}

// Every name read by a node or a subgraph anywhere, counted.
std::unordered_map<std::string, int> FoldGraph::Readers() const {
  std::unordered_map<std::string, int> reads;
  for (int i = 0; i < g_->node_size(); ++i) {
    if (dead_[static_cast<size_t>(i)]) continue;
    for (const std::string& in : g_->node(i).input()) {
      if (!in.empty()) ++reads[in];
    }
    proto::ForEachSubgraphRead(g_->node(i), [&](const std::string& name) { ++reads[name]; });
  }
  return reads;
}

// The tensor of constant `name` (an initializer or a Constant node's value), or null.
const onnx::TensorProto* FoldGraph::ConstantTensor(const std::string& name) const {
  const onnx::TensorProto* t = nullptr;
  if (constants_.count(name) > 0) {
    for (const auto& init : g_->initializer()) {
      if (init.name() == name) t = &init;
    }
  } else if (auto p = producer_.find(name); p != producer_.end()) {
    const onnx::NodeProto& c = g_->node(p->second);
    if (c.op_type() == "Constant" && DefaultDomain(c) && c.attribute_size() == 1 &&
        c.attribute(0).name() == "value") {
      t = &c.attribute(0).t();
    }
  }
  return t;
}

void FoldGraph::DropValueInfo(const std::string& name) {
  auto* vis = g_->mutable_value_info();
  for (int k = vis->size() - 1; k >= 0; --k) {
    if (vis->Get(k).name() == name) vis->DeleteSubrange(k, 1);
  }
}

}  // namespace onnx_bcast::passes::fold
