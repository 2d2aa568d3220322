// BroadcastPlan: the shape work of an n-ary elementwise op, done once per shape tuple: the
// collapsed stride-0 view of broadcast::BroadcastView (broadcast/view.h) plus the loop kind.
#ifndef ONNX_BCAST_RUNTIME_BROADCAST_PLAN_H_
#define ONNX_BCAST_RUNTIME_BROADCAST_PLAN_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "broadcast/view.h"

namespace onnx_bcast::runtime {

/// The loop a kernel runs for a plan. Shapes below are the collapsed ones.
enum class KernelKind {
  /// The output has zero elements: nothing to do.
  kEmpty,
  /// Every input covers the whole output contiguously (rank 0 included).
  kSameShape,
  /// Binary only: input 0 is one element, input 1 covers the output.
  kScalarLeft,
  /// Binary only: input 1 is one element, input 0 covers the output.
  kScalarRight,
  /// Binary only, inner-axis broadcast: `[M,N] op [N]` (or `[N] op [M,N]`).
  kRow,
  /// Binary only, outer-axis broadcast: `[M,N] op [M,1]` (or `[M,1] op [M,N]`).
  kColumn,
  /// Anything else, any rank and any number of inputs: an odometer over the outer dims
  /// and a contiguous loop over the innermost one.
  kGeneral,
};

/// "same_shape", "scalar_left", ...
absl::string_view KernelKindName(KernelKind kind);

/// Validated, collapsed broadcast of n inputs to one output shape. Immutable; cache it per
/// shape tuple.
class BroadcastPlan {
 public:
  /// Plans `inputs` broadcast to `output` (computed by the caller's broadcast rule, e.g.
  /// broadcast::BroadcastConcrete). Every input dim, right-aligned, must be 1 or equal to the
  /// output dim, and no input may have a higher rank than the output; otherwise
  /// InvalidArgumentError naming the input and output shapes.
  static absl::StatusOr<BroadcastPlan> Create(absl::Span<const std::vector<int64_t>> inputs,
                                              absl::Span<const int64_t> output);

  /// Binary convenience overload.
  static absl::StatusOr<BroadcastPlan> Create(absl::Span<const int64_t> a,
                                              absl::Span<const int64_t> b,
                                              absl::Span<const int64_t> output);

  KernelKind kind() const { return kind_; }
  int num_inputs() const { return static_cast<int>(input_shapes_.size()); }
  const std::vector<int64_t>& output_shape() const { return view_.output_shape(); }
  const std::vector<int64_t>& input_shape(int input) const { return input_shapes_[input]; }
  /// Elements of the output (and the product of dims()).
  int64_t output_elements() const { return view_.output_elements(); }
  /// Elements each input holds.
  int64_t input_elements(int input) const { return view_.operand_elements(input); }

  /// Collapsed output dims, outermost first: no 1s, adjacent dims broadcast differently for
  /// at least one input. Empty for a one-element output; {0} for kEmpty.
  const std::vector<int64_t>& dims() const { return view_.dims(); }
  int rank() const { return view_.rank(); }
  /// Element strides of `input` over dims(); 0 where the input is broadcast.
  absl::Span<const int64_t> strides(int input) const { return view_.strides(input); }
  const broadcast::BroadcastView& view() const { return view_; }
  /// For kScalarLeft/kScalarRight/kRow/kColumn: the input that is broadcast (the small
  /// one); -1 otherwise.
  int broadcast_input() const { return broadcast_input_; }

  /// e.g. "kind=row dims=[64,1024] strides0=[1024,1] strides1=[0,1]".
  std::string DebugString() const;

 private:
  explicit BroadcastPlan(broadcast::BroadcastView view) : view_(std::move(view)) {}

  broadcast::BroadcastView view_;
  KernelKind kind_ = KernelKind::kEmpty;
  std::vector<std::vector<int64_t>> input_shapes_;
  int broadcast_input_ = -1;
};

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_BROADCAST_PLAN_H_
