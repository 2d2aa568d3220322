// legalize-measured's fold strategy (see fold_node.h).
#include "passes/legalize/fold_node.h"

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "passes/legalize/record.h"
#include "passes/node_evaluation.h"
#include "targets/targets.h"

namespace onnx_bcast::passes::legalize {

bool FoldOffered(const Node& node) {
  RewriteContext* ctx = node.ctx;
  const onnx::NodeProto& n = ctx->graph().node(node.id);
  const int count = n.input_size();
  bool all_constant = count > 0;
  for (int k = 0; k < count; ++k) all_constant = all_constant && node.constant[k];
  return all_constant && ctx->options().evaluator != nullptr &&
         !ctx->graph().IsGraphOutput(n.output(0)) && !ctx->graph().IsUsedBySubgraph(n.output(0)) &&
         n.output_size() == 1 && ctx->path() == "main";
}

absl::Status ApplyFold(Node* node, const ConstantTypes& types) {
  RewriteContext* ctx = node->ctx;
  const int id = node->id;
  proto::GraphEditor& g = ctx->graph();
  const onnx::NodeProto n = g.node(id);
  absl::StatusOr<onnx::TensorProto> value = EvaluateOnConstants(
      *ctx->options().evaluator, ctx->model(), n,
      [&g](const std::string& name) { return g.ConstantValue(name); }, "legalize_measured_fold");
  if (!value.ok()) {
    ctx->Debug(id, absl::StrCat(n.op_type(), " '", ctx->Label(id),
                                "': constant operands not computed: ", value.status().message()));
    return absl::OkStatus();
  }
  if (!types.allowed(value->data_type())) {
    ctx->Debug(id, absl::StrCat(n.op_type(), " '", ctx->Label(id), "': its result has type ",
                                targets::ElementTypeName(value->data_type()), ", which ",
                                types.target, " does not load as a constant"));
    return absl::OkStatus();
  }
  const std::string folded = ctx->FreshName(absl::StrCat(n.output(0), "_folded"));
  onnx::TensorProto t = *std::move(value);
  t.set_name(folded);
  ctx->AllowInitializers();
  g.AddInitializer(std::move(t));
  ctx->SetShape(folded, ctx->ElemOf(n.output(0)), ctx->ShapeOf(n.output(0)));
  const std::vector<proto::Use> uses = g.ConsumerList(n.output(0));
  for (const proto::Use& u : uses) g.SetInput(u.node, u.slot, folded);
  RecordRewrite(ctx, id, "folded", n.output(0), "", node->output.ToString(),
                absl::StrCat("constant operands computed into initializer '", folded, "'"));
  g.RemoveNode(id);
  ++ctx->stats().nodes_removed;
  ++ctx->stats().initializers_rewritten;
  for (const std::string& in : n.input()) ctx->DropIfUnused(in);
  return absl::OkStatus();
}

}  // namespace onnx_bcast::passes::legalize
