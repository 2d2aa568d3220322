// Fast binary/ternary kernels: validation, then a driver that walks a BroadcastPlan with
// flat inner loops (binary_loops.h), split across threads for large outputs.
#include "runtime/kernels/binary.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "runtime/kernels/binary_loops.h"
#include "runtime/kernels/stream_store.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {
namespace {

using binary_internal::InnerFn;
using binary_internal::InnerFns;

constexpr int kMaxInputs = 3;

struct Operands {
  int num_inputs = 0;
  std::array<const char*, kMaxInputs> in = {};
  std::array<int64_t, kMaxInputs> in_size = {};  // bytes per element
  char* out = nullptr;
  int64_t out_size = 0;
};

// Rows shorter than this are written directly even when streaming: a partial line written
// with non-temporal stores costs more than the read-for-ownership it saves.
constexpr int64_t kMinStreamRowBytes = 256;

// Runs one contiguous inner loop, straight into the output or, for outputs too large to
// stay in cache, with non-temporal stores (binary_loops.h, StreamingLoop).
struct Emitter {
  const InnerFns* fns;
  bool stream;

  void operator()(int mask, const std::array<const void*, kMaxInputs>& ptr, char* out,
                  int64_t len, int64_t out_size) const {
    const InnerFn streaming = stream ? fns->stream[mask] : nullptr;
    if (streaming != nullptr && len * out_size >= kMinStreamRowBytes) {
      streaming(ptr.data(), out, len);
    } else {
      fns->fn[mask](ptr.data(), out, len);
    }
  }
};

// Computes output elements [begin, end). Only whole rows of the innermost collapsed dim
// reach the inner loops; index arithmetic happens once per row, never per element.
void RunRange(const BroadcastPlan& plan, const Operands& ops, const Emitter& emit, int64_t begin,
              int64_t end) {
  const int n = ops.num_inputs;
  std::array<const void*, kMaxInputs> ptr = {};
  switch (plan.kind()) {
    case KernelKind::kEmpty:
      return;
    case KernelKind::kSameShape: {
      for (int i = 0; i < n; ++i) ptr[i] = ops.in[i] + begin * ops.in_size[i];
      emit(0, ptr, ops.out + begin * ops.out_size, end - begin, ops.out_size);
      return;
    }
    case KernelKind::kScalarLeft:
    case KernelKind::kScalarRight: {
      const int small = plan.broadcast_input();
      for (int i = 0; i < n; ++i) ptr[i] = ops.in[i] + (i == small ? 0 : begin * ops.in_size[i]);
      emit(1 << small, ptr, ops.out + begin * ops.out_size, end - begin, ops.out_size);
      return;
    }
    case KernelKind::kRow:
    case KernelKind::kColumn: {
      // [M,N]: the full input advances by N per row; the small one is either the same
      // row of N each time (kRow) or one element per row (kColumn).
      const int small = plan.broadcast_input();
      const bool row = plan.kind() == KernelKind::kRow;
      const int mask = row ? 0 : 1 << small;
      const int64_t inner = plan.dims()[1];
      int64_t m = begin / inner;
      int64_t col = begin % inner;
      for (int64_t pos = begin; pos < end; ++m, col = 0) {
        const int64_t len = std::min(inner - col, end - pos);
        for (int i = 0; i < n; ++i) {
          const int64_t offset = i != small ? pos : (row ? col : m);
          ptr[i] = ops.in[i] + offset * ops.in_size[i];
        }
        emit(mask, ptr, ops.out + pos * ops.out_size, len, ops.out_size);
        pos += len;
      }
      return;
    }
    case KernelKind::kGeneral:
      break;
  }

  // kGeneral: an odometer over the outer dims, a flat loop over the innermost.
  const int rank = plan.rank();
  const auto& dims = plan.dims();
  const int64_t inner = dims[rank - 1];
  int mask = 0;
  std::array<int64_t, kMaxInputs> inner_stride = {};
  for (int i = 0; i < n; ++i) {
    inner_stride[i] = plan.strides(i)[rank - 1];
    if (inner_stride[i] == 0) mask |= 1 << i;
  }
  // Strides copied per (dim, input) so the odometer reads one small contiguous table.
  absl::InlinedVector<std::array<int64_t, kMaxInputs>, 16> stride(rank);
  for (int d = 0; d < rank; ++d) {
    for (int i = 0; i < n; ++i) stride[d][i] = plan.strides(i)[d];
  }
  absl::InlinedVector<int64_t, 16> index(rank, 0);
  std::array<int64_t, kMaxInputs> offset = {};  // element offset of the current row start
  int64_t outer = begin / inner;
  for (int d = rank - 2; d >= 0; --d) {
    index[d] = outer % dims[d];
    outer /= dims[d];
    for (int i = 0; i < n; ++i) offset[i] += index[d] * stride[d][i];
  }
  int64_t col = begin % inner;
  for (int64_t pos = begin; pos < end; col = 0) {
    const int64_t len = std::min(inner - col, end - pos);
    for (int i = 0; i < n; ++i) {
      ptr[i] = ops.in[i] + (offset[i] + col * inner_stride[i]) * ops.in_size[i];
    }
    emit(mask, ptr, ops.out + pos * ops.out_size, len, ops.out_size);
    pos += len;
    for (int d = rank - 2; d >= 0; --d) {
      for (int i = 0; i < n; ++i) offset[i] += stride[d][i];
      if (++index[d] < dims[d]) break;
      for (int i = 0; i < n; ++i) offset[i] -= stride[d][i] * dims[d];
      index[d] = 0;
    }
  }
}

void RunKernel(const BroadcastPlan& plan, const Operands& ops, const InnerFns& fns,
         const BinaryOptions& opts) {
  const int64_t total = plan.output_elements();
  const Emitter emit{&fns, total * ops.out_size >= opts.streaming_threshold_bytes};
  auto run_range = [&](int64_t begin, int64_t end) {
    RunRange(plan, ops, emit, begin, end);
    // Non-temporal stores are weakly ordered: fence them before the pool's hand-back (or
    // the caller) lets anyone read the output.
    if (emit.stream) StreamFence();
  };
  if (opts.threads <= 1 || total < opts.parallel_threshold || total == 0) {
    run_range(0, total);
    return;
  }
  // A few tasks per thread, taken from a shared counter, so a thread that starts late
  // (the machine is busy, a helper is slow to wake) costs a fraction of its share.
  constexpr int kTasksPerThread = 4;
  // Chunk edges on multiples of 64 elements keep threads off each other's cache lines.
  constexpr int64_t kGrain = 64;
  const int64_t units = (total + kGrain - 1) / kGrain;
  const int64_t tasks = std::min<int64_t>(int64_t{opts.threads} * kTasksPerThread, units);
  ThreadPool& pool = opts.pool != nullptr ? *opts.pool : ThreadPool::Default();
  pool.ParallelFor(tasks, opts.threads, [&](int64_t task) {
    const int64_t begin = std::min(total, units * task / tasks * kGrain);
    const int64_t end = std::min(total, units * (task + 1) / tasks * kGrain);
    if (begin < end) run_range(begin, end);
  });
}

// `op` and `role` ("Add", "input A") are only joined on failure: the success path of a
// small kernel call must not allocate.
absl::Status CheckOperand(absl::string_view op, absl::string_view role, const Tensor& t,
                          const std::vector<int64_t>& planned) {
  if (t.shape() != planned) {
    return absl::InvalidArgumentError(absl::StrCat(op, role.empty() ? "" : " ", role,
                                                   " has shape ", ShapeToString(t.shape()),
                                                   ", plan expects ", ShapeToString(planned)));
  }
  if (t.raw_data() == nullptr && t.num_elements() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, role.empty() ? "" : " ", role, " has no data"));
  }
  return absl::OkStatus();
}

absl::Status CheckOutput(absl::string_view op_name, const BroadcastPlan& plan, const Tensor* out,
                         DType expected) {
  if (out == nullptr) return absl::InvalidArgumentError(absl::StrCat(op_name, ": null output"));
  if (out->dtype() != expected) {
    return absl::InvalidArgumentError(absl::StrCat(op_name, ": output dtype is ",
                                                   DTypeName(out->dtype()), ", expected ",
                                                   DTypeName(expected)));
  }
  return CheckOperand(op_name, "output", *out, plan.output_shape());
}

}  // namespace

DType BinaryOutputDType(OpKind op, DType a) {
  // The attributes never change the output dtype (Mod and BitShift keep the input's).
  return ElemOpOutputDType(ElemOpOf(op, BinaryAttributes()), a);
}

absl::Status BinaryOp(OpKind op, const Tensor& a, const Tensor& b, Tensor* out,
                      const BinaryOptions& opts) {
  if (out == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(OpKindName(op), ": null output"));
  }
  absl::StatusOr<BroadcastPlan> plan = BroadcastPlan::Create(a.shape(), b.shape(), out->shape());
  if (!plan.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(OpKindName(op), ": ", plan.status().message()));
  }
  return BinaryOp(op, *plan, a, b, out, opts);
}

absl::StatusOr<BinaryKernel> BinaryKernel::Create(OpKind op, BroadcastPlan plan, DType a,
                                                  DType b, const BinaryAttributes& attrs) {
  BCAST_ASSIGN_OR_RETURN(ElemOp elem, ResolveElemOp(op, a, b, attrs));
  const absl::string_view name = OpKindName(op);
  if (plan.num_inputs() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": plan has ", plan.num_inputs(), " inputs, expected 2"));
  }
  BinaryKernel kernel(std::move(plan));
  kernel.name_ = name;
  kernel.dtypes_ = {a, b};
  kernel.out_dtype_ = ElemOpOutputDType(elem, a);
  if (elem == ElemOp::kPow) {
    kernel.fns_ = binary_internal::LookupPow(a, b);
  } else {
    kernel.fns_ = binary_internal::LookupArithmetic(elem, a);
    if (!kernel.fns_.ok()) kernel.fns_ = binary_internal::LookupLogic(elem, a);
  }
  if (!kernel.fns_.ok()) {
    return absl::InternalError(absl::StrCat(name, ": no kernel for ", DTypeName(a)));
  }
  return kernel;
}

absl::StatusOr<BinaryKernel> BinaryKernel::CreateWhere(BroadcastPlan plan, DType dtype) {
  if (plan.num_inputs() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("Where: plan has ", plan.num_inputs(), " inputs, expected 3"));
  }
  BinaryKernel kernel(std::move(plan));
  kernel.name_ = "Where";
  kernel.dtypes_ = {DType::kBool, dtype, dtype};
  kernel.out_dtype_ = dtype;
  kernel.fns_ = binary_internal::LookupWhere(DTypeSize(dtype));
  if (!kernel.fns_.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("Where: unsupported dtype ", DTypeName(dtype)));
  }
  return kernel;
}

absl::Status BinaryKernel::Run(absl::Span<const Tensor* const> inputs, Tensor* out,
                               const BinaryOptions& opts) const {
  static constexpr absl::string_view kRoles[2][3] = {{"input A", "input B", ""},
                                                     {"condition", "X", "Y"}};
  const bool where = dtypes_.size() == 3;
  if (inputs.size() != dtypes_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ": ", inputs.size(), " inputs, expected ", dtypes_.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const absl::string_view role = kRoles[where ? 1 : 0][i];
    if (inputs[i]->dtype() != dtypes_[i]) {
      return absl::InvalidArgumentError(absl::StrCat(name_, " ", role, " is ",
                                                     DTypeName(inputs[i]->dtype()), ", kernel expects ",
                                                     DTypeName(dtypes_[i])));
    }
    BCAST_RETURN_IF_ERROR(CheckOperand(name_, role, *inputs[i], plan_.input_shape(i)));
  }
  BCAST_RETURN_IF_ERROR(CheckOutput(name_, plan_, out, out_dtype_));
  Operands ops;
  for (const Tensor* t : inputs) {
    ops.in[ops.num_inputs] = static_cast<const char*>(t->raw_data());
    ops.in_size[ops.num_inputs] = static_cast<int64_t>(t->element_size());
    ++ops.num_inputs;
  }
  ops.out = static_cast<char*>(out->raw_data());
  ops.out_size = static_cast<int64_t>(out->element_size());
  RunKernel(plan_, ops, fns_, opts);
  return absl::OkStatus();
}

absl::Status BinaryOp(OpKind op, const BroadcastPlan& plan, const Tensor& a, const Tensor& b,
                      Tensor* out, const BinaryOptions& opts) {
  BCAST_ASSIGN_OR_RETURN(BinaryKernel kernel,
                         BinaryKernel::Create(op, plan, a.dtype(), b.dtype(), opts.attrs));
  const Tensor* inputs[] = {&a, &b};
  return kernel.Run(inputs, out, opts);
}

absl::Status Where(const Tensor& cond, const Tensor& x, const Tensor& y, Tensor* out,
                   const BinaryOptions& opts) {
  if (out == nullptr) return absl::InvalidArgumentError("Where: null output");
  const std::vector<int64_t> inputs[] = {cond.shape(), x.shape(), y.shape()};
  absl::StatusOr<BroadcastPlan> plan = BroadcastPlan::Create(inputs, out->shape());
  if (!plan.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("Where: ", plan.status().message()));
  }
  return Where(*plan, cond, x, y, out, opts);
}

absl::Status Where(const BroadcastPlan& plan, const Tensor& cond, const Tensor& x, const Tensor& y,
                   Tensor* out, const BinaryOptions& opts) {
  if (cond.dtype() != DType::kBool) {
    return absl::InvalidArgumentError(
        absl::StrCat("Where: condition must be bool, got ", DTypeName(cond.dtype())));
  }
  if (x.dtype() != y.dtype()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Where: X and Y dtypes differ: ", DTypeName(x.dtype()), " vs ", DTypeName(y.dtype())));
  }
  BCAST_ASSIGN_OR_RETURN(BinaryKernel kernel, BinaryKernel::CreateWhere(plan, x.dtype()));
  const Tensor* inputs[] = {&cond, &x, &y};
  return kernel.Run(inputs, out, opts);
}

}  // namespace onnx_bcast::runtime
