// Movement ops that change only shapes or make constants: Reshape, Squeeze, Unsqueeze,
// Flatten, Shape, Size, Identity, Constant, ConstantOfShape, EyeLike, Range.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "runtime/kernels/generate.h"
#include "runtime/kernels/movement.h"
#include "runtime/ops/movement_util.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime::movement {
namespace {

// Axes from the `axes` attribute (before opset 13) or input 1 (from 13); empty when absent.
absl::StatusOr<std::vector<int64_t>> SqueezeAxes(const OpContext& ctx, bool* given) {
  if (ctx.opset() < 13) {
    *given = ctx.node().Has("axes");
    return ctx.node().GetInts("axes");
  }
  *given = ctx.has_input(1);
  if (!*given) return std::vector<int64_t>{};
  return InputInt64s(ctx, 1);
}

}  // namespace

absl::Status Reshape(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  std::vector<int64_t> shape;
  if (ctx.opset() < 5) {
    shape = ctx.node().GetInts("shape");
  } else {
    BCAST_ASSIGN_OR_RETURN(shape, InputInt64s(ctx, 1));
  }
  const bool allow_zero = ctx.node().GetInt("allowzero", 0) != 0;
  int64_t infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allow_zero) {
      if (static_cast<int64_t>(i) >= x->rank()) {
        return ctx.Error(absl::StrCat("shape ", ShapeToString(shape), " copies dim ", i,
                                      " of an input of rank ", x->rank()));
      }
      shape[i] = x->shape()[i];
    }
    if (shape[i] == -1) {
      if (infer_at >= 0) return ctx.Error("more than one -1 in the shape");
      infer_at = static_cast<int64_t>(i);
      continue;
    }
    if (shape[i] < 0) return ctx.Error(absl::StrCat("invalid dim ", shape[i]));
    if (__builtin_mul_overflow(known, shape[i], &known)) return ctx.Error("shape overflows");
  }
  const int64_t total = x->num_elements();
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0) {
      return ctx.Error(
          absl::StrCat("cannot reshape ", x->DebugString(), " to ", ShapeToString(shape)));
    }
    shape[infer_at] = total / known;
  } else if (known != total) {
    return ctx.Error(
        absl::StrCat("cannot reshape ", x->DebugString(), " to ", ShapeToString(shape)));
  }
  return ShareToOutput(ctx, 0, 0, std::move(shape));
}

absl::Status Squeeze(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  bool given = false;
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> axes, SqueezeAxes(ctx, &given));
  const int64_t rank = x->rank();
  std::vector<bool> drop(rank, false);
  if (!given) {
    for (int64_t j = 0; j < rank; ++j) drop[j] = x->shape()[j] == 1;
  }
  for (int64_t a : axes) {
    BCAST_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, a, rank));
    if (x->shape()[axis] != 1) {
      return ctx.Error(absl::StrCat("cannot squeeze axis ", a, " of ", x->DebugString()));
    }
    drop[axis] = true;
  }
  std::vector<int64_t> shape;
  for (int64_t j = 0; j < rank; ++j) {
    if (!drop[j]) shape.push_back(x->shape()[j]);
  }
  return ShareToOutput(ctx, 0, 0, std::move(shape));
}

absl::Status Unsqueeze(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  bool given = false;
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> axes, SqueezeAxes(ctx, &given));
  const int64_t rank = x->rank() + static_cast<int64_t>(axes.size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) {
    BCAST_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, a, rank));
    if (inserted[axis]) return ctx.Error(absl::StrCat("axis ", a, " is repeated"));
    inserted[axis] = true;
  }
  std::vector<int64_t> shape;
  size_t next = 0;
  for (int64_t j = 0; j < rank; ++j) shape.push_back(inserted[j] ? 1 : x->shape()[next++]);
  return ShareToOutput(ctx, 0, 0, std::move(shape));
}

absl::Status Flatten(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  const int64_t rank = x->rank();
  int64_t axis = ctx.node().GetInt("axis", 1);
  if (axis < -rank || axis > rank) {
    return ctx.Error(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  if (axis < 0) axis += rank;
  int64_t outer = 1;
  for (int64_t j = 0; j < axis; ++j) outer *= x->shape()[j];
  int64_t inner = 1;
  for (int64_t j = axis; j < rank; ++j) inner *= x->shape()[j];
  return ShareToOutput(ctx, 0, 0, {outer, inner});
}

absl::Status Shape(OpContext& ctx) {
  const Value* v = ctx.input_value(0);
  if (v == nullptr || !v->is_tensor()) return ctx.Error("input 0 is missing or not a tensor");
  const std::vector<int64_t>& dims = v->tensor->shape();
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t start = ctx.node().GetInt("start", 0);
  int64_t end = ctx.node().GetInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  const int64_t n = std::max<int64_t>(0, end - start);
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, DType::kInt64, {n}));
  std::copy(dims.begin() + start, dims.begin() + start + n, out->data<int64_t>());
  return absl::OkStatus();
}

absl::Status Size(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, DType::kInt64, {}));
  *out->data<int64_t>() = x->num_elements();
  return absl::OkStatus();
}

absl::Status Identity(OpContext& ctx) {
  const Value* v = ctx.input_value(0);
  if (v == nullptr) return ctx.Error("input 0 is missing");
  ctx.SetOutput(0, *v);
  return absl::OkStatus();
}

absl::Status Constant(OpContext& ctx) {
  const Node& node = ctx.node();
  if (const Attribute* a = node.Find("value"); a != nullptr) {
    if (a->t == nullptr) return ctx.Unsupported("the value attribute holds no numeric tensor");
    return CopyToOutput(ctx, 0, *a->t, a->t->shape()).status();
  }
  if (node.Has("sparse_value")) return ctx.Unsupported("sparse_value is not supported");
  if (node.Has("value_string") || node.Has("value_strings")) {
    return ctx.Unsupported("string constants are not supported");
  }
  if (const Attribute* a = node.Find("value_float"); a != nullptr) {
    BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, DType::kFloat32, {}));
    *out->data<float>() = a->f;
    return absl::OkStatus();
  }
  if (const Attribute* a = node.Find("value_floats"); a != nullptr) {
    BCAST_ASSIGN_OR_RETURN(
        auto* out, ctx.Allocate(0, DType::kFloat32, {static_cast<int64_t>(a->floats.size())}));
    std::copy(a->floats.begin(), a->floats.end(), out->data<float>());
    return absl::OkStatus();
  }
  if (const Attribute* a = node.Find("value_int"); a != nullptr) {
    BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, DType::kInt64, {}));
    *out->data<int64_t>() = a->i;
    return absl::OkStatus();
  }
  if (const Attribute* a = node.Find("value_ints"); a != nullptr) {
    BCAST_ASSIGN_OR_RETURN(auto* out,
                           ctx.Allocate(0, DType::kInt64, {static_cast<int64_t>(a->ints.size())}));
    std::copy(a->ints.begin(), a->ints.end(), out->data<int64_t>());
    return absl::OkStatus();
  }
  return ctx.Error("no value attribute");
}

absl::Status ConstantOfShape(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> shape, InputInt64s(ctx, 0));
  BCAST_RETURN_IF_ERROR(Product(ctx, shape).status());  // negative dims, int64 overflow
  DType dtype = DType::kFloat32;
  std::vector<std::byte> value(sizeof(float), std::byte{0});
  if (const Attribute* a = ctx.node().Find("value"); a != nullptr && a->t != nullptr) {
    if (a->t->num_elements() != 1) return ctx.Error("value must hold exactly one element");
    dtype = a->t->dtype();
    value.resize(a->t->element_size());
    std::memcpy(value.data(), a->t->raw_data(), value.size());
  }
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, dtype, std::move(shape)));
  FillElements(value.data(), out->num_elements(), out->element_size(), out->raw_data());
  return absl::OkStatus();
}

absl::Status EyeLike(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  if (x->rank() != 2) return ctx.Error("input must be 2-D");
  DType dtype = x->dtype();
  if (ctx.node().Has("dtype")) dtype = static_cast<DType>(ctx.node().GetInt("dtype", 1));
  if (!IsSupported(dtype)) return ctx.Unsupported(absl::StrCat("dtype ", DTypeName(dtype)));
  const int64_t rows = x->shape()[0];
  const int64_t cols = x->shape()[1];
  const int64_t k = ctx.node().GetInt("k", 0);
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, dtype, {rows, cols}));
  const std::vector<std::byte> one = ScalarBytes(dtype, 1.0);
  kernels::Diagonal(rows, cols, k, one.data(), one.size(), out->raw_data());
  return absl::OkStatus();
}

absl::Status Range(OpContext& ctx) {
  const Tensor* in[3];
  for (int i = 0; i < 3; ++i) {
    BCAST_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireInput(i));
    if (t->num_elements() != 1) return ctx.Error(absl::StrCat("input ", i, " must be a scalar"));
    if (t->dtype() != (*ctx.RequireInput(0))->dtype()) {
      return ctx.Error("start, limit and delta must share a dtype");
    }
    in[i] = t;
  }
  const DType dtype = in[0]->dtype();
  if (!IsNumeric(dtype)) return ctx.Error(absl::StrCat("dtype ", DTypeName(dtype)));
  return VisitDType(dtype, absl::OkStatus(), [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    const auto start = Widen(*in[0]->data<T>());
    const auto limit = Widen(*in[1]->data<T>());
    const auto delta = Widen(*in[2]->data<T>());
    int64_t n = 0;
    if constexpr (std::is_integral_v<decltype(start)>) {
      if (delta == 0) return ctx.Error("delta is 0");
      const __int128 span = static_cast<__int128>(limit) - static_cast<__int128>(start);
      const __int128 d = delta;
      __int128 count = span / d;
      if (count * d != span) ++count;  // span and d have the same sign when count > 0
      if (count > ctx.options().max_tensor_elements) {
        return absl::ResourceExhaustedError(
            absl::StrCat(ctx.node().Label(), ": range of more than ",
                         ctx.options().max_tensor_elements, " elements"));
      }
      n = static_cast<int64_t>(std::max<__int128>(count, 0));
    } else {
      const double count = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                                     static_cast<double>(delta));
      if (!std::isfinite(count) && !(count < 0)) return ctx.Error("the range is not finite");
      if (count > static_cast<double>(ctx.options().max_tensor_elements)) {
        return absl::ResourceExhaustedError(
            absl::StrCat(ctx.node().Label(), ": range of ", count, " elements"));
      }
      n = count > 0 ? static_cast<int64_t>(count) : 0;
    }
    BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, dtype, {n}));
    kernels::Range(*in[0]->data<T>(), *in[2]->data<T>(), n, out->template data<T>());
    return absl::OkStatus();
  });
}

}  // namespace onnx_bcast::runtime::movement
