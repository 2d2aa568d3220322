// BroadcastView construction: validation, dropping dims of 1, merging, stride-0 strides.
#include "broadcast/view.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/status_macros.h"

namespace onnx_bcast::broadcast {
namespace {

std::string Dims(absl::Span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

absl::StatusOr<int64_t> Count(absl::Span<const int64_t> shape) {
  int64_t count = 1;
  bool overflow = false;
  for (int64_t d : shape) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("negative dim in ", Dims(shape)));
    if (d == 0) return int64_t{0};  // zero wins over any overflow of the other dims
    overflow = overflow || __builtin_mul_overflow(count, d, &count);
  }
  if (overflow) {
    return absl::InvalidArgumentError(absl::StrCat("shape ", Dims(shape), " overflows int64"));
  }
  return count;
}

}  // namespace

absl::StatusOr<BroadcastView> BroadcastView::Create(absl::Span<const int64_t> operand,
                                                    absl::Span<const int64_t> output) {
  const std::vector<int64_t> operands[] = {std::vector<int64_t>(operand.begin(), operand.end())};
  return Create(operands, output);
}

absl::StatusOr<BroadcastView> BroadcastView::Create(absl::Span<const std::vector<int64_t>> operands,
                                                    absl::Span<const int64_t> output) {
  if (operands.empty()) return absl::InvalidArgumentError("broadcast view of no operands");
  BroadcastView view;
  view.output_shape_.assign(output.begin(), output.end());
  BCAST_ASSIGN_OR_RETURN(int64_t output_elements, Count(output));
  view.output_elements_ = output_elements;

  const size_t out_rank = output.size();
  for (size_t i = 0; i < operands.size(); ++i) {
    const std::vector<int64_t>& in = operands[i];
    BCAST_ASSIGN_OR_RETURN(int64_t count, Count(in));
    view.operand_elements_.push_back(count);
    bool ok = in.size() <= out_rank;
    for (size_t k = 0; ok && k < in.size(); ++k) {
      const int64_t dim = in[in.size() - 1 - k];
      ok = dim == 1 || dim == output[out_rank - 1 - k];
    }
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, " shape ", Dims(in), " does not broadcast to output shape ",
                       Dims(output), " (input shapes: ",
                       absl::StrJoin(operands, ", ",
                                     [](std::string* out, const std::vector<int64_t>& s) {
                                       absl::StrAppend(out, Dims(s));
                                     }),
                       ")"));
    }
  }

  const size_t n = operands.size();
  if (view.output_elements_ == 0) {
    view.dims_ = {0};
    view.strides_.assign(n, 0);
    return view;
  }
  // Right-align, drop output dims of 1 (every operand is 1 there too), and merge a dim into
  // the previous one when each operand is broadcast in both or in neither.
  std::vector<int64_t> dims;
  std::vector<std::vector<bool>> present(n);  // [operand][collapsed dim]: not broadcast
  std::vector<bool> column(n);
  for (size_t d = 0; d < out_rank; ++d) {
    if (output[d] == 1) continue;
    for (size_t i = 0; i < n; ++i) {
      const int64_t k =
          static_cast<int64_t>(d) - static_cast<int64_t>(out_rank - operands[i].size());
      column[i] = k >= 0 && operands[i][k] != 1;
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
  view.strides_.assign(n * rank, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t stride = 1;
    for (size_t d = rank; d-- > 0;) {
      if (!present[i][d]) continue;
      view.strides_[i * rank + d] = stride;
      stride *= dims[d];
    }
  }
  view.dims_ = std::move(dims);
  return view;
}

std::vector<int64_t> BroadcastView::Offsets(int operand, int64_t scale) const {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(output_elements_));
  ForEachOffset(operand, [&](int64_t offset) { out.push_back(offset * scale); });
  return out;
}

}  // namespace onnx_bcast::broadcast
