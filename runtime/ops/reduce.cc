// Op family table: reductions (Reduce*, ArgMax/ArgMin) and the Softmax family. Ops read axes
// from attributes or inputs per opset, compute the output shape and call kernels/reduce.h.
#include "runtime/kernels/reduce.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/registry.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {
namespace {

using kernels::ReduceKind;
using kernels::SoftmaxKind;

// Calls fn(TypeTag<T>) with T the compute type of `dtype`: the storage type for float,
// double and integers, float for float16/bfloat16 (the op converts through ComputeIn/Out).
template <class Fn>
absl::Status VisitReduceType(const OpContext& ctx, DType dtype, Fn&& fn) {
  const absl::Status unsupported =
      ctx.Unsupported(absl::StrCat("dtype ", DTypeName(dtype), " is not supported"));
  return VisitDType(dtype, unsupported, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return unsupported;
    } else {
      return fn(TypeTag<ComputeType<T>>{});
    }
  });
}

// Copies `in` into `out` (same dtype and element count).
void CopyTensor(const Tensor& in, Tensor* out) {
  if (in.byte_size() > 0) std::memcpy(out->raw_data(), in.raw_data(), in.byte_size());
}

// The opset from which `op` takes its axes as input 1 instead of an attribute.
int64_t AxesInputSince(const std::string& op) { return op == "ReduceSum" ? 13 : 18; }

template <ReduceKind kKind>
absl::Status ReduceOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  const Tensor& in = *x;
  const int64_t rank = in.rank();
  const Node& node = ctx.node();
  std::vector<int64_t> axes;
  if (ctx.opset() >= AxesInputSince(node.op_type)) {
    if (const Tensor* a = ctx.input(1); a != nullptr) {
      if (!IsInteger(a->dtype())) return ctx.Error("axes must be an integer tensor");
      axes = nn::LoadInts(*a);
    }
  } else if (node.Has("axes")) {
    axes = node.GetInts("axes");
  }
  const bool keepdims = node.GetInt("keepdims", 1) != 0;
  const bool noop = node.GetInt("noop_with_empty_axes", 0) != 0;
  if (axes.empty() && noop && ctx.opset() >= AxesInputSince(node.op_type)) {
    BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, in.dtype(), in.shape()));
    CopyTensor(in, out);
    return absl::OkStatus();
  }
  std::vector<bool> reduce(static_cast<size_t>(rank), axes.empty());
  for (int64_t a : axes) {
    BCAST_ASSIGN_OR_RETURN(int64_t axis, nn::NormalizeAxis(ctx, a, rank));
    reduce[axis] = true;
  }
  std::vector<int64_t> out_shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduce[d]) {
      out_shape.push_back(in.shape()[d]);
    } else if (keepdims) {
      out_shape.push_back(1);
    }
  }
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, in.dtype(), out_shape));
  return VisitReduceType(ctx, in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float>) {
      nn::ComputeIn<float> src(in);
      nn::ComputeOut<float> dst(out);
      kernels::Reduce<float>(kKind, src.data(), in.shape(), reduce, dst.data());
      dst.Finish();
    } else {
      kernels::Reduce<T>(kKind, in.data<T>(), in.shape(), reduce, out->data<T>());
    }
    return absl::OkStatus();
  });
}

// [outer, n, inner] around `axis`.
struct Split3 {
  int64_t outer, n, inner;
};
Split3 SplitAt(const std::vector<int64_t>& shape, int64_t axis) {
  return {nn::Product(shape, 0, axis), shape.empty() ? 1 : shape[axis],
          nn::Product(shape, axis + 1, shape.size())};
}

template <bool kIsMax>
absl::Status ArgOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  const Tensor& in = *x;
  const Node& node = ctx.node();
  if (in.rank() == 0) return ctx.Error("input must have rank >= 1");
  BCAST_ASSIGN_OR_RETURN(int64_t axis, nn::NormalizeAxis(ctx, node.GetInt("axis", 0), in.rank()));
  const bool keepdims = node.GetInt("keepdims", 1) != 0;
  const bool last = node.GetInt("select_last_index", 0) != 0;
  if (in.shape()[axis] == 0) return ctx.Error("cannot take an arg over an empty axis");
  std::vector<int64_t> out_shape = in.shape();
  if (keepdims) {
    out_shape[axis] = 1;
  } else {
    out_shape.erase(out_shape.begin() + axis);
  }
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, DType::kInt64, out_shape));
  const Split3 s = SplitAt(in.shape(), axis);
  return VisitReduceType(ctx, in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float>) {
      nn::ComputeIn<float> src(in);
      kernels::ArgReduce<float>(kIsMax, last, src.data(), s.outer, s.n, s.inner,
                                out->data<int64_t>());
    } else {
      kernels::ArgReduce<T>(kIsMax, last, in.data<T>(), s.outer, s.n, s.inner,
                            out->data<int64_t>());
    }
    return absl::OkStatus();
  });
}

template <SoftmaxKind kKind>
absl::Status SoftmaxOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  const Tensor& in = *x;
  const bool legacy = ctx.opset() < 13;
  const int64_t rank = in.rank();
  Split3 s{1, 1, 1};
  if (rank > 0) {
    BCAST_ASSIGN_OR_RETURN(
        int64_t axis, nn::NormalizeAxis(ctx, ctx.node().GetInt("axis", legacy ? 1 : -1), rank));
    if (legacy) {
      // Before opset 13 the input is coerced to 2-D [prod(:axis), prod(axis:)].
      s = {nn::Product(in.shape(), 0, axis), nn::Product(in.shape(), axis, rank), 1};
    } else {
      s = SplitAt(in.shape(), axis);
    }
  }
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, in.dtype(), in.shape()));
  return nn::VisitFloat(ctx, in.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    nn::ComputeIn<C> src(in);
    nn::ComputeOut<C> dst(out);
    nn::ParallelChunks(ctx, s.outer, s.n * s.inner * 8, [&](int64_t o0, int64_t o1) {
      const int64_t row = s.n * s.inner;
      kernels::Softmax<C>(kKind, src.data() + o0 * row, o1 - o0, s.n, s.inner,
                          dst.data() + o0 * row);
    });
    dst.Finish();
    return absl::OkStatus();
  });
}

#define BCAST_REDUCE_ROW(name, kind) \
  { "", #name, 1, ReduceOp<ReduceKind::kind> }

constexpr OpRegistration kReduceOps[] = {
    BCAST_REDUCE_ROW(ReduceSum, kSum),
    BCAST_REDUCE_ROW(ReduceMean, kMean),
    BCAST_REDUCE_ROW(ReduceMax, kMax),
    BCAST_REDUCE_ROW(ReduceMin, kMin),
    BCAST_REDUCE_ROW(ReduceProd, kProd),
    BCAST_REDUCE_ROW(ReduceL1, kL1),
    BCAST_REDUCE_ROW(ReduceL2, kL2),
    BCAST_REDUCE_ROW(ReduceLogSum, kLogSum),
    BCAST_REDUCE_ROW(ReduceLogSumExp, kLogSumExp),
    BCAST_REDUCE_ROW(ReduceSumSquare, kSumSquare),
    {"", "ArgMax", 1, ArgOp<true>},
    {"", "ArgMin", 1, ArgOp<false>},
    {"", "Softmax", 1, SoftmaxOp<SoftmaxKind::kSoftmax>},
    {"", "LogSoftmax", 1, SoftmaxOp<SoftmaxKind::kLogSoftmax>},
    {"", "Hardmax", 1, SoftmaxOp<SoftmaxKind::kHardmax>},
};

#undef BCAST_REDUCE_ROW

}  // namespace

absl::Span<const OpRegistration> ReduceOps() { return kReduceOps; }

}  // namespace onnx_bcast::runtime
