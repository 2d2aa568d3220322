// legalize-measured's LayerNorm decomposition (see layernorm.h).
#include "passes/legalize/layernorm.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "passes/legalize/record.h"
#include "proto/graph.h"

namespace onnx_bcast::passes::legalize {
namespace {

using broadcast::Shape;

std::nullopt_t Skip(RewriteContext* ctx, int id, const onnx::NodeProto& n, const std::string& why) {
  ctx->Debug(id, absl::StrCat(n.op_type(), " '", ctx->Label(id), "': not decomposed: ", why));
  return std::nullopt;
}

// A float32 scalar initializer; its name.
std::string Scalar(RewriteContext* ctx, float v, const std::string& base) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_float_data(v);
  const std::string name = ctx->FreshName(base);
  t.set_name(name);
  ctx->AllowInitializers();
  ctx->graph().AddInitializer(std::move(t));
  ctx->SetShape(name, onnx::TensorProto::FLOAT, Shape::OfVector({}));
  ++ctx->stats().initializers_rewritten;
  return name;
}

std::string Binary(RewriteContext* ctx, const std::string& op, const std::string& a,
                   const std::string& b, const std::string& base, const Shape& out, int anchor) {
  return ctx->InsertNode(op, {a, b}, {}, base, onnx::TensorProto::FLOAT, out, anchor);
}

// ReduceMean keeping dims: axes as an attribute below opset 18, as an input from 18.
std::string Reduce(RewriteContext* ctx, const std::string& x, const std::vector<int64_t>& axes,
                   const std::string& base, const Shape& out, int anchor) {
  onnx::NodeProto node;
  node.set_op_type("ReduceMean");
  node.set_name(ctx->FreshName(absl::StrCat(base, "_node")));
  node.add_input(x);
  if (ctx->opset() >= 18) {
    node.add_input(
        ctx->Int64Constant(axes, absl::StrCat("axes_", absl::StrJoin(axes, "_")), anchor));
  } else {
    proto::AddIntsAttribute(&node, "axes", axes);
  }
  proto::AddIntAttribute(&node, "keepdims", 1);
  const std::string name = ctx->InsertBuiltNode(std::move(node), base, anchor);
  ctx->SetShape(name, onnx::TensorProto::FLOAT, out);
  return name;
}

}  // namespace

std::optional<LayerNormPlan> LayerNormCandidate(RewriteContext* ctx, int id) {
  proto::GraphEditor& g = ctx->graph();
  const onnx::NodeProto& n = g.node(id);
  if (n.input_size() < 2 || n.output_size() < 1) return std::nullopt;
  for (int k = 1; k < n.output_size(); ++k) {
    if (!n.output(k).empty() &&
        (g.IsGraphOutput(n.output(k)) || !g.Consumers(n.output(k)).empty())) {
      return Skip(ctx, id, n, "its Mean or InvStdDev output is used");
    }
  }
  LayerNormPlan plan;
  int64_t axis = -1;
  for (const onnx::AttributeProto& a : n.attribute()) {
    if (a.name() == "axis") axis = a.i();
    if (a.name() == "epsilon") plan.epsilon = a.f();
    if (a.name() == "stash_type" && a.i() != 1) return Skip(ctx, id, n, "stash_type is not float");
  }
  plan.x = ctx->ShapeOf(n.input(0));
  if (!plan.x.rank_known) return Skip(ctx, id, n, "the rank of X is unknown");
  if (ctx->ElemOf(n.input(0)) != onnx::TensorProto::FLOAT) {
    return Skip(ctx, id, n, "X is not float32");
  }
  const int64_t rank = plan.x.rank();
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return Skip(ctx, id, n, "axis out of range");
  for (int64_t a = axis; a < rank; ++a) plan.axes.push_back(a);
  return plan;
}

void ApplyLayerNorm(RewriteContext* ctx, int id, const LayerNormPlan& plan,
                    const std::string& how) {
  proto::GraphEditor& g = ctx->graph();
  const onnx::NodeProto n = g.node(id);
  const Shape& x = plan.x;
  const std::vector<int64_t>& axes = plan.axes;
  Shape reduced = x;
  for (int64_t a : axes) reduced.dims[a] = broadcast::Dim::Value(1);
  const std::string& in = n.input(0);
  const std::string base = n.output(0);
  const int32_t f32 = onnx::TensorProto::FLOAT;
  const std::string mean = Reduce(ctx, in, axes, base + "_mean", reduced, id);
  const std::string d = Binary(ctx, "Sub", in, mean, base + "_centred", x, id);
  const std::string two = Scalar(ctx, 2.0f, base + "_two");
  const std::string sq = Binary(ctx, "Pow", d, two, base + "_squared", x, id);
  const std::string var = Reduce(ctx, sq, axes, base + "_variance", reduced, id);
  const std::string eps = Scalar(ctx, plan.epsilon, base + "_epsilon");
  const std::string ve = Binary(ctx, "Add", var, eps, base + "_variance_eps", reduced, id);
  const std::string sd = ctx->InsertNode("Sqrt", {ve}, {}, base + "_stddev", f32, reduced, id);
  const bool bias = n.input_size() > 2 && !n.input(2).empty();
  const std::string normed = Binary(ctx, "Div", d, sd, base + "_normalized", x, id);
  const std::string scaled =
      bias ? Binary(ctx, "Mul", normed, n.input(1), base + "_scaled", x, id) : "";
  // The last node writes Y under its own name, so every reader stays as it was.
  onnx::NodeProto last;
  last.set_op_type(bias ? "Add" : "Mul");
  last.set_name(ctx->FreshName(absl::StrCat(base, "_decomposed")));
  last.add_input(bias ? scaled : normed);
  last.add_input(bias ? n.input(2) : n.input(1));
  last.add_output(base);
  g.InsertBefore(id, std::move(last));
  ++ctx->stats().nodes_inserted;
  RecordRewrite(ctx, id, "converted", base, x.ToString(), x.ToString(),
                absl::StrCat("LayerNormalization over axes [", absl::StrJoin(axes, ","),
                             "] as ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul",
                             bias ? ", Add" : "", "; ", how));
  g.RemoveNode(id);
  ++ctx->stats().nodes_removed;
  ctx->SetShape(base, f32, x);
}

}  // namespace onnx_bcast::passes::legalize
