// Movement ops driven by index or value data: Gather, GatherElements, GatherND, Scatter,
// ScatterElements, ScatterND, OneHot, Compress, NonZero, TopK, Unique, CumSum.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "runtime/kernels/cumsum.h"
#include "runtime/kernels/gather_scatter.h"
#include "runtime/kernels/movement.h"
#include "runtime/kernels/nonzero.h"
#include "runtime/kernels/one_hot.h"
#include "runtime/kernels/topk.h"
#include "runtime/kernels/unique.h"
#include "runtime/ops/movement_util.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime::movement {
namespace {

int64_t DimProduct(const std::vector<int64_t>& dims, int64_t from, int64_t to) {
  int64_t p = 1;
  for (int64_t j = from; j < to; ++j) p *= dims[j];
  return p;
}

// Index `i` into an axis of `dim`, negative counting from the end; -1 when out of range.
int64_t WrapIndex(int64_t i, int64_t dim) {
  if (i < 0) i += dim;
  return i >= 0 && i < dim ? i : -1;
}

// Reads the index tensor at input `i`, which must be int32 or int64.
absl::StatusOr<std::vector<int64_t>> IndexInput(const OpContext& ctx, int i) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireInput(i));
  if (t->dtype() != DType::kInt32 && t->dtype() != DType::kInt64) {
    return ctx.Error(absl::StrCat("indices have dtype ", DTypeName(t->dtype())));
  }
  return ReadInt64s(*t);
}

absl::StatusOr<kernels::ScatterReduction> ReadReduction(const OpContext& ctx) {
  using kernels::ScatterReduction;
  const std::string r = ctx.node().GetString("reduction", "none");
  if (r == "none") return ScatterReduction::kNone;
  if (r == "add") return ScatterReduction::kAdd;
  if (r == "mul") return ScatterReduction::kMul;
  if (r == "max") return ScatterReduction::kMax;
  if (r == "min") return ScatterReduction::kMin;
  return ctx.Error(absl::StrCat("unknown reduction '", r, "'"));
}

// ScatterElements/ScatterND: data, indices, updates and the reduction, read in that order.
struct ScatterInputs {
  const Tensor* data;
  std::vector<int64_t> indices;
  const Tensor* updates;
  kernels::ScatterReduction reduction;
};

absl::StatusOr<ScatterInputs> ReadScatterInputs(const OpContext& ctx) {
  ScatterInputs in;
  BCAST_ASSIGN_OR_RETURN(in.data, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(in.indices, IndexInput(ctx, 1));
  BCAST_ASSIGN_OR_RETURN(in.updates, ctx.RequireInput(2));
  BCAST_ASSIGN_OR_RETURN(in.reduction, ReadReduction(ctx));
  return in;
}

// Calls scatter(out, updates) with both typed as out's element type (the caller has checked
// that the updates' dtype is the same).
template <class Fn>
void VisitScatter(Tensor* out, const Tensor& updates, Fn&& scatter) {
  VisitDType(out->dtype(), 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    scatter(out->template data<T>(), updates.template data<T>());
    return 0;
  });
}

// GatherElements/ScatterElements: checks the index tensor against the data and wraps each
// index into [0, d[axis]) in place. Fails where an element-by-element walk (row-major, dims in
// order, the axis index checked at the axis) would first fail, with that walk's message.
absl::Status WrapAxisIndices(const OpContext& ctx, const std::vector<int64_t>& d,
                             const std::vector<int64_t>& ishape, int64_t axis,
                             std::vector<int64_t>* indices) {
  const int64_t rank = static_cast<int64_t>(d.size());
  const int64_t count = static_cast<int64_t>(indices->size());
  // The first element with a coordinate past the data off the axis: for each such dim j, the
  // element with coordinate d[j] on j and 0 elsewhere; the smallest of them.
  int64_t off_flat = count;
  for (int64_t j = rank - 1, step = 1; j >= 0 && count > 0; step *= ishape[j], --j) {
    if (j != axis && ishape[j] > d[j]) off_flat = std::min(off_flat, d[j] * step);
  }
  // Whether that element fails off the axis before its axis index is looked at.
  bool off_first = false;
  if (off_flat < count) {
    int64_t rest = off_flat;
    for (int64_t j = rank - 1; j >= 0; --j) {
      if (j < axis && rest % ishape[j] >= d[j]) off_first = true;
      rest /= ishape[j];
    }
  }
  const auto off_axis_error = [&] {
    return ctx.Error("indices are larger than the data off the axis");
  };
  for (int64_t f = 0; f < std::min(off_flat + 1, count); ++f) {
    if (f == off_flat && off_first) return off_axis_error();
    const int64_t i = WrapIndex((*indices)[f], d[axis]);
    if (i < 0) return ctx.Error(absl::StrCat("index ", (*indices)[f], " out of range"));
    (*indices)[f] = i;
  }
  if (off_flat < count) return off_axis_error();
  return absl::OkStatus();
}

// GatherND/ScatterND: wraps entry j of each index tuple of `tuple_len` into [0, dims[j]) in
// place; fails on the first entry out of range.
absl::Status WrapTupleIndices(const OpContext& ctx, const int64_t* dims, int64_t tuple_len,
                              std::vector<int64_t>* indices) {
  for (size_t t = 0; t < indices->size(); ++t) {
    const int64_t i = WrapIndex((*indices)[t], dims[static_cast<int64_t>(t) % tuple_len]);
    if (i < 0) return ctx.Error(absl::StrCat("index ", (*indices)[t], " out of range"));
    (*indices)[t] = i;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Gather(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> indices, IndexInput(ctx, 1));
  const std::vector<int64_t>& d = data->shape();
  const int64_t rank = data->rank();
  BCAST_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.node().GetInt("axis", 0), rank));
  std::vector<int64_t> shape(d.begin(), d.begin() + axis);
  const std::vector<int64_t>& ishape = ctx.input(1)->shape();
  shape.insert(shape.end(), ishape.begin(), ishape.end());
  shape.insert(shape.end(), d.begin() + axis + 1, d.end());
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, data->dtype(), shape));
  const int64_t outer = DimProduct(d, 0, axis);
  const int64_t inner = DimProduct(d, axis + 1, rank);
  const int64_t dim = d[axis];
  std::vector<int64_t>& wrapped = indices;
  for (int64_t& i : wrapped) {
    const int64_t k = WrapIndex(i, dim);
    if (k < 0) return ctx.Error(absl::StrCat("index ", i, " is out of range for dim ", dim));
    i = k;
  }
  GatherBlocks(data->raw_data(), outer, dim, inner, wrapped, data->element_size(), out->raw_data());
  return absl::OkStatus();
}

absl::Status GatherElements(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> indices, IndexInput(ctx, 1));
  const std::vector<int64_t>& d = data->shape();
  const std::vector<int64_t>& ishape = ctx.input(1)->shape();
  const int64_t rank = data->rank();
  if (static_cast<int64_t>(ishape.size()) != rank || rank == 0) {
    return ctx.Error("indices must have the data's rank (>= 1)");
  }
  BCAST_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.node().GetInt("axis", 0), rank));
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, data->dtype(), ishape));
  BCAST_RETURN_IF_ERROR(WrapAxisIndices(ctx, d, ishape, axis, &indices));
  VisitDType(data->dtype(), 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernels::GatherElements(data->template data<T>(), d, ishape, axis, indices.data(),
                            out->template data<T>());
    return 0;
  });
  return absl::OkStatus();
}

absl::Status GatherND(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> indices, IndexInput(ctx, 1));
  const std::vector<int64_t>& d = data->shape();
  const std::vector<int64_t>& ishape = ctx.input(1)->shape();
  const int64_t r = data->rank();
  const int64_t q = static_cast<int64_t>(ishape.size());
  const int64_t b = ctx.node().GetInt("batch_dims", 0);
  if (q < 1 || b < 0 || b >= std::min(r, q)) return ctx.Error("invalid batch_dims or ranks");
  const int64_t last = ishape[q - 1];
  if (last < 1 || last > r - b) return ctx.Error("indices' last dim exceeds the data's rank");
  for (int64_t j = 0; j < b; ++j) {
    if (d[j] != ishape[j]) return ctx.Error("batch dims of data and indices differ");
  }
  std::vector<int64_t> shape(ishape.begin(), ishape.end() - 1);
  shape.insert(shape.end(), d.begin() + b + last, d.end());
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, data->dtype(), shape));
  const int64_t batches = DimProduct(d, 0, b);
  const int64_t per_batch = DimProduct(ishape, b, q - 1);
  BCAST_RETURN_IF_ERROR(WrapTupleIndices(ctx, d.data() + b, last, &indices));
  GatherTuples(data->raw_data(), batches, absl::Span<const int64_t>(d.data() + b, d.size() - b),
               per_batch, last, indices, data->element_size(), out->raw_data());
  return absl::OkStatus();
}

absl::Status ScatterElements(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(ScatterInputs in, ReadScatterInputs(ctx));
  const Tensor* data = in.data;
  const Tensor* updates = in.updates;
  const std::vector<int64_t>& d = data->shape();
  const std::vector<int64_t>& ishape = ctx.input(1)->shape();
  const int64_t rank = data->rank();
  if (static_cast<int64_t>(ishape.size()) != rank || updates->shape() != ishape ||
      updates->dtype() != data->dtype() || rank == 0) {
    return ctx.Error("indices and updates must share a shape of the data's rank");
  }
  BCAST_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.node().GetInt("axis", 0), rank));
  BCAST_ASSIGN_OR_RETURN(auto* out, CopyToOutput(ctx, 0, *data, d));
  BCAST_RETURN_IF_ERROR(WrapAxisIndices(ctx, d, ishape, axis, &in.indices));
  VisitScatter(out, *updates, [&](auto* o, const auto* u) {
    kernels::ScatterElements(o, d, ishape, axis, in.indices.data(), u, in.reduction);
  });
  return absl::OkStatus();
}

absl::Status ScatterND(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(ScatterInputs in, ReadScatterInputs(ctx));
  const Tensor* data = in.data;
  const Tensor* updates = in.updates;
  const std::vector<int64_t>& d = data->shape();
  const std::vector<int64_t>& ishape = ctx.input(1)->shape();
  const int64_t r = data->rank();
  const int64_t q = static_cast<int64_t>(ishape.size());
  if (q < 1) return ctx.Error("indices must have rank >= 1");
  const int64_t k = ishape[q - 1];
  if (k > r) return ctx.Error("indices' last dim exceeds the data's rank");
  std::vector<int64_t> ushape(ishape.begin(), ishape.end() - 1);
  ushape.insert(ushape.end(), d.begin() + k, d.end());
  if (updates->shape() != ushape || updates->dtype() != data->dtype()) {
    return ctx.Error(absl::StrCat("updates must be ", ShapeToString(ushape)));
  }
  BCAST_ASSIGN_OR_RETURN(auto* out, CopyToOutput(ctx, 0, *data, d));
  const int64_t tuples = DimProduct(ishape, 0, q - 1);
  BCAST_RETURN_IF_ERROR(WrapTupleIndices(ctx, d.data(), k, &in.indices));
  VisitScatter(out, *updates, [&](auto* o, const auto* u) {
    kernels::ScatterND(o, d, tuples, k, in.indices.data(), u, in.reduction);
  });
  return absl::OkStatus();
}

absl::Status OneHot(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> indices, InputInt64s(ctx, 0));
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> depth_v, InputInt64s(ctx, 1));
  BCAST_ASSIGN_OR_RETURN(const Tensor* values, ctx.RequireInput(2));
  if (depth_v.size() != 1 || depth_v[0] < 1) return ctx.Error("depth must be a positive scalar");
  if (values->num_elements() != 2) return ctx.Error("values must hold [off, on]");
  const int64_t depth = depth_v[0];
  const std::vector<int64_t>& ishape = ctx.input(0)->shape();
  const int64_t rank = static_cast<int64_t>(ishape.size()) + 1;
  BCAST_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.node().GetInt("axis", -1), rank));
  std::vector<int64_t> shape = ishape;
  shape.insert(shape.begin() + axis, depth);
  BCAST_RETURN_IF_ERROR(Product(ctx, shape).status());  // negative dims, int64 overflow
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, values->dtype(), shape));
  const size_t es = values->element_size();
  const auto* off_on = static_cast<const std::byte*>(values->raw_data());
  kernels::OneHot(indices.data(), DimProduct(ishape, 0, axis), depth,
                  DimProduct(ishape, axis, rank - 1), off_on, off_on + es, es, out->raw_data());
  return absl::OkStatus();
}

absl::Status Compress(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> cond, InputInt64s(ctx, 1));
  std::vector<int64_t> d = x->shape();
  int64_t axis = 0;
  if (ctx.node().Has("axis")) {
    BCAST_ASSIGN_OR_RETURN(axis, NormalizeAxis(ctx, ctx.node().GetInt("axis", 0), x->rank()));
  } else {
    d = {x->num_elements()};
  }
  const int64_t dim = d[axis];
  if (static_cast<int64_t>(cond.size()) > dim)
    return ctx.Error("condition is longer than the axis");
  std::vector<int64_t> keep;
  for (size_t i = 0; i < cond.size(); ++i) {
    if (cond[i] != 0) keep.push_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> shape = d;
  shape[axis] = static_cast<int64_t>(keep.size());
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, x->dtype(), shape));
  const int64_t outer = DimProduct(d, 0, axis);
  const int64_t inner = DimProduct(d, axis + 1, static_cast<int64_t>(d.size()));
  GatherBlocks(x->raw_data(), outer, dim, inner, keep, x->element_size(), out->raw_data());
  return absl::OkStatus();
}

absl::Status NonZero(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  // A scalar counts as rank 1 (numpy's nonzero on 0-d arrays).
  std::vector<int64_t> d = x->shape();
  if (d.empty()) d = {1};
  const int64_t rank = static_cast<int64_t>(d.size());
  absl::Status status = absl::OkStatus();
  VisitDType(x->dtype(), 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = x->template data<T>();
    const int64_t n = kernels::CountNonZero(p, x->num_elements());
    absl::StatusOr<Tensor*> out = ctx.Allocate(0, DType::kInt64, {rank, n});
    if (!out.ok()) {
      status = out.status();
      return 0;
    }
    kernels::NonZeroCoordinates(p, d, n, (*out)->template data<int64_t>());
    return 0;
  });
  return status;
}

absl::Status TopK(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  int64_t k = ctx.node().GetInt("k", 0);
  if (ctx.opset() >= 10) {
    BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> kv, InputInt64s(ctx, 1));
    if (kv.size() != 1) return ctx.Error("K must hold one value");
    k = kv[0];
  }
  const std::vector<int64_t>& d = x->shape();
  const int64_t rank = x->rank();
  BCAST_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.node().GetInt("axis", -1), rank));
  const int64_t dim = d[axis];
  if (k < 0 || k > dim) return ctx.Error(absl::StrCat("k ", k, " outside [0, ", dim, "]"));
  const bool largest = ctx.node().GetInt("largest", 1) != 0;
  // `sorted` is not read: with sorted=0 ONNX leaves the order open, and sorted is one such order.
  std::vector<int64_t> shape = d;
  shape[axis] = k;
  BCAST_ASSIGN_OR_RETURN(auto* values, ctx.Allocate(0, x->dtype(), shape));
  BCAST_ASSIGN_OR_RETURN(auto* indices, ctx.Allocate(1, DType::kInt64, shape));
  const int64_t outer = DimProduct(d, 0, axis);
  const int64_t inner = DimProduct(d, axis + 1, rank);
  VisitDType(x->dtype(), 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernels::TopK(x->template data<T>(), outer, dim, inner, k, largest, values->template data<T>(),
                  indices->template data<int64_t>());
    return 0;
  });
  return absl::OkStatus();
}

absl::Status Unique(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  const bool sorted = ctx.node().GetInt("sorted", 1) != 0;
  std::vector<int64_t> d = x->shape();
  int64_t axis = 0;
  const bool has_axis = ctx.node().Has("axis");
  if (has_axis) {
    BCAST_ASSIGN_OR_RETURN(axis, NormalizeAxis(ctx, ctx.node().GetInt("axis", 0), x->rank()));
  } else {
    d = {x->num_elements()};
  }
  const int64_t rank = static_cast<int64_t>(d.size());
  const int64_t outer = DimProduct(d, 0, axis);
  const int64_t dim = d[axis];
  const int64_t inner = DimProduct(d, axis + 1, rank);
  kernels::UniqueGroups groups;
  VisitDType(x->dtype(), 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    groups = kernels::UniqueSlices(x->template data<T>(), outer, dim, inner, sorted);
    return 0;
  });
  const std::vector<int64_t>& first = groups.first;
  const int64_t u = static_cast<int64_t>(first.size());
  std::vector<int64_t> shape = d;
  shape[axis] = u;
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, x->dtype(), shape));
  GatherBlocks(x->raw_data(), outer, dim, inner, first, x->element_size(), y->raw_data());
  const std::vector<int64_t>* extra[] = {&groups.first, &groups.inverse, &groups.counts};
  for (int i = 1; i < 4 && i < ctx.num_outputs(); ++i) {
    if (!ctx.output_wanted(i)) continue;
    const std::vector<int64_t>& v = *extra[i - 1];
    BCAST_ASSIGN_OR_RETURN(auto* t,
                           ctx.Allocate(i, DType::kInt64, {static_cast<int64_t>(v.size())}));
    std::copy(v.begin(), v.end(), t->data<int64_t>());
  }
  return absl::OkStatus();
}

absl::Status CumSum(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> axis_v, InputInt64s(ctx, 1));
  if (axis_v.size() != 1) return ctx.Error("axis must be a scalar");
  if (!IsNumeric(x->dtype())) return ctx.Error("input must be numeric");
  const std::vector<int64_t>& d = x->shape();
  const int64_t rank = x->rank();
  BCAST_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, axis_v[0], std::max<int64_t>(rank, 1)));
  const bool exclusive = ctx.node().GetInt("exclusive", 0) != 0;
  const bool reverse = ctx.node().GetInt("reverse", 0) != 0;
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, x->dtype(), d));
  const int64_t outer = rank == 0 ? 1 : DimProduct(d, 0, axis);
  const int64_t dim = rank == 0 ? 1 : d[axis];
  const int64_t inner = rank == 0 ? 1 : DimProduct(d, axis + 1, rank);
  VisitDType(x->dtype(), 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernels::CumSum(x->template data<T>(), outer, dim, inner, exclusive, reverse,
                    out->template data<T>());
    return 0;
  });
  return absl::OkStatus();
}

}  // namespace onnx_bcast::runtime::movement
