// NonMaxSuppression (opset 10, 11): per batch and class, greedy selection of boxes by
// descending score, dropping boxes whose IoU with a kept box exceeds the threshold.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "runtime/ops/nn_common.h"
#include "runtime/ops/op.h"

namespace onnx_bcast::rt {
namespace {

struct Box {
  double y1, x1, y2, x2;
};

// Box `i` of a [N, 4] slice as corners (min, max ordered).
Box LoadBox(const Tensor& boxes, int64_t offset, bool center) {
  double v[4];
  for (int k = 0; k < 4; ++k) v[k] = nn::LoadAsDouble(boxes, offset + k);
  if (center) {  // [x_center, y_center, width, height]
    return {v[1] - v[3] / 2, v[0] - v[2] / 2, v[1] + v[3] / 2, v[0] + v[2] / 2};
  }
  return {std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]), std::max(v[1], v[3])};
}

double Iou(const Box& a, const Box& b) {
  const double ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const double iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return 0;
  const double inter = ih * iw;
  const double uni = (a.y2 - a.y1) * (a.x2 - a.x1) + (b.y2 - b.y1) * (b.x2 - b.x1) - inter;
  return uni <= 0 ? 0 : inter / uni;
}

}  // namespace

absl::Status NonMaxSuppressionOp(OpContext& ctx) {
  absl::StatusOr<const Tensor*> bs = ctx.RequireInput(0);
  if (!bs.ok()) return bs.status();
  absl::StatusOr<const Tensor*> ss = ctx.RequireInput(1);
  if (!ss.ok()) return ss.status();
  const Tensor &boxes = **bs, &scores = **ss;
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
  const int64_t max_out =
      max_t != nullptr && max_t->num_elements() > 0 ? nn::LoadInts(*max_t)[0] : 0;
  const double iou_threshold =
      iou_t != nullptr && iou_t->num_elements() > 0 ? nn::LoadAsDouble(*iou_t, 0) : 0.0;
  const bool has_score = score_t != nullptr && score_t->num_elements() > 0;
  const double score_threshold = has_score ? nn::LoadAsDouble(*score_t, 0) : 0.0;
  const bool center = ctx.node().GetInt("center_point_box", 0) != 0;
  const int64_t batches = boxes.shape()[0], n = boxes.shape()[1], classes = scores.shape()[1];
  std::vector<int64_t> selected;  // triples
  if (max_out > 0) {
    std::vector<Box> all(static_cast<size_t>(n));
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::vector<double> score(static_cast<size_t>(n));
    for (int64_t b = 0; b < batches; ++b) {
      for (int64_t i = 0; i < n; ++i) all[i] = LoadBox(boxes, (b * n + i) * 4, center);
      for (int64_t c = 0; c < classes; ++c) {
        for (int64_t i = 0; i < n; ++i)
          score[i] = nn::LoadAsDouble(scores, (b * classes + c) * n + i);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t x, int64_t y) { return score[x] > score[y]; });
        std::vector<int64_t> kept;
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) >= max_out) break;
          if (has_score && !(score[i] > score_threshold)) break;
          bool suppressed = false;
          for (int64_t k : kept) {
            if (Iou(all[i], all[k]) > iou_threshold) {
              suppressed = true;
              break;
            }
          }
          if (!suppressed) kept.push_back(i);
        }
        for (int64_t k : kept) selected.insert(selected.end(), {b, c, k});
      }
    }
  }
  const int64_t count = static_cast<int64_t>(selected.size()) / 3;
  absl::StatusOr<Tensor*> out = ctx.Allocate(0, DType::kInt64, {count, 3});
  if (!out.ok()) return out.status();
  std::copy(selected.begin(), selected.end(), (*out)->data<int64_t>());
  return absl::OkStatus();
}

}  // namespace onnx_bcast::rt
