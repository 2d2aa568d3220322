// LayerNormalization decomposed (see layernorm_decomposer.h).
#include "passes/layernorm_decomposer.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "proto/graph.h"
#include "proto/graph_structure.h"
#include "targets/form_oracle.h"

namespace onnx_bcast::passes {
namespace {

using broadcast::Shape;

class LayerNormDecomposer {
 public:
  LayerNormDecomposer(RewriteContext* ctx, const targets::TargetProfile& p) : ctx_(ctx), p_(p) {}

  absl::Status Run(int id) {
    proto::GraphEditor& g = ctx_->graph();
    const onnx::NodeProto n = g.node(id);
    if (n.input_size() < 2 || n.output_size() < 1) return absl::OkStatus();
    for (int k = 1; k < n.output_size(); ++k) {
      if (!n.output(k).empty() &&
          (g.IsGraphOutput(n.output(k)) || !g.Consumers(n.output(k)).empty())) {
        return Skip(id, n, "its Mean or InvStdDev output is used");
      }
    }
    int64_t axis = -1;
    float epsilon = 1e-5f;
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.name() == "axis") axis = a.i();
      if (a.name() == "epsilon") epsilon = a.f();
      if (a.name() == "stash_type" && a.i() != 1) return Skip(id, n, "stash_type is not float");
    }
    const Shape x = ctx_->ShapeOf(n.input(0));
    if (!x.rank_known) return Skip(id, n, "the rank of X is unknown");
    if (ctx_->ElemOf(n.input(0)) != onnx::TensorProto::FLOAT)
      return Skip(id, n, "X is not float32");
    const int64_t rank = x.rank();
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return Skip(id, n, "axis out of range");
    // Live: the engine runs it as it is?
    bool decompose = p_.op_rules.count("LayerNormalization") == 0;
    std::string how = "decided by the table (no op.LayerNormalization rule)";
    if (ctx_->options().live != nullptr && ctx_->path() == "main" &&
        proto::IsSingleGraph(ctx_->model().proto)) {
      std::vector<targets::FragmentOperand> ops;
      for (const std::string& in : n.input()) {
        targets::FragmentOperand o;
        o.name = in;
        if (!in.empty()) {
          o.shape = ctx_->ShapeOf(in);
          o.elem = ctx_->ElemOf(in);
          o.constant = g.ConstantValue(in);
        }
        ops.push_back(std::move(o));
      }
      onnx::NodeProto one = n;
      one.mutable_output()->DeleteSubrange(1, one.output_size() - 1);
      if (std::optional<proto::Model> f =
              targets::NodeFragment(ctx_->model(), one, ops, onnx::TensorProto::FLOAT, x);
          f.has_value()) {
        std::vector<absl::StatusOr<targets::LiveVerdict>> v = ctx_->options().live->Decide({&*f});
        if (v.size() == 1 && v[0].ok()) {
          decompose = !v[0]->matches;
          how = absl::StrCat("decided live on ", ctx_->options().live->label(),
                             decompose ? absl::StrCat(": ", v[0]->why) : "");
        }
      }
    }
    if (!decompose) {
      ctx_->Debug(id, absl::StrCat("LayerNormalization '", ctx_->Label(id), "': kept (", how, ")"));
      return absl::OkStatus();
    }
    std::vector<int64_t> axes;
    for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
    Shape reduced = x;
    for (int64_t a : axes) reduced.dims[a] = broadcast::Dim::Value(1);
    const std::string& in = n.input(0);
    const std::string base = n.output(0);
    const int32_t f32 = onnx::TensorProto::FLOAT;
    const std::string mean = Reduce(in, axes, base + "_mean", reduced, id);
    const std::string d = Binary("Sub", in, mean, base + "_centred", x, id);
    const std::string two = Scalar(2.0f, base + "_two");
    const std::string sq = Binary("Pow", d, two, base + "_squared", x, id);
    const std::string var = Reduce(sq, axes, base + "_variance", reduced, id);
    const std::string eps = Scalar(epsilon, base + "_epsilon");
    const std::string ve = Binary("Add", var, eps, base + "_variance_eps", reduced, id);
    const std::string sd = ctx_->InsertNode("Sqrt", {ve}, {}, base + "_stddev", f32, reduced, id);
    const bool bias = n.input_size() > 2 && !n.input(2).empty();
    const std::string normed = Binary("Div", d, sd, base + "_normalized", x, id);
    const std::string scaled =
        bias ? Binary("Mul", normed, n.input(1), base + "_scaled", x, id) : "";
    // The last node writes Y under its own name, so every reader stays as it was.
    onnx::NodeProto last;
    last.set_op_type(bias ? "Add" : "Mul");
    last.set_name(ctx_->FreshName(absl::StrCat(base, "_decomposed")));
    last.add_input(bias ? scaled : normed);
    last.add_input(bias ? n.input(2) : n.input(1));
    last.add_output(base);
    g.InsertBefore(id, std::move(last));
    ++ctx_->stats().nodes_inserted;
    Rewrite r;
    r.action = "converted";
    r.tensor = base;
    r.before = x.ToString();
    r.after = x.ToString();
    r.detail = absl::StrCat("LayerNormalization over axes [", absl::StrJoin(axes, ","),
                            "] as ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul",
                            bias ? ", Add" : "", "; ", how);
    ctx_->Record(id, std::move(r));
    g.RemoveNode(id);
    ++ctx_->stats().nodes_removed;
    ctx_->SetShape(base, f32, x);
    return absl::OkStatus();
  }

 private:
  absl::Status Skip(int id, const onnx::NodeProto& n, const std::string& why) {
    ctx_->Debug(id, absl::StrCat(n.op_type(), " '", ctx_->Label(id), "': not decomposed: ", why));
    return absl::OkStatus();
  }
  std::string Scalar(float v, const std::string& base) {
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_float_data(v);
    const std::string name = ctx_->FreshName(base);
    t.set_name(name);
    ctx_->AllowInitializers();
    ctx_->graph().AddInitializer(std::move(t));
    ctx_->SetShape(name, onnx::TensorProto::FLOAT, Shape::OfVector({}));
    ++ctx_->stats().initializers_rewritten;
    return name;
  }
  std::string Binary(const std::string& op, const std::string& a, const std::string& b,
                     const std::string& base, const Shape& out, int anchor) {
    return ctx_->InsertNode(op, {a, b}, {}, base, onnx::TensorProto::FLOAT, out, anchor);
  }
  // ReduceMean keeping dims: axes as an attribute below opset 18, as an input from 18.
  std::string Reduce(const std::string& x, const std::vector<int64_t>& axes,
                     const std::string& base, const Shape& out, int anchor) {
    onnx::NodeProto node;
    node.set_op_type("ReduceMean");
    node.set_name(ctx_->FreshName(absl::StrCat(base, "_node")));
    node.add_input(x);
    if (ctx_->opset() >= 18) {
      node.add_input(
          ctx_->Int64Constant(axes, absl::StrCat("axes_", absl::StrJoin(axes, "_")), anchor));
    } else {
      proto::AddIntsAttribute(&node, "axes", axes);
    }
    proto::AddIntAttribute(&node, "keepdims", 1);
    const std::string name = ctx_->InsertBuiltNode(std::move(node), base, anchor);
    ctx_->SetShape(name, onnx::TensorProto::FLOAT, out);
    return name;
  }

  RewriteContext* ctx_;
  const targets::TargetProfile& p_;
};

}  // namespace

absl::Status DecomposeLayerNorm(RewriteContext* ctx, const targets::TargetProfile& profile, int id) {
  return LayerNormDecomposer(ctx, profile).Run(id);
}

}  // namespace onnx_bcast::passes
