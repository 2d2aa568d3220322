// Op family table: movement (reshapes, copies, gathers and scatters, sorting ops), and the
// helpers shared by movement_*.cc.
#include "runtime/kernels/movement.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "runtime/ops/movement_util.h"
#include "runtime/ops/registry.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {
namespace movement {
namespace {

int64_t SaturateToInt64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

}  // namespace

std::vector<int64_t> ReadInt64s(const Tensor& t) {
  std::vector<int64_t> out(static_cast<size_t>(t.num_elements()));
  VisitDType(t.dtype(), 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) {
      if constexpr (std::is_same_v<T, uint64_t>) {
        out[i] = p[i] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                     ? std::numeric_limits<int64_t>::max()
                     : static_cast<int64_t>(p[i]);
      } else if constexpr (std::is_integral_v<T>) {
        out[i] = static_cast<int64_t>(p[i]);
      } else {
        out[i] = SaturateToInt64(static_cast<double>(Widen(p[i])));
      }
    }
    return 0;
  });
  return out;
}

absl::StatusOr<std::vector<int64_t>> InputInt64s(const OpContext& ctx, int i) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireInput(i));
  if (!IsSupported(t->dtype())) {
    return ctx.Error(
        absl::StrCat("input ", i, " has dtype ", DTypeName(t->dtype()), ", expected integers"));
  }
  return ReadInt64s(*t);
}

absl::StatusOr<int64_t> NormalizeAxis(const OpContext& ctx, int64_t axis, int64_t rank,
                                      const std::string& what) {
  if (axis < -rank || axis >= rank) {
    return ctx.Error(absl::StrCat(what, " ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

absl::StatusOr<int64_t> Product(const OpContext& ctx, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (d < 0) return ctx.Error(absl::StrCat("negative dim ", d, " in ", ShapeToString(dims)));
    if (__builtin_mul_overflow(p, d, &p)) {
      return ctx.Error(absl::StrCat("shape ", ShapeToString(dims), " overflows int64"));
    }
  }
  return p;
}

std::vector<std::byte> ScalarBytes(DType dtype, double value) {
  std::vector<std::byte> bytes(DTypeSize(dtype));
  VisitDType(dtype, 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    if constexpr (std::is_same_v<T, bool>) {
      v = value != 0;
    } else if constexpr (std::is_integral_v<T>) {
      const double lo = static_cast<double>(std::numeric_limits<T>::min());
      const double hi = static_cast<double>(std::numeric_limits<T>::max());
      v = std::isnan(value) ? T{0}
          : value <= lo     ? std::numeric_limits<T>::min()
          : value >= hi     ? std::numeric_limits<T>::max()
                            : static_cast<T>(value);
    } else {
      v = Narrow<T>(value);
    }
    std::memcpy(bytes.data(), &v, sizeof(T));
    return 0;
  });
  return bytes;
}

absl::StatusOr<Tensor*> CopyToOutput(OpContext& ctx, int i, const Tensor& src,
                                     std::vector<int64_t> shape) {
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(i, src.dtype(), std::move(shape)));
  if (out->num_elements() != src.num_elements()) {
    return ctx.Error(absl::StrCat("cannot give ", src.DebugString(), " the shape ",
                                  ShapeToString(out->shape())));
  }
  CopyElements(src.raw_data(), src.num_elements(), src.element_size(), out->raw_data());
  return out;
}

absl::Status ShareToOutput(OpContext& ctx, int i, int from, std::vector<int64_t> shape) {
  const Value* v = ctx.input_value(from);
  if (v == nullptr || !v->is_tensor() || v->tensor == nullptr) {
    return ctx.Error(absl::StrCat("input ", from, " is missing or not a tensor"));
  }
  std::shared_ptr<Tensor> src = v->tensor;
  absl::StatusOr<int64_t> count = ShapeElementCount(shape);
  if (!count.ok() || *count != src->num_elements()) {
    return ctx.Error(
        absl::StrCat("cannot give ", src->DebugString(), " the shape ", ShapeToString(shape)));
  }
  absl::StatusOr<Tensor> view = Tensor::Borrow(src->dtype(), shape, src->raw_data());
  if (!view.ok()) return CopyToOutput(ctx, i, *src, std::move(shape)).status();
  ctx.SetOutput(
      i, std::shared_ptr<Tensor>(new Tensor(*std::move(view)), [src](Tensor* t) { delete t; }));
  return absl::OkStatus();
}

}  // namespace movement

absl::Span<const OpRegistration> MovementOps() {
  using namespace movement;  // NOLINT: the table names every kernel of the family
  static const OpRegistration kOps[] = {
      {"", "Reshape", 1, Reshape},
      {"", "Squeeze", 1, Squeeze},
      {"", "Unsqueeze", 1, Unsqueeze},
      {"", "Flatten", 1, Flatten},
      {"", "Shape", 1, Shape},
      {"", "Size", 1, Size},
      {"", "Identity", 1, Identity},
      {"", "Constant", 1, Constant},
      {"", "ConstantOfShape", 9, ConstantOfShape},
      {"", "EyeLike", 9, EyeLike},
      {"", "Range", 11, Range},
      {"", "Expand", 8, Expand},
      {"", "Transpose", 1, Transpose},
      {"", "Concat", 1, Concat},
      {"", "Split", 1, Split},
      {"", "Slice", 1, Slice},
      {"", "Tile", 1, Tile},
      {"", "Pad", 1, Pad},
      {"", "DepthToSpace", 1, DepthToSpace},
      {"", "SpaceToDepth", 1, SpaceToDepth},
      {"", "ReverseSequence", 10, ReverseSequence},
      {"", "Trilu", 14, Trilu},
      {"", "Gather", 1, Gather},
      {"", "GatherElements", 11, GatherElements},
      {"", "GatherND", 11, GatherND},
      {"", "Scatter", 9, ScatterElements},
      {"", "ScatterElements", 11, ScatterElements},
      {"", "ScatterND", 11, ScatterND},
      {"", "OneHot", 9, OneHot},
      {"", "Compress", 9, Compress},
      {"", "NonZero", 9, NonZero},
      {"", "TopK", 1, TopK},
      {"", "Unique", 11, Unique},
      {"", "CumSum", 11, CumSum},
  };
  return kOps;
}

}  // namespace onnx_bcast::runtime
