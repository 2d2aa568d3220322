// Shape functions over dim expressions, and value propagation for the small integer tensors
// that carry shapes (Shape -> Gather -> Concat -> Reshape, ...). One function per op; the
// shape analysis (shape_propagation) calls `InferSymbolic` once per node and falls back to
// libonnx's per-node inference only for ops without a function here.
//
// Requires: input types as the analysis knows them (shapes may hold expressions; small
// integer tensors may carry their elements as expressions).
// Guarantees: outputs whose dims follow from the inputs are expressions of the inputs' dims
// (Conv of a symbolic H gives floor((H + pads - dilation*(k-1) - 1)/stride) + 1, never '?');
// extents that depend on tensor data the analysis cannot see are fresh symbols named after
// the node; nothing is guessed.
#ifndef ONNX_BCAST_ANALYSIS_SHAPE_FUNCTIONS_H_
#define ONNX_BCAST_ANALYSIS_SHAPE_FUNCTIONS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "broadcast/shape.h"
#include "proto/onnx.h"

namespace onnx_bcast::analysis {

/// std::optional's interface over a heap box: one pointer inline instead of the whole T. The
/// analysis keeps a SymTensor per tensor and few carry contents, so three inline optional
/// vectors (32 bytes each) were a third of the per-tensor record at a million tensors.
template <typename T>
class BoxedOptional {
 public:
  BoxedOptional() = default;
  BoxedOptional(std::nullopt_t) {}                               // NOLINT: as std::optional
  BoxedOptional(T v) : p_(std::make_unique<T>(std::move(v))) {}  // NOLINT: as std::optional
  BoxedOptional(const BoxedOptional& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  BoxedOptional(BoxedOptional&&) noexcept = default;
  BoxedOptional& operator=(const BoxedOptional& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  BoxedOptional& operator=(BoxedOptional&&) noexcept = default;
  BoxedOptional& operator=(std::nullopt_t) {
    p_.reset();
    return *this;
  }

  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return p_ != nullptr; }
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }
  template <typename... Args>
  T& emplace(Args&&... args) {
    p_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *p_;
  }
  void reset() { p_.reset(); }

  friend bool operator==(const BoxedOptional& a, const BoxedOptional& b) {
    return a.has_value() == b.has_value() && (!a.has_value() || *a == *b);
  }
  friend bool operator!=(const BoxedOptional& a, const BoxedOptional& b) { return !(a == b); }

 private:
  std::unique_ptr<T> p_;
};

/// What the analysis knows of one tensor.
struct SymTensor {
  int32_t elem = 0;  ///< onnx::TensorProto::DataType; 0 when unknown
  broadcast::Shape shape = broadcast::Shape::UnknownRank();
  /// For integer tensors of rank 0 or 1 with at most kMaxValueElements elements: each element
  /// as a dim (a value, a symbol or an expression; Dim::Unknown() for an element not known).
  /// nullopt when the contents are not tracked.
  BoxedOptional<std::vector<broadcast::Dim>> value;
  /// A Dim cannot hold a negative integer, but shape tensors carry them (Reshape's -1, Slice's
  /// negative starts, axes such as -1): such elements are Dim::Unknown() in `value` and their
  /// integers are listed here as (index, value). A reader that ignores this field sees them as
  /// unknown, which is safe; a writer that replaces `value` must clear it.
  std::vector<std::pair<int64_t, int64_t>> negatives;
  /// For float tensors of rank 0 or 1 with at most kMaxValueElements elements whose contents
  /// are constant (Resize/Upsample scales): the elements.
  BoxedOptional<std::vector<double>> float_value;
  /// A float element that is an exact rational of dim expressions: num / den, den > 0; num
  /// unset when the element is not known.
  struct Rational {
    std::optional<broadcast::Expr> num;
    int64_t den = 1;
  };
  /// For float tensors of rank 0 or 1 (at most kMaxValueElements elements) computed from
  /// dims: torch's size arithmetic in float (Cast(H) / 32 -> Ceil -> Cast back, the padding of
  /// detection transforms). Exact while values stay below 2^24, float32's integers: extents
  /// are assumed far below.
  BoxedOptional<std::vector<Rational>> float_exprs;
};

/// Tensors larger than this are not value-tracked (shape tensors are tiny).
inline constexpr int64_t kMaxValueElements = 64;

/// Deterministic fresh symbols for data-dependent extents (NonZero, Unique, NMS, TopK with a
/// computed k, ...), named after the node that makes them, e.g. "NonZero_3:0:1" for output 0,
/// axis 1. The analysis owns it so that names are unique across the model.
class SymbolSource {
 public:
  virtual ~SymbolSource() = default;
  virtual broadcast::Dim Fresh(std::string_view node_name, int output, int axis) = 0;
};

/// Everything a shape function may read.
struct ShapeFnContext {
  const onnx::NodeProto* node = nullptr;
  /// The node's name as reports print it ("<op>#<index>" when unnamed).
  std::string_view node_name;
  /// The default-domain opset in effect for the node.
  int64_t opset = 0;
  /// One entry per node input; null for an absent optional input or a value the analysis
  /// knows nothing about.
  absl::Span<const SymTensor* const> inputs;
  /// The calling node when `node` is inside a model-local function (attributes with
  /// ref_attr_name resolve there); null otherwise.
  const onnx::NodeProto* caller = nullptr;
  SymbolSource* symbols = nullptr;
};

/// The outputs' types when there is a shape function for the node's op (default domain),
/// nullopt when there is none (the caller falls back to libonnx's inference). An output this
/// function cannot determine has an unknown rank and/or elem 0; the caller may fill those
/// parts from libonnx.
std::optional<std::vector<SymTensor>> InferSymbolic(const ShapeFnContext& ctx);

/// True when `InferSymbolic` has a function for `op_type` (default domain).
bool HasShapeFunction(std::string_view op_type);

/// A constant (initializer or Constant's value) as the analysis tracks it: elem, shape and,
/// for small integer or float tensors, the contents. External data is never read here.
SymTensor SymTensorOfConstant(const onnx::TensorProto& tensor);

}  // namespace onnx_bcast::analysis

#endif  // ONNX_BCAST_ANALYSIS_SHAPE_FUNCTIONS_H_
