// kernels/nms.h against reference/nms.h on seeded random boxes: both box encodings, flipped
// corners, duplicate boxes and tied scores, empty batches/classes/boxes, every threshold on or
// off and output limits from 0 to more than the boxes.
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/nms.h"
#include "runtime/kernels/reference/nms.h"

namespace onnx_bcast::runtime::kernels {
namespace {

int64_t Below(std::mt19937* rng, int64_t n) { return static_cast<int64_t>((*rng)() % n); }

TEST(NmsKernels, SelectionMatchesReference) {
  std::mt19937 rng(61);
  std::uniform_real_distribution<double> coord(-1, 5), unit(0, 1);
  int64_t total_selected = 0;
  for (int trial = 0; trial < 500; ++trial) {
    // The first case is large; the others have up to 11 boxes, often none.
    const int64_t batches = trial == 0 ? 2 : Below(&rng, 3);
    const int64_t classes = trial == 0 ? 3 : Below(&rng, 3);
    const int64_t n = trial == 0 ? 300 : Below(&rng, 12);
    std::vector<double> boxes(static_cast<size_t>(batches * n * 4));
    for (double& v : boxes) v = coord(rng);
    for (int64_t i = 1; i < batches * n; i += 5) {  // duplicate boxes: IoU exactly 1
      std::copy(boxes.begin() + (i - 1) * 4, boxes.begin() + i * 4, boxes.begin() + i * 4);
    }
    std::vector<double> scores(static_cast<size_t>(batches * classes * n));
    for (double& s : scores) s = Below(&rng, 4) == 0 ? 0.5 : unit(rng);  // ties at 0.5
    NmsOptions opts;
    opts.max_output_boxes_per_class = Below(&rng, n + 3);
    opts.iou_threshold = Below(&rng, 4) == 0 ? 0.0 : unit(rng);
    opts.has_score_threshold = Below(&rng, 2) == 0;
    opts.score_threshold = unit(rng);
    opts.center_point_box = Below(&rng, 2) == 0;
    const std::vector<int64_t> fast =
        NonMaxSuppression(boxes.data(), scores.data(), batches, classes, n, opts);
    const std::vector<int64_t> ref =
        reference::NonMaxSuppression(boxes.data(), scores.data(), batches, classes, n, opts);
    EXPECT_EQ(fast, ref) << "trial " << trial;
    total_selected += static_cast<int64_t>(ref.size()) / 3;
  }
  EXPECT_GT(total_selected, 500);  // the cases do select boxes
}

// The reference on a hand-worked case: two overlapping boxes (IoU 1/3) and a distant one.
TEST(NmsKernels, ReferenceByHand) {
  const std::vector<double> boxes = {0, 0, 2, 2, 0, 1, 2, 3, 10, 10, 11, 11};
  const std::vector<double> scores = {0.9, 0.8, 0.7};
  NmsOptions opts;
  opts.max_output_boxes_per_class = 3;
  opts.iou_threshold = 0.3;
  EXPECT_EQ(reference::NonMaxSuppression(boxes.data(), scores.data(), 1, 1, 3, opts),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
  opts.iou_threshold = 0.5;
  EXPECT_EQ(reference::NonMaxSuppression(boxes.data(), scores.data(), 1, 1, 3, opts),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 1, 0, 0, 2}));
}

}  // namespace
}  // namespace onnx_bcast::runtime::kernels
