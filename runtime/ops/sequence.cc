// Op family table: sequence and optional ops. Sequences hold shared tensors, so inserting,
// erasing and reading elements never copies tensor data; SplitToSequence and
// ConcatFromSequence copy.
#include <algorithm>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "runtime/kernels/movement.h"
#include "runtime/ops/movement_util.h"
#include "runtime/ops/registry.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {
namespace {

using movement::InputInt64s;
using movement::NormalizeAxis;

// Input `i` as a sequence, or InvalidArgument.
absl::StatusOr<const Value*> RequireSequence(const OpContext& ctx, int i) {
  const Value* v = ctx.input_value(i);
  if (v == nullptr || !v->is_sequence()) {
    return ctx.Error(absl::StrCat("input ", i, " is missing or not a sequence"));
  }
  return v;
}

// A new tensor for a sequence element, under the same element limit as ctx.Allocate.
absl::StatusOr<std::shared_ptr<Tensor>> NewTensor(const OpContext& ctx, DType dtype,
                                                  std::vector<int64_t> shape) {
  absl::StatusOr<int64_t> count = ShapeElementCount(shape);
  if (!count.ok()) return ctx.Error(std::string(count.status().message()));
  if (*count > ctx.options().max_tensor_elements) {
    return absl::ResourceExhaustedError(
        absl::StrCat(ctx.node().Label(), ": element of ", *count, " elements is over the limit"));
  }
  BCAST_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, std::move(shape)));
  return std::make_shared<Tensor>(std::move(t));
}

// The optional `position` input `i` of a sequence of `size`: in [-size, size + extra), mapped
// to [0, size + extra). `fallback` when absent.
absl::StatusOr<int64_t> Position(const OpContext& ctx, int i, int64_t size, int64_t extra,
                                 int64_t fallback) {
  if (!ctx.has_input(i)) return fallback;
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> p, InputInt64s(ctx, i));
  if (p.size() != 1) return ctx.Error("position must be a scalar");
  int64_t pos = p[0];
  if (pos < -size || pos >= size + extra) {
    return ctx.Error(absl::StrCat("position ", pos, " is out of range for a sequence of ", size));
  }
  return pos < 0 ? pos + size : pos;
}

absl::Status SequenceEmpty(OpContext& ctx) {
  DType dtype =
      static_cast<DType>(ctx.node().GetInt("dtype", static_cast<int64_t>(DType::kFloat32)));
  ctx.SetOutput(0, Value::Sequence({}, dtype));
  return absl::OkStatus();
}

absl::Status SequenceConstruct(OpContext& ctx) {
  std::vector<std::shared_ptr<Tensor>> items;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Value* v = ctx.input_value(i);
    if (v == nullptr || !v->is_tensor())
      return ctx.Error(absl::StrCat("input ", i, " is not a tensor"));
    if (!items.empty() && v->tensor->dtype() != items[0]->dtype()) {
      return ctx.Error("tensors of a sequence must share a dtype");
    }
    items.push_back(v->tensor);
  }
  if (items.empty()) return ctx.Error("no inputs");
  const DType dtype = items[0]->dtype();
  ctx.SetOutput(0, Value::Sequence(std::move(items), dtype));
  return absl::OkStatus();
}

absl::Status SequenceInsert(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Value* seq, RequireSequence(ctx, 0));
  const Value* t = ctx.input_value(1);
  if (t == nullptr || !t->is_tensor()) return ctx.Error("input 1 is not a tensor");
  const int64_t size = static_cast<int64_t>(seq->sequence.size());
  BCAST_ASSIGN_OR_RETURN(int64_t pos, Position(ctx, 2, size, 1, size));
  DType dtype = seq->elem_type;
  if (!seq->sequence.empty()) dtype = seq->sequence[0]->dtype();
  if (dtype != DType::kUndefined && dtype != t->tensor->dtype()) {
    return ctx.Error(absl::StrCat("cannot insert ", t->tensor->DebugString(),
                                  " into a sequence of ", DTypeName(dtype)));
  }
  std::vector<std::shared_ptr<Tensor>> items = seq->sequence;
  items.insert(items.begin() + pos, t->tensor);
  ctx.SetOutput(0, Value::Sequence(std::move(items), t->tensor->dtype()));
  return absl::OkStatus();
}

absl::Status SequenceAt(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Value* seq, RequireSequence(ctx, 0));
  const int64_t size = static_cast<int64_t>(seq->sequence.size());
  if (!ctx.has_input(1)) return ctx.Error("position is missing");
  BCAST_ASSIGN_OR_RETURN(int64_t pos, Position(ctx, 1, size, 0, 0));
  ctx.SetOutput(0, Value::Of(seq->sequence[pos]));
  return absl::OkStatus();
}

absl::Status SequenceErase(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Value* seq, RequireSequence(ctx, 0));
  const int64_t size = static_cast<int64_t>(seq->sequence.size());
  if (size == 0) return ctx.Error("cannot erase from an empty sequence");
  BCAST_ASSIGN_OR_RETURN(int64_t pos, Position(ctx, 1, size, 0, size - 1));
  std::vector<std::shared_ptr<Tensor>> items = seq->sequence;
  items.erase(items.begin() + pos);
  ctx.SetOutput(0, Value::Sequence(std::move(items), seq->sequence[0]->dtype()));
  return absl::OkStatus();
}

absl::Status SequenceLength(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Value* seq, RequireSequence(ctx, 0));
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, DType::kInt64, {}));
  *out->data<int64_t>() = static_cast<int64_t>(seq->sequence.size());
  return absl::OkStatus();
}

absl::Status SplitToSequence(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  const int64_t rank = x->rank();
  BCAST_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.node().GetInt("axis", 0), rank));
  const std::vector<int64_t>& d = x->shape();
  const int64_t dim = d[axis];
  std::vector<int64_t> sizes;
  bool squeeze = false;
  if (!ctx.has_input(1)) {
    sizes.assign(dim, 1);
    squeeze = ctx.node().GetInt("keepdims", 1) == 0;
  } else {
    BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> s, InputInt64s(ctx, 1));
    if (ctx.input(1)->rank() == 0) {
      const int64_t chunk = s[0];
      if (chunk <= 0) return ctx.Error("split must be positive");
      for (int64_t at = 0; at < dim; at += chunk) sizes.push_back(std::min(chunk, dim - at));
    } else {
      sizes = std::move(s);
      int64_t total = 0;
      for (int64_t v : sizes) {
        if (v < 0) return ctx.Error("negative split size");
        total += v;
      }
      if (total != dim) return ctx.Error(absl::StrCat("split sizes do not add up to ", dim));
    }
  }
  int64_t outer = 1;
  for (int64_t j = 0; j < axis; ++j) outer *= d[j];
  int64_t inner = 1;
  for (int64_t j = axis + 1; j < rank; ++j) inner *= d[j];
  std::vector<std::shared_ptr<Tensor>> items;
  std::vector<void*> parts;
  std::vector<int64_t> blocks;
  for (int64_t size : sizes) {
    std::vector<int64_t> shape = d;
    shape[axis] = size;
    if (squeeze) shape.erase(shape.begin() + axis);
    BCAST_ASSIGN_OR_RETURN(std::shared_ptr<Tensor> t, NewTensor(ctx, x->dtype(), shape));
    parts.push_back(t->raw_data());
    blocks.push_back(size * inner);
    items.push_back(std::move(t));
  }
  if (x->num_elements() > 0) {
    SplitBlocks(x->raw_data(), outer, blocks, x->element_size(), parts);
  }
  ctx.SetOutput(0, Value::Sequence(std::move(items), x->dtype()));
  return absl::OkStatus();
}

absl::Status ConcatFromSequence(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Value* seq, RequireSequence(ctx, 0));
  const auto& items = seq->sequence;
  if (items.empty()) return ctx.Error("cannot concatenate an empty sequence");
  const bool new_axis = ctx.node().GetInt("new_axis", 0) != 0;
  const Tensor& first = *items[0];
  const int64_t rank = first.rank();
  BCAST_ASSIGN_OR_RETURN(
      int64_t axis, NormalizeAxis(ctx, ctx.node().GetInt("axis", 0), new_axis ? rank + 1 : rank));
  // Each element viewed with the concatenation axis present (size 1 when new_axis).
  std::vector<int64_t> base = first.shape();
  if (new_axis) base.insert(base.begin() + axis, 1);
  std::vector<int64_t> shape = base;
  shape[axis] = 0;
  for (const auto& t : items) {
    std::vector<int64_t> s = t->shape();
    if (new_axis) s.insert(s.begin() + std::min<int64_t>(axis, t->rank()), 1);
    bool same = s.size() == base.size() && t->dtype() == first.dtype();
    for (size_t j = 0; same && j < s.size(); ++j) {
      same = static_cast<int64_t>(j) == axis || s[j] == base[j];
    }
    if (!same) {
      return ctx.Error(
          absl::StrCat("cannot concatenate ", first.DebugString(), " and ", t->DebugString()));
    }
    shape[axis] += s[axis];
  }
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, first.dtype(), shape));
  int64_t outer = 1;
  for (int64_t j = 0; j < axis; ++j) outer *= shape[j];
  int64_t inner = 1;
  for (size_t j = axis + 1; j < shape.size(); ++j) inner *= shape[j];
  std::vector<const void*> sources;
  std::vector<int64_t> blocks;
  for (const auto& t : items) {
    sources.push_back(t->raw_data());
    blocks.push_back(t->num_elements() / std::max<int64_t>(outer, 1));
  }
  ConcatBlocks(sources, blocks, outer, first.element_size(), out->raw_data());
  return absl::OkStatus();
}

absl::Status Optional(OpContext& ctx) {
  const Value* v = ctx.input_value(0);
  if (v != nullptr && !v->is_none()) {
    ctx.SetOutput(0, *v);
    return absl::OkStatus();
  }
  DType elem = DType::kUndefined;
  if (const Attribute* a = ctx.node().Find("type"); a != nullptr) elem = a->elem_type;
  ctx.SetOutput(0, Value::EmptyOptional(elem));
  return absl::OkStatus();
}

absl::Status OptionalHasElement(OpContext& ctx) {
  const bool has = ctx.has_input(0);
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, DType::kBool, {}));
  *out->data<bool>() = has;
  return absl::OkStatus();
}

absl::Status OptionalGetElement(OpContext& ctx) {
  if (!ctx.has_input(0)) return ctx.Error("the optional is empty");
  ctx.SetOutput(0, *ctx.input_value(0));
  return absl::OkStatus();
}

}  // namespace

absl::Span<const OpRegistration> SequenceOps() {
  static const OpRegistration kOps[] = {
      {"", "SequenceEmpty", 11, SequenceEmpty},
      {"", "SequenceConstruct", 11, SequenceConstruct},
      {"", "SequenceInsert", 11, SequenceInsert},
      {"", "SequenceAt", 11, SequenceAt},
      {"", "SequenceErase", 11, SequenceErase},
      {"", "SequenceLength", 11, SequenceLength},
      {"", "SplitToSequence", 11, SplitToSequence},
      {"", "ConcatFromSequence", 11, ConcatFromSequence},
      {"", "Optional", 15, Optional},
      {"", "OptionalHasElement", 15, OptionalHasElement},
      {"", "OptionalGetElement", 15, OptionalGetElement},
  };
  return kOps;
}

}  // namespace onnx_bcast::runtime
