// legalize-measured's view strategy (see view.h).
#include "passes/legalize/view.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "broadcast/view.h"
#include "passes/legalize/record.h"
#include "passes/legalize/swap.h"

namespace onnx_bcast::passes::legalize {

using broadcast::Shape;

std::optional<Collapsed> Collapse(const Node& node) {
  if (!node.op.multidirectional()) return std::nullopt;
  const onnx::NodeProto& n = node.ctx->graph().node(node.id);
  const std::optional<std::vector<int64_t>> out = node.output.Extents();
  if (!out) return std::nullopt;
  Collapsed c;
  for (int k = 0; k < n.input_size(); ++k) {
    if (n.input(k).empty()) return std::nullopt;
    std::optional<std::vector<int64_t>> e = node.shapes[k].Extents();
    if (!e) return std::nullopt;
    c.extents.push_back(*std::move(e));
  }
  absl::StatusOr<broadcast::BroadcastView> bv = broadcast::BroadcastView::Create(c.extents, *out);
  if (!bv.ok() || bv->output_elements() == 0) return std::nullopt;
  c.dims = bv->dims();
  for (int k = 0; k < n.input_size(); ++k) {
    std::vector<int64_t> e;
    const absl::Span<const int64_t> strides = bv->strides(k);
    for (int d = 0; d < bv->rank(); ++d) e.push_back(strides[d] != 0 ? c.dims[d] : 1);
    c.view.push_back(std::move(e));
  }
  return c;
}

void AddViewPlan(const View& view, int cost, bool can_swap, int* order, std::vector<Plan>* plans) {
  for (bool swap : {false, true}) {
    if (swap && !can_swap) continue;
    Plan p;
    p.swap = swap;
    p.use_view = true;
    p.view = view;
    if (swap) std::swap(p.view.operands[0], p.view.operands[1]);
    p.cost = cost + (swap ? 1 : 0);
    p.order = (*order)++;
    plans->push_back(std::move(p));
  }
}

void AddViewPlans(const Node& node, const OpRanks& ranks, bool can_swap, int* order,
                  std::vector<Plan>* plans) {
  const std::optional<Collapsed> c = Collapse(node);
  if (!c || c->dims.empty()) return;
  const std::vector<std::vector<int64_t>>& extents = c->extents;
  const std::vector<int64_t>& dims = c->dims;
  const int64_t view_rank = static_cast<int64_t>(dims.size());
  const int64_t rank = std::max<int64_t>(view_rank, ranks.min_rank);
  const auto pad = [rank](std::vector<int64_t> e) {
    e.insert(e.begin(), static_cast<size_t>(rank - static_cast<int64_t>(e.size())), 1);
    return e;
  };
  bool any_constant = false;
  for (bool c : node.constant) any_constant = any_constant || c;
  const size_t count = node.shapes.size();
  for (bool transpose : {false, true}) {
    if (transpose && view_rank != 2) continue;
    // Constants at the view's rank, or with its leading 1s dropped (some engines run a bias
    // only at its own lower rank).
    for (bool low_constants : {false, true}) {
      if (low_constants && !any_constant) continue;
      View v;
      v.transpose = transpose;
      v.output = pad(transpose ? std::vector<int64_t>{dims[1], dims[0]} : dims);
      bool possible = true;
      bool changes = rank != node.output.rank() || transpose;
      for (size_t k = 0; k < count; ++k) {
        std::vector<int64_t> e = c->view[k];
        // A constant is reshaped, never permuted: transposing one with two real axes would
        // need its data moved.
        if (transpose && node.constant[k] && e[0] > 1 && e[1] > 1) possible = false;
        if (transpose) std::swap(e[0], e[1]);
        e = pad(std::move(e));
        if (node.constant[k] && low_constants) {
          while (e.size() > 1 && e.front() == 1) e.erase(e.begin());
        }
        changes = changes || e != extents[k];
        v.operands.push_back(std::move(e));
      }
      if (!possible || !changes) continue;
      AddViewPlan(v, 10 + (transpose ? 2 : 0), can_swap, order, plans);
    }
  }
}

namespace {

// Operand `input` (constant or not) as the view's operand of extents `e`; its name.
std::string ViewOperand(RewriteContext* ctx, int id, const std::string& input, bool constant,
                        bool transpose, const std::vector<int64_t>& e) {
  proto::GraphEditor& g = ctx->graph();
  const Shape shape = Shape::OfVector(e);
  if (constant) {
    // Same data, new dims (a transposed view moves only unit axes of a constant).
    onnx::TensorProto t = *g.ConstantValue(input);
    t.clear_dims();
    for (int64_t d : e) t.add_dims(d);
    const std::string name = ctx->FreshName(absl::StrCat(input, "_view"));
    t.set_name(name);
    ctx->AllowInitializers();
    g.AddInitializer(std::move(t));
    ctx->SetShape(name, ctx->ElemOf(input), shape);
    ++ctx->stats().initializers_rewritten;
    return name;
  }
  if (transpose && e[e.size() - 1] > 1 && e[e.size() - 2] > 1) {
    // Both axes real: reshape to the untransposed view, then Transpose (rank 2 with a padded
    // rank: the reshape drops the padding, the Transpose reverses two axes).
    const std::vector<int64_t> flat = {e[e.size() - 1], e[e.size() - 2]};
    const std::string r = ctx->InsertReshape(input, flat, Shape::OfVector(flat), id);
    std::string name = ctx->InsertNode("Transpose", {r}, {}, absl::StrCat(input, "_transposed"),
                                       ctx->ElemOf(input),
                                       Shape::OfVector({e[e.size() - 2], e[e.size() - 1]}), id);
    if (static_cast<int64_t>(e.size()) > 2) name = ctx->InsertReshape(name, e, shape, id);
    return name;
  }
  return ctx->InsertReshape(input, e, shape, id);
}

}  // namespace

absl::Status ApplyView(Node* node, const Plan& plan) {
  RewriteContext* ctx = node->ctx;
  const int id = node->id;
  proto::GraphEditor& g = ctx->graph();
  const onnx::NodeProto n = g.node(id);
  const View& view = plan.view;
  onnx::NodeProto op = n;
  op.clear_input();
  op.clear_output();
  std::vector<std::string> inputs(n.input().begin(), n.input().end());
  std::vector<bool> constant = node->constant;
  if (plan.swap) {
    op.set_op_type(SwappedOp(n.op_type()));
    std::swap(inputs[0], inputs[1]);
    constant.swap(constant[0], constant[1]);
  }
  const std::string& out_name = n.output(0);
  const int32_t elem = ctx->ElemOf(out_name);
  std::vector<std::string> texts;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::vector<int64_t>& e = view.operands[k];
    op.add_input(ViewOperand(ctx, id, inputs[k], constant[k], view.transpose, e));
    texts.push_back(Shape::OfVector(e).ToString());
  }
  // The op on the view.
  const Shape view_out = Shape::OfVector(view.output);
  std::string result = ctx->FreshName(absl::StrCat(out_name, "_view"));
  op.add_output(result);
  op.set_name(ctx->FreshName(n.name().empty() ? absl::StrCat(n.op_type(), "_view") : n.name()));
  g.InsertBefore(id, std::move(op));
  ++ctx->stats().nodes_inserted;
  ctx->SetShape(result, elem, view_out);
  if (view.transpose) {
    const std::vector<int64_t>& o = view.output;
    std::vector<int64_t> back = {o[o.size() - 1], o[o.size() - 2]};
    if (o.size() > 2)
      result = ctx->InsertReshape(result, {o[o.size() - 2], o[o.size() - 1]},
                                  Shape::OfVector({o[o.size() - 2], o[o.size() - 1]}), id);
    result = ctx->InsertNode("Transpose", {result}, {}, absl::StrCat(out_name, "_view_t"), elem,
                             Shape::OfVector(back), id);
  }
  // Back to the output's shape, under its name.
  onnx::NodeProto reshape;
  reshape.set_op_type("Reshape");
  reshape.set_name(ctx->FreshName(absl::StrCat(out_name, "_reshape")));
  reshape.add_input(result);
  const std::vector<int64_t> out_extents = *node->output.Extents();
  reshape.add_input(ctx->Int64Constant(
      out_extents, absl::StrCat("reshape_shape_", absl::StrJoin(out_extents, "_")), id));
  reshape.add_output(out_name);
  g.InsertBefore(id, std::move(reshape));
  ++ctx->stats().nodes_inserted;
  RecordRewrite(ctx, id, "converted", out_name, node->output.ToString(), view_out.ToString(),
                absl::StrCat("computed as ", plan.swap ? SwappedOp(n.op_type()) : n.op_type(), "(",
                             absl::StrJoin(texts, ", "), ") -> ", view_out.ToString(),
                             view.transpose ? ", transposed back" : "", ", reshaped to ",
                             node->output.ToString()));
  g.RemoveNode(id);  // drops the output's value_info: written again below
  ++ctx->stats().nodes_removed;
  ctx->SetShape(out_name, elem, node->output);
  for (const std::string& in : n.input()) ctx->DropIfUnused(in);
  return absl::OkStatus();
}

}  // namespace onnx_bcast::passes::legalize
