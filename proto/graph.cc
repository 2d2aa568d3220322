// Use-def index and batched edits over one GraphProto (see graph.h).
#include "proto/graph.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/shapes.h"

namespace onnx_bcast::proto {
namespace {

// The elements of `field` whose name is not in `dropped`, moved out in order.
template <class T>
std::vector<T> TakeKept(google::protobuf::RepeatedPtrField<T>* field,
                        const std::unordered_set<std::string>& dropped) {
  std::vector<T> kept;
  for (T& item : *field) {
    if (dropped.count(item.name()) == 0) kept.push_back(std::move(item));
  }
  return kept;
}

// Replaces the elements of `field` with `items`.
template <class T>
void ReplaceAll(std::vector<T> items, google::protobuf::RepeatedPtrField<T>* field) {
  field->Clear();
  for (T& item : items) *field->Add() = std::move(item);
}

}  // namespace

void AddIntAttribute(onnx::NodeProto* node, const std::string& name, int64_t value) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

void AddIntsAttribute(onnx::NodeProto* node, const std::string& name,
                      const std::vector<int64_t>& values) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

GraphEditor::GraphEditor(onnx::GraphProto* graph, TensorIds* ids, const NodeTensorIds* hint)
    : graph_(graph),
      original_count_(graph->node_size()),
      ids_(ids != nullptr ? ids : &own_ids_),
      dead_(graph->node_size(), false) {
  // Sized once: rehashing dominates building the index on large graphs. Most tensors are a
  // node output or an initializer.
  const size_t expected = static_cast<size_t>(original_count_) +
                          static_cast<size_t>(graph_->initializer_size()) +
                          static_cast<size_t>(graph_->input_size());
  ids_->Reserve(expected);
  tensors_.reserve(std::max(expected, static_cast<size_t>(ids_->size())));
  for (const auto& vi : graph_->input()) tensors_[Intern(vi.name())].graph_input = true;
  for (const auto& vi : graph_->output()) tensors_[Intern(vi.name())].graph_output = true;
  for (int i = 0; i < graph_->initializer_size(); ++i) {
    tensors_[Intern(graph_->initializer(i).name())].initializer = i;
  }
  const auto subgraph_read = [this](const std::string& name) {
    tensors_[Intern(name)].subgraph_use = true;
  };
  // A hint in another id space (the editor's own) is ignored.
  if (ids == nullptr) hint = nullptr;
  // Sized once (grown by doubling they held up to twice their size at the peak).
  size_t slots = 0;
  for (const auto& n : graph_->node()) {
    slots += static_cast<size_t>(n.input_size()) + static_cast<size_t>(n.output_size());
  }
  node_ids_.reserve(slots);
  node_at_.reserve(static_cast<size_t>(original_count_));
  for (int id = 0; id < original_count_; ++id) {
    const onnx::NodeProto& n = graph_->node(id);
    Index(id, hint == nullptr ? nullptr
                              : hint->Of(id, original_count_, n.input_size() + n.output_size()));
    ForEachSubgraphRead(n, subgraph_read);
  }
}

int GraphEditor::Intern(std::string_view name) {
  const int id = ids_->Intern(name);
  // A shared id space may hold names this graph never mentioned: ids can skip ahead.
  if (static_cast<size_t>(id) >= tensors_.size()) tensors_.resize(static_cast<size_t>(id) + 1);
  return id;
}

const GraphEditor::Tensor* GraphEditor::TensorOf(const std::string& name) const {
  const int id = ids_->Find(name);
  return id < 0 || static_cast<size_t>(id) >= tensors_.size() ? nullptr
                                                              : &tensors_[static_cast<size_t>(id)];
}

bool GraphEditor::IsGraphInput(const std::string& name) const {
  const Tensor* t = TensorOf(name);
  return t != nullptr && t->graph_input;
}

bool GraphEditor::IsGraphOutput(const std::string& name) const {
  const Tensor* t = TensorOf(name);
  return t != nullptr && t->graph_output;
}

bool GraphEditor::IsUsedBySubgraph(const std::string& name) const {
  const Tensor* t = TensorOf(name);
  return t != nullptr && t->subgraph_use;
}

void GraphEditor::AddName(const std::string& name) {
  // Before the first UniqueName the set is not built yet; it will see this name then.
  if (names_collected_ && !name.empty()) names_.insert(name);
}

void GraphEditor::CollectAllNames() {
  // Built on first use: most passes on most models never need a fresh name.
  names_collected_ = true;
  // Node names and outputs, initializers and value_info: sized once, not rehashed.
  names_.reserve(2 * static_cast<size_t>(graph_->node_size()) +
                 static_cast<size_t>(graph_->initializer_size()) +
                 static_cast<size_t>(graph_->value_info_size()) + inserted_.size() * 2);
  CollectNames(*graph_, false);
  for (const auto& n : inserted_) {
    AddName(n->name());
    for (const std::string& out : n->output()) AddName(out);
  }
  for (const auto& t : new_initializers_) AddName(t->name());
}

void GraphEditor::CollectNames(const onnx::GraphProto& g, bool nested) {
  for (const auto& vi : g.input()) AddName(vi.name());
  for (const auto& vi : g.output()) AddName(vi.name());
  for (const auto& vi : g.value_info()) AddName(vi.name());
  for (const auto& t : g.initializer()) AddName(t.name());
  for (const auto& t : g.sparse_initializer()) AddName(t.values().name());
  for (const auto& node : g.node()) {
    AddName(node.name());
    for (const std::string& n : node.input()) AddName(n);
    for (const std::string& n : node.output()) AddName(n);
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) CollectNames(attr.g(), true);
      for (const auto& sub : attr.graphs()) CollectNames(sub, true);
    }
  }
  (void)nested;
}

const onnx::NodeProto& GraphEditor::node(int id) const {
  return id < original_count_ ? graph_->node(id) : *inserted_[id - original_count_];
}

onnx::NodeProto* GraphEditor::mutable_node(int id) {
  return id < original_count_ ? graph_->mutable_node(id) : inserted_[id - original_count_].get();
}

void GraphEditor::Index(int id, const int* hinted) {
  const onnx::NodeProto& n = node(id);
  // A hinted id whose name matches: one comparison instead of a hash lookup.
  const auto id_of = [&](const std::string& name, int slot) {
    const int t = hinted != nullptr ? ids_->Confirm(hinted[slot], name) : -1;
    if (t < 0) return Intern(name);
    if (static_cast<size_t>(t) >= tensors_.size()) tensors_.resize(static_cast<size_t>(t) + 1);
    return t;
  };
  if (static_cast<size_t>(id) >= node_at_.size()) node_at_.resize(static_cast<size_t>(id) + 1, -1);
  node_at_[static_cast<size_t>(id)] = static_cast<int>(node_ids_.size());
  for (int k = 0; k < n.input_size(); ++k) {
    if (n.input(k).empty()) {
      node_ids_.push_back(-1);
      continue;
    }
    const int t = id_of(n.input(k), k);
    node_ids_.push_back(t);
    AddUse(t, {id, k});
  }
  for (int k = 0; k < n.output_size(); ++k) {
    const std::string& out = n.output(k);
    const int t = out.empty() ? -1 : id_of(out, n.input_size() + k);
    node_ids_.push_back(t);
    if (t >= 0) tensors_[static_cast<size_t>(t)].producer = id;
  }
}

void GraphEditor::Unindex(int id) {
  const onnx::NodeProto& n = node(id);
  for (int k = 0; k < n.input_size(); ++k) {
    if (n.input(k).empty()) continue;
    const int t = ids_->Find(n.input(k));
    if (t < 0 || static_cast<size_t>(t) >= tensors_.size()) continue;
    RemoveUse(t, {id, k});
  }
  for (const std::string& out : n.output()) {
    const int t = ids_->Find(out);
    if (t >= 0 && static_cast<size_t>(t) < tensors_.size() &&
        tensors_[static_cast<size_t>(t)].producer == id) {
      tensors_[static_cast<size_t>(t)].producer = -1;
    }
  }
}

std::vector<int> GraphEditor::NodeOrder() const {
  // Pending insertions go before their original anchor, ordered by rank.
  std::vector<int> order;
  order.reserve(original_count_ + inserted_.size());
  std::vector<std::vector<int>> pending(original_count_ + 1);
  for (size_t k = 0; k < inserted_.size(); ++k) {
    pending[inserted_anchor_[k]].push_back(original_count_ + static_cast<int>(k));
  }
  for (int id = 0; id <= original_count_; ++id) {
    // Within an anchor, a node inserted "before an inserted node" carries a lower rank.
    std::vector<int>& list = pending[id];
    std::stable_sort(list.begin(), list.end(), [&](int a, int b) {
      return insert_rank_[a - original_count_] < insert_rank_[b - original_count_];
    });
    for (int n : list) {
      if (!dead_[n]) order.push_back(n);
    }
    if (id < original_count_ && !dead_[id]) order.push_back(id);
  }
  return order;
}

int GraphEditor::Producer(const std::string& name) const {
  const Tensor* t = TensorOf(name);
  return t == nullptr ? -1 : t->producer;
}

absl::Span<const Use> GraphEditor::UsesOf(const Tensor& t) const {
  if (t.spill >= 0) return spills_[static_cast<size_t>(t.spill)];
  return t.one.node >= 0 ? absl::Span<const Use>(&t.one, 1) : absl::Span<const Use>();
}

void GraphEditor::AddUse(int t, Use use) {
  Tensor& tensor = tensors_[static_cast<size_t>(t)];
  if (tensor.spill >= 0) {
    spills_[static_cast<size_t>(tensor.spill)].push_back(use);
  } else if (tensor.one.node < 0) {
    tensor.one = use;
  } else {
    tensor.spill = static_cast<int>(spills_.size());
    spills_.push_back({tensor.one, use});
    tensor.one = Use();
  }
}

void GraphEditor::RemoveUse(int t, Use use) {
  Tensor& tensor = tensors_[static_cast<size_t>(t)];
  const auto same = [&](const Use& u) { return u.node == use.node && u.slot == use.slot; };
  if (tensor.spill >= 0) {
    std::vector<Use>& uses = spills_[static_cast<size_t>(tensor.spill)];
    uses.erase(std::remove_if(uses.begin(), uses.end(), same), uses.end());
  } else if (same(tensor.one)) {
    tensor.one = Use();
  }
}

absl::Span<const Use> GraphEditor::Consumers(const std::string& name) const {
  const Tensor* t = TensorOf(name);
  return t == nullptr ? absl::Span<const Use>() : UsesOf(*t);
}

std::vector<Use> GraphEditor::ConsumerList(const std::string& name) const {
  const absl::Span<const Use> uses = Consumers(name);
  return std::vector<Use>(uses.begin(), uses.end());
}

int GraphEditor::UseCount(const std::string& name) const {
  return static_cast<int>(Consumers(name).size()) + (IsGraphOutput(name) ? 1 : 0) +
         (IsUsedBySubgraph(name) ? 1 : 0);
}

onnx::TensorProto* GraphEditor::Initializer(const std::string& name) {
  const Tensor* t = TensorOf(name);
  if (t == nullptr || t->initializer == kNoInitializer) return nullptr;
  if (!removed_initializers_.empty() && removed_initializers_.count(name) > 0) return nullptr;
  if (t->initializer >= 0) return graph_->mutable_initializer(t->initializer);
  return new_initializers_[static_cast<size_t>(-t->initializer - 1)].get();
}

onnx::TensorProto* GraphEditor::MutableConstantValue(const std::string& name) {
  if (IsGraphInput(name)) return nullptr;
  if (onnx::TensorProto* t = Initializer(name); t != nullptr) return t;
  const int id = Producer(name);
  if (id < 0) return nullptr;
  onnx::NodeProto* n = mutable_node(id);
  if (n->op_type() != "Constant" || !n->domain().empty() || n->output_size() != 1) {
    return nullptr;
  }
  for (auto& attr : *n->mutable_attribute()) {
    if (attr.name() == "value" && attr.has_t()) return attr.mutable_t();
  }
  return nullptr;
}

const onnx::TensorProto* GraphEditor::ConstantValue(const std::string& name) {
  return MutableConstantValue(name);
}

std::string GraphEditor::UniqueName(std::string_view base) {
  if (!names_collected_) CollectAllNames();
  std::string name(base);
  if (names_.insert(name).second) return name;
  int& next = next_suffix_[name];
  while (true) {
    std::string candidate = absl::StrCat(name, "_", ++next);
    if (names_.insert(candidate).second) return candidate;
  }
}

int GraphEditor::InsertBefore(int anchor, onnx::NodeProto node) {
  const int id = original_count_ + static_cast<int>(inserted_.size());
  int rank = 0;
  if (anchor >= original_count_) {
    // Before an inserted node: same original anchor, ranked just below it.
    const int k = anchor - original_count_;
    rank = insert_rank_[k] - 1;
    anchor = inserted_anchor_[k];
  } else {
    rank = next_rank_;
  }
  // Ranks leave room below each insertion for nodes placed before it.
  next_rank_ += 1 << 16;
  inserted_.push_back(std::make_unique<onnx::NodeProto>(std::move(node)));
  inserted_anchor_.push_back(anchor);
  insert_rank_.push_back(rank);
  dead_.push_back(false);
  const onnx::NodeProto& n = *inserted_.back();
  AddName(n.name());
  for (const std::string& out : n.output()) AddName(out);
  Index(id);
  return id;
}

NodeTensorIds GraphEditor::ExportNodeIds() const {
  NodeTensorIds out;
  const int count = graph_->node_size();
  out.begin.reserve(static_cast<size_t>(count) + 1);
  out.ids.reserve(node_ids_.size());
  for (int id = 0; id < count; ++id) {
    out.begin.push_back(static_cast<int>(out.ids.size()));
    const onnx::NodeProto& n = graph_->node(id);
    const int size = n.input_size() + n.output_size();
    const int at = static_cast<size_t>(id) < node_at_.size() ? node_at_[static_cast<size_t>(id)] : -1;
    for (int k = 0; k < size; ++k) {
      out.ids.push_back(at >= 0 && static_cast<size_t>(at + k) < node_ids_.size()
                            ? node_ids_[static_cast<size_t>(at + k)]
                            : -1);
    }
  }
  out.begin.push_back(static_cast<int>(out.ids.size()));
  return out;
}

int GraphEditor::InputId(int id, int slot) const {
  if (id < 0 || static_cast<size_t>(id) >= node_at_.size()) return -1;
  const onnx::NodeProto& n = node(id);
  if (slot < 0 || slot >= n.input_size() || n.input(slot).empty()) return -1;
  const int at = node_at_[static_cast<size_t>(id)];
  if (at >= 0 && static_cast<size_t>(at + slot) < node_ids_.size()) {
    const int t = ids_->Confirm(node_ids_[static_cast<size_t>(at + slot)], n.input(slot));
    if (t >= 0) return t;
  }
  return ids_->Find(n.input(slot));
}

void GraphEditor::SetInput(int id, int slot, const std::string& name) {
  onnx::NodeProto* n = mutable_node(id);
  const std::string old = n->input(slot);
  if (old == name) return;
  if (!old.empty()) RemoveUse(Intern(old), {id, slot});
  n->set_input(slot, name);
  const int t = name.empty() ? -1 : Intern(name);
  if (t >= 0) AddUse(t, {id, slot});
  if (static_cast<size_t>(id) < node_at_.size() && node_at_[static_cast<size_t>(id)] >= 0) {
    const size_t at = static_cast<size_t>(node_at_[static_cast<size_t>(id)] + slot);
    if (at < node_ids_.size()) node_ids_[at] = t;
  }
}

void GraphEditor::RemoveNode(int id) {
  if (dead_[id]) return;
  for (const std::string& out : node(id).output()) {
    if (!out.empty()) DropValueInfo(out);
  }
  Unindex(id);
  dead_[id] = true;
  removed_any_ = true;
}

onnx::TensorProto* GraphEditor::AddInitializer(onnx::TensorProto tensor) {
  AddName(tensor.name());
  const std::string name = tensor.name();
  new_initializers_.push_back(std::make_unique<onnx::TensorProto>(std::move(tensor)));
  tensors_[static_cast<size_t>(Intern(name))].initializer =
      -static_cast<int>(new_initializers_.size());
  removed_initializers_.erase(name);
  return new_initializers_.back().get();
}

void GraphEditor::RemoveInitializer(const std::string& name) {
  removed_initializers_.insert(name);
  DropValueInfo(name);
}

void GraphEditor::SetValueInfo(const std::string& name, int32_t elem, const broadcast::Shape& shape) {
  onnx::ValueInfoProto vi;
  vi.set_name(name);
  if (elem == 0) {
    for (const auto& old : graph_->value_info()) {
      if (old.name() == name && old.type().has_tensor_type()) {
        elem = old.type().tensor_type().elem_type();
      }
    }
  }
  if (elem == 0) {
    DropValueInfo(name);
    return;
  }
  vi.mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  SetShapeOfType(shape, vi.mutable_type());
  NoteDroppedValueInfo(name);  // the old entry, if any
  new_value_info_[name] = std::move(vi);
}

void GraphEditor::NoteDroppedValueInfo(const std::string& name) {
  // Only the graph's own entries are dropped at Commit, and the graph's value_info changes only
  // there: a graph without any (the usual case, a million names at 1M nodes) needs no list.
  if (graph_->value_info_size() > 0) dropped_value_info_.insert(name);
}

void GraphEditor::DropValueInfo(const std::string& name) {
  NoteDroppedValueInfo(name);
  new_value_info_.erase(name);
}

void GraphEditor::Commit() {
  // Nodes: rebuilt (and re-indexed below) only when some were inserted or removed; input
  // changes alone are already in the graph and the index.
  const bool structural = !inserted_.empty() || removed_any_;
  if (structural) {
    const std::vector<int> order = NodeOrder();
    std::vector<onnx::NodeProto> nodes;
    nodes.reserve(order.size());
    for (int id : order) nodes.push_back(std::move(*mutable_node(id)));
    ReplaceAll(std::move(nodes), graph_->mutable_node());
  }
  // Initializers: existing ones in place, new ones appended in creation order.
  if (!removed_initializers_.empty() || !new_initializers_.empty()) {
    std::vector<onnx::TensorProto> inits =
        TakeKept(graph_->mutable_initializer(), removed_initializers_);
    for (auto& t : new_initializers_) {
      if (removed_initializers_.count(t->name()) == 0) inits.push_back(std::move(*t));
    }
    ReplaceAll(std::move(inits), graph_->mutable_initializer());
  }
  // value_info: drop stale entries, then add new ones sorted by name (deterministic).
  if (!dropped_value_info_.empty() || !new_value_info_.empty()) {
    std::vector<onnx::ValueInfoProto> kept =
        TakeKept(graph_->mutable_value_info(), dropped_value_info_);
    std::vector<std::string> names;
    for (const auto& [name, vi] : new_value_info_) names.push_back(name);
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) kept.push_back(std::move(new_value_info_[name]));
    ReplaceAll(std::move(kept), graph_->mutable_value_info());
  }
  const bool initializers_changed = !removed_initializers_.empty() || !new_initializers_.empty();
  // Re-index over the committed graph so the editor stays usable.
  inserted_.clear();
  inserted_anchor_.clear();
  insert_rank_.clear();
  next_rank_ = 0;
  new_initializers_.clear();
  removed_initializers_.clear();
  new_value_info_.clear();
  dropped_value_info_.clear();
  if (initializers_changed) {
    for (Tensor& t : tensors_) t.initializer = kNoInitializer;
    for (int i = 0; i < graph_->initializer_size(); ++i) {
      tensors_[static_cast<size_t>(Intern(graph_->initializer(i).name()))].initializer = i;
    }
  }
  if (!structural) return;
  removed_any_ = false;
  original_count_ = graph_->node_size();
  dead_.assign(original_count_, false);
  for (Tensor& t : tensors_) {
    t.producer = -1;
    t.spill = -1;
    t.one = Use();
  }
  spills_.clear();
  node_at_.assign(static_cast<size_t>(original_count_), -1);
  node_ids_.clear();
  for (int id = 0; id < original_count_; ++id) Index(id);
}

}  // namespace onnx_bcast::proto
