// NonMaxSuppression (opset 10, 11): checks the inputs and reads the thresholds; the greedy
// selection by descending score is kernels/nms.h.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/kernels/nms.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/op.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {

absl::Status NonMaxSuppressionOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* bs, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(const Tensor* ss, ctx.RequireInput(1));
  const Tensor &boxes = *bs, &scores = *ss;
  if (boxes.rank() != 3 || boxes.shape()[2] != 4 || scores.rank() != 3 ||
      scores.shape()[0] != boxes.shape()[0] || scores.shape()[2] != boxes.shape()[1]) {
    return ctx.Error("expects boxes [B, N, 4] and scores [B, C, N]");
  }
  if (!IsFloatingPoint(boxes.dtype()) || !IsFloatingPoint(scores.dtype())) {
    return ctx.Error("boxes and scores must be floating point");
  }
  const Tensor* max_t = ctx.input(2);
  const Tensor* iou_t = ctx.input(3);
  const Tensor* score_t = ctx.input(4);
  kernels::NmsOptions opts;
  if (max_t != nullptr && max_t->num_elements() > 0) {
    opts.max_output_boxes_per_class = nn::LoadInts(*max_t)[0];
  }
  if (iou_t != nullptr && iou_t->num_elements() > 0) {
    opts.iou_threshold = nn::LoadAsDouble(*iou_t, 0);
  }
  opts.has_score_threshold = score_t != nullptr && score_t->num_elements() > 0;
  if (opts.has_score_threshold) opts.score_threshold = nn::LoadAsDouble(*score_t, 0);
  opts.center_point_box = ctx.node().GetInt("center_point_box", 0) != 0;
  const nn::ComputeIn<double> box_values(boxes), score_values(scores);
  const std::vector<int64_t> selected =
      kernels::NonMaxSuppression(box_values.data(), score_values.data(), boxes.shape()[0],
                                 scores.shape()[1], boxes.shape()[1], opts);
  const int64_t count = static_cast<int64_t>(selected.size()) / 3;
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, DType::kInt64, {count, 3}));
  std::copy(selected.begin(), selected.end(), out->data<int64_t>());
  return absl::OkStatus();
}

}  // namespace onnx_bcast::runtime
