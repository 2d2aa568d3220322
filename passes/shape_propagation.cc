// Whole-graph shape propagation and broadcast verdicts (see shape_propagation.h).
#include "passes/shape_propagation.h"

#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "passes/broadcast_ops.h"
#include "proto/node_inference.h"
#include "proto/onnx_checks.h"
#include "proto/shapes.h"

namespace onnx_bcast::passes {
namespace {

using bcast::BroadcastResult;
using bcast::RuleFamily;
using bcast::Shape;
using bcast::Verdict;

bool IsBoolResult(const std::string& op) {
  static const std::unordered_set<std::string> kOps = {
      "And", "Or", "Xor", "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"};
  return kOps.count(op) > 0;
}

// A tensor's element type and shape as known during the walk.
struct ValueType {
  int32_t elem = 0;
  Shape shape = Shape::UnknownRank();
};

ValueType FromTypeProto(const onnx::TypeProto& type) {
  ValueType v;
  if (type.has_tensor_type()) v.elem = type.tensor_type().elem_type();
  v.shape = proto::ShapeOfType(type);
  return v;
}

// libonnx names dims it cannot infer "unk__<n>"; they are unknown, not symbols shared with
// anything (two of them would otherwise look like distinct symbols that must broadcast).
ValueType FromInferredType(const onnx::TypeProto& type) {
  ValueType v = FromTypeProto(type);
  for (bcast::Dim& d : v.shape.dims) {
    if (d.is_symbol() && absl::StartsWith(d.symbol(), "unk__")) d = bcast::Dim::Unknown();
  }
  return v;
}

// Names visible in one graph; lookups fall through to the enclosing graph (outer scope).
struct Scope {
  const Scope* parent = nullptr;
  std::unordered_map<std::string, ValueType> values;
  std::unordered_map<std::string, const onnx::TensorProto*> constants;

  const ValueType* Find(const std::string& name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent) {
      auto it = s->values.find(name);
      if (it != s->values.end()) return &it->second;
    }
    return nullptr;
  }
  /// For outputs of Shape nodes (whole shape, known rank): the shape they hold.
  std::unordered_map<std::string, Shape> shape_of;

  const Shape* FindShapeOf(const std::string& name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent) {
      auto it = s->shape_of.find(name);
      if (it != s->shape_of.end()) return &it->second;
    }
    return nullptr;
  }
  const onnx::TensorProto* FindConstant(const std::string& name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent) {
      auto it = s->constants.find(name);
      if (it != s->constants.end()) return it->second;
    }
    return nullptr;
  }
};

std::string ShapeList(const std::vector<std::string>& roles, const std::vector<Shape>& shapes) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < shapes.size(); ++i) {
    parts.push_back(absl::StrCat(i < roles.size() ? roles[i] : absl::StrCat("input ", i), " ",
                                 shapes[i].ToString()));
  }
  if (parts.size() <= 2) return absl::StrJoin(parts, " and ");
  const std::string last = parts.back();
  parts.pop_back();
  return absl::StrCat(absl::StrJoin(parts, ", "), " and ", last);
}

class Analyzer {
 public:
  Analyzer(const proto::Model& model, const AnalysisOptions& options, Analysis* out,
           proto::NodeInference* node_inference = nullptr)
      : model_(model), options_(options), out_(out), infer_(node_inference) {
    for (const auto& opset : model.proto.opset_import()) {
      model_opsets_[opset.domain() == "ai.onnx" ? "" : opset.domain()] = opset.version();
    }
    for (const auto& fn : model.proto.functions()) {
      functions_[{fn.domain(), fn.name()}] = &fn;
    }
  }

  void Run(onnx::GraphProto* graph) {
    Scope scope;
    WalkGraph(graph, "main", &scope, model_opsets_, nullptr, 0);
  }

  /// The fast path (libonnx inference node by node, see AnalyzeBroadcasts): walks `graph`
  /// without changing it; false when a node needs whole-graph inference after all (a declared
  /// type conflicts, a schema's inference fails, a non-tensor type merges), and the caller
  /// then takes the whole-graph path. With `annotated`, writes the value_info there.
  bool RunNodeByNode(const onnx::GraphProto& graph, onnx::GraphProto* annotated) {
    Scope scope;
    for (const auto& vi : graph.value_info()) {
      if (vi.has_type()) declared_[vi.name()] = &vi.type();
    }
    for (const auto& vi : graph.output()) {
      if (vi.has_type()) declared_[vi.name()] = &vi.type();
      graph_outputs_.insert(vi.name());
    }
    for (const auto& vi : graph.input()) {
      if (vi.has_type() && !vi.type().has_tensor_type()) full_types_[vi.name()] = vi.type();
    }
    WalkGraph(const_cast<onnx::GraphProto*>(&graph), "main", &scope, model_opsets_, nullptr, 0,
              annotated);
    return !fast_failed_;
  }

 private:
  using Opsets = std::map<std::string, int64_t>;

  // Resolves an int attribute, following `ref_attr_name` into the calling node's attributes.
  static std::optional<int64_t> IntAttr(const onnx::NodeProto& node, const std::string& name,
                                        const onnx::NodeProto* caller) {
    for (const auto& a : node.attribute()) {
      if (a.name() != name) continue;
      if (!a.ref_attr_name().empty() && caller != nullptr) {
        for (const auto& ca : caller->attribute()) {
          if (ca.name() == a.ref_attr_name()) return ca.i();
        }
        return std::nullopt;
      }
      return a.i();
    }
    return std::nullopt;
  }

  // `annotate_into` (fast path only): where value_info is written; the whole-graph path writes
  // it into `g` itself (the inferred copy).
  void WalkGraph(onnx::GraphProto* g, const std::string& path, Scope* scope, const Opsets& opsets,
                 const onnx::NodeProto* caller, int fn_depth,
                 onnx::GraphProto* annotate_into = nullptr) {
    const bool fast = infer_ != nullptr;
    // Types libonnx inferred for this graph's values (non-broadcasting ops rely on them); in
    // the fast path they are inferred node by node as the walk reaches them.
    std::unordered_map<std::string, ValueType> inferred;
    // Fast path: the current node's inferred outputs, by output slot (no per-tensor map).
    std::vector<std::optional<ValueType>> node_inferred;
    if (!fast) {
      for (const auto& vi : g->value_info()) inferred[vi.name()] = FromInferredType(vi.type());
      for (const auto& vi : g->output()) inferred[vi.name()] = FromInferredType(vi.type());
    }
    for (const auto& vi : g->input()) scope->values[vi.name()] = FromTypeProto(vi.type());
    for (const auto& t : g->initializer()) {
      ValueType v;
      v.elem = t.data_type();
      v.shape = proto::ShapeOfTensor(t);
      scope->values[t.name()] = v;
      scope->constants[t.name()] = &t;
    }
    // Sized once: rehashing and regrowing these dominate large graphs otherwise.
    scope->values.reserve(scope->values.size() + static_cast<size_t>(g->node_size()) +
                          static_cast<size_t>(g->initializer_size()));
    {
      auto oit = opsets.find("");
      const int64_t opset = oit == opsets.end() ? 0 : oit->second;
      size_t broadcasting = 0;
      for (const auto& node : g->node()) {
        broadcasting += ClassifyBroadcastOp(node.op_type(), opset).kind != BroadcastOpKind::kNone;
      }
      out_->nodes.reserve(out_->nodes.size() + broadcasting);
    }

    for (int i = 0; i < g->node_size(); ++i) {
      onnx::NodeProto* node = g->mutable_node(i);
      // Subgraphs first: they see the values defined so far (outer scope).
      for (auto& attr : *node->mutable_attribute()) {
        if (!attr.has_g() && attr.graphs_size() == 0) continue;
        const std::string sub = absl::StrCat(path, "/", node->op_type(), " '", NodeName(*node, i),
                                             "'.", attr.name());
        if (attr.has_g()) {
          Scope inner;
          inner.parent = scope;
          WalkGraph(attr.mutable_g(), sub, &inner, opsets, caller, fn_depth);
        }
        for (int k = 0; k < attr.graphs_size(); ++k) {
          Scope inner;
          inner.parent = scope;
          WalkGraph(attr.mutable_graphs(k), absl::StrCat(sub, "[", k, "]"), &inner, opsets,
                    caller, fn_depth);
        }
      }
      if (node->op_type() == "Shape" && node->input_size() == 1 && node->output_size() == 1) {
        bool whole = true;
        for (const auto& attr : node->attribute()) whole &= attr.name() != "start" && attr.name() != "end";
        const ValueType* in = scope->Find(node->input(0));
        if (whole && in != nullptr && in->shape.rank_known) {
          scope->shape_of[node->output(0)] = in->shape;
        }
      }
      if (node->op_type() == "Constant" && node->output_size() == 1) {
        for (const auto& attr : node->attribute()) {
          if (attr.name() == "value" && attr.has_t()) scope->constants[node->output(0)] = &attr.t();
        }
      }
      std::vector<ValueType> outputs = VisitNode(*node, i, path, *scope, opsets, caller, fn_depth);
      if (fast) {
        bool need = false;
        for (int k = 0; k < node->output_size(); ++k) {
          need |= k >= static_cast<int>(outputs.size()) || !outputs[k].shape.rank_known ||
                  outputs[k].elem == 0;
        }
        for (const std::string& name : node->output()) need |= graph_outputs_.count(name) > 0;
        node_inferred.clear();
        if (need) InferNode(*node, *scope, &node_inferred);
        if (fast_failed_) return;
      }
      auto find_inferred = [&](int k, const std::string& name) -> ValueType* {
        if (fast) {
          return k < static_cast<int>(node_inferred.size()) && node_inferred[k].has_value()
                     ? &*node_inferred[k]
                     : nullptr;
        }
        auto it = inferred.find(name);
        return it == inferred.end() ? nullptr : &it->second;
      };
      for (int k = 0; k < node->output_size(); ++k) {
        const std::string& name = node->output(k);
        if (name.empty()) continue;
        ValueType v;
        if (k < static_cast<int>(outputs.size()) && outputs[k].shape.rank_known) {
          v = std::move(outputs[k]);
          if (v.elem == 0) {
            if (const ValueType* in = find_inferred(k, name)) v.elem = in->elem;
          }
        } else if (ValueType* in = find_inferred(k, name)) {
          v = fast ? std::move(*in) : *in;  // fast: each entry is read once
        }
        scope->values.insert_or_assign(name, std::move(v));
      }
    }
    // For --annotate, write the shapes back as value_info (the whole-graph path writes into
    // its inferred copy `g`; the fast path into `annotate_into` when asked).
    onnx::GraphProto* annotate = fast ? annotate_into : g;
    if (annotate != nullptr) {
      if (fast) {
        // Graph outputs carry libonnx's merge of inferred into declared types.
        for (auto& vi : *annotate->mutable_output()) {
          auto it = merged_outputs_.find(vi.name());
          if (it != merged_outputs_.end()) *vi.mutable_type() = it->second;
        }
      }
      std::unordered_set<std::string> declared;  // graph inputs, outputs, initializers
      for (const auto& vi : annotate->input()) declared.insert(vi.name());
      for (const auto& vi : annotate->output()) declared.insert(vi.name());
      for (const auto& t : annotate->initializer()) declared.insert(t.name());
      annotate->clear_value_info();
      for (const auto& node : annotate->node()) {
        for (const std::string& name : node.output()) {
          if (name.empty() || declared.count(name) > 0) continue;
          auto it = scope->values.find(name);
          if (it == scope->values.end() || it->second.elem == 0) continue;
          auto* vi = annotate->add_value_info();
          vi->set_name(name);
          vi->mutable_type()->mutable_tensor_type()->set_elem_type(it->second.elem);
          proto::SetShapeOfType(it->second.shape, vi->mutable_type());
        }
      }
      for (auto& vi : *annotate->mutable_output()) {
        auto it = scope->values.find(vi.name());
        if (it == scope->values.end() || !it->second.shape.rank_known) continue;
        if (!proto::ShapeOfType(vi.type()).rank_known && vi.type().has_tensor_type()) {
          proto::SetShapeOfType(it->second.shape, vi.mutable_type());
        }
      }
    }
    // Record shapes and (main graph) element types. The main graph's scope ends here, so its
    // shapes move; subgraph and function scopes are still read by their callers.
    if (!options_.record_shapes) return;
    auto& shapes = out_->shapes[path];
    shapes.reserve(shapes.size() + scope->values.size());
    if (path == "main") {
      out_->elems.reserve(scope->values.size());
      for (auto& [name, v] : scope->values) {
        if (v.elem != 0) out_->elems.emplace(name, v.elem);
        shapes.insert_or_assign(name, std::move(v.shape));
      }
      scope->values.clear();
    } else {
      for (const auto& [name, v] : scope->values) shapes[name] = v.shape;
    }
  }

  // Fast path: libonnx's view of `node`'s outputs, written into `inferred` by output slot (merged with declared
  // types the way libonnx merges them). Common shape-preserving ops are answered here; the
  // rest through the op schema's inference function.
  void InferNode(const onnx::NodeProto& node, const Scope& scope,
                 std::vector<std::optional<ValueType>>* inferred) {
    std::vector<onnx::TypeProto> out;
    const std::string& op = node.op_type();
    const int n_in = node.input_size();
    bool native = false;
    if (node.domain().empty() && node.output_size() == 1) {
      if (op == "Constant" && node.attribute_size() == 1 && node.attribute(0).name() == "value" &&
          node.attribute(0).has_t()) {
        const onnx::TensorProto& t = node.attribute(0).t();
        out.resize(1);
        auto* tt = out[0].mutable_tensor_type();
        tt->set_elem_type(t.data_type());
        auto* shape = tt->mutable_shape();
        for (int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
        native = true;
      } else if (n_in == 1 && IsShapePreserving(op) && !node.input(0).empty() &&
                 full_types_.count(node.input(0)) == 0) {
        const ValueType* in = scope.Find(node.input(0));
        out.resize(1);
        if (in != nullptr && in->elem != 0) {
          out[0].mutable_tensor_type()->set_elem_type(in->elem);
          if (in->shape.rank_known) SetScrubbedShape(in->shape, &out[0]);
        }
        native = true;
      }
    }
    if (!native) {
      std::vector<onnx::TypeProto> storage(static_cast<size_t>(n_in));
      std::vector<const onnx::TypeProto*> types(static_cast<size_t>(n_in), nullptr);
      std::vector<const onnx::TensorProto*> data(static_cast<size_t>(n_in), nullptr);
      for (int k = 0; k < n_in; ++k) {
        const std::string& name = node.input(k);
        if (name.empty()) continue;
        data[k] = scope.FindConstant(name);
        if (auto it = full_types_.find(name); it != full_types_.end()) {
          types[k] = &it->second;
          continue;
        }
        const ValueType* v = scope.Find(name);
        if (v == nullptr) {
          // libonnx reads a type declared in value_info even for a name nothing defines.
          if (auto d = declared_.find(name); d != declared_.end()) types[k] = d->second;
          continue;
        }
        if (v->elem == 0 && !v->shape.rank_known) continue;
        storage[k].mutable_tensor_type()->set_elem_type(v->elem);
        if (v->shape.rank_known) SetScrubbedShape(v->shape, &storage[k]);
        types[k] = &storage[k];
      }
      // A failing node infers nothing, as in libonnx's non-strict mode.
      if (!infer_->Infer(node, types, data, &out).ok()) out.clear();
    }
    const onnx::TypeProto none;
    for (int k = 0; k < node.output_size(); ++k) {
      const std::string& name = node.output(k);
      if (name.empty()) continue;
      const onnx::TypeProto& type = k < static_cast<int>(out.size()) ? out[k] : none;
      onnx::TypeProto merged;
      if (auto d = declared_.find(name); d != declared_.end()) {
        merged = *d->second;
        if (!proto::NodeInference::MergeInto(type, &merged).ok()) {
          fast_failed_ = true;
          return;
        }
      } else if (type.value_case() == onnx::TypeProto::VALUE_NOT_SET) {
        continue;  // nothing known, nothing declared
      } else {
        merged = type;
      }
      if (!merged.has_tensor_type()) full_types_[name] = merged;
      if (inferred->size() <= static_cast<size_t>(k)) inferred->resize(static_cast<size_t>(k) + 1);
      (*inferred)[k] = FromInferredType(merged);
      if (graph_outputs_.count(name) > 0) merged_outputs_[name] = std::move(merged);
    }
  }

  // Ops whose libonnx inference copies input 0's type (propagateShapeAndTypeFromFirstInput).
  static bool IsShapePreserving(const std::string& op) {
    static const std::unordered_set<std::string> kOps = {
        "Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal",
        "Floor", "Ceil", "Erf", "Sin", "Cos", "Softsign", "Softplus", "LeakyRelu", "Elu",
        "Selu", "HardSigmoid"};
    return kOps.count(op) > 0;
  }

  // Our symbols derived from a broadcast ("bcast(N,M)") are unknown dims to libonnx.
  static void SetScrubbedShape(const Shape& shape, onnx::TypeProto* type) {
    auto* s = type->mutable_tensor_type()->mutable_shape();
    for (const bcast::Dim& d : shape.dims) {
      auto* dim = s->add_dim();
      if (d.is_value()) dim->set_dim_value(d.value());
      if (d.is_symbol() && d.symbol().find('(') == std::string::npos) {
        dim->set_dim_param(d.symbol());
      }
    }
  }

  static std::string NodeName(const onnx::NodeProto& node, int index) {
    return node.name().empty() ? absl::StrCat(node.op_type(), "#", index) : node.name();
  }

  // Returns the output types this analysis derives (empty: take libonnx's).
  std::vector<ValueType> VisitNode(const onnx::NodeProto& node, int index,
                                   const std::string& path, const Scope& scope,
                                   const Opsets& opsets, const onnx::NodeProto* caller,
                                   int fn_depth) {
    const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    if (auto fit = functions_.find({node.domain(), node.op_type()}); fit != functions_.end()) {
      return CallFunction(*fit->second, node, index, path, scope, fn_depth);
    }
    if (!domain.empty()) return {};
    auto oit = opsets.find("");
    const int64_t opset = oit == opsets.end() ? 0 : oit->second;
    const BroadcastOp info = ClassifyBroadcastOp(node.op_type(), opset);
    if (info.kind == BroadcastOpKind::kNone) return {};

    NodeVerdict v;
    v.graph = path;
    v.node = NodeName(node, index);
    v.op = node.op_type();
    v.domain = domain;
    v.opset = opset;
    int32_t elem = 0;
    for (const std::string& name : node.input()) {
      v.input_names.push_back(name);
      const ValueType* t = name.empty() ? nullptr : scope.Find(name);
      v.inputs.push_back(t != nullptr ? t->shape : Shape::UnknownRank());
      // Where's condition (input 0) is bool; its result has the type of the other inputs.
      const bool condition = info.kind == BroadcastOpKind::kWhere && v.inputs.size() == 1;
      if (elem == 0 && t != nullptr && !condition) elem = t->elem;
    }
    const bool legacy = info.legacy;
    BroadcastResult result;
    std::vector<std::string> roles;
    switch (info.kind) {
      case BroadcastOpKind::kBinary: {
        roles = {"A", "B"};
        if (v.inputs.size() != 2) return {};
        if (legacy) {
          const bool broadcast = IntAttr(node, "broadcast", caller).value_or(0) != 0;
          const std::optional<int64_t> axis = IntAttr(node, "axis", caller);
          v.rule = broadcast ? RuleFamily::kLegacyAxis : RuleFamily::kNone;
          result = bcast::BroadcastLegacyOnnx(v.inputs[0], v.inputs[1], broadcast, axis);
          v.broadcast_class = broadcast ? "legacy-axis" : "same";
          if (broadcast && options_.lint) {
            v.lints.push_back(
                {"legacy-axis",
                 absl::StrCat(v.op, " '", v.node, "': legacy opset-", opset,
                              " broadcast with axis=", axis ? absl::StrCat(*axis) : "default",
                              "; several converters ignore the axis attribute (upgrade with "
                              "'opt --passes upgrade-legacy-broadcast')")});
          }
        } else {
          v.rule = RuleFamily::kNumpy;
          result = bcast::BroadcastNumpy(v.inputs);
          if (options_.verdicts) {
            v.broadcast_class = std::string(bcast::BroadcastClassName(
                bcast::Classify(v.inputs, result.output)));
          }
          if (options_.lint && result.verdict != Verdict::kError) NcnnLint(&v);
        }
        break;
      }
      case BroadcastOpKind::kVariadic:
        roles.clear();
        for (size_t k = 0; k < v.inputs.size(); ++k) roles.push_back(absl::StrCat("data_", k));
        if (v.inputs.empty()) return {};
        if (legacy) {
          v.rule = RuleFamily::kNone;
          result = bcast::BroadcastNone(v.inputs);
          v.broadcast_class = "same";
        } else {
          v.rule = RuleFamily::kNumpy;
          result = bcast::BroadcastNumpy(v.inputs);
          if (options_.verdicts) {
            v.broadcast_class = std::string(bcast::BroadcastClassName(
                bcast::Classify(v.inputs, result.output)));
          }
        }
        break;
      case BroadcastOpKind::kWhere:
        roles = {"condition", "X", "Y"};
        if (v.inputs.size() != 3) return {};
        v.rule = RuleFamily::kNumpy;
        result = bcast::BroadcastNumpy(v.inputs);
        v.broadcast_class =
            std::string(bcast::BroadcastClassName(bcast::Classify(v.inputs, result.output)));
        if (const ValueType* x = scope.Find(v.input_names[1]); x != nullptr) elem = x->elem;
        break;
      case BroadcastOpKind::kPRelu:
        roles = {"X", "slope"};
        if (v.inputs.size() != 2) return {};
        if (legacy) {
          v.rule = RuleFamily::kLegacyAxis;
          v.broadcast_class = "legacy-axis";
          result = bcast::BroadcastLegacyOnnx(v.inputs[0], v.inputs[1], true, 1);
          break;
        }
        v.rule = RuleFamily::kUnidirectional;
        v.broadcast_class = "unidirectional";
        result = bcast::BroadcastUnidirectional(v.inputs[0], v.inputs[1]);
        if (options_.lint) PReluLint(&v);
        break;
      case BroadcastOpKind::kGemm: {
        roles = {"C"};
        if (v.inputs.size() < 3 || v.input_names[2].empty()) return {};
        const Shape& a = v.inputs[0];
        const Shape& b = v.inputs[1];
        Shape mn = Shape::UnknownRank();
        if (a.rank_known && b.rank_known && a.rank() == 2 && b.rank() == 2) {
          const bool ta = IntAttr(node, "transA", caller).value_or(0) != 0;
          const bool tb = IntAttr(node, "transB", caller).value_or(0) != 0;
          mn = Shape::FromDims({a.dims[ta ? 1 : 0], b.dims[tb ? 0 : 1]});
        }
        v.rule = RuleFamily::kUnidirectional;
        v.broadcast_class = "unidirectional";
        const bool legacy_no_broadcast =
            legacy && IntAttr(node, "broadcast", caller).value_or(0) == 0;
        if (legacy_no_broadcast) {
          v.rule = RuleFamily::kNone;
          const Shape shapes[] = {mn, v.inputs[2]};
          result = bcast::BroadcastNone(shapes);
        } else {
          result = bcast::BroadcastUnidirectional(mn, v.inputs[2]);
        }
        // Report C against (M,N) rather than the raw A and B.
        v.inputs = {v.inputs[2], mn};
        v.input_names = {v.input_names[2], absl::StrCat("(M,N) of ", v.input_names[0], "·",
                                                        v.input_names[1])};
        roles = {"C", "(M,N)"};
        break;
      }
      case BroadcastOpKind::kMatMul: {
        roles = {"A", "B"};
        if (v.inputs.size() != 2) return {};
        v.rule = RuleFamily::kMatMul;
        result = bcast::BroadcastMatMul(v.inputs[0], v.inputs[1]);
        v.broadcast_class = "matmul-batch";
        if (v.inputs[0].rank_known && v.inputs[1].rank_known && result.output.rank_known &&
            v.inputs[0].rank() >= 2 && v.inputs[1].rank() >= 2) {
          auto batch = [](const Shape& s) {
            return Shape::FromDims({s.dims.begin(), s.dims.end() - 2});
          };
          const Shape batches[] = {batch(v.inputs[0]), batch(v.inputs[1])};
          v.broadcast_class = absl::StrCat(
              "matmul-batch:",
              std::string(bcast::BroadcastClassName(bcast::Classify(batches, batch(result.output)))));
        }
        break;
      }
      case BroadcastOpKind::kNone:
        return {};
      case BroadcastOpKind::kExpand: {
        roles = {"input", "shape"};
        if (v.inputs.size() != 2) return {};
        v.rule = RuleFamily::kBidirectional;
        v.broadcast_class = "bidirectional";
        if (const Shape* shape_of = scope.FindShapeOf(v.input_names[1]); shape_of != nullptr) {
          // Expand(x, Shape(y)): the target is y's (possibly symbolic) shape.
          v.inputs[1] = *shape_of;
          result = bcast::BroadcastBidirectional(v.inputs[0], *shape_of);
          break;
        }
        const onnx::TensorProto* t = scope.FindConstant(v.input_names[1]);
        std::optional<std::vector<int64_t>> target;
        if (t != nullptr) {
          absl::StatusOr<std::vector<int64_t>> vals = proto::ReadIntValues(*t, model_.base_dir);
          if (vals.ok()) target = *vals;
        }
        if (!target) {
          result.verdict = Verdict::kUnknown;
          result.output = Shape::UnknownRank();
          result.reason = "the target shape is not a constant";
          // libonnx may still know the output shape.
          v.inputs[1] = Shape::UnknownRank();
        } else {
          Shape target_shape = Shape::OfVector(*target);
          bool negative = false;
          for (int64_t d : *target) negative |= d < 0;
          if (negative) {
            result.verdict = Verdict::kError;
            result.reason = absl::StrCat("negative extent in target shape [",
                                         absl::StrJoin(*target, ","), "]");
          } else {
            v.inputs[1] = target_shape;
            result = bcast::BroadcastBidirectional(v.inputs[0], target_shape);
          }
        }
        break;
      }
    }
    v.verdict = result.verdict;
    // A class describes a valid broadcast; a proven error has none.
    if (v.verdict == Verdict::kError) v.broadcast_class = "invalid";
    v.output = result.output;
    v.condition = result.condition;
    ValueType result_type;
    result_type.elem = IsBoolResult(v.op) ? onnx::TensorProto::BOOL : elem;
    if (!options_.verdicts) {
      // Shapes only (rewrite passes): no messages, no combined conditions, no verdict list.
      if (v.verdict != Verdict::kError) result_type.shape = std::move(v.output);
      return {std::move(result_type)};
    }
    v.message = Describe(v, roles, result);
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
        out_->contradiction =
            absl::StrCat("conditions on symbolic dims cannot all hold: ",
                         out_->combined.contradiction(), " (nodes ",
                         absl::StrJoin(where, ", "), ")");
      }
    }
    result_type.shape = v.output;
    if (v.verdict == Verdict::kError) result_type.shape = Shape::UnknownRank();
    out_->nodes.push_back(std::move(v));
    return {result_type};
  }

  std::vector<ValueType> CallFunction(const onnx::FunctionProto& fn, const onnx::NodeProto& call,
                                      int index, const std::string& path, const Scope& scope,
                                      int fn_depth) {
    if (fn_depth >= options_.max_function_depth) return {};
    Opsets opsets = model_opsets_;
    for (const auto& opset : fn.opset_import()) {
      opsets[opset.domain() == "ai.onnx" ? "" : opset.domain()] = opset.version();
    }
    // A function body is a graph whose inputs take the call site's types.
    onnx::GraphProto body;
    *body.mutable_node() = fn.node();
    Scope inner;
    for (int k = 0; k < fn.input_size() && k < call.input_size(); ++k) {
      const ValueType* t = call.input(k).empty() ? nullptr : scope.Find(call.input(k));
      if (t != nullptr) inner.values[fn.input(k)] = *t;
    }
    const std::string sub = absl::StrCat(path, "/", call.op_type(), " '", NodeName(call, index),
                                         "' (function ", fn.domain(), ".", fn.name(), ")");
    WalkGraph(&body, sub, &inner, opsets, &call, fn_depth + 1);
    std::vector<ValueType> outputs;
    for (const std::string& name : fn.output()) {
      auto it = inner.values.find(name);
      outputs.push_back(it == inner.values.end() ? ValueType() : it->second);
    }
    return outputs;
  }

  static std::string Describe(const NodeVerdict& v, const std::vector<std::string>& roles,
                              const BroadcastResult& r) {
    // Most nodes of a large model are fine: their (empty) message costs no allocation.
    if (r.verdict == Verdict::kOk) return "";
    const std::string head = absl::StrCat(v.op, " '", v.node, "'");
    const std::string rule(std::string(bcast::RuleName(v.rule)));
    switch (r.verdict) {
      case Verdict::kOk:
        return "";
      case Verdict::kError:
        if (v.rule == RuleFamily::kUnidirectional && v.inputs.size() == 2) {
          // PRelu lists the target (X) first, Gemm's report lists C first.
          const int b = v.op == "PRelu" ? 1 : 0;
          return absl::StrCat(head, ": ", roles[b], " ", v.inputs[b].ToString(),
                              " is not unidirectionally broadcastable to ", roles[1 - b], " ",
                              v.inputs[1 - b].ToString(), " (",
                              UnidirectionalReason(v.inputs[b], v.inputs[1 - b], r), ")");
        }
        if (v.rule == RuleFamily::kBidirectional) {
          return absl::StrCat(head, ": input ", v.inputs[0].ToString(),
                              " cannot be expanded to shape ", v.inputs[1].ToString(),
                              " (bidirectional rule, ", r.reason, ")");
        }
        if (v.rule == RuleFamily::kLegacyAxis) {
          return absl::StrCat(head, " (opset ", v.opset, ", broadcast=1): B ",
                              v.inputs[1].ToString(), " does not fit A ", v.inputs[0].ToString(),
                              " (legacy-axis rule, ", r.reason, ")");
        }
        if (v.rule == RuleFamily::kNone) {
          return absl::StrCat(head, " (opset ", v.opset, "): ", ShapeList(roles, v.inputs),
                              " must have the same shape (none rule, ", r.reason, ")");
        }
        return absl::StrCat(head, ": ", ShapeList(roles, v.inputs), " are not broadcastable (",
                            rule, " rule, ", r.reason, Culprit(v, roles, r), ")");
      case Verdict::kConditional:
        return absl::StrCat(head, ": ", ShapeList(roles, v.inputs), " broadcast (", rule,
                            " rule) only if ", r.condition.ToString());
      case Verdict::kUnknown:
        return absl::StrCat(head, ": ", ShapeList(roles, v.inputs),
                            ": cannot decide the broadcast (", rule, " rule): ", r.reason);
    }
    return "";
  }

  // The library reports the target's extent first; messages name the broadcast operand
  // first ("slope [3] ... X [2,3,4] (axis 2: 3 vs 4)"), so restate the axis that way.
  static std::string UnidirectionalReason(const Shape& b, const Shape& target,
                                          const BroadcastResult& r) {
    if (r.error_axis < 0 || !b.rank_known || !target.rank_known) return r.reason;
    const int64_t pos = r.error_axis - (target.rank() - b.rank());
    if (pos < 0 || pos >= b.rank() || r.error_axis >= target.rank()) return r.reason;
    return absl::StrCat("axis ", r.error_axis, ": ", b.dims[pos].ToString(), " vs ",
                        target.dims[r.error_axis].ToString());
  }

  // For n-ary errors, names the input whose extent on the failing axis disagrees with most
  // others (on a tie, the later input).
  static std::string Culprit(const NodeVerdict& v, const std::vector<std::string>& roles,
                             const BroadcastResult& r) {
    if (v.inputs.size() < 3 || r.error_axis < 0 || !r.output.rank_known) return "";
    const int64_t rank = r.output.rank();
    std::vector<std::pair<size_t, int64_t>> extents;  // (input, extent) of non-1 extents
    std::map<int64_t, int> votes;
    for (size_t k = 0; k < v.inputs.size(); ++k) {
      const Shape& s = v.inputs[k];
      if (!s.rank_known) continue;
      const int64_t pos = r.error_axis - (rank - s.rank());
      if (pos < 0 || pos >= s.rank() || !s.dims[pos].is_value() || s.dims[pos].Is(1)) continue;
      extents.push_back({k, s.dims[pos].value()});
      ++votes[s.dims[pos].value()];
    }
    if (votes.size() < 2) return "";
    int64_t majority = extents.front().second;
    for (const auto& [extent, count] : votes) {
      if (count > votes[majority]) majority = extent;
    }
    for (auto it = extents.rbegin(); it != extents.rend(); ++it) {
      if (it->second == majority) continue;
      const size_t k = it->first;
      return absl::StrCat("; ", k < roles.size() ? roles[k] : "input", " '", v.input_names[k],
                          "' conflicts");
    }
    return "";
  }

  static void PReluLint(NodeVerdict* v) {
    const Shape& x = v->inputs[0];
    const Shape& slope = v->inputs[1];
    if (!x.rank_known || !slope.rank_known || slope.rank() != 1 || x.rank() < 3) return;
    const bcast::Dim& c = slope.dims[0];
    if (!(x.dims[1] == c)) return;
    const bool last = x.dims.back() == c;
    v->lints.push_back(
        {"prelu-slope-axis",
         absl::StrCat(
             "PRelu '", v->node, "': 1-D slope ", slope.ToString(), " matches dim 1 of X ",
             x.ToString(),
             last ? ": ONNX aligns it to the last axis while OpenVINO and MNN read a 1-D slope "
                    "per-channel; reshape it to [C,1,...] to say which"
                  : ": OpenVINO and MNN accept it per-channel, but ONNX aligns a 1-D slope to "
                    "the last axis; reshape it to [C,1,...]")});
  }

  static void NcnnLint(NodeVerdict* v) {
    if (v->inputs.size() != 2 || !v->inputs[0].rank_known || !v->inputs[1].rank_known) return;
    if (v->inputs[0].rank() == v->inputs[1].rank()) return;
    const bcast::NcnnBinaryForm form = bcast::ClassifyNcnn(v->inputs[0], v->inputs[1]);
    if (form.form == bcast::NcnnForm::kUnsupported || form.matches_numpy) return;
    v->lints.push_back(
        {"ncnn-outer-axis",
         absl::StrCat(v->op, " '", v->node, "': ncnn's ", std::string(bcast::NcnnFormName(form.form)),
                      " broadcast of ", v->inputs[0].ToString(), " and ",
                      v->inputs[1].ToString(),
                      " aligns the lower-rank operand differently from numpy; align ranks "
                      "first ('opt --target ncnn')")});
  }

  const proto::Model& model_;
  const AnalysisOptions& options_;
  Analysis* out_;
  Opsets model_opsets_;
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto*> functions_;
  std::map<std::string, std::vector<std::string>> symbol_nodes_;
  // Fast path state (infer_ non-null).
  proto::NodeInference* infer_ = nullptr;
  bool fast_failed_ = false;
  std::unordered_map<std::string, const onnx::TypeProto*> declared_;  // value_info, outputs
  std::unordered_map<std::string, onnx::TypeProto> full_types_;       // non-tensor values
  std::unordered_set<std::string> graph_outputs_;
  std::unordered_map<std::string, onnx::TypeProto> merged_outputs_;
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

namespace {

// The node-by-node path covers flat default-domain graphs whose every op has a libonnx
// inference function; subgraphs, model-local functions and other domains take the whole-graph
// path (libonnx infers those with context this walk does not rebuild).
bool NodeByNodeApplies(const onnx::ModelProto& model) {
  if (model.functions_size() > 0 || model.ir_version() < 4) return false;
  proto::NodeInference inference(model);
  for (const auto& node : model.graph().node()) {
    if (!inference.Supported(node)) return false;
    for (const auto& attr : node.attribute()) {
      if (attr.has_g() || attr.graphs_size() > 0) return false;
    }
  }
  return true;
}

}  // namespace

bool IsBroadcastingOp(const std::string& op_type) {
  // Any opset: the kind does not depend on it.
  return ClassifyBroadcastOp(op_type, 1).kind != BroadcastOpKind::kNone;
}

absl::StatusOr<Analysis> AnalyzeBroadcasts(const proto::Model& model,
                                           const AnalysisOptions& options,
                                           onnx::ModelProto* annotated) {
  if (!options.whole_graph_inference && NodeByNodeApplies(model.proto)) {
    Analysis analysis;
    proto::NodeInference inference(model.proto);
    Analyzer analyzer(model, options, &analysis, &inference);
    onnx::GraphProto* annotate = nullptr;
    if (annotated != nullptr) {
      *annotated = model.proto;
      annotate = annotated->mutable_graph();
    }
    if (analyzer.RunNodeByNode(model.proto.graph(), annotate)) return analysis;
  }
  Analysis analysis;
  auto work = std::make_unique<onnx::ModelProto>(model.proto);
  if (absl::Status s = proto::InferShapes(work.get(), /*strict=*/false); !s.ok()) {
    // Our rules still run; shapes of other ops are then unknown past the failing point.
    analysis.inference_note = std::string(s.message());
    *work = model.proto;
  }
  Analyzer(model, options, &analysis).Run(work->mutable_graph());
  if (annotated != nullptr) *annotated = std::move(*work);
  return analysis;
}

}  // namespace onnx_bcast::passes
