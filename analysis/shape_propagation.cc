// One node-by-node walk over every graph of a model (main graph, If/Loop/Scan bodies, model-local
// functions per call site) deriving symbolic shapes and a verdict for every broadcasting node
// (see shape_propagation.h).
//
// Per node, in this order, each computed once: broadcasting ops get their shapes and verdicts
// from broadcast/'s rules; other default-domain ops from passes::InferSymbolic; what that leaves
// unknown (no function, an unknown rank or dim, no element type) from libonnx's per-node
// inference, which sees our symbolic dims as opaque dim_param tokens mapped back afterwards.
// Small integer/float tensors carry their contents (SymTensor.value) through the scope, so
// shape arithmetic (Shape -> Gather -> Concat -> Reshape) stays exact.
#include "analysis/shape_propagation.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/broadcast_ops.h"
#include "analysis/broadcast_verdict.h"
#include "analysis/shape_functions.h"
#include "proto/graph.h"
#include "proto/node_inference.h"
#include "proto/onnx_checks.h"
#include "proto/shapes.h"
#include "proto/tensor_ids.h"

namespace onnx_bcast::passes {
namespace {

using bcast::BroadcastResult;
using bcast::Dim;
using bcast::RuleFamily;
using bcast::Shape;
using bcast::Verdict;
using verdict::Attr;
using verdict::DecideBroadcast;
using verdict::Describe;
using verdict::IntAttr;
using verdict::Lint;
using verdict::TakeResult;

bool IsBoolResult(const std::string& op) {
  static const std::unordered_set<std::string> kOps = {
      "And", "Or", "Xor", "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"};
  return kOps.count(op) > 0;
}

// Ops whose output extents depend on tensor contents (an unknown they produce is theirs).
bool IsDataDependent(const std::string& op) {
  static const std::unordered_set<std::string> kOps = {"NonZero", "Unique",   "NonMaxSuppression",
                                                       "TopK",    "Compress", "StringSplit"};
  return kOps.count(op) > 0;
}

// Ops whose libonnx inference copies input 0's type (propagateShapeAndTypeFromFirstInput):
// answered here without building protos.
bool IsShapePreserving(const std::string& op) {
  static const std::unordered_set<std::string> kOps = {
      "Relu",     "Sigmoid",    "Tanh",      "Abs",  "Neg",  "Exp",        "Log",
      "Sqrt",     "Reciprocal", "Floor",     "Ceil", "Erf",  "Sin",        "Cos",
      "Softsign", "Softplus",   "LeakyRelu", "Elu",  "Selu", "HardSigmoid"};
  return kOps.count(op) > 0;
}

bool HasUnknownPart(const SymTensor& t) {
  if (!t.shape.rank_known) return true;
  for (const Dim& d : t.shape.dims) {
    if (d.is_unknown()) return true;
  }
  return false;
}

bool Complete(const SymTensor& t) { return t.elem != 0 && !HasUnknownPart(t); }

// Where an unknown rank or dim was first lost: the node (or graph input) responsible.
struct Origin {
  enum class Kind { kNode, kCustomOp, kDataDependent, kGraphInput, kMerge };
  Kind kind = Kind::kNode;
  const onnx::NodeProto* node = nullptr;
  std::string name;  // the node's report name, or the graph input's name
};

// A tensor as the walk knows it.
struct Value {
  SymTensor t;
  const onnx::TensorProto* constant = nullptr;  // initializer or Constant value (libonnx data)
  const onnx::TypeProto* full_type = nullptr;   // sequence/optional/map types (libonnx only)
  int32_t origin = -1;                          // index into the origins, when HasUnknownPart
  const onnx::NodeProto* producer = nullptr;    // the node that made it (null: input/initializer)
  int32_t producer_index = 0;
};

// Names visible in one graph; lookups chain to the enclosing graph (outer scope) without
// copying it. Function bodies get a scope without parent (they see only their inputs).
// Values sit behind dense ids (proto/tensor_ids.h), each in its own allocation so that the
// main graph's walk can free a value after its last use (WalkGraph) and keep only the live
// frontier: the values of a million-node graph were its largest allocation after the model.
class Scope {
 public:
  const Scope* parent = nullptr;

  const Value* Find(std::string_view name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent) {
      if (const Value* v = s->Local(name)) return v;
    }
    return nullptr;
  }
  // This graph's own value of `name` (not the enclosing graphs'), or null.
  const Value* Local(std::string_view name) const {
    if (hint_node_ != nullptr) {
      // One of the visited node's own input strings: its id is known.
      for (int k = 0; k < hint_node_->input_size(); ++k) {
        const std::string& in = hint_node_->input(k);
        if (in.data() == name.data() && in.size() == name.size() && hint_ids_[k] >= 0) {
          return values_[static_cast<size_t>(hint_ids_[k])].get();
        }
      }
    }
    const int id = ids_.Find(name);
    return id >= 0 ? values_[static_cast<size_t>(id)].get() : nullptr;
  }
  // Returns the id of `name`.
  int Set(std::string_view name, Value v) {
    const size_t id = Slot(name);
    std::unique_ptr<Value>& slot = values_[id];
    if (slot == nullptr) {
      slot = std::make_unique<Value>(std::move(v));
    } else {
      *slot = std::move(v);
    }
    return static_cast<int>(id);
  }
  // While `node` is visited, lookups of its input strings (by address) take their ids from
  // `input_ids` (counted up front) instead of hashing; null ends it.
  void HintInputs(const onnx::NodeProto* node, const int* input_ids) {
    hint_node_ = node;
    hint_ids_ = input_ids;
  }
  // Sets the value of an id Id() gave.
  void SetAt(int id, Value v) {
    std::unique_ptr<Value>& slot = values_[static_cast<size_t>(id)];
    if (slot == nullptr) {
      slot = std::make_unique<Value>(std::move(v));
    } else {
      *slot = std::move(v);
    }
  }
  // The dense id of `name` in this scope (interned).
  int Id(std::string_view name) { return static_cast<int>(Slot(name)); }
  std::string_view Name(int id) const { return ids_.name(id); }
  Value* At(int id) { return values_[static_cast<size_t>(id)].get(); }
  void Drop(int id) { values_[static_cast<size_t>(id)].reset(); }
  int size() const { return ids_.size(); }
  void Reserve(size_t n) {
    ids_.Reserve(n);
    values_.reserve(n);
  }
  // The names, for tables indexed by this scope's ids (the scope is done with them).
  proto::TensorIds TakeIds() { return std::move(ids_); }

 private:
  size_t Slot(std::string_view name) {
    const size_t id = static_cast<size_t>(ids_.Intern(name));
    if (id == values_.size()) values_.emplace_back();
    return id;
  }

  proto::TensorIds ids_;
  std::vector<std::unique_ptr<Value>> values_;
  const onnx::NodeProto* hint_node_ = nullptr;
  const int* hint_ids_ = nullptr;
};

// Fresh symbols "<node>:<output>:<axis>"; a name issued again (a function called twice, a
// repeated node name) gets "#<n>" so distinct extents never share a symbol.
class FreshSymbols : public SymbolSource {
 public:
  Dim Fresh(std::string_view node_name, int output, int axis) override {
    std::string name = absl::StrCat(std::string(node_name), ":", output, ":", axis);
    const int n = ++issued_[name];
    if (n > 1) absl::StrAppend(&name, "#", n);
    fresh_.insert(name);
    return Dim::Symbol(std::move(name));
  }
  /// True for a symbol this source made (an extent nothing but the data decides).
  bool IsFresh(const Dim& d) const { return d.is_symbol() && fresh_.count(d.symbol()) > 0; }

 private:
  std::unordered_map<std::string, int> issued_;
  std::unordered_set<std::string> fresh_;
};

std::string NodeName(const onnx::NodeProto& node, int index) {
  return node.name().empty() ? absl::StrCat(node.op_type(), "#", index) : node.name();
}

// If's branches read as "then"/"else" in compact graph paths; other attributes keep their
// names (Loop and Scan's "body").
std::string ShortAttributeName(const std::string& attr) {
  if (attr == "then_branch") return "then";
  if (attr == "else_branch") return "else";
  return attr;
}

// A dim as written into a proto for people and tools: value, or the printed symbol/expression.
void WriteShape(const Shape& shape, onnx::TypeProto* type) {
  auto* tt = type->mutable_tensor_type();
  if (!shape.rank_known) {
    tt->clear_shape();
    return;
  }
  auto* s = tt->mutable_shape();
  s->clear_dim();
  for (const Dim& d : shape.dims) {
    auto* dim = s->add_dim();
    if (d.is_value()) {
      dim->set_dim_value(d.value());
    } else if (!d.is_unknown()) {
      dim->set_dim_param(d.ToString());
    }
  }
}

// A declared dim (value_info, graph outputs, body inputs): unnamed dims are unknown.
SymTensor DeclaredTensor(const onnx::TypeProto& type) {
  SymTensor t;
  if (type.has_tensor_type()) t.elem = type.tensor_type().elem_type();
  t.shape = proto::ShapeOfType(type);
  return t;
}

// Fills what `v` does not know from a declared type (libonnx's merge, without its failure on
// a conflict: the derived type wins there). A fresh data-dependent symbol takes a declared
// extent (the model states what the data gives).
void MergeDeclared(const onnx::TypeProto& declared, Value* v, const FreshSymbols& fresh) {
  if (!declared.has_tensor_type()) {
    if (v->full_type == nullptr) v->full_type = &declared;
    return;
  }
  if (v->t.elem == 0) v->t.elem = declared.tensor_type().elem_type();
  if (!declared.tensor_type().has_shape()) return;
  const Shape d = proto::ShapeOfType(declared);
  if (!v->t.shape.rank_known) {
    v->t.shape = d;
  } else if (v->t.shape.rank() == d.rank()) {
    for (size_t i = 0; i < d.dims.size(); ++i) {
      Dim& ours = v->t.shape.dims[i];
      if (ours.is_unknown() || (fresh.IsFresh(ours) && !d.dims[i].is_unknown())) ours = d.dims[i];
    }
  }
}

// Fills the unknown parts of `to` from `from` (same rank) or takes `from`'s shape.
void FillGaps(const SymTensor& from, SymTensor* to) {
  if (to->elem == 0) to->elem = from.elem;
  if (!from.shape.rank_known) return;
  if (!to->shape.rank_known) {
    to->shape = from.shape;
    return;
  }
  if (to->shape.rank() != from.shape.rank()) return;
  for (size_t k = 0; k < from.shape.dims.size(); ++k) {
    if (to->shape.dims[k].is_unknown()) to->shape.dims[k] = from.shape.dims[k];
  }
}

Dim FromLibonnx(const onnx::TensorShapeProto::Dimension& d,
                const std::vector<std::pair<std::string, Dim>>& tokens) {
  if (d.has_dim_value()) return d.dim_value() >= 0 ? Dim::Value(d.dim_value()) : Dim();
  if (!d.has_dim_param() || d.dim_param().empty()) return Dim();
  if (absl::StartsWith(d.dim_param(), "unk__")) return Dim();
  for (const auto& [token, dim] : tokens) {
    if (token == d.dim_param()) return dim;
  }
  return Dim::Symbol(d.dim_param());
}

// A tracked integer tensor with constant contents as a TensorProto (libonnx reads shape
// inputs' data: Reshape, Expand, ...).
bool Synthesize(const SymTensor& t, onnx::TensorProto* out) {
  if (!t.value || !t.shape.rank_known || t.shape.rank() > 1) return false;
  if (t.elem != onnx::TensorProto::INT64 && t.elem != onnx::TensorProto::INT32) return false;
  for (const Dim& d : *t.value) {
    if (!d.is_value()) return false;
  }
  out->set_data_type(t.elem);
  if (t.shape.rank() == 1) out->add_dims(static_cast<int64_t>(t.value->size()));
  for (const Dim& d : *t.value) {
    if (t.elem == onnx::TensorProto::INT64) {
      out->add_int64_data(d.value());
    } else {
      out->add_int32_data(static_cast<int32_t>(d.value()));
    }
  }
  return true;
}

class Analyzer {
 public:
  Analyzer(const proto::Model& model, const AnalysisOptions& options, Analysis* out)
      : model_(model), options_(options), out_(out), infer_(model.proto) {
    for (const auto& opset : model.proto.opset_import()) {
      model_opsets_[opset.domain() == "ai.onnx" ? "" : opset.domain()] = opset.version();
    }
    for (const auto& fn : model.proto.functions()) {
      functions_[{fn.domain(), fn.name()}] = &fn;
    }
  }

  void Run(onnx::GraphProto* annotate) {
    Scope scope;
    const onnx::GraphProto& g = model_.proto.graph();
    for (const auto& vi : g.input()) scope.Set(vi.name(), MainInput(vi));
    WalkGraph(g, "main", &scope, model_opsets_, nullptr, 0, annotate);
  }

  /// Set when model-local functions nest deeper than the limit (the walk stopped there).
  const std::string& depth_error() const { return depth_error_; }

 private:
  using Opsets = std::map<std::string, int64_t>;

  // A main-graph input: every dim that is not a number is a symbol, its dim_param or, when
  // unnamed, "<input name>:<axis>" (docs/symbolic-shapes.md).
  Value MainInput(const onnx::ValueInfoProto& vi) {
    Value v;
    if (!vi.has_type()) return WithOrigin(std::move(v), Origin::Kind::kGraphInput, vi.name());
    if (!vi.type().has_tensor_type()) {
      v.full_type = &vi.type();
      return v;
    }
    v.t = DeclaredTensor(vi.type());
    if (!v.t.shape.rank_known) {
      return WithOrigin(std::move(v), Origin::Kind::kGraphInput, vi.name());
    }
    for (size_t axis = 0; axis < v.t.shape.dims.size(); ++axis) {
      Dim& d = v.t.shape.dims[axis];
      if (d.is_unknown()) d = Dim::Symbol(absl::StrCat(vi.name(), ":", axis));
    }
    return v;
  }

  Value WithOrigin(Value v, Origin::Kind kind, const std::string& name,
                   const onnx::NodeProto* node = nullptr) {
    v.origin = static_cast<int32_t>(origins_.size());
    origins_.push_back({kind, node, name});
    return v;
  }

  static std::string DescribeOrigin(const Origin& o) {
    const std::string op = o.node != nullptr ? o.node->op_type() : "";
    switch (o.kind) {
      case Origin::Kind::kGraphInput:
        return absl::StrCat("graph input '", o.name, "' (no shape declared)");
      case Origin::Kind::kCustomOp:
        return absl::StrCat("custom op ", op, " '", o.name, "' (domain ", o.node->domain(),
                            ") with no shape function");
      case Origin::Kind::kDataDependent:
        return absl::StrCat(op, " '", o.name, "' (data-dependent)");
      case Origin::Kind::kMerge:
        return absl::StrCat(op, " '", o.name, "' (its branches or iterations differ in rank)");
      case Origin::Kind::kNode:
        break;
    }
    return absl::StrCat(op, " '", o.name, "' (its output shape is not inferred)");
  }

  // "the shape of 'x' comes from NonZero 'nz' (data-dependent)" for the first input of `node`
  // with an unknown part, or "".
  std::string UnknownSource(const onnx::NodeProto& node, const Scope& scope) const {
    for (const std::string& name : node.input()) {
      const Value* v = name.empty() ? nullptr : scope.Find(name);
      if (v == nullptr || v->origin < 0 || !HasUnknownPart(v->t)) continue;
      return absl::StrCat("the shape of '", name, "' comes from ",
                          DescribeOrigin(origins_[static_cast<size_t>(v->origin)]));
    }
    return "";
  }

  void WalkGraph(const onnx::GraphProto& g, const std::string& path, Scope* scope,
                 const Opsets& opsets, const onnx::NodeProto* caller, int fn_depth,
                 onnx::GraphProto* annotate) {
    // Inputs the caller did not type (If branches have none; Loop/Scan/function bodies are
    // typed from the node) take their declared types.
    scope->Reserve(static_cast<size_t>(g.input_size() + g.initializer_size() + g.node_size()));
    for (const auto& vi : g.input()) {
      if (scope->Local(vi.name()) != nullptr) continue;
      Value v;
      if (vi.has_type()) {
        v.t = DeclaredTensor(vi.type());
        if (!vi.type().has_tensor_type()) v.full_type = &vi.type();
      }
      if (HasUnknownPart(v.t)) v = WithOrigin(std::move(v), Origin::Kind::kGraphInput, vi.name());
      scope->Set(vi.name(), std::move(v));
    }
    for (const auto& t : g.initializer()) {
      Value v;
      v.t = SymTensorOfConstant(t);
      v.constant = &t;
      scope->Set(t.name(), std::move(v));
    }
    std::unordered_map<std::string, const onnx::TypeProto*> declared;
    for (const auto& vi : g.value_info()) {
      if (vi.has_type()) declared[vi.name()] = &vi.type();
    }
    for (const auto& vi : g.output()) {
      if (vi.has_type()) declared[vi.name()] = &vi.type();
    }
    const int64_t opset = DefaultOpset(opsets);
    if (options_.verdicts) {
      size_t broadcasting = 0;
      for (const auto& node : g.node()) {
        broadcasting += ClassifyBroadcastOp(node.op_type(), opset).kind != BroadcastOpKind::kNone;
      }
      out_->nodes.reserve(out_->nodes.size() + broadcasting);
    }
    // The main graph's scope ends with this walk and nobody reads it afterwards (unless it is
    // annotated), so each value is retired after its last use: its shape moves into the
    // tables and the rest is freed. Subgraph and function scopes are read by their callers.
    const bool main = path == "main";
    Liveness live;
    if (main && annotate == nullptr) live = CountUses(g, scope);
    const bool retire = !live.uses.empty();

    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& node = g.node(i);
      if (retire) {
        scope->HintInputs(&node,
                          live.node_ids.ids.data() + live.node_ids.begin[static_cast<size_t>(i)]);
      }
      std::vector<Value> outs =
          VisitNode(node, i, path, *scope, opsets, caller, fn_depth,
                    annotate != nullptr ? annotate->mutable_node(i) : nullptr);
      scope->HintInputs(nullptr, nullptr);
      if (!depth_error_.empty()) return;
      outs.resize(static_cast<size_t>(node.output_size()));
      for (int k = 0; k < node.output_size(); ++k) {
        const std::string& name = node.output(k);
        if (name.empty()) continue;
        Value& v = outs[static_cast<size_t>(k)];
        if (!declared.empty()) {
          if (auto d = declared.find(name); d != declared.end())
            MergeDeclared(*d->second, &v, symbols_);
        }
        v.producer = &node;
        v.producer_index = i;
        if (v.origin < 0 && HasUnknownPart(v.t) && v.full_type == nullptr) {
          v.origin = OriginFor(node, i, *scope);
        }
        if (!retire) {
          scope->Set(name, std::move(v));
          continue;
        }
        // Interned when the uses were counted.
        const int id = live.node_ids.ids[static_cast<size_t>(
            live.node_ids.begin[static_cast<size_t>(i)] + node.input_size() + k)];
        scope->SetAt(id, std::move(v));
        if (static_cast<size_t>(id) >= live.uses.size()) live.uses.resize(id + 1, 0);
        if (live.uses[static_cast<size_t>(id)] == 0) Retire(scope, id);  // never read
      }
      if (!retire) continue;
      // Ids counted up front: no name is looked up again.
      for (int k = live.reads_begin[static_cast<size_t>(i)];
           k < live.reads_begin[static_cast<size_t>(i) + 1]; ++k) {
        const int id = live.reads[static_cast<size_t>(k)];
        if (--live.uses[static_cast<size_t>(id)] == 0) Retire(scope, id);
      }
    }
    if (annotate != nullptr) Annotate(scope, annotate);
    if (main) {
      // What is still live (graph outputs, values nobody consumed).
      for (int id = 0; id < scope->size(); ++id) Retire(scope, id);
      // The tables were filled by this scope's ids; they take its names.
      if (options_.record_shapes && options_.main_tables != nullptr) {
        options_.main_tables->AdoptIds(scope->TakeIds());
        if (retire) options_.main_tables->AdoptNodeIds(std::move(live.node_ids));
      }
      return;
    }
    if (!options_.record_shapes) return;
    auto& shapes = out_->shapes[path];
    shapes.reserve(shapes.size() + static_cast<size_t>(scope->size()));
    for (int id = 0; id < scope->size(); ++id) {
      if (const Value* v = scope->At(id)) shapes[std::string(scope->Name(id))] = v->t.shape;
    }
  }

  // Remaining uses of each name of the main graph's scope (by its ids): node inputs, names
  // the node's subgraphs read from it (released when the node is done), and graph outputs
  // (never released).
  struct Liveness {
    std::vector<int32_t> uses;
    // What node i reads (inputs, then names its subgraphs read): reads[reads_begin[i] ..
    // reads_begin[i + 1]).
    std::vector<int> reads;
    std::vector<int> reads_begin;
    // Each node's input ids, then its output ids (-1: empty name); handed to the tables as
    // their proto::NodeTensorIds.
    proto::NodeTensorIds node_ids;
  };
  static Liveness CountUses(const onnx::GraphProto& g, Scope* scope) {
    Liveness live;
    auto use = [&](const std::string& name) {
      const size_t id = static_cast<size_t>(scope->Id(name));
      if (id >= live.uses.size()) live.uses.resize(id + 1, 0);
      ++live.uses[id];
      return static_cast<int>(id);
    };
    live.uses.reserve(static_cast<size_t>(scope->size()) + static_cast<size_t>(g.node_size()));
    live.reads_begin.reserve(static_cast<size_t>(g.node_size()) + 1);
    live.node_ids.begin.reserve(static_cast<size_t>(g.node_size()) + 1);
    live.node_ids.ids.reserve(3 * static_cast<size_t>(g.node_size()));
    for (const auto& vi : g.output()) use(vi.name());
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& node = g.node(i);
      live.reads_begin.push_back(static_cast<int>(live.reads.size()));
      live.node_ids.begin.push_back(static_cast<int>(live.node_ids.ids.size()));
      for (const std::string& name : node.input()) {
        if (name.empty()) {
          live.node_ids.ids.push_back(-1);
          continue;
        }
        const int id = use(name);
        live.reads.push_back(id);
        live.node_ids.ids.push_back(id);
      }
      for (const std::string& name : node.output()) {
        live.node_ids.ids.push_back(name.empty() ? -1 : scope->Id(name));
      }
      // Each name once per node, however often its bodies read it.
      std::set<std::string> reads;
      proto::ForEachSubgraphRead(node, [&](const std::string& name) { reads.insert(name); });
      for (const std::string& name : reads) live.reads.push_back(use(name));
    }
    live.reads_begin.push_back(static_cast<int>(live.reads.size()));
    live.node_ids.begin.push_back(static_cast<int>(live.node_ids.ids.size()));
    // Every name the scope holds has a counter (an unread initializer retires at its end).
    live.uses.resize(std::max(live.uses.size(), static_cast<size_t>(scope->size())), 0);
    return live;
  }

  // Records the main graph's value `id` (shape and element type; with record_shapes) and frees
  // it. A retired or absent value is skipped.
  void Retire(Scope* scope, int id) {
    Value* v = scope->At(id);
    if (v == nullptr) return;
    if (options_.main_values != nullptr) RecordKnownValue(*scope, id, *v);
    if (options_.record_shapes) {
      if (options_.main_tables != nullptr) {
        // By the scope's id; the tables adopt its names when the walk ends.
        options_.main_tables->Record(id, std::move(v->t.shape), v->t.elem);
      } else {
        const std::string name(scope->Name(id));
        if (v->t.elem != 0) out_->elems.insert_or_assign(name, v->t.elem);
        out_->shapes["main"].insert_or_assign(name, std::move(v->t.shape));
      }
    }
    scope->Drop(id);
  }

  // Records `v` in options_.main_values when every element is a known number.
  void RecordKnownValue(const Scope& scope, int id, const Value& v) {
    // Graph inputs and initializers have no producer: they are not computed.
    if (v.producer == nullptr || !v.t.value || v.t.elem == 0 || !v.t.shape.rank_known ||
        v.t.shape.rank() > 1) {
      return;
    }
    const std::vector<Dim>& elems = *v.t.value;
    if (v.t.shape.rank() == 1 && !v.t.shape.dims[0].Is(static_cast<int64_t>(elems.size()))) {
      return;
    }
    if (v.t.shape.rank() == 0 && elems.size() != 1) return;
    KnownValue known;
    known.elem = v.t.elem;
    if (v.t.shape.rank() == 1) known.dims.push_back(static_cast<int64_t>(elems.size()));
    known.values.reserve(elems.size());
    for (size_t i = 0; i < elems.size(); ++i) {
      if (elems[i].is_value()) {
        known.values.push_back(elems[i].value());
        continue;
      }
      bool found = false;
      for (const auto& [index, value] : v.t.negatives) {
        if (index == static_cast<int64_t>(i)) {
          known.values.push_back(value);
          found = true;
          break;
        }
      }
      if (!found) return;
    }
    options_.main_values->insert_or_assign(std::string(scope.Name(id)), std::move(known));
  }

  // The origin of an unknown part of `node`'s outputs: the node itself when it is a custom op,
  // data-dependent, or none of its inputs has an unknown part; else the first such input's.
  int32_t OriginFor(const onnx::NodeProto& node, int index, const Scope& scope) {
    const bool custom = !node.domain().empty() && node.domain() != "ai.onnx";
    Origin::Kind kind = custom                            ? Origin::Kind::kCustomOp
                        : IsDataDependent(node.op_type()) ? Origin::Kind::kDataDependent
                                                          : Origin::Kind::kNode;
    if (kind == Origin::Kind::kNode) {
      for (const std::string& name : node.input()) {
        const Value* v = name.empty() ? nullptr : scope.Find(name);
        if (v != nullptr && v->origin >= 0 && HasUnknownPart(v->t)) return v->origin;
      }
    }
    origins_.push_back({kind, &node, NodeName(node, index)});
    return static_cast<int32_t>(origins_.size() - 1);
  }

  // --annotate: value_info for every tensor this graph makes (dims as values or the printed
  // symbol/expression), and graph outputs completed where their declared type is silent.
  void Annotate(const Scope* scope, onnx::GraphProto* annotate) {
    std::unordered_set<std::string> declared;  // graph inputs, outputs, initializers
    for (const auto& vi : annotate->input()) declared.insert(vi.name());
    for (const auto& vi : annotate->output()) declared.insert(vi.name());
    for (const auto& t : annotate->initializer()) declared.insert(t.name());
    annotate->clear_value_info();
    for (const auto& node : annotate->node()) {
      for (const std::string& name : node.output()) {
        if (name.empty() || declared.count(name) > 0) continue;
        const Value* v = scope->Local(name);
        if (v == nullptr || v->t.elem == 0) continue;
        auto* vi = annotate->add_value_info();
        vi->set_name(name);
        vi->mutable_type()->mutable_tensor_type()->set_elem_type(v->t.elem);
        WriteShape(v->t.shape, vi->mutable_type());
      }
    }
    for (auto& vi : *annotate->mutable_output()) {
      const Value* v = scope->Local(vi.name());
      if (v == nullptr || !vi.type().has_tensor_type()) continue;
      const SymTensor& t = v->t;
      auto* tt = vi.mutable_type()->mutable_tensor_type();
      if (tt->elem_type() == 0) tt->set_elem_type(t.elem);
      if (!t.shape.rank_known) continue;
      if (!tt->has_shape()) {
        WriteShape(t.shape, vi.mutable_type());
      } else if (tt->shape().dim_size() == t.shape.rank()) {
        for (int k = 0; k < tt->shape().dim_size(); ++k) {
          auto* dim = tt->mutable_shape()->mutable_dim(k);
          const Dim& d = t.shape.dims[static_cast<size_t>(k)];
          if (dim->has_dim_value() || dim->has_dim_param() || d.is_unknown()) continue;
          if (d.is_value()) {
            dim->set_dim_value(d.value());
          } else {
            dim->set_dim_param(d.ToString());
          }
        }
      }
    }
  }

  static int64_t DefaultOpset(const Opsets& opsets) {
    auto it = opsets.find("");
    return it == opsets.end() ? 0 : it->second;
  }

  // Outputs of `node` with nothing known, the node named as the origin.
  std::vector<Value> UnknownOutputs(const onnx::NodeProto& node, int index, Origin::Kind kind) {
    std::vector<Value> outs(static_cast<size_t>(node.output_size()));
    if (!outs.empty()) {
      origins_.push_back({kind, &node, NodeName(node, index)});
      for (Value& v : outs) v.origin = static_cast<int32_t>(origins_.size() - 1);
    }
    return outs;
  }

  std::vector<Value> VisitNode(const onnx::NodeProto& node, int index, const std::string& path,
                               const Scope& scope, const Opsets& opsets,
                               const onnx::NodeProto* caller, int fn_depth,
                               onnx::NodeProto* annotate) {
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    bool has_graphs = false;
    for (const auto& attr : node.attribute()) has_graphs |= attr.has_g() || attr.graphs_size() > 0;
    if (has_graphs) {
      const std::string& op = node.op_type();
      if (default_domain && (op == "If" || op == "Loop" || op == "Scan")) {
        return VisitControlFlow(node, index, path, scope, opsets, caller, fn_depth, annotate);
      }
      // Other ops with subgraphs: the bodies are checked with their declared input types.
      WalkSubgraphs(node, index, path, scope, opsets, caller, fn_depth, annotate, {});
      if (!depth_error_.empty()) return {};
    }
    if (auto fit = functions_.find({node.domain(), node.op_type()}); fit != functions_.end()) {
      return CallFunction(*fit->second, node, index, path, scope, fn_depth);
    }
    if (!default_domain) return UnknownOutputs(node, index, Origin::Kind::kCustomOp);
    const int64_t opset = DefaultOpset(opsets);
    const BroadcastOp info = ClassifyBroadcastOp(node.op_type(), opset);
    if (info.kind != BroadcastOpKind::kNone) {
      return VisitBroadcast(node, index, path, scope, opset, caller, info);
    }
    return Infer(node, index, scope, opset, caller);
  }

  // Records the compact name of the subgraph `sub` entered from `path` through `owner` (a node
  // name) and `part` (an attribute or function name).
  void NameSubgraph(const std::string& path, const std::string& sub, const std::string& owner,
                    const std::string& part) {
    auto parent = short_graphs_.find(path);
    short_graphs_[sub] = parent == short_graphs_.end() || parent->second.empty()
                             ? absl::StrCat(owner, "/", part)
                             : absl::StrCat(parent->second, "/", owner, "/", part);
  }

  // Walks each subgraph of `node` in a scope chained to `scope`; `typed` gives the body
  // inputs' values for an attribute name (Loop/Scan), others keep their declared types.
  // Returns each walked graph's output values, by attribute name.
  std::map<std::string, std::vector<Value>> WalkSubgraphs(
      const onnx::NodeProto& node, int index, const std::string& path, const Scope& scope,
      const Opsets& opsets, const onnx::NodeProto* caller, int fn_depth, onnx::NodeProto* annotate,
      std::map<std::string, std::vector<Value>> typed) {
    std::map<std::string, std::vector<Value>> outputs;
    for (int a = 0; a < node.attribute_size(); ++a) {
      const onnx::AttributeProto& attr = node.attribute(a);
      if (!attr.has_g() && attr.graphs_size() == 0) continue;
      const std::string sub =
          absl::StrCat(path, "/", node.op_type(), " '", NodeName(node, index), "'.", attr.name());
      NameSubgraph(path, sub, NodeName(node, index), ShortAttributeName(attr.name()));
      onnx::AttributeProto* ann = annotate != nullptr ? annotate->mutable_attribute(a) : nullptr;
      auto walk = [&](const onnx::GraphProto& body, const std::string& body_path,
                      onnx::GraphProto* ann_graph, std::vector<Value>* out) {
        Scope inner;
        inner.parent = &scope;
        if (auto it = typed.find(attr.name()); it != typed.end()) {
          for (int k = 0; k < body.input_size() && k < static_cast<int>(it->second.size()); ++k) {
            inner.Set(body.input(k).name(), it->second[static_cast<size_t>(k)]);
          }
        }
        WalkGraph(body, body_path, &inner, opsets, caller, fn_depth, ann_graph);
        if (out == nullptr || !depth_error_.empty()) return;
        for (const auto& vi : body.output()) {
          const Value* v = inner.Find(vi.name());
          Value copy = v != nullptr ? *v : Value();
          if (vi.has_type()) MergeDeclared(vi.type(), &copy, symbols_);
          out->push_back(std::move(copy));
        }
      };
      if (attr.has_g()) {
        walk(attr.g(), sub, ann != nullptr ? ann->mutable_g() : nullptr, &outputs[attr.name()]);
      }
      for (int k = 0; k < attr.graphs_size(); ++k) {
        NameSubgraph(path, absl::StrCat(sub, "[", k, "]"), NodeName(node, index),
                     absl::StrCat(ShortAttributeName(attr.name()), "[", k, "]"));
        walk(attr.graphs(k), absl::StrCat(sub, "[", k, "]"),
             ann != nullptr ? ann->mutable_graphs(k) : nullptr, nullptr);
      }
      if (!depth_error_.empty()) break;
    }
    return outputs;
  }

  // Merges two views of one tensor (If branches; a loop-carried value before and after an
  // iteration): equal dims stay, unequal ones become fresh symbols named after `node`.
  Value MergeValues(const Value& a, const Value& b, const onnx::NodeProto& node, int index,
                    int output) {
    Value r;
    r.t.elem = a.t.elem != 0 ? a.t.elem : b.t.elem;
    if (a.full_type != nullptr) r.full_type = a.full_type;
    if (!a.t.shape.rank_known || !b.t.shape.rank_known || a.t.shape.rank() != b.t.shape.rank()) {
      const Value& unknown = !a.t.shape.rank_known ? a : b;
      if (unknown.origin >= 0 && !unknown.t.shape.rank_known) {
        r.origin = unknown.origin;
      } else {
        r = WithOrigin(std::move(r), Origin::Kind::kMerge, NodeName(node, index), &node);
      }
      return r;
    }
    r.t.shape = Shape::FromDims({});
    r.t.shape.dims.reserve(a.t.shape.dims.size());
    for (size_t axis = 0; axis < a.t.shape.dims.size(); ++axis) {
      const Dim& x = a.t.shape.dims[axis];
      const Dim& y = b.t.shape.dims[axis];
      if (x.is_unknown() || y.is_unknown()) {
        r.t.shape.dims.push_back(Dim::Unknown());
        if (r.origin < 0) r.origin = x.is_unknown() ? a.origin : b.origin;
      } else if (x == y) {
        r.t.shape.dims.push_back(x);
      } else {
        r.t.shape.dims.push_back(
            symbols_.Fresh(NodeName(node, index), output, static_cast<int>(axis)));
      }
    }
    if (a.t.value && b.t.value && *a.t.value == *b.t.value) r.t.value = a.t.value;
    if (a.t.float_value && b.t.float_value && *a.t.float_value == *b.t.float_value) {
      r.t.float_value = a.t.float_value;
    }
    return r;
  }

  // The single known element of a tracked scalar, if any.
  static std::optional<Dim> ScalarValue(const Value* v) {
    if (v == nullptr || !v->t.value || v->t.value->size() != 1) return std::nullopt;
    const Dim& d = v->t.value->front();
    if (d.is_unknown()) return std::nullopt;
    return d;
  }

  // A boolean or integer scalar's constant truth (If/Loop conditions): from the tracked
  // contents, else from a constant tensor's data (bool tensors keep it in int32_data or raw).
  static std::optional<bool> ConstTruth(const Value* v) {
    if (const std::optional<Dim> d = ScalarValue(v); d && d->is_value()) return d->value() != 0;
    if (v == nullptr || v->constant == nullptr) return std::nullopt;
    const onnx::TensorProto& t = *v->constant;
    if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
    int64_t n = 1;
    for (int64_t d : t.dims()) n *= d;
    if (n != 1) return std::nullopt;
    if (t.data_type() == onnx::TensorProto::BOOL || t.data_type() == onnx::TensorProto::INT32) {
      if (t.int32_data_size() == 1) return t.int32_data(0) != 0;
      if (t.raw_data().size() >= 1)
        return t.raw_data().find_first_not_of('\0') != std::string::npos;
    }
    if (t.data_type() == onnx::TensorProto::INT64) {
      if (t.int64_data_size() == 1) return t.int64_data(0) != 0;
      if (t.raw_data().size() == 8)
        return t.raw_data().find_first_not_of('\0') != std::string::npos;
    }
    return std::nullopt;
  }

  // A loop-carried or state value as a body sees it: same type, contents not constant.
  static Value Carried(const Value* v) {
    Value r;
    if (v == nullptr) return r;
    r.t.elem = v->t.elem;
    r.t.shape = v->t.shape;
    r.full_type = v->full_type;
    r.origin = v->origin;
    return r;
  }

  static Shape WithoutAxes(const Shape& s, std::initializer_list<int64_t> axes) {
    if (!s.rank_known) return s;
    for (int64_t a : axes) {
      if (a < 0 || a >= s.rank()) return Shape::UnknownRank();
    }
    Shape r;
    for (int64_t k = 0; k < s.rank(); ++k) {
      if (std::find(axes.begin(), axes.end(), k) == axes.end()) r.dims.push_back(s.dims[k]);
    }
    return r;
  }

  static std::optional<int64_t> AxisAttr(const onnx::NodeProto& node, const std::string& name,
                                         size_t k, const onnx::NodeProto* caller) {
    const onnx::AttributeProto* a = Attr(node, name, caller);
    if (a == nullptr || static_cast<int>(k) >= a->ints_size()) return 0;
    return a->ints(static_cast<int>(k));
  }

  // If, Loop and Scan: bodies walked in scopes chained to the enclosing one, outputs from
  // the bodies' outputs (see shape_propagation.h).
  std::vector<Value> VisitControlFlow(const onnx::NodeProto& node, int index,
                                      const std::string& path, const Scope& scope,
                                      const Opsets& opsets, const onnx::NodeProto* caller,
                                      int fn_depth, onnx::NodeProto* annotate) {
    const std::string& op = node.op_type();
    std::vector<const Value*> ins;
    for (const std::string& name : node.input()) {
      ins.push_back(name.empty() ? nullptr : scope.Find(name));
    }
    const int n_out = node.output_size();
    std::vector<Value> outs(static_cast<size_t>(n_out));
    const std::string name = NodeName(node, index);
    if (op == "If") {
      auto branches =
          WalkSubgraphs(node, index, path, scope, opsets, caller, fn_depth, annotate, {});
      if (!depth_error_.empty()) return {};
      std::vector<Value>& then_out = branches["then_branch"];
      std::vector<Value>& else_out = branches["else_branch"];
      const std::optional<bool> cond = ConstTruth(ins.empty() ? nullptr : ins[0]);
      const std::vector<Value>* live = nullptr;
      if (cond) live = *cond ? &then_out : &else_out;
      for (int k = 0; k < n_out; ++k) {
        const size_t kk = static_cast<size_t>(k);
        if (live != nullptr) {
          if (kk < live->size()) outs[kk] = (*live)[kk];
        } else if (kk < then_out.size() && kk < else_out.size()) {
          outs[kk] = MergeValues(then_out[kk], else_out[kk], node, index, k);
        }
      }
      return outs;
    }
    if (op == "Loop") {
      // Inputs: M, cond, carried...; body: (iteration, cond, carried...) ->
      // (cond, carried..., scan outputs...).
      const size_t carried = ins.size() >= 2 ? ins.size() - 2 : 0;
      std::vector<Value> body_in(2 + carried);
      body_in[0].t.elem = onnx::TensorProto::INT64;
      body_in[0].t.shape = Shape::FromDims({});
      body_in[1].t.elem = onnx::TensorProto::BOOL;
      body_in[1].t.shape = Shape::FromDims({});
      if (ins.size() >= 2 && ins[1] != nullptr) body_in[1].t.value = ins[1]->t.value;
      for (size_t k = 0; k < carried; ++k) body_in[2 + k] = Carried(ins[2 + k]);
      const std::vector<Value> body_out = WalkBody(node, index, path, scope, opsets, caller,
                                                   fn_depth, annotate, &body_in, 2, 1, carried);
      if (!depth_error_.empty()) return {};
      // The trip count is M when nothing can stop the loop early: no condition, or a true one
      // the body passes on unchanged (directly or through Identity) or keeps constant true.
      std::optional<Dim> trip = ScalarValue(ins.empty() ? nullptr : ins[0]);
      if (trip && ins.size() >= 2 && !node.input(1).empty()) {
        const std::optional<bool> initial = ConstTruth(ins[1]);
        bool stays = !body_out.empty() && ConstTruth(&body_out[0]).value_or(false);
        if (const onnx::AttributeProto* b = Attr(node, "body", caller);
            !stays && b != nullptr && b->has_g() && b->g().input_size() >= 2 &&
            b->g().output_size() >= 1) {
          const std::string& cond_in = b->g().input(1).name();
          const std::string& cond_out = b->g().output(0).name();
          stays = cond_out == cond_in;
          for (const auto& n : b->g().node()) {
            if (n.output_size() == 1 && n.output(0) == cond_out) {
              stays = n.op_type() == "Identity" && n.input_size() == 1 && n.input(0) == cond_in;
            }
          }
        }
        if (!(initial.value_or(false) && stays)) trip.reset();
      }
      for (int k = 0; k < n_out; ++k) {
        const size_t kk = static_cast<size_t>(k);
        if (1 + kk >= body_out.size()) break;
        const Value& b = body_out[1 + kk];
        if (kk < carried) {
          outs[kk] = MergeValues(body_in[2 + kk], b, node, index, k);
          continue;
        }
        outs[kk] = Stacked(b, trip ? *trip : symbols_.Fresh(name, k, 0), 0);
      }
      return outs;
    }
    // Scan.
    const int64_t opset = DefaultOpset(opsets);
    const std::optional<int64_t> m = IntAttr(node, "num_scan_inputs", caller);
    const int64_t first = opset < 9 ? 1 : 0;  // Scan-8's sequence_lens
    const int64_t n_state = m ? static_cast<int64_t>(ins.size()) - first - *m : -1;
    if (!m || *m < 1 || n_state < 0) {
      WalkSubgraphs(node, index, path, scope, opsets, caller, fn_depth, annotate, {});
      return UnknownOutputs(node, index, Origin::Kind::kNode);
    }
    std::vector<Value> body_in;
    std::optional<Dim> batch, length;
    auto dim_of = [](const Value* v, int64_t axis) -> std::optional<Dim> {
      if (v == nullptr || !v->t.shape.rank_known) return std::nullopt;
      if (axis < 0) axis += v->t.shape.rank();
      if (axis < 0 || axis >= v->t.shape.rank() || v->t.shape.dims[axis].is_unknown()) {
        return std::nullopt;
      }
      return v->t.shape.dims[axis];
    };
    for (int64_t k = 0; k < n_state; ++k) {
      Value s = Carried(ins[static_cast<size_t>(first + k)]);
      if (opset < 9) s.t.shape = WithoutAxes(s.t.shape, {0});
      body_in.push_back(std::move(s));
    }
    for (int64_t j = 0; j < *m; ++j) {
      const Value* in = ins[static_cast<size_t>(first + n_state + j)];
      Value s = Carried(in);
      if (opset < 9) {
        s.t.shape = WithoutAxes(s.t.shape, {0, 1});
        if (j == 0) batch = dim_of(in, 0), length = dim_of(in, 1);
      } else {
        int64_t axis =
            AxisAttr(node, "scan_input_axes", static_cast<size_t>(j), caller).value_or(0);
        if (s.t.shape.rank_known && axis < 0) axis += s.t.shape.rank();
        if (j == 0) length = dim_of(in, axis);
        s.t.shape = WithoutAxes(s.t.shape, {axis});
      }
      body_in.push_back(std::move(s));
    }
    const std::vector<Value> body_out =
        WalkBody(node, index, path, scope, opsets, caller, fn_depth, annotate, &body_in, 0, 0,
                 static_cast<size_t>(n_state));
    if (!depth_error_.empty()) return {};
    if (!batch && opset < 9) batch = symbols_.Fresh(name, 0, 0);
    for (int k = 0; k < n_out && static_cast<size_t>(k) < body_out.size(); ++k) {
      const size_t kk = static_cast<size_t>(k);
      if (k < n_state) {
        outs[kk] = MergeValues(body_in[kk], body_out[kk], node, index, k);
        if (opset < 9) outs[kk] = Stacked(outs[kk], *batch, 0);
        continue;
      }
      const Dim len = length ? *length : symbols_.Fresh(name, k, opset < 9 ? 1 : 0);
      if (opset < 9) {
        outs[kk] = Stacked(Stacked(body_out[kk], len, 0), *batch, 0);
      } else {
        const int64_t axis =
            AxisAttr(node, "scan_output_axes", static_cast<size_t>(k - n_state), caller)
                .value_or(0);
        outs[kk] = Stacked(body_out[kk], len, axis);
      }
    }
    return outs;
  }

  static bool SameShape(const Value& a, const Value& b) {
    if (!a.t.shape.rank_known || !b.t.shape.rank_known) {
      return !a.t.shape.rank_known && !b.t.shape.rank_known;
    }
    if (a.t.shape.rank() != b.t.shape.rank()) return false;
    for (size_t k = 0; k < a.t.shape.dims.size(); ++k) {
      const Dim& x = a.t.shape.dims[k];
      if (x.is_unknown() || !(x == b.t.shape.dims[k])) return false;
    }
    return true;
  }

  // Walks a Loop/Scan body with `body_in`. When a carried value (body inputs from `in_first`,
  // body outputs from `out_first`, `n` of them) changes shape across an iteration, the body is
  // walked again with those values generalized (changing dims become fresh symbols), and the
  // second walk's verdicts replace the first's: later iterations see the general shapes. Only
  // such loops are walked twice. Returns the body's output values.
  std::vector<Value> WalkBody(const onnx::NodeProto& node, int index, const std::string& path,
                              const Scope& scope, const Opsets& opsets,
                              const onnx::NodeProto* caller, int fn_depth,
                              onnx::NodeProto* annotate, std::vector<Value>* body_in,
                              size_t in_first, size_t out_first, size_t n) {
    const size_t mark = out_->nodes.size();
    const bcast::ConditionSet combined = out_->combined;
    const std::string contradiction = out_->contradiction;
    auto bodies = WalkSubgraphs(node, index, path, scope, opsets, caller, fn_depth, annotate,
                                {{"body", *body_in}});
    std::vector<Value> body_out = std::move(bodies["body"]);
    if (!depth_error_.empty()) return body_out;
    bool changed = false;
    for (size_t k = 0; k < n && out_first + k < body_out.size(); ++k) {
      Value& in = (*body_in)[in_first + k];
      if (SameShape(in, body_out[out_first + k])) continue;
      changed = true;
      const Value general =
          MergeValues(in, body_out[out_first + k], node, index, static_cast<int>(k));
      in = Carried(&general);
    }
    if (!changed) return body_out;
    out_->nodes.resize(mark);
    out_->combined = combined;
    out_->contradiction = contradiction;
    bodies = WalkSubgraphs(node, index, path, scope, opsets, caller, fn_depth, annotate,
                           {{"body", *body_in}});
    return std::move(bodies["body"]);
  }

  // `v` with a new axis of extent `extent` inserted at `axis` (negative: from the end of the
  // result), as Loop/Scan stack per-iteration values.
  static Value Stacked(const Value& v, const Dim& extent, int64_t axis) {
    Value r;
    r.t.elem = v.t.elem;
    r.origin = v.origin;
    if (!v.t.shape.rank_known) {
      r.t.shape = Shape::UnknownRank();
      return r;
    }
    const int64_t rank = v.t.shape.rank() + 1;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) {
      r.t.shape = Shape::UnknownRank();
      return r;
    }
    r.t.shape = v.t.shape;
    r.t.shape.dims.insert(r.t.shape.dims.begin() + axis, extent);
    return r;
  }

  // A non-broadcasting default-domain node: the symbolic shape function, then libonnx for
  // what it leaves unknown.
  std::vector<Value> Infer(const onnx::NodeProto& node, int index, const Scope& scope,
                           int64_t opset, const onnx::NodeProto* caller) {
    const size_t n_out = static_cast<size_t>(node.output_size());
    std::vector<Value> outs(n_out);
    std::vector<const Value*> ins(static_cast<size_t>(node.input_size()), nullptr);
    for (int k = 0; k < node.input_size(); ++k) {
      if (!node.input(k).empty()) ins[static_cast<size_t>(k)] = scope.Find(node.input(k));
    }
    if (node.op_type() == "Constant" && n_out == 1) {
      if (const onnx::AttributeProto* a = Attr(node, "value", caller); a != nullptr && a->has_t()) {
        outs[0].t = SymTensorOfConstant(a->t());
        outs[0].constant = &a->t();
        return outs;
      }
    }
    bool complete = false;
    if (HasShapeFunction(node.op_type())) {
      if (std::optional<std::vector<SymTensor>> r =
              RunShapeFunction(node, index, opset, caller, ins)) {
        complete = r->size() >= n_out;
        for (size_t k = 0; k < n_out && k < r->size(); ++k) {
          outs[k].t = std::move((*r)[k]);
          complete &= node.output(static_cast<int>(k)).empty() || Complete(outs[k].t);
        }
      }
    }
    if (!complete) Fallback(node, ins, caller, &outs);
    return outs;
  }

  // libonnx's per-node inference for what the symbolic functions left unknown. Our dims are
  // passed as dim_param tokens (a symbol's own name; for other expressions a token mapped
  // back afterwards), so they survive the ops libonnx propagates; its "unk__" dims are unknown.
  void Fallback(const onnx::NodeProto& node, const std::vector<const Value*>& ins,
                const onnx::NodeProto* caller, std::vector<Value>* outs) {
    if (IsShapePreserving(node.op_type()) && ins.size() == 1 && outs->size() == 1 &&
        ins[0] != nullptr && ins[0]->full_type == nullptr) {
      FillGaps(ins[0]->t, &(*outs)[0].t);
      return;
    }
    if (!infer_.Supported(node)) return;
    const size_t n_in = ins.size();
    std::vector<onnx::TypeProto> storage(n_in);
    std::vector<const onnx::TypeProto*> types(n_in, nullptr);
    std::vector<const onnx::TensorProto*> data(n_in, nullptr);
    std::vector<onnx::TensorProto> synthesized(n_in);
    std::vector<std::pair<std::string, Dim>> tokens;
    for (size_t k = 0; k < n_in; ++k) {
      const Value* v = ins[k];
      if (v == nullptr) continue;
      data[k] = v->constant;
      if (data[k] == nullptr && Synthesize(v->t, &synthesized[k])) data[k] = &synthesized[k];
      if (v->full_type != nullptr) {
        types[k] = v->full_type;
        continue;
      }
      if (v->t.elem == 0 && !v->t.shape.rank_known) continue;
      auto* tt = storage[k].mutable_tensor_type();
      tt->set_elem_type(v->t.elem);
      if (v->t.shape.rank_known) {
        auto* s = tt->mutable_shape();
        for (const Dim& d : v->t.shape.dims) {
          auto* dim = s->add_dim();
          if (d.is_value()) {
            dim->set_dim_value(d.value());
          } else if (d.is_symbol()) {
            dim->set_dim_param(d.symbol());
          } else if (!d.is_unknown()) {
            std::string token = absl::StrCat("__bcast_dim_", tokens.size());
            dim->set_dim_param(token);
            tokens.emplace_back(std::move(token), d);
          }
        }
      }
      types[k] = &storage[k];
    }
    // Attributes referring to the calling node's (inside a function body) are resolved first.
    const onnx::NodeProto* subject = &node;
    onnx::NodeProto resolved;
    if (caller != nullptr) {
      bool refs = false;
      for (const auto& a : node.attribute()) refs |= !a.ref_attr_name().empty();
      if (refs) {
        resolved = node;
        resolved.clear_attribute();
        for (const auto& a : node.attribute()) {
          const onnx::AttributeProto* r = Attr(node, a.name(), caller);
          if (r == nullptr) continue;
          onnx::AttributeProto* copy = resolved.add_attribute();
          *copy = *r;
          copy->set_name(a.name());
          copy->clear_ref_attr_name();
        }
        subject = &resolved;
      }
    }
    std::vector<onnx::TypeProto> lib;
    if (!infer_.Infer(*subject, types, data, &lib).ok()) return;  // infers nothing, as libonnx
    for (size_t k = 0; k < outs->size() && k < lib.size(); ++k) {
      const onnx::TypeProto& type = lib[k];
      if (type.value_case() == onnx::TypeProto::VALUE_NOT_SET) continue;
      Value& v = (*outs)[k];
      if (!type.has_tensor_type()) {
        owned_types_.push_back(type);
        v.full_type = &owned_types_.back();
        continue;
      }
      SymTensor t;
      t.elem = type.tensor_type().elem_type();
      if (type.tensor_type().has_shape()) {
        t.shape = Shape::FromDims({});
        t.shape.dims.reserve(static_cast<size_t>(type.tensor_type().shape().dim_size()));
        for (const auto& d : type.tensor_type().shape().dim()) {
          t.shape.dims.push_back(FromLibonnx(d, tokens));
        }
      } else {
        t.shape = Shape::UnknownRank();
      }
      FillGaps(t, &v.t);
    }
  }

  // A broadcasting node: shapes and verdict from broadcast/'s rules; the contents of small
  // tracked tensors (shape arithmetic) from the symbolic functions.
  std::vector<Value> VisitBroadcast(const onnx::NodeProto& node, int index, const std::string& path,
                                    const Scope& scope, int64_t opset,
                                    const onnx::NodeProto* caller, const BroadcastOp& info) {
    NodeVerdict v;
    // Shapes only (rewrite passes): the texts that name the node are never read.
    if (options_.verdicts) {
      v.graph = path;
      if (auto it = short_graphs_.find(path); it != short_graphs_.end()) {
        v.short_graph = it->second;
      }
      v.node = NodeName(node, index);
    }
    v.op = node.op_type();
    v.domain = "";
    v.opset = opset;
    int32_t elem = 0;
    std::vector<const Value*> ins;
    bool tracked = false;
    for (const std::string& name : node.input()) {
      v.input_names.push_back(name);
      const Value* t = name.empty() ? nullptr : scope.Find(name);
      ins.push_back(t);
      v.inputs.push_back(t != nullptr ? t->t.shape : Shape::UnknownRank());
      tracked |= t != nullptr && (t->t.value.has_value() || t->t.float_value.has_value() ||
                                  t->t.float_exprs.has_value());
      // Where's condition (input 0) is bool; its result has the type of the other inputs.
      const bool condition = info.kind == BroadcastOpKind::kWhere && v.inputs.size() == 1;
      if (elem == 0 && t != nullptr && !condition) elem = t->t.elem;
    }
    std::vector<std::string> roles;
    BroadcastResult result;
    switch (info.kind) {
      case BroadcastOpKind::kNone:
        return {};
      case BroadcastOpKind::kExpand: {
        roles = {"input", "shape"};
        if (v.inputs.size() != 2) return {};
        v.rule = RuleFamily::kBidirectional;
        v.broadcast_class = "bidirectional";
        // The target: the shape tensor's tracked contents (Expand(x, Shape(y)) gives y's
        // symbolic shape), else a constant read whatever its encoding.
        std::optional<Shape> target;
        if (const Value* s = ins[1];
            s != nullptr && s->t.value && s->t.shape.rank_known && s->t.shape.rank() == 1) {
          bool known = true;
          for (const Dim& d : *s->t.value) known &= !d.is_unknown();
          if (known) target = Shape::FromDims(*s->t.value);
        }
        std::optional<std::vector<int64_t>> constant;
        if (!target && ins[1] != nullptr && ins[1]->constant != nullptr) {
          absl::StatusOr<std::vector<int64_t>> vals =
              proto::ReadIntValues(*ins[1]->constant, model_.base_dir);
          if (vals.ok()) constant = *vals;
        }
        if (constant) {
          bool negative = false;
          for (int64_t d : *constant) negative |= d < 0;
          if (negative) {
            result.verdict = Verdict::kError;
            result.reason = absl::StrCat("negative extent in target shape [",
                                         absl::StrJoin(*constant, ","), "]");
            break;
          }
          target = Shape::OfVector(*constant);
        }
        if (!target) {
          result.verdict = Verdict::kUnknown;
          result.output = Shape::UnknownRank();
          result.reason = "the target shape is not a constant";
          if (const Value* s = ins[1]; s != nullptr && s->producer != nullptr) {
            absl::StrAppend(&result.reason, " ('", v.input_names[1], "' comes from ",
                            s->producer->op_type(), " '", NodeName(*s->producer, s->producer_index),
                            "')");
          }
          v.inputs[1] = Shape::UnknownRank();
        } else {
          v.inputs[1] = *target;
          result = bcast::BroadcastBidirectional(v.inputs[0], *target);
        }
        break;
      }
      default: {
        std::optional<BroadcastResult> decided =
            DecideBroadcast(node, caller, info, options_.verdicts, &v, &roles);
        if (!decided) return {};
        result = *std::move(decided);
        if (options_.lint && options_.verdicts) Lint(opset, info, result, &v);
        if (info.kind == BroadcastOpKind::kWhere) {
          if (const Value* x = ins[1]; x != nullptr) elem = x->t.elem;
        }
        break;
      }
    }
    TakeResult(result, &v);
    Value out;
    out.t.elem = IsBoolResult(v.op) ? onnx::TensorProto::BOOL : elem;
    if (tracked && HasShapeFunction(node.op_type()))
      TrackContents(node, index, opset, caller, ins, &out);
    if (!options_.verdicts) {
      // Shapes only (rewrite passes): no messages, no combined conditions, no verdict list.
      if (v.verdict != Verdict::kError) out.t.shape = std::move(v.output);
      return Single(std::move(out));
    }
    v.message = Describe(v, roles, result);
    if (v.verdict == Verdict::kUnknown) {
      if (std::string source = UnknownSource(node, scope); !source.empty()) {
        absl::StrAppend(&v.message, "; ", source);
      }
    }
    for (const bcast::Clause& clause : v.condition.clauses()) {
      for (const bcast::Atom& atom : clause.atoms) {
        symbol_nodes_[atom.symbol].push_back(v.node);
        if (!atom.is_value()) symbol_nodes_[atom.other].push_back(v.node);
      }
    }
    if (v.verdict == Verdict::kConditional) {
      const bool was_contradictory = out_->combined.contradictory();
      out_->combined.Merge(v.condition);
      if (!was_contradictory && out_->combined.contradictory()) {
        std::vector<std::string> where;
        for (const bcast::Clause& clause : v.condition.clauses()) {
          for (const bcast::Atom& atom : clause.atoms) {
            for (const std::string& n : symbol_nodes_[atom.symbol]) {
              if (std::find(where.begin(), where.end(), n) == where.end()) where.push_back(n);
            }
          }
        }
        out_->contradiction = absl::StrCat(
            "conditions on symbolic dims cannot all hold: ", out_->combined.contradiction(),
            " (nodes ", absl::StrJoin(where, ", "), ")");
      }
    }
    out.t.shape = v.output;
    if (v.verdict == Verdict::kError) out.t.shape = Shape::UnknownRank();
    out_->nodes.push_back(std::move(v));
    return Single(std::move(out));
  }

  static std::vector<Value> Single(Value v) {
    std::vector<Value> outs;
    outs.push_back(std::move(v));
    return outs;
  }

  // The node's symbolic shape function (passes/shape_functions) over the walk's values.
  std::optional<std::vector<SymTensor>> RunShapeFunction(const onnx::NodeProto& node, int index,
                                                         int64_t opset,
                                                         const onnx::NodeProto* caller,
                                                         const std::vector<const Value*>& ins) {
    std::vector<const SymTensor*> sym_ins(ins.size(), nullptr);
    for (size_t k = 0; k < ins.size(); ++k) {
      if (ins[k] != nullptr) sym_ins[k] = &ins[k]->t;
    }
    const std::string name = NodeName(node, index);
    ShapeFnContext ctx;
    ctx.node = &node;
    ctx.node_name = name;
    ctx.opset = opset;
    ctx.inputs = sym_ins;
    ctx.caller = caller;
    ctx.symbols = &symbols_;
    return InferSymbolic(ctx);
  }

  // The contents of a broadcasting op's output over tracked inputs (Add of shape values,
  // Equal/Where of the exporters' -1 patterns); the shape stays the rules'.
  void TrackContents(const onnx::NodeProto& node, int index, int64_t opset,
                     const onnx::NodeProto* caller, const std::vector<const Value*>& ins,
                     Value* out) {
    std::optional<std::vector<SymTensor>> r = RunShapeFunction(node, index, opset, caller, ins);
    if (!r || r->empty()) return;
    out->t.value = std::move((*r)[0].value);
    out->t.negatives = std::move((*r)[0].negatives);
    out->t.float_value = std::move((*r)[0].float_value);
    out->t.float_exprs = std::move((*r)[0].float_exprs);
    if (out->t.elem == 0) out->t.elem = (*r)[0].elem;
  }

  std::vector<Value> CallFunction(const onnx::FunctionProto& fn, const onnx::NodeProto& call,
                                  int index, const std::string& path, const Scope& scope,
                                  int fn_depth) {
    if (fn_depth >= options_.max_function_depth) {
      // Reported, never skipped silently: the verdicts below this call would be missing.
      if (depth_error_.empty()) {
        depth_error_ =
            absl::StrCat("model-local functions nest deeper than ", options_.max_function_depth,
                         " calls: node '", NodeName(call, index), "' calls function ", fn.domain(),
                         ".", fn.name(), " in ", path);
      }
      return {};
    }
    Opsets opsets = model_opsets_;
    for (const auto& opset : fn.opset_import()) {
      opsets[opset.domain() == "ai.onnx" ? "" : opset.domain()] = opset.version();
    }
    // A function body is walked as a graph whose inputs take the call site's values.
    auto [body_it, fresh] = function_bodies_.try_emplace(&fn);
    if (fresh) *body_it->second.mutable_node() = fn.node();
    Scope inner;
    for (int k = 0; k < fn.input_size() && k < call.input_size(); ++k) {
      const Value* t = call.input(k).empty() ? nullptr : scope.Find(call.input(k));
      if (t != nullptr) inner.Set(fn.input(k), *t);
    }
    const std::string sub = absl::StrCat(path, "/", call.op_type(), " '", NodeName(call, index),
                                         "' (function ", fn.domain(), ".", fn.name(), ")");
    NameSubgraph(path, sub, NodeName(call, index), fn.name());
    WalkGraph(body_it->second, sub, &inner, opsets, &call, fn_depth + 1, nullptr);
    std::vector<Value> outputs;
    if (!depth_error_.empty()) return outputs;
    for (const std::string& name : fn.output()) {
      const Value* v = inner.Local(name);
      outputs.push_back(v == nullptr ? Value() : *v);
    }
    return outputs;
  }

  const proto::Model& model_;
  const AnalysisOptions& options_;
  Analysis* out_;
  proto::NodeInference infer_;
  Opsets model_opsets_;
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto*> functions_;
  std::unordered_map<const onnx::FunctionProto*, onnx::GraphProto> function_bodies_;
  std::map<std::string, std::vector<std::string>> symbol_nodes_;
  FreshSymbols symbols_;
  std::vector<Origin> origins_;
  std::deque<onnx::TypeProto> owned_types_;  // non-tensor types libonnx inferred
  std::string depth_error_;
  // The compact form of every subgraph path walked (NodeVerdict::short_graph); "main" is "".
  std::unordered_map<std::string, std::string> short_graphs_;
};

}  // namespace

int64_t Analysis::CountVerdict(bcast::Verdict v) const {
  int64_t n = 0;
  for (const NodeVerdict& node : nodes) n += node.verdict == v;
  return n;
}

bool Analysis::HasError() const {
  return CountVerdict(bcast::Verdict::kError) > 0 || !contradiction.empty();
}

absl::StatusOr<Analysis> AnalyzeBroadcasts(const proto::Model& model,
                                           const AnalysisOptions& options,
                                           onnx::ModelProto* annotated) {
  Analysis analysis;
  onnx::GraphProto* annotate = nullptr;
  if (annotated != nullptr) {
    *annotated = model.proto;
    annotate = annotated->mutable_graph();
  }
  Analyzer analyzer(model, options, &analysis);
  analyzer.Run(annotate);
  if (!analyzer.depth_error().empty()) {
    return absl::UnimplementedError(analyzer.depth_error());
  }
  return analysis;
}

}  // namespace onnx_bcast::passes
