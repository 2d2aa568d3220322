// legalize-measured's unsqueeze-as-reshape strategy (see unsqueeze_as_reshape.h).
#include "passes/legalize/unsqueeze_as_reshape.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "passes/legalize/record.h"
#include "targets/form_oracle.h"

namespace onnx_bcast::passes::legalize {
namespace {

onnx::TensorProto Int64Tensor(const std::vector<int64_t>& values) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

}  // namespace

absl::Status LegalizeViews(RewriteContext& ctx) {
  targets::FormOracle* live = ctx.options().live;
  if (live == nullptr || ctx.path() != "main" || ctx.opset() < 13) return absl::OkStatus();
  for (int id = 0; id < ctx.graph().original_node_count(); ++id) {
    if (!ctx.graph().alive(id)) continue;
    const onnx::NodeProto& n = ctx.graph().node(id);
    if ((n.op_type() != "Unsqueeze" && n.op_type() != "Squeeze") ||
        !(n.domain().empty() || n.domain() == "ai.onnx") || n.input_size() != 2 ||
        n.output_size() != 1) {
      continue;
    }
    const broadcast::Shape& in = ctx.ShapeOfInput(id, 0);
    const broadcast::Shape& out = ctx.ShapeOf(n.output(0));
    const std::optional<std::vector<int64_t>> extents = out.Extents();
    const int32_t elem = ctx.ElemOf(n.input(0));
    if (!in.IsFullyKnown() || !extents || elem == 0) continue;
    // The node as it is, and the Reshape it would become, each alone on the engine.
    std::vector<targets::FragmentOperand> as_is(2), reshaped(2);
    as_is[0] = reshaped[0] = targets::FragmentOperand{n.input(0), in, elem, nullptr};
    as_is[1] = targets::FragmentOperand{n.input(1), ctx.ShapeOfInput(id, 1), ctx.ElemOf(n.input(1)),
                                        ctx.graph().ConstantValue(n.input(1))};
    if (as_is[1].constant == nullptr) continue;
    const onnx::TensorProto shape_value = Int64Tensor(*extents);
    reshaped[1] = targets::FragmentOperand{"shape", broadcast::Shape::Of({out.rank()}),
                                           onnx::TensorProto::INT64, &shape_value};
    onnx::NodeProto reshape;
    reshape.set_op_type("Reshape");
    reshape.add_input(n.input(0));
    reshape.add_input("shape");
    reshape.add_output(n.output(0));
    const std::optional<std::vector<absl::StatusOr<targets::LiveVerdict>>> decided =
        targets::DecideReplacement(*live, ctx.model(), n, as_is, reshape, reshaped, elem, out);
    if (!decided) continue;
    const std::vector<absl::StatusOr<targets::LiveVerdict>>& v = *decided;
    if (!targets::OnlyReplacementRuns(v)) {
      if (v.size() == 2 && v[0].ok() && !v[0]->matches) {
        ctx.Debug(id, absl::StrCat(n.op_type(), " '", ctx.Label(id), "': ", live->label(),
                                   " (decided live): ", v[0]->why,
                                   "; the Reshape to a constant shape does not run either"));
      }
      continue;
    }
    const std::string axes = n.input(1);
    const std::string shape = ctx.Int64Constant(
        *extents, absl::StrCat("reshape_shape_", absl::StrJoin(*extents, "_")), id);
    RecordRewrite(&ctx, id, "converted", n.output(0), in.ToString(), out.ToString(),
                  absl::StrCat(n.op_type(), " -> Reshape to [", absl::StrJoin(*extents, ","),
                               "] (decided live on ", live->label(), ": the ", n.op_type(), " ",
                               v[0]->why, ")"));
    onnx::NodeProto* m = ctx.graph().mutable_node(id);
    m->set_op_type("Reshape");
    m->clear_attribute();
    ctx.graph().SetInput(id, 1, shape);
    ctx.DropIfUnused(axes);
  }
  return absl::OkStatus();
}

}  // namespace onnx_bcast::passes::legalize
