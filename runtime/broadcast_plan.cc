// BroadcastPlan construction: validation, dim dropping and merging, kernel kind choice.
#include "runtime/broadcast_plan.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/tensor.h"

namespace onnx_bcast::rt {
namespace {

std::string ShapeList(absl::Span<const std::vector<int64_t>> shapes) {
  return absl::StrJoin(shapes, ", ", [](std::string* out, const std::vector<int64_t>& shape) {
    absl::StrAppend(out, ShapeToString(shape));
  });
}

}  // namespace

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
  BroadcastPlan plan;
  plan.output_shape_.assign(output.begin(), output.end());
  plan.input_shapes_.assign(inputs.begin(), inputs.end());
  absl::StatusOr<int64_t> output_elements = ShapeElementCount(output);
  if (!output_elements.ok()) return output_elements.status();
  plan.output_elements_ = *output_elements;

  const size_t out_rank = output.size();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<int64_t>& in = inputs[i];
    absl::StatusOr<int64_t> count = ShapeElementCount(in);
    if (!count.ok()) return count.status();
    plan.input_elements_.push_back(*count);
    bool ok = in.size() <= out_rank;
    for (size_t k = 0; ok && k < in.size(); ++k) {
      const int64_t dim = in[in.size() - 1 - k];
      ok = dim == 1 || dim == output[out_rank - 1 - k];
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", i, " shape ", ShapeToString(in), " does not broadcast to output shape ",
          ShapeToString(output), " (input shapes: ", ShapeList(inputs), ")"));
    }
  }

  const size_t n = inputs.size();
  if (plan.output_elements_ == 0) {
    plan.kind_ = KernelKind::kEmpty;
    plan.dims_ = {0};
    plan.strides_.assign(n, 0);
    return plan;
  }

  // Right-align, drop output dims of 1 (every input is 1 there too), and merge a dim into
  // the previous one when each input is broadcast in both or in neither.
  std::vector<int64_t> dims;
  std::vector<std::vector<bool>> present(n);  // [input][collapsed dim]: not broadcast
  for (size_t d = 0; d < out_rank; ++d) {
    if (output[d] == 1) continue;
    std::vector<bool> column(n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t lead = static_cast<int64_t>(out_rank - inputs[i].size());
      const int64_t k = static_cast<int64_t>(d) - lead;
      column[i] = k >= 0 && inputs[i][k] != 1;
    }
    bool alike = !dims.empty();
    for (size_t i = 0; alike && i < n; ++i) alike = present[i].back() == column[i];
    if (alike) {
      dims.back() *= output[d];
    } else {
      dims.push_back(output[d]);
      for (size_t i = 0; i < n; ++i) present[i].push_back(column[i]);
    }
  }
  const size_t rank = dims.size();
  plan.strides_.assign(n * rank, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t stride = 1;
    for (size_t d = rank; d-- > 0;) {
      if (!present[i][d]) continue;
      plan.strides_[i * rank + d] = stride;
      stride *= dims[d];
    }
  }
  plan.dims_ = std::move(dims);

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
  std::string out = absl::StrCat("kind=", KernelKindName(kind_), " dims=", ShapeToString(dims_));
  for (int i = 0; i < num_inputs(); ++i) {
    absl::StrAppend(&out, " strides", i, "=", ShapeToString(strides(i)));
  }
  return out;
}

}  // namespace onnx_bcast::rt
