// Reference kernels: per-element index unravelling, no plan, no collapsing, no threads.
#include "runtime/kernels/reference/binary.h"

#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime::reference {
namespace {

// Checks that every input broadcasts to out's shape (right-aligned: 1 or equal).
absl::Status CheckBroadcast(std::initializer_list<const Tensor*> inputs, const Tensor& out) {
  for (const Tensor* in : inputs) {
    bool ok = in->rank() <= out.rank();
    for (int64_t k = 1; ok && k <= in->rank(); ++k) {
      const int64_t dim = in->shape()[in->rank() - k];
      ok = dim == 1 || dim == out.shape()[out.rank() - k];
    }
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("reference: shape ", ShapeToString(in->shape()), " does not broadcast to ",
                       ShapeToString(out.shape())));
    }
  }
  return absl::OkStatus();
}

// Offset in `shape` (row-major, contiguous) of the element that output index `index`
// reads, with `shape` right-aligned against the output and size-1 dims pinned to 0.
int64_t InputOffset(const std::vector<int64_t>& index, const std::vector<int64_t>& shape) {
  const size_t lead = index.size() - shape.size();
  int64_t offset = 0;
  for (size_t k = 0; k < shape.size(); ++k) {
    const int64_t i = shape[k] == 1 ? 0 : index[lead + k];
    offset = offset * shape[k] + i;
  }
  return offset;
}

std::vector<int64_t> Unravel(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

template <ElemOp kOp, class TA, class TB>
void Loop(const Tensor& a, const Tensor& b, Tensor* out) {
  using TO = std::conditional_t<ElemOpOutputDType(kOp, DTypeOf<TA>()) == DType::kBool, bool, TA>;
  const TA* pa = a.data<TA>();
  const TB* pb = b.data<TB>();
  TO* po = out->data<TO>();
  for (int64_t i = 0; i < out->num_elements(); ++i) {
    const std::vector<int64_t> index = Unravel(i, out->shape());
    const auto x = elem::Load(pa[InputOffset(index, a.shape())]);
    const auto y = elem::Load(pb[InputOffset(index, b.shape())]);
    po[i] = elem::Store<TO>(elem::Apply<kOp>(x, y));
  }
}

template <class Fn>
void VisitElemOp(ElemOp op, Fn&& fn) {
  using E = ElemOp;
  switch (op) {
#define BCAST_REF_CASE(name) \
  case E::name:              \
    return fn(std::integral_constant<E, E::name>{});
    BCAST_REF_CASE(kAdd)
    BCAST_REF_CASE(kSub)
    BCAST_REF_CASE(kMul)
    BCAST_REF_CASE(kDiv)
    BCAST_REF_CASE(kPow)
    BCAST_REF_CASE(kModFloor)
    BCAST_REF_CASE(kModTrunc)
    BCAST_REF_CASE(kShiftLeft)
    BCAST_REF_CASE(kShiftRight)
    BCAST_REF_CASE(kAnd)
    BCAST_REF_CASE(kOr)
    BCAST_REF_CASE(kXor)
    BCAST_REF_CASE(kBitwiseAnd)
    BCAST_REF_CASE(kBitwiseOr)
    BCAST_REF_CASE(kBitwiseXor)
    BCAST_REF_CASE(kEqual)
    BCAST_REF_CASE(kGreater)
    BCAST_REF_CASE(kGreaterOrEqual)
    BCAST_REF_CASE(kLess)
    BCAST_REF_CASE(kLessOrEqual)
    BCAST_REF_CASE(kMax)
    BCAST_REF_CASE(kMin)
    BCAST_REF_CASE(kPRelu)
#undef BCAST_REF_CASE
  }
}

}  // namespace

absl::Status BinaryOp(OpKind op, const Tensor& a, const Tensor& b, Tensor* out,
                      const BinaryAttributes& attrs) {
  BCAST_ASSIGN_OR_RETURN(ElemOp elem, ResolveElemOp(op, a.dtype(), b.dtype(), attrs));
  if (out == nullptr) return absl::InvalidArgumentError("reference: null output");
  if (out->dtype() != ElemOpOutputDType(elem, a.dtype())) {
    return absl::InvalidArgumentError(
        absl::StrCat("reference: wrong output dtype ", DTypeName(out->dtype())));
  }
  BCAST_RETURN_IF_ERROR(CheckBroadcast({&a, &b}, *out));
  VisitElemOp(elem, [&](auto op_constant) {
    constexpr ElemOp kOp = decltype(op_constant)::value;
    VisitDType(a.dtype(), 0, [&](auto a_tag) {
      using TA = typename decltype(a_tag)::type;
      return VisitDType(b.dtype(), 0, [&](auto b_tag) {
        using TB = typename decltype(b_tag)::type;
        if constexpr (ElemOpAccepts(kOp, DTypeOf<TA>(), DTypeOf<TB>()))
          Loop<kOp, TA, TB>(a, b, out);
        return 0;
      });
    });
  });
  return absl::OkStatus();
}

absl::Status Where(const Tensor& cond, const Tensor& x, const Tensor& y, Tensor* out) {
  if (out == nullptr) return absl::InvalidArgumentError("reference: null output");
  if (cond.dtype() != DType::kBool || x.dtype() != y.dtype() || out->dtype() != x.dtype()) {
    return absl::InvalidArgumentError("reference Where: bad dtypes");
  }
  BCAST_RETURN_IF_ERROR(CheckBroadcast({&cond, &x, &y}, *out));
  const size_t size = x.element_size();
  const auto* pc = static_cast<const uint8_t*>(cond.raw_data());
  const auto* px = static_cast<const char*>(x.raw_data());
  const auto* py = static_cast<const char*>(y.raw_data());
  auto* po = static_cast<char*>(out->raw_data());
  for (int64_t i = 0; i < out->num_elements(); ++i) {
    const std::vector<int64_t> index = Unravel(i, out->shape());
    const bool take_x = pc[InputOffset(index, cond.shape())] != 0;
    const char* src = take_x ? px + InputOffset(index, x.shape()) * size
                             : py + InputOffset(index, y.shape()) * size;
    std::memcpy(po + i * size, src, size);
  }
  return absl::OkStatus();
}

}  // namespace onnx_bcast::runtime::reference
