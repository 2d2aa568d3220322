// legalize-measured's view strategy (Plan::use_view): a multidirectional node at static shapes
// computed on a view of its operands: each reshaped to the collapsed broadcast of
// broadcast::BroadcastView (unit axes dropped, adjacent axes that every operand spans or
// broadcasts alike merged), padded with leading 1s to the op's smallest measured rank, the two
// axes of a rank-2 view optionally swapped; the result transposed back and reshaped to the
// node's output shape under the output's own name. Some engines run LayerNorm's
// `[1,T,C] - [1,T,1]` only as `[C,T] - [1,T]`, and `[1,T,C] * [C]` as `[T,C] * [C]`.
// Cost 10, 12 transposed, one more swapped: dearer than any edit, as each inserts a Reshape per
// computed operand and one or two nodes after the node. Guarantees: the same values.
#ifndef ONNX_BCAST_PASSES_LEGALIZE_VIEW_H_
#define ONNX_BCAST_PASSES_LEGALIZE_VIEW_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "passes/legalize/node.h"

namespace onnx_bcast::passes::legalize {

/// The ranks the target measures the op at (its profile's op rule; 0: no bound).
struct OpRanks {
  int64_t min_rank = 0;
  int64_t max_rank = 0;         ///< the op's
  int64_t target_max_rank = 0;  ///< the target's, for every op
};

/// A multidirectional node at static extents, collapsed (broadcast/view.h): what the view
/// and rank-raise plans rearrange.
struct Collapsed {
  std::vector<std::vector<int64_t>> extents;  ///< each operand's, as it is
  std::vector<int64_t> dims;                  ///< the collapsed output's
  std::vector<std::vector<int64_t>> view;     ///< each operand's in the collapsed view
};
/// nullopt for another form, an extent that is not static, or an empty output.
std::optional<Collapsed> Collapse(const Node& node);

/// Appends plan `view` at `cost`, and (where the operands may swap) swapped at one more.
void AddViewPlan(const View& view, int cost, bool can_swap, int* order, std::vector<Plan>* plans);

/// Appends the view plans of `node`.
void AddViewPlans(const Node& node, const OpRanks& ranks, bool can_swap, int* order,
                  std::vector<Plan>* plans);

/// Replaces the node by `plan`'s view of it (see above).
absl::Status ApplyView(Node* node, const Plan& plan);

}  // namespace onnx_bcast::passes::legalize

#endif  // ONNX_BCAST_PASSES_LEGALIZE_VIEW_H_
