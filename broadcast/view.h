// BroadcastView: dense operands broadcast (numpy, right-aligned) over one concrete output
// shape, as collapsed output dims and per-operand element strides, 0 where an operand is
// broadcast. The one place that builds stride-0 views: the runtime's elementwise plans,
// Expand, MatMul batch dims and the norms' parameters, and constant folding in proto/ and
// passes/ all read them from here.
// Requires: concrete (non-negative) dims. Guarantees: collapsed dims are all > 1 (none for a
// one-element output, {0} for an empty one); adjacent dims are merged when every operand is
// broadcast in both or in neither (so each operand stays contiguous over the merged dim).
#ifndef ONNX_BCAST_BROADCAST_VIEW_H_
#define ONNX_BCAST_BROADCAST_VIEW_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace onnx_bcast::broadcast {

class BroadcastView {
 public:
  /// Views `operands` (each dense, row-major) broadcast to `output`. Every operand dim,
  /// right-aligned, must be 1 or the output's, and no operand may have a higher rank;
  /// otherwise InvalidArgument "input I shape [..] does not broadcast to output shape [..]
  /// (input shapes: ..)". Negative dims and element counts above int64 are refused too.
  static absl::StatusOr<BroadcastView> Create(absl::Span<const std::vector<int64_t>> operands,
                                              absl::Span<const int64_t> output);
  /// One operand (unidirectional broadcast: Expand, a norm's scale, a folded constant).
  static absl::StatusOr<BroadcastView> Create(absl::Span<const int64_t> operand,
                                              absl::Span<const int64_t> output);

  int num_operands() const { return static_cast<int>(operand_elements_.size()); }
  const std::vector<int64_t>& output_shape() const { return output_shape_; }
  int64_t output_elements() const { return output_elements_; }
  int64_t operand_elements(int operand) const { return operand_elements_[operand]; }

  /// Collapsed output dims, outermost first (see the file comment).
  const std::vector<int64_t>& dims() const { return dims_; }
  int rank() const { return static_cast<int>(dims_.size()); }
  /// Element strides of `operand` over dims(); 0 exactly where it is broadcast.
  absl::Span<const int64_t> strides(int operand) const {
    return absl::Span<const int64_t>(strides_.data() + operand * dims_.size(), dims_.size());
  }

  /// Calls `f(offset)` with the element offset into `operand` of each output element, in
  /// row-major output order (an odometer: one add per element, no division).
  template <class F>
  void ForEachOffset(int operand, F&& f) const {
    if (output_elements_ == 0) return;
    const absl::Span<const int64_t> s = strides(operand);
    const int r = rank();
    if (r == 0) {
      f(int64_t{0});
      return;
    }
    std::vector<int64_t> index(r, 0);
    const int64_t inner = dims_[r - 1], inner_stride = s[r - 1];
    int64_t base = 0;
    while (true) {
      for (int64_t i = 0; i < inner; ++i) f(base + i * inner_stride);
      int d = r - 2;
      for (; d >= 0; --d) {
        base += s[d];
        if (++index[d] < dims_[d]) break;
        base -= s[d] * dims_[d];
        index[d] = 0;
      }
      if (d < 0) return;
    }
  }

  /// The offsets of ForEachOffset, each multiplied by `scale` (a MatMul operand's matrix size).
  std::vector<int64_t> Offsets(int operand, int64_t scale = 1) const;

 private:
  BroadcastView() = default;

  std::vector<int64_t> output_shape_;
  int64_t output_elements_ = 0;
  std::vector<int64_t> operand_elements_;
  std::vector<int64_t> dims_;
  std::vector<int64_t> strides_;  // num_operands x rank, row-major
};

}  // namespace onnx_bcast::broadcast

#endif  // ONNX_BCAST_BROADCAST_VIEW_H_
