// BroadcastPlan construction: the view (broadcast/view.h), then the kernel kind choice.
#include "runtime/broadcast_plan.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/tensor.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {

absl::string_view KernelKindName(KernelKind kind) {
  switch (kind) {
    case KernelKind::kEmpty:
      return "empty";
    case KernelKind::kSameShape:
      return "same_shape";
    case KernelKind::kScalarLeft:
      return "scalar_left";
    case KernelKind::kScalarRight:
      return "scalar_right";
    case KernelKind::kRow:
      return "row";
    case KernelKind::kColumn:
      return "column";
    case KernelKind::kGeneral:
      return "general";
  }
  return "unknown";
}

absl::StatusOr<BroadcastPlan> BroadcastPlan::Create(absl::Span<const int64_t> a,
                                                    absl::Span<const int64_t> b,
                                                    absl::Span<const int64_t> output) {
  const std::vector<int64_t> inputs[] = {std::vector<int64_t>(a.begin(), a.end()),
                                         std::vector<int64_t>(b.begin(), b.end())};
  return Create(inputs, output);
}

absl::StatusOr<BroadcastPlan> BroadcastPlan::Create(absl::Span<const std::vector<int64_t>> inputs,
                                                    absl::Span<const int64_t> output) {
  if (inputs.empty()) return absl::InvalidArgumentError("BroadcastPlan: no inputs");
  BCAST_ASSIGN_OR_RETURN(broadcast::BroadcastView view, broadcast::BroadcastView::Create(inputs, output));
  BroadcastPlan plan(std::move(view));
  plan.input_shapes_.assign(inputs.begin(), inputs.end());
  const size_t n = inputs.size();
  if (plan.output_elements() == 0) {
    plan.kind_ = KernelKind::kEmpty;
    return plan;
  }
  // present[i][d]: input i is not broadcast over collapsed dim d (its stride is not 0).
  const size_t rank = plan.dims().size();
  std::vector<std::vector<bool>> present(n, std::vector<bool>(rank));
  for (size_t i = 0; i < n; ++i) {
    for (size_t d = 0; d < rank; ++d) present[i][d] = plan.strides(static_cast<int>(i))[d] != 0;
  }
  auto is = [&](size_t input, std::initializer_list<bool> pattern) {
    return std::equal(pattern.begin(), pattern.end(), present[input].begin(), present[input].end());
  };
  plan.kind_ = KernelKind::kGeneral;
  bool all_full = true;
  for (size_t i = 0; i < n; ++i) {
    for (size_t d = 0; d < rank; ++d) all_full = all_full && present[i][d];
  }
  if (rank == 0 || all_full) {
    plan.kind_ = KernelKind::kSameShape;
  } else if (n == 2 && rank == 1 && present[0][0] != present[1][0]) {
    // Exactly one input is a repeated element. Both repeated (Min(x, x, y) with x [1] and an
    // output of [50]: the first pair broadcasts to a shape neither has) is the general kind;
    // taking it as scalar-vs-full read the "full" one past its end (found by fuzz_run).
    plan.broadcast_input_ = present[0][0] ? 1 : 0;
    plan.kind_ = present[0][0] ? KernelKind::kScalarRight : KernelKind::kScalarLeft;
  } else if (n == 2 && rank == 2) {
    for (size_t small = 0; small < 2; ++small) {
      const size_t full = 1 - small;
      if (!is(full, {true, true})) continue;
      if (is(small, {false, true})) plan.kind_ = KernelKind::kRow;
      if (is(small, {true, false})) plan.kind_ = KernelKind::kColumn;
      if (plan.kind_ != KernelKind::kGeneral) plan.broadcast_input_ = static_cast<int>(small);
    }
  }
  return plan;
}

std::string BroadcastPlan::DebugString() const {
  std::string out = absl::StrCat("kind=", KernelKindName(kind_), " dims=", ShapeToString(dims()));
  for (int i = 0; i < num_inputs(); ++i) {
    absl::StrAppend(&out, " strides", i, "=", ShapeToString(strides(i)));
  }
  return out;
}

}  // namespace onnx_bcast::runtime
