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
#include "analysis/walk.h"
#include "proto/graph.h"
#include "proto/node_inference.h"
#include "proto/onnx_checks.h"
#include "proto/shapes.h"
#include "proto/tensor_ids.h"

namespace onnx_bcast::analysis {
namespace walk {

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

Value Analyzer::MainInput(const onnx::ValueInfoProto& vi) {
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

std::string Analyzer::DescribeOrigin(const Origin& o) {
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

std::string Analyzer::UnknownSource(const onnx::NodeProto& node, const Scope& scope) const {
  for (const std::string& name : node.input()) {
    const Value* v = name.empty() ? nullptr : scope.Find(name);
    if (v == nullptr || v->origin < 0 || !HasUnknownPart(v->t)) continue;
    return absl::StrCat("the shape of '", name, "' comes from ",
                        DescribeOrigin(origins_[static_cast<size_t>(v->origin)]));
  }
  return "";
}

void Analyzer::WalkGraph(const onnx::GraphProto& g, const std::string& path, Scope* scope,
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
    std::vector<Value> outs = VisitNode(node, i, path, *scope, opsets, caller, fn_depth,
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

Analyzer::Liveness Analyzer::CountUses(const onnx::GraphProto& g, Scope* scope) {
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

void Analyzer::Retire(Scope* scope, int id) {
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

void Analyzer::RecordKnownValue(const Scope& scope, int id, const Value& v) {
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

int32_t Analyzer::OriginFor(const onnx::NodeProto& node, int index, const Scope& scope) {
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

void Analyzer::Annotate(const Scope* scope, onnx::GraphProto* annotate) {
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
      proto::SetShapeOfType(v->t.shape, vi->mutable_type(), proto::SymbolText::kPrinted);
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
      proto::SetShapeOfType(t.shape, vi.mutable_type(), proto::SymbolText::kPrinted);
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

std::map<std::string, std::vector<Value>> Analyzer::WalkSubgraphs(
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

Value Analyzer::MergeValues(const Value& a, const Value& b, const onnx::NodeProto& node, int index,
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

std::optional<bool> Analyzer::ConstTruth(const Value* v) {
  if (const std::optional<Dim> d = ScalarValue(v); d && d->is_value()) return d->value() != 0;
  if (v == nullptr || v->constant == nullptr) return std::nullopt;
  const onnx::TensorProto& t = *v->constant;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  if (n != 1) return std::nullopt;
  if (t.data_type() == onnx::TensorProto::BOOL || t.data_type() == onnx::TensorProto::INT32) {
    if (t.int32_data_size() == 1) return t.int32_data(0) != 0;
    if (t.raw_data().size() >= 1) return t.raw_data().find_first_not_of('\0') != std::string::npos;
  }
  if (t.data_type() == onnx::TensorProto::INT64) {
    if (t.int64_data_size() == 1) return t.int64_data(0) != 0;
    if (t.raw_data().size() == 8) return t.raw_data().find_first_not_of('\0') != std::string::npos;
  }
  return std::nullopt;
}

Value Analyzer::Carried(const Value* v) {
  Value r;
  if (v == nullptr) return r;
  r.t.elem = v->t.elem;
  r.t.shape = v->t.shape;
  r.full_type = v->full_type;
  r.origin = v->origin;
  return r;
}

Shape Analyzer::WithoutAxes(const Shape& s, std::initializer_list<int64_t> axes) {
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

std::vector<Value> Analyzer::VisitControlFlow(const onnx::NodeProto& node, int index,
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
    auto branches = WalkSubgraphs(node, index, path, scope, opsets, caller, fn_depth, annotate, {});
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
    const std::vector<Value> body_out = WalkBody(node, index, path, scope, opsets, caller, fn_depth,
                                                 annotate, &body_in, 2, 1, carried);
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
      int64_t axis = AxisAttr(node, "scan_input_axes", static_cast<size_t>(j), caller).value_or(0);
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
          AxisAttr(node, "scan_output_axes", static_cast<size_t>(k - n_state), caller).value_or(0);
      outs[kk] = Stacked(body_out[kk], len, axis);
    }
  }
  return outs;
}

bool Analyzer::SameShape(const Value& a, const Value& b) {
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

std::vector<Value> Analyzer::WalkBody(const onnx::NodeProto& node, int index,
                                      const std::string& path, const Scope& scope,
                                      const Opsets& opsets, const onnx::NodeProto* caller,
                                      int fn_depth, onnx::NodeProto* annotate,
                                      std::vector<Value>* body_in, size_t in_first,
                                      size_t out_first, size_t n) {
  const size_t mark = out_->nodes.size();
  const broadcast::ConditionSet combined = out_->combined;
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

Value Analyzer::Stacked(const Value& v, const Dim& extent, int64_t axis) {
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

std::vector<Value> Analyzer::CallFunction(const onnx::FunctionProto& fn,
                                          const onnx::NodeProto& call, int index,
                                          const std::string& path, const Scope& scope,
                                          int fn_depth) {
  if (fn_depth >= options_.max_function_depth) {
    // Reported, never skipped silently: the verdicts below this call would be missing.
    if (depth_error_.empty()) {
      depth_error_ = absl::StrCat(
          "model-local functions nest deeper than ", options_.max_function_depth, " calls: node '",
          NodeName(call, index), "' calls function ", fn.domain(), ".", fn.name(), " in ", path);
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

}  // namespace walk

using broadcast::Dim;
using broadcast::Shape;
using walk::Analyzer;
using walk::Value;

namespace {

// The field of VerdictCounts that counts `v`.
int64_t VerdictCounts::*CountOf(broadcast::Verdict v) {
  switch (v) {
    case broadcast::Verdict::kOk:
      return &VerdictCounts::ok;
    case broadcast::Verdict::kError:
      return &VerdictCounts::error;
    case broadcast::Verdict::kConditional:
      return &VerdictCounts::conditional;
    case broadcast::Verdict::kUnknown:
      break;
  }
  return &VerdictCounts::unknown;
}

}  // namespace

int64_t VerdictCounts::of(broadcast::Verdict v) const { return this->*CountOf(v); }

VerdictCounts Analysis::CountVerdicts() const {
  VerdictCounts counts;
  for (const NodeVerdict& node : nodes) ++(counts.*CountOf(node.verdict));
  return counts;
}

int64_t Analysis::CountVerdict(broadcast::Verdict v) const { return CountVerdicts().of(v); }

bool Analysis::HasError() const {
  return CountVerdict(broadcast::Verdict::kError) > 0 || !contradiction.empty();
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

}  // namespace onnx_bcast::analysis
