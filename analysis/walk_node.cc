// One node of the walk (walk.h): a broadcasting op's verdict (broadcast_verdict.h), other ops'
// shapes from their shape functions (shape_functions.h), and what those leave unknown from
// libonnx's per-node inference.
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
#include "analysis/decide_node.h"
#include "analysis/shape_functions.h"
#include "analysis/walk.h"
#include "proto/graph.h"
#include "proto/node_inference.h"
#include "proto/onnx_checks.h"
#include "proto/shapes.h"
#include "proto/tensor_ids.h"

namespace onnx_bcast::analysis::walk {

std::vector<Value> Analyzer::VisitNode(const onnx::NodeProto& node, int index,
                                       const std::string& path, const Scope& scope,
                                       const Opsets& opsets, const onnx::NodeProto* caller,
                                       int fn_depth, onnx::NodeProto* annotate) {
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

std::vector<Value> Analyzer::Infer(const onnx::NodeProto& node, int index, const Scope& scope,
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

void Analyzer::Fallback(const onnx::NodeProto& node, const std::vector<const Value*>& ins,
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

namespace {

// The walk's live values as DecideNode reads them: the node's inputs as the scope resolved
// them, and an Expand's target from what the walk tracked of the shape tensor's contents
// (Expand(x, Shape(y)) gives y's symbolic shape), else from a constant whatever its encoding.
class LiveShapes : public ShapeSource {
 public:
  LiveShapes(const std::vector<const Value*>& ins, const std::string& base_dir)
      : ins_(ins), base_dir_(base_dir) {}
  const Shape* InputShape(int k, const std::string&) const override {
    const Value* t = ins_[static_cast<size_t>(k)];
    return t != nullptr ? &t->t.shape : nullptr;
  }
  ExpandTarget TargetOf(const onnx::NodeProto& node) const override {
    ExpandTarget target;
    const Value* s = ins_[1];
    if (s != nullptr && s->t.value && s->t.shape.rank_known && s->t.shape.rank() == 1) {
      bool known = true;
      for (const Dim& d : *s->t.value) known &= !d.is_unknown();
      if (known) {
        target.shape = Shape::FromDims(*s->t.value);
        return target;
      }
    }
    if (s != nullptr && s->constant != nullptr) {
      absl::StatusOr<std::vector<int64_t>> values = proto::ReadIntValues(*s->constant, base_dir_);
      if (values.ok()) {
        target.values = *std::move(values);
        return target;
      }
    }
    if (s != nullptr && s->producer != nullptr) {
      target.origin = absl::StrCat(" ('", node.input(1), "' comes from ", s->producer->op_type(),
                                   " '", NodeName(*s->producer, s->producer_index), "')");
    }
    return target;
  }

 private:
  const std::vector<const Value*>& ins_;
  const std::string& base_dir_;
};

}  // namespace

std::vector<Value> Analyzer::VisitBroadcast(const onnx::NodeProto& node, int index,
                                            const std::string& path, const Scope& scope,
                                            int64_t opset, const onnx::NodeProto* caller,
                                            const BroadcastOp& info) {
  NodeVerdict v;
  // Shapes only (rewrite passes): the texts that name the node are never read.
  if (options_.verdicts) {
    v.graph = path;
    if (auto it = short_graphs_.find(path); it != short_graphs_.end()) {
      v.short_graph = it->second;
    }
    v.node = NodeName(node, index);
  }
  int32_t elem = 0;
  std::vector<const Value*> ins;
  bool tracked = false;
  for (const std::string& name : node.input()) {
    const Value* t = name.empty() ? nullptr : scope.Find(name);
    // Where's condition (input 0) is bool; its result has the type of the other inputs.
    const bool condition = info.kind == BroadcastOpKind::kWhere && ins.empty();
    ins.push_back(t);
    tracked |= t != nullptr && (t->t.value.has_value() || t->t.float_value.has_value() ||
                                t->t.float_exprs.has_value());
    if (elem == 0 && t != nullptr && !condition) elem = t->t.elem;
  }
  DecideOptions decide;
  decide.caller = caller;
  decide.classify = options_.verdicts;
  decide.describe = options_.verdicts;
  decide.lint = options_.lint && options_.verdicts;
  decide.binary_lints = options_.binary_lints;
  if (!DecideNode(node, opset, LiveShapes(ins, model_.base_dir), &v, decide)) return {};
  if (info.kind == BroadcastOpKind::kWhere) {
    if (const Value* x = ins[1]; x != nullptr) elem = x->t.elem;
  }
  Value out;
  out.t.elem = IsBoolResult(v.op) ? onnx::TensorProto::BOOL : elem;
  if (tracked && HasShapeFunction(node.op_type()))
    TrackContents(node, index, opset, caller, ins, &out);
  if (!options_.verdicts) {
    // Shapes only (rewrite passes): no messages, no combined conditions, no verdict list.
    if (v.verdict != Verdict::kError) out.t.shape = std::move(v.output);
    return Single(std::move(out));
  }
  if (v.verdict == Verdict::kUnknown) {
    if (std::string source = UnknownSource(node, scope); !source.empty()) {
      absl::StrAppend(&v.message, "; ", source);
    }
  }
  for (const broadcast::Clause& clause : v.condition.clauses()) {
    for (const broadcast::Atom& atom : clause.atoms) {
      symbol_nodes_[atom.symbol].push_back(v.node);
      if (!atom.is_value()) symbol_nodes_[atom.other].push_back(v.node);
    }
  }
  if (v.verdict == Verdict::kConditional) {
    const bool was_contradictory = out_->combined.contradictory();
    out_->combined.Merge(v.condition);
    if (!was_contradictory && out_->combined.contradictory()) {
      std::vector<std::string> where;
      for (const broadcast::Clause& clause : v.condition.clauses()) {
        for (const broadcast::Atom& atom : clause.atoms) {
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

std::optional<std::vector<SymTensor>> Analyzer::RunShapeFunction(
    const onnx::NodeProto& node, int index, int64_t opset, const onnx::NodeProto* caller,
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

void Analyzer::TrackContents(const onnx::NodeProto& node, int index, int64_t opset,
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

}  // namespace onnx_bcast::analysis::walk
