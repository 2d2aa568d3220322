// Reference NonMaxSuppression: no sort; each round takes the highest-scoring box not yet
// looked at (the lowest index on ties) and keeps it unless a kept box overlaps it too much.
// Quadratic; the oracle for kernels/nms.h in tests.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_NMS_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_NMS_H_

#include <cstdint>
#include <vector>

#include "runtime/kernels/nms.h"

namespace onnx_bcast::runtime::kernels::reference {

/// Same contract as kernels::NonMaxSuppression (scores without NaN).
inline std::vector<int64_t> NonMaxSuppression(const double* boxes, const double* scores,
                                              int64_t batches, int64_t classes, int64_t n,
                                              const NmsOptions& opts) {
  std::vector<int64_t> selected;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      const double* score = scores + (b * classes + c) * n;
      std::vector<bool> seen(static_cast<size_t>(n), false);
      std::vector<int64_t> kept;
      for (int64_t round = 0; round < n; ++round) {
        int64_t best = -1;
        for (int64_t i = 0; i < n; ++i) {
          if (!seen[i] && (best < 0 || score[i] > score[best])) best = i;
        }
        seen[best] = true;
        if (static_cast<int64_t>(kept.size()) >= opts.max_output_boxes_per_class) break;
        if (opts.has_score_threshold && score[best] <= opts.score_threshold) break;
        const NmsBox box = LoadNmsBox(boxes + (b * n + best) * 4, opts.center_point_box);
        bool suppressed = false;
        for (int64_t k : kept) {
          const NmsBox other = LoadNmsBox(boxes + (b * n + k) * 4, opts.center_point_box);
          if (BoxIou(box, other) > opts.iou_threshold) suppressed = true;
        }
        if (!suppressed) kept.push_back(best);
      }
      for (int64_t k : kept) selected.insert(selected.end(), {b, c, k});
    }
  }
  return selected;
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_NMS_H_
