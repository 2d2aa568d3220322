// Op family table: matrix products. MatMul, MatMulInteger and QLinearMatMul (numpy batch
// broadcasting through broadcast::BroadcastMatMul), Gemm (C broadcast unidirectionally), Einsum
// (equation parsed here, contracted by kernels/einsum.h) and Det.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "broadcast/rules.h"
#include "broadcast/view.h"
#include "runtime/kernels/det.h"
#include "runtime/kernels/einsum.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/movement.h"
#include "runtime/kernels/qlinear.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/registry.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {
namespace {

// The batch layout of a (possibly 1-D-promoted) matrix product.
struct MatMulPlan {
  std::vector<int64_t> out_shape;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  std::vector<int64_t> a_offset, b_offset;
};

// Validates shapes with the project's matmul rule and lists each batch's offsets into a and b.
absl::StatusOr<MatMulPlan> PlanMatMul(const OpContext& ctx, const std::vector<int64_t>& a_shape,
                                      const std::vector<int64_t>& b_shape) {
  if (a_shape.empty() || b_shape.empty()) return ctx.Error("MatMul inputs must have rank >= 1");
  broadcast::BroadcastResult r =
      broadcast::BroadcastMatMul(broadcast::Shape::OfVector(a_shape), broadcast::Shape::OfVector(b_shape));
  if (!r.ok()) {
    return ctx.Error(absl::StrCat("shapes ", ShapeToString(a_shape), " and ",
                                  ShapeToString(b_shape), " do not multiply: ", r.reason));
  }
  MatMulPlan plan;
  plan.out_shape = *r.output.Extents();
  std::vector<int64_t> a = a_shape, b = b_shape;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  plan.m = a[a.size() - 2];
  plan.k = a.back();
  plan.n = b.back();
  if (plan.m > kernels::kMaxBlasDim || plan.n > kernels::kMaxBlasDim ||
      plan.k > kernels::kMaxBlasDim) {
    return ctx.Unsupported("matrix dims above 2^30");
  }
  const std::vector<int64_t> a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  absl::StatusOr<std::vector<int64_t>> batch_shape =
      broadcast::BroadcastConcrete(std::vector<std::vector<int64_t>>{a_batch, b_batch});
  if (!batch_shape.ok()) return ctx.Error(std::string(batch_shape.status().message()));
  absl::StatusOr<int64_t> out_count = ShapeElementCount(plan.out_shape);
  if (!out_count.ok() || *out_count > ctx.options().max_tensor_elements) {
    return absl::ResourceExhaustedError(
        absl::StrCat(ctx.node().Label(), ": output ", ShapeToString(plan.out_shape), " too large"));
  }
  if (*out_count == 0) {
    plan.batch = 0;
    return plan;
  }
  const int64_t batch = nn::Product(*batch_shape, 0, batch_shape->size());
  const int64_t a_count = nn::Product(a_batch, 0, a_batch.size());
  const int64_t b_count = nn::Product(b_batch, 0, b_batch.size());
  if (b_count == 1 && a_count == batch && batch > 1) {
    // b is shared by every batch and a's batches are contiguous: one product with M*batch rows.
    plan.m *= batch;
    plan.a_offset = {0};
    plan.b_offset = {0};
    return plan;
  }
  plan.batch = batch;
  // Each batch's matrix offsets: the batch dims as a broadcast view (stride 0 where a or b is
  // broadcast), scaled by the matrix sizes.
  const std::vector<int64_t> batches[] = {a_batch, b_batch};
  absl::StatusOr<broadcast::BroadcastView> view = broadcast::BroadcastView::Create(batches, *batch_shape);
  if (!view.ok()) return ctx.Error(std::string(view.status().message()));
  plan.a_offset = view->Offsets(0, plan.m * plan.k);
  plan.b_offset = view->Offsets(1, plan.k * plan.n);
  return plan;
}

// PlanMatMul cached per input signature (the offsets are the costly part for many batches).
absl::StatusOr<const MatMulPlan*> CachedMatMulPlan(OpContext& ctx, const Tensor& a,
                                                   const Tensor& b) {
  return ctx.CachedPlan<MatMulPlan>([&] { return PlanMatMul(ctx, a.shape(), b.shape()); });
}

// The floating path of MatMul and Gemm: fn(a, b, out) on A, B and the output viewed as the
// compute type (float for float16/bfloat16, converted back after).
template <class Fn>
absl::Status VisitFloatProduct(const OpContext& ctx, const Tensor& a, const Tensor& b, Tensor* out,
                               Fn&& fn) {
  return nn::VisitFloat(ctx, a.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    nn::ComputeIn<C> x(a), y(b);
    nn::ComputeOut<C> z(out);
    fn(x.data(), y.data(), z.data());
    z.Finish();
    return absl::OkStatus();
  });
}

absl::Status MatMulOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireInput(1));
  if (a->dtype() != b->dtype()) return ctx.Error("A and B dtypes differ");
  BCAST_ASSIGN_OR_RETURN(const MatMulPlan* plan, CachedMatMulPlan(ctx, *a, *b));
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, a->dtype(), plan->out_shape));
  if (out->num_elements() == 0) return absl::OkStatus();
  const DType dtype = a->dtype();
  if (IsFloatingPoint(dtype)) {
    kernels::ParallelFor parallel_for;
    const kernels::ParallelFor* parallel = nn::KernelThreads(ctx, &parallel_for);
    return VisitFloatProduct(ctx, *a, *b, out, [&](const auto* x, const auto* y, auto* z) {
      kernels::BatchedMatMul(plan->batch, plan->m, plan->n, plan->k, x, plan->a_offset.data(), y,
                             plan->b_offset.data(), z, parallel);
    });
  }
  if (!IsInteger(dtype)) return ctx.Unsupported("MatMul on " + std::string(DTypeName(dtype)));
  return VisitDType(dtype, absl::OkStatus(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      kernels::BatchedMatMul<T>(plan->batch, plan->m, plan->n, plan->k, a->data<T>(),
                                plan->a_offset.data(), b->data<T>(), plan->b_offset.data(),
                                out->data<T>());
    }
    return absl::OkStatus();
  });
}

// A 8-bit tensor minus its zero point (a scalar, or 1-D along `axis_from_end` of the matrix:
// 2 = rows of A, 1 = columns of B), widened to int32.
// `x` is int8 or uint8 (the ops check).
absl::StatusOr<std::vector<int32_t>> Centered(const OpContext& ctx, const Tensor& x,
                                              const Tensor* zp, int axis_from_end) {
  std::vector<int32_t> out(static_cast<size_t>(x.num_elements()));
  std::vector<int64_t> z = zp != nullptr ? nn::LoadInts(*zp) : std::vector<int64_t>{0};
  if (z.empty()) z = {0};
  int64_t inner = 1, extent = 1;
  if (z.size() > 1) {
    std::vector<int64_t> s = x.shape();
    if (s.size() == 1) s.insert(s.begin() + (axis_from_end == 2 ? 0 : 1), 1);
    extent = s[s.size() - axis_from_end];
    inner = axis_from_end == 2 ? s.back() : 1;
    if (static_cast<int64_t>(z.size()) != extent) return ctx.Error("zero point size mismatch");
  }
  const kernels::SliceParam<int64_t> param{z.data(), static_cast<int64_t>(z.size()), inner};
  if (x.dtype() == DType::kInt8) {
    kernels::SubtractZeroPoint(x.data<int8_t>(), x.num_elements(), param, out.data());
  } else {
    kernels::SubtractZeroPoint(x.data<uint8_t>(), x.num_elements(), param, out.data());
  }
  return out;
}

absl::Status MatMulIntegerOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireInput(1));
  for (const Tensor* t : {a, b}) {
    if (t->dtype() != DType::kInt8 && t->dtype() != DType::kUInt8) {
      return ctx.Error("MatMulInteger takes int8 or uint8 inputs");
    }
  }
  BCAST_ASSIGN_OR_RETURN(const MatMulPlan* plan, CachedMatMulPlan(ctx, *a, *b));
  BCAST_ASSIGN_OR_RETURN(std::vector<int32_t> x, Centered(ctx, *a, ctx.input(2), 2));
  BCAST_ASSIGN_OR_RETURN(std::vector<int32_t> y, Centered(ctx, *b, ctx.input(3), 1));
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, DType::kInt32, plan->out_shape));
  if (out->num_elements() == 0) return absl::OkStatus();
  kernels::BatchedMatMul<int32_t>(plan->batch, plan->m, plan->n, plan->k, x.data(),
                                  plan->a_offset.data(), y.data(), plan->b_offset.data(),
                                  out->data<int32_t>());
  return absl::OkStatus();
}

// The per-element values of a scale or zero-point input (scalar or 1-D) as doubles.
std::vector<double> ParamValues(const Tensor* t, double fallback) {
  if (t == nullptr || t->num_elements() == 0) return {fallback};
  std::vector<double> v(static_cast<size_t>(t->num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = nn::LoadAsDouble(*t, i);
  return v;
}

absl::Status QLinearMatMulOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const std::vector<const Tensor*> in, ctx.RequireInputs(8));
  const Tensor &a = *in[0], &b = *in[3], &y_zp = *in[7];
  for (const Tensor* t : {&a, &b, &y_zp}) {
    if (t->dtype() != DType::kInt8 && t->dtype() != DType::kUInt8) {
      return ctx.Error("QLinearMatMul takes int8 or uint8 tensors");
    }
  }
  BCAST_ASSIGN_OR_RETURN(const MatMulPlan* plan, CachedMatMulPlan(ctx, a, b));
  BCAST_ASSIGN_OR_RETURN(std::vector<int32_t> x, Centered(ctx, a, in[2], 2));
  BCAST_ASSIGN_OR_RETURN(std::vector<int32_t> y, Centered(ctx, b, in[5], 1));
  const std::vector<double> a_scale = ParamValues(in[1], 1), b_scale = ParamValues(in[4], 1);
  const double y_scale = nn::LoadAsDouble(*in[6], 0);
  const int64_t zp = static_cast<int64_t>(nn::LoadAsDouble(y_zp, 0));
  if (y_scale == 0) return ctx.Error("y_scale is zero");
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, y_zp.dtype(), plan->out_shape));
  const int64_t count = out->num_elements();
  if (count == 0) return absl::OkStatus();
  std::vector<int32_t> acc(static_cast<size_t>(count));
  kernels::BatchedMatMul<int32_t>(plan->batch, plan->m, plan->n, plan->k, x.data(),
                                  plan->a_offset.data(), y.data(), plan->b_offset.data(),
                                  acc.data());
  // Rows of the output are M (per-row a_scale), columns N (per-column b_scale).
  const int64_t n = plan->n, m = std::max<int64_t>(1, a.rank() >= 2 ? a.shape()[a.rank() - 2] : 1);
  // Scales are per tensor, per row of A or per column of B (found by fuzz_run: a longer or
  // shorter list was indexed past its end).
  if ((a_scale.size() != 1 && static_cast<int64_t>(a_scale.size()) != m) ||
      (b_scale.size() != 1 && static_cast<int64_t>(b_scale.size()) != n)) {
    return ctx.Error(absl::StrCat("a_scale has ", a_scale.size(), " values and b_scale ",
                                  b_scale.size(), "; expected 1 or ", m, " (rows of A) and 1 or ",
                                  n, " (columns of B)"));
  }
  const kernels::SliceParam<double> rows{a_scale.data(), static_cast<int64_t>(a_scale.size()), n},
      cols{b_scale.data(), static_cast<int64_t>(b_scale.size()), 1};
  if (y_zp.dtype() == DType::kUInt8) {
    kernels::Requantize(acc.data(), count, rows, cols, y_scale, zp, out->data<uint8_t>());
  } else {
    kernels::Requantize(acc.data(), count, rows, cols, y_scale, zp, out->data<int8_t>());
  }
  return absl::OkStatus();
}

// Writes C broadcast to [M,N] into `out` (C's dims right-aligned, 1s repeat): a copy of the
// stride-0 view.
template <class C>
void FillBroadcastC(const C* c, const std::vector<int64_t>& c_shape, int64_t m, int64_t n, C* out) {
  const int64_t c0 = c_shape.size() >= 2 ? c_shape[c_shape.size() - 2] : 1;
  const int64_t c1 = c_shape.empty() ? 1 : c_shape.back();
  StridedCopy(c, 0, {c0 == 1 ? 0 : c1, c1 == 1 ? 0 : 1}, {m, n}, sizeof(C), out);
}

absl::Status GemmOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireInput(1));
  const Tensor* c = ctx.input(2);
  const Node& node = ctx.node();
  const bool ta = node.GetInt("transA", 0) != 0, tb = node.GetInt("transB", 0) != 0;
  const double alpha = node.GetFloat("alpha", 1.0f), beta = node.GetFloat("beta", 1.0f);
  if (a->rank() != 2 || b->rank() != 2) return ctx.Error("A and B must be 2-D");
  if (a->dtype() != b->dtype() || (c != nullptr && c->dtype() != a->dtype())) {
    return ctx.Error("A, B and C dtypes differ");
  }
  const int64_t m = a->shape()[ta ? 1 : 0], k = a->shape()[ta ? 0 : 1];
  const int64_t kb = b->shape()[tb ? 1 : 0], n = b->shape()[tb ? 0 : 1];
  if (k != kb) {
    return ctx.Error(
        absl::StrCat("K differs: A ", ShapeToString(a->shape()), " B ", ShapeToString(b->shape())));
  }
  if (std::max({m, n, k}) > kernels::kMaxBlasDim) return ctx.Unsupported("dims above 2^30");
  if (c != nullptr) {
    broadcast::BroadcastResult r = broadcast::BroadcastUnidirectional(broadcast::Shape::Of({m, n}),
                                                              broadcast::Shape::OfVector(c->shape()));
    if (!r.ok() || c->rank() > 2) {
      return ctx.Error(absl::StrCat("C ", ShapeToString(c->shape()), " does not broadcast to [", m,
                                    ",", n, "]: ", r.reason));
    }
  }
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, a->dtype(), {m, n}));
  if (m == 0 || n == 0) return absl::OkStatus();
  const int64_t lda = a->shape()[1], ldb = b->shape()[1];
  const DType dtype = a->dtype();
  if (IsFloatingPoint(dtype)) {
    return VisitFloatProduct(ctx, *a, *b, out, [&](const auto* x, const auto* y, auto* z) {
      using C = std::remove_pointer_t<decltype(z)>;
      if (c != nullptr) {
        nn::ComputeIn<C> cc(*c);
        FillBroadcastC(cc.data(), c->shape(), m, n, z);
      }
      // Row slices of op(A) and C, each a product of its own on one thread.
      kernels::ParallelFor parallel_for;
      kernels::ProductRows(nn::KernelThreads(ctx, &parallel_for), m, m * n * k,
                           [&](int64_t r0, int64_t r1) {
                             kernels::Gemm(ta, tb, r1 - r0, n, k, static_cast<C>(alpha),
                                           x + (ta ? r0 : r0 * lda), lda, y, ldb,
                                           c != nullptr ? static_cast<C>(beta) : C(0), z + r0 * n,
                                           n);
                           });
    });
  }
  return VisitDType(dtype, ctx.Unsupported("Gemm on " + std::string(DTypeName(dtype))),
                    [&](auto tag) -> absl::Status {
                      using T = typename decltype(tag)::type;
                      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
                        T* z = out->data<T>();
                        if (c != nullptr) FillBroadcastC(c->data<T>(), c->shape(), m, n, z);
                        kernels::GemmLoops<T>(ta, tb, m, n, k, alpha, a->data<T>(), lda,
                                              b->data<T>(), ldb, c != nullptr ? beta : 0.0, z, n);
                        return absl::OkStatus();
                      }
                      return ctx.Unsupported("Gemm on " + std::string(DTypeName(dtype)));
                    });
}

absl::Status DetOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  const Tensor& in = *x;
  const int64_t rank = in.rank();
  if (rank < 2 || in.shape()[rank - 1] != in.shape()[rank - 2]) {
    return ctx.Error("input must be [*, N, N]");
  }
  const int64_t n = in.shape().back();
  std::vector<int64_t> out_shape(in.shape().begin(), in.shape().end() - 2);
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, in.dtype(), out_shape));
  return nn::VisitFloat(ctx, in.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    nn::ComputeIn<C> src(in);
    nn::ComputeOut<C> dst(out);
    kernels::Determinants<C>(src.data(), out->num_elements(), n, dst.data());
    dst.Finish();
    return absl::OkStatus();
  });
}

// One parsed Einsum term: label ids per dim (letters 0..51, ellipsis dims 52+).
using Term = std::vector<int>;

int LetterId(char ch) {
  if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  return -1;
}

// Parses one term; `ellipsis_at` gets the position of "..." (or -1).
bool ParseTerm(const std::string& text, std::vector<int>* letters, int* ellipsis_at) {
  *ellipsis_at = -1;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, "...") == 0) {
      if (*ellipsis_at >= 0) return false;
      *ellipsis_at = static_cast<int>(letters->size());
      i += 2;
      continue;
    }
    const int id = LetterId(text[i]);
    if (id < 0) return false;
    letters->push_back(id);
  }
  return true;
}

absl::Status EinsumOp(OpContext& ctx) {
  std::string eq;
  for (char ch : ctx.node().GetString("equation", "")) {
    if (ch != ' ') eq += ch;
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms = absl::StrSplit(lhs, ',');
  if (static_cast<int>(terms.size()) != ctx.num_inputs()) {
    return ctx.Error("equation has " + std::to_string(terms.size()) + " terms for " +
                     std::to_string(ctx.num_inputs()) + " inputs");
  }
  constexpr int kEllipsisBase = 52;
  std::vector<const Tensor*> inputs;
  std::vector<Term> in_terms;
  int ellipsis_rank = 0;
  std::map<int, int> letter_uses;
  std::vector<std::pair<std::vector<int>, int>> parsed;
  for (size_t t = 0; t < terms.size(); ++t) {
    BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(static_cast<int>(t)));
    if (!inputs.empty() && x->dtype() != inputs[0]->dtype()) {
      return ctx.Error("inputs have different dtypes");
    }
    inputs.push_back(x);
    std::vector<int> letters;
    int at;
    if (!ParseTerm(terms[t], &letters, &at)) return ctx.Error("bad equation '" + eq + "'");
    const int e = static_cast<int>(x->rank()) - static_cast<int>(letters.size());
    if ((at < 0 && e != 0) || e < 0) {
      return ctx.Error("term '" + terms[t] + "' does not match rank " + std::to_string(x->rank()));
    }
    ellipsis_rank = std::max(ellipsis_rank, e);
    for (int id : letters) ++letter_uses[id];
    parsed.push_back({letters, at});
  }
  for (size_t t = 0; t < parsed.size(); ++t) {
    const auto& [letters, at] = parsed[t];
    const int e = static_cast<int>(inputs[t]->rank()) - static_cast<int>(letters.size());
    Term term(letters.begin(), letters.begin() + std::max(at, 0));
    for (int d = 0; d < e; ++d) term.push_back(kEllipsisBase + ellipsis_rank - e + d);
    term.insert(term.end(), letters.begin() + std::max(at, 0), letters.end());
    if (at < 0) term = letters;
    in_terms.push_back(term);
  }
  Term out_term;
  if (arrow != std::string::npos) {
    std::vector<int> letters;
    int at;
    if (!ParseTerm(eq.substr(arrow + 2), &letters, &at)) {
      return ctx.Error("bad equation '" + eq + "'");
    }
    out_term.assign(letters.begin(), letters.begin() + std::max(at, 0));
    if (at >= 0) {
      for (int d = 0; d < ellipsis_rank; ++d) out_term.push_back(kEllipsisBase + d);
    }
    out_term.insert(out_term.end(), letters.begin() + std::max(at, 0), letters.end());
    if (at < 0) out_term = letters;
  } else {
    for (int d = 0; d < ellipsis_rank; ++d) out_term.push_back(kEllipsisBase + d);
    for (const auto& [id, uses] : letter_uses) {
      if (uses == 1) out_term.push_back(id);
    }
  }
  // Extents per label; ellipsis dims of 1 broadcast.
  std::map<int, int64_t> extent;
  for (size_t t = 0; t < in_terms.size(); ++t) {
    for (size_t d = 0; d < in_terms[t].size(); ++d) {
      const int id = in_terms[t][d];
      const int64_t dim = inputs[t]->shape()[d];
      auto [it, fresh] = extent.emplace(id, dim);
      if (fresh || it->second == dim) continue;
      if (id >= kEllipsisBase && (it->second == 1 || dim == 1)) {
        it->second = std::max(it->second, dim);
        continue;
      }
      return ctx.Error("label extents differ: " + std::to_string(it->second) + " vs " +
                       std::to_string(dim));
    }
  }
  // Loop labels: output labels first, then the summed ones.
  std::vector<int> labels = out_term;
  for (const auto& [id, ext] : extent) {
    if (std::find(labels.begin(), labels.end(), id) == labels.end()) labels.push_back(id);
  }
  std::vector<int64_t> out_shape, dims;
  for (int id : out_term) {
    if (!extent.count(id)) return ctx.Error("output label not in any input");
    out_shape.push_back(extent[id]);
  }
  int64_t work = 1;
  for (int id : labels) {
    dims.push_back(extent[id]);
    std::optional<int64_t> w = nn::CheckedMul(work, extent[id]);
    if (!w || *w > (int64_t{1} << 32)) return ctx.Unsupported("Einsum loop too large");
    work = *w;
  }
  const int rank = static_cast<int>(labels.size());
  // strides[t][l]: how input t moves when label l advances (repeated labels add up).
  std::vector<std::vector<int64_t>> strides(inputs.size() + 1, std::vector<int64_t>(rank, 0));
  auto fill = [&](const Term& term, const std::vector<int64_t>& shape, std::vector<int64_t>& s) {
    int64_t stride = 1;
    for (int d = static_cast<int>(term.size()) - 1; d >= 0; --d) {
      const int l =
          static_cast<int>(std::find(labels.begin(), labels.end(), term[d]) - labels.begin());
      if (shape[d] != 1) s[l] += stride;
      stride *= shape[d];
    }
  };
  for (size_t t = 0; t < inputs.size(); ++t) fill(in_terms[t], inputs[t]->shape(), strides[t]);
  fill(out_term, out_shape, strides.back());
  const DType dtype = inputs[0]->dtype();
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, dtype, out_shape));
  const int64_t out_count = out->num_elements();
  if (IsFloatingPoint(dtype)) {
    return nn::VisitFloat(ctx, dtype, [&](auto tag) {
      using C = typename decltype(tag)::type;
      std::vector<nn::ComputeIn<C>> views;
      std::vector<const C*> operands;
      views.reserve(inputs.size());
      for (const Tensor* t : inputs) operands.push_back(views.emplace_back(*t).data());
      std::vector<double> acc(static_cast<size_t>(out_count));
      kernels::EinsumContract<C>(operands, strides, dims, out_count, acc.data());
      nn::ComputeOut<C> dst(out);
      for (size_t i = 0; i < acc.size(); ++i) dst.data()[i] = static_cast<C>(acc[i]);
      dst.Finish();
      return absl::OkStatus();
    });
  }
  if (!IsInteger(dtype)) return ctx.Unsupported("Einsum on " + std::string(DTypeName(dtype)));
  std::vector<std::vector<int64_t>> ints;
  ints.reserve(inputs.size());
  std::vector<const int64_t*> operands;
  for (const Tensor* t : inputs) operands.push_back(ints.emplace_back(nn::LoadInts(*t)).data());
  std::vector<int64_t> acc(static_cast<size_t>(out_count));
  kernels::EinsumContract<int64_t>(operands, strides, dims, out_count, acc.data());
  VisitDType(dtype, 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // dtype is an integer here; the guard keeps the half types out of the cast (clang checks it).
    if constexpr (std::is_integral_v<T>) {
      for (size_t i = 0; i < acc.size(); ++i) out->data<T>()[i] = static_cast<T>(acc[i]);
    }
    return 0;
  });
  return absl::OkStatus();
}

constexpr OpRegistration kMatrixOps[] = {
    {"", "MatMul", 1, MatMulOp},
    {"", "MatMulInteger", 10, MatMulIntegerOp},
    {"", "QLinearMatMul", 10, QLinearMatMulOp},
    {"", "Gemm", 1, GemmOp},
    {"", "Det", 11, DetOp},
    {"", "Einsum", 12, EinsumOp},
};

}  // namespace

absl::Span<const OpRegistration> MatrixOps() { return kMatrixOps; }

}  // namespace onnx_bcast::runtime
