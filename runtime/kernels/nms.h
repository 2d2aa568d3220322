// NonMaxSuppression's selection: per batch and class, boxes taken by descending score (ties by
// index) and kept unless their IoU with a kept box exceeds the threshold. Plain arrays of
// doubles; the op converts and validates. Oracle: reference/nms.h.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_NMS_H_
#define ONNX_BCAST_RUNTIME_KERNELS_NMS_H_

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace onnx_bcast::runtime::kernels {

/// NonMaxSuppression's inputs after the tensors (all optional there; these are the defaults).
struct NmsOptions {
  /// Boxes kept per batch and class; <= 0 keeps none.
  int64_t max_output_boxes_per_class = 0;
  double iou_threshold = 0;
  /// When set, boxes must score strictly above `score_threshold`.
  bool has_score_threshold = false;
  double score_threshold = 0;
  /// Boxes are [x_center, y_center, width, height] rather than two corners [y1, x1, y2, x2].
  bool center_point_box = false;
};

/// A box as ordered corners.
struct NmsBox {
  double y1, x1, y2, x2;
};

/// The four values of a box as ordered corners.
inline NmsBox LoadNmsBox(const double* v, bool center) {
  if (center) return {v[1] - v[3] / 2, v[0] - v[2] / 2, v[1] + v[3] / 2, v[0] + v[2] / 2};
  return {std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]), std::max(v[1], v[3])};
}

/// Intersection over union; 0 when the boxes do not overlap or the union is empty.
inline double BoxIou(const NmsBox& a, const NmsBox& b) {
  const double ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const double iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return 0;
  const double inter = ih * iw;
  const double uni = (a.y2 - a.y1) * (a.x2 - a.x1) + (b.y2 - b.y1) * (b.x2 - b.x1) - inter;
  return uni <= 0 ? 0 : inter / uni;
}

/// boxes [batches, n, 4], scores [batches, classes, n]: the selected (batch, class, box)
/// triples, flattened, by batch, then class, then selection order.
inline std::vector<int64_t> NonMaxSuppression(const double* boxes, const double* scores,
                                              int64_t batches, int64_t classes, int64_t n,
                                              const NmsOptions& opts) {
  std::vector<int64_t> selected;
  if (opts.max_output_boxes_per_class <= 0) return selected;
  std::vector<NmsBox> all(static_cast<size_t>(n));
  std::vector<int64_t> order(static_cast<size_t>(n)), kept;
  for (int64_t b = 0; b < batches; ++b) {
    // Corners once per batch: every class reuses them.
    for (int64_t i = 0; i < n; ++i)
      all[i] = LoadNmsBox(boxes + (b * n + i) * 4, opts.center_point_box);
    for (int64_t c = 0; c < classes; ++c) {
      const double* score = scores + (b * classes + c) * n;
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t x, int64_t y) { return score[x] > score[y]; });
      kept.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= opts.max_output_boxes_per_class) break;
        if (opts.has_score_threshold && !(score[i] > opts.score_threshold)) break;
        const bool suppressed = std::any_of(kept.begin(), kept.end(), [&](int64_t k) {
          return BoxIou(all[i], all[k]) > opts.iou_threshold;
        });
        if (!suppressed) kept.push_back(i);
      }
      for (int64_t k : kept) selected.insert(selected.end(), {b, c, k});
    }
  }
  return selected;
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_NMS_H_
