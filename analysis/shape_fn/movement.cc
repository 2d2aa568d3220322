// Symbolic shape functions, data movement and data-dependent extents: Pad, Split, Transpose,
// Flatten, GatherElements, GatherND, TopK, NonZero, Unique, NonMaxSuppression, Compress,
// quantization, OneHot.
// What they require and guarantee: analysis/shape_functions.cc.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/shape_fn/internal.h"
#include "broadcast/expr.h"
#include "broadcast/rules.h"
#include "proto/shapes.h"

namespace onnx_bcast::analysis::shape_fn {

// ---------------------------------------------------------------------------------------------
// Movement ops.

Outputs PadFn(const Op& op) {
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  if (x == nullptr) return Fit(op, One(std::move(t)));
  const int64_t r = x->rank();
  std::optional<Elems> pads;
  if (op.opset() < 11) {
    std::optional<std::vector<int64_t>> p = op.Ints(op.opset() < 2 ? "paddings" : "pads");
    if (p) {
      pads.emplace();
      for (int64_t v : *p) pads->push_back(C(v));
    }
  } else {
    pads = op.Value(1);
  }
  std::vector<int64_t> axes;
  if (op.opset() >= 18 && op.Has(3)) {
    const std::optional<std::vector<int64_t>> a = ConstValues(op.In(3));
    const std::optional<std::vector<int64_t>> norm = a ? NormAxes(*a, r) : std::nullopt;
    if (!norm) {
      t.shape = Shape::FromDims(std::vector<Dim>(x->dims.size(), Dim::Unknown()));
      return Fit(op, One(std::move(t)));
    }
    axes = *norm;
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  const size_t n = axes.size();
  if (!pads || pads->size() != 2 * n) {
    t.shape = Shape::FromDims(std::vector<Dim>(x->dims.size(), Dim::Unknown()));
    return Fit(op, One(std::move(t)));
  }
  std::vector<Dim> dims = x->dims;
  for (size_t i = 0; i < n; ++i) {
    for (const Elem& p : {(*pads)[i], (*pads)[i + n]}) {
      if (const std::optional<int64_t> c = ConstOf(p); c && (*c > kMaxAttr || *c < -kMaxAttr)) {
        return Fit(op, One(std::move(t)));
      }
    }
    Dim& d = dims[static_cast<size_t>(axes[i])];
    d = DimOf(Add(Add(ElemOf(d), (*pads)[i]), (*pads)[i + n]));
  }
  t.shape = Shape::FromDims(std::move(dims));
  return Fit(op, One(std::move(t)));
}

Outputs SplitFn(const Op& op) {
  const Shape* x = op.InShape(0);
  Outputs out = op.Unknown(op.InElem(0));
  const size_t k = out.size();
  if (x == nullptr || x->rank() == 0 || k == 0) return out;
  const std::optional<int64_t> axis = NormAxis(op.Int("axis", 0), x->rank());
  if (!axis) return out;
  std::optional<Elems> split;
  bool split_given = false;
  if (op.opset() < 13 && op.Attr("split") != nullptr) {
    split_given = true;
    split.emplace();
    const std::vector<int64_t> attr = op.Ints("split").value_or(std::vector<int64_t>());
    for (int64_t v : attr) split->push_back(C(v));
  } else if (op.Has(1)) {
    split_given = true;
    split = op.Value(1);
  }
  const Elem d = ElemOf(x->dims[static_cast<size_t>(*axis)]);
  std::vector<Elem> parts;
  if (split_given) {
    if (!split || split->size() != k) {
      parts.assign(k, std::nullopt);
    } else {
      for (const Elem& e : *split) {
        if (const std::optional<int64_t> c = ConstOf(e); c && *c < 0) return out;
        parts.push_back(e);
      }
    }
  } else {
    const int64_t n =
        op.opset() >= 18 ? op.Int("num_outputs", static_cast<int64_t>(k)) : static_cast<int64_t>(k);
    if (n != static_cast<int64_t>(k) || n < 1) return out;
    const Elem exact = d ? Expr::ExactDiv(*d, Expr::Const(n)) : Elem();
    if (exact || op.opset() < 18) {
      // Before opset 18 the extent must divide evenly.
      parts.assign(k, exact ? exact : CeilDiv(d, C(n)));
    } else {
      const Elem each = CeilDiv(d, C(n));
      parts.assign(k, each);
      parts.back() = Sub(d, Mul(each, C(n - 1)));
    }
  }
  for (size_t i = 0; i < k; ++i) {
    std::vector<Dim> dims = x->dims;
    dims[static_cast<size_t>(*axis)] = DimOf(parts[i]);
    out[i].shape = Shape::FromDims(std::move(dims));
  }
  // Pieces of a tracked shape vector.
  if (std::optional<Elems> v = op.Value(0); v && x->rank() == 1) {
    size_t at = 0;
    for (size_t i = 0; i < k; ++i) {
      const std::optional<int64_t> len = ConstOf(parts[i]);
      if (!len || at + static_cast<size_t>(*len) > v->size()) break;
      SetValue(&out[i],
               Elems(v->begin() + static_cast<std::ptrdiff_t>(at),
                     v->begin() + static_cast<std::ptrdiff_t>(at + static_cast<size_t>(*len))));
      at += static_cast<size_t>(*len);
    }
  }
  return out;
}

Outputs TransposeFn(const Op& op) {
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  if (x == nullptr) return Fit(op, One(std::move(t)));
  const int64_t r = x->rank();
  std::vector<int64_t> perm;
  if (std::optional<std::vector<int64_t>> p = op.Ints("perm")) {
    perm = *p;
  } else {
    for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != r) return Fit(op, One(std::move(t)));
  std::vector<bool> seen(static_cast<size_t>(r), false);
  std::vector<Dim> dims;
  for (int64_t p : perm) {
    if (p < 0 || p >= r || seen[static_cast<size_t>(p)]) return Fit(op, One(std::move(t)));
    seen[static_cast<size_t>(p)] = true;
    dims.push_back(x->dims[static_cast<size_t>(p)]);
  }
  t.shape = Shape::FromDims(std::move(dims));
  // A transposed [n, 2] pad table (torch's dynamic F.pad).
  if (std::optional<Elems> v = op.AnyValue(0);
      v && r == 2 && perm[0] == 1 && x->dims[0].is_value() && x->dims[1].is_value()) {
    const int64_t rows = x->dims[0].value(), cols = x->dims[1].value();
    Elems out;
    for (int64_t j = 0; j < cols; ++j) {
      for (int64_t i = 0; i < rows; ++i) out.push_back((*v)[static_cast<size_t>(i * cols + j)]);
    }
    SetValue(&t, out);
  } else if (v) {
    SetValue(&t, *v);  // rank <= 1, or the identity permutation
  }
  return Fit(op, One(std::move(t)));
}

Outputs FlattenFn(const Op& op) {
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  if (x == nullptr) return Fit(op, One(std::move(t)));
  const int64_t r = x->rank();
  int64_t axis = op.Int("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) return Fit(op, One(std::move(t)));
  const size_t a = static_cast<size_t>(axis);
  t.shape =
      Shape::FromDims({DimOf(Product(x->dims, 0, a)), DimOf(Product(x->dims, a, x->dims.size()))});
  return Fit(op, One(std::move(t)));
}

Outputs GatherElementsFn(const Op& op) {
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  if (const Shape* idx = op.InShape(1)) t.shape = *idx;
  return Fit(op, One(std::move(t)));
}

Outputs GatherNDFn(const Op& op) {
  const Shape* data = op.InShape(0);
  const Shape* idx = op.InShape(1);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  if (data == nullptr || idx == nullptr || idx->rank() < 1) return Fit(op, One(std::move(t)));
  const int64_t b = op.Int("batch_dims", 0);
  const Dim& last = idx->dims.back();
  if (b < 0 || b >= std::min(data->rank(), idx->rank()) || !last.is_value()) {
    return Fit(op, One(std::move(t)));
  }
  const int64_t k = last.value();
  if (k < 1 || k > data->rank() - b) return Fit(op, One(std::move(t)));
  std::vector<Dim> dims(idx->dims.begin(), idx->dims.end() - 1);
  dims.insert(dims.end(), data->dims.begin() + b + k, data->dims.end());
  t.shape = Shape::FromDims(std::move(dims));
  return Fit(op, One(std::move(t)));
}

Outputs TopKFn(const Op& op) {
  const Shape* x = op.InShape(0);
  Outputs out = op.Unknown(op.InElem(0));
  if (out.size() > 1) out[1].elem = onnx::TensorProto::INT64;
  if (x == nullptr || x->rank() == 0) return out;
  const std::optional<int64_t> axis = NormAxis(op.Int("axis", -1), x->rank());
  if (!axis) return out;
  Dim k;
  if (op.opset() < 10) {
    const int64_t v = op.Int("k", -1);
    if (v < 0) return out;
    k = Dim::Value(v);
  } else if (std::optional<Elems> v = op.Value(1); v && v->size() == 1 && (*v)[0]) {
    if (const std::optional<int64_t> c = ConstOf((*v)[0]); c && *c < 0) return out;
    k = DimOf((*v)[0]);
  } else {
    k = op.Fresh(0, static_cast<int>(*axis));
  }
  std::vector<Dim> dims = x->dims;
  dims[static_cast<size_t>(*axis)] = k;
  for (SymTensor& t : out) t.shape = Shape::FromDims(dims);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Data-dependent extents.

Outputs NonZeroFn(const Op& op) {
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(onnx::TensorProto::INT64, Shape::UnknownRank());
  Dim count;
  if (const std::optional<std::vector<int64_t>> v = ConstValues(op.In(0))) {
    int64_t n = 0;
    for (int64_t e : *v) n += e != 0;
    count = Dim::Value(n);
  } else {
    count = op.Fresh(0, 1);
  }
  t.shape = Shape::FromDims({x != nullptr ? Dim::Value(x->rank()) : Dim::Unknown(), count});
  return Fit(op, One(std::move(t)));
}

Outputs UniqueFn(const Op& op) {
  const Shape* x = op.InShape(0);
  Outputs out = op.Unknown(op.InElem(0));
  for (size_t i = 1; i < out.size(); ++i) out[i].elem = onnx::TensorProto::INT64;
  if (x == nullptr || out.empty()) return out;
  const Dim u = op.Fresh(0, 0);
  if (std::optional<int64_t> a = op.Int("axis")) {
    const std::optional<int64_t> axis = NormAxis(*a, x->rank());
    if (!axis) return out;
    std::vector<Dim> dims = x->dims;
    dims[static_cast<size_t>(*axis)] = u;
    out[0].shape = Shape::FromDims(std::move(dims));
    if (out.size() > 2) out[2].shape = Shape::FromDims({x->dims[static_cast<size_t>(*axis)]});
  } else {
    out[0].shape = Shape::FromDims({u});
    if (out.size() > 2)
      out[2].shape = Shape::FromDims({DimOf(Product(x->dims, 0, x->dims.size()))});
  }
  if (out.size() > 1) out[1].shape = Shape::FromDims({u});
  if (out.size() > 3) out[3].shape = Shape::FromDims({u});
  return out;
}

Outputs NmsFn(const Op& op) {
  return Fit(
      op, One(Tensor(onnx::TensorProto::INT64, Shape::FromDims({op.Fresh(0, 0), Dim::Value(3)}))));
}

Outputs CompressFn(const Op& op) {
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  Dim len;
  if (const std::optional<std::vector<int64_t>> c = ConstValues(op.In(1))) {
    int64_t n = 0;
    for (int64_t e : *c) n += e != 0;
    len = Dim::Value(n);
  }
  std::optional<int64_t> axis;
  if (std::optional<int64_t> a = op.Int("axis")) {
    if (x == nullptr) return Fit(op, One(std::move(t)));
    axis = NormAxis(*a, x->rank());
    if (!axis) return Fit(op, One(std::move(t)));
  }
  if (len.is_unknown()) len = op.Fresh(0, axis ? static_cast<int>(*axis) : 0);
  if (axis) {
    std::vector<Dim> dims = x->dims;
    dims[static_cast<size_t>(*axis)] = len;
    t.shape = Shape::FromDims(std::move(dims));
  } else {
    t.shape = Shape::FromDims({len});
  }
  return Fit(op, One(std::move(t)));
}

// ---------------------------------------------------------------------------------------------
// Element types of same-shape ops.

Outputs QuantizeFn(const Op& op) {
  Outputs out = SameShape(op);
  if (out.empty()) return out;
  if (op.type() == "QuantizeLinear") {
    int32_t elem = op.InElem(2);
    if (elem == 0) elem = static_cast<int32_t>(op.Int("output_dtype", 0));
    if (elem == 0 && !op.Has(2)) elem = onnx::TensorProto::UINT8;
    out[0].elem = elem;
  } else {
    out[0].elem = op.opset() >= 19 && op.InElem(1) != 0 ? op.InElem(1) : onnx::TensorProto::FLOAT;
  }
  return out;
}

Outputs OneHotFn(const Op& op) {
  const Shape* idx = op.InShape(0);
  SymTensor t = Tensor(op.InElem(2), Shape::UnknownRank());
  if (idx == nullptr || idx->rank() + 1 > kMaxRank) return Fit(op, One(std::move(t)));
  const std::optional<int64_t> axis = NormAxis(op.Int("axis", -1), idx->rank() + 1);
  if (!axis) return Fit(op, One(std::move(t)));
  Dim depth;
  if (std::optional<Elems> v = op.Value(1); v && v->size() == 1) {
    depth = DimOf((*v)[0]);
  } else if (const SymTensor* d = op.In(1); d && d->float_value && d->float_value->size() == 1) {
    const double f = (*d->float_value)[0];
    if (f >= 0 && f < 9e15) depth = Dim::Value(static_cast<int64_t>(f));
  }
  std::vector<Dim> dims = idx->dims;
  dims.insert(dims.begin() + *axis, depth);
  t.shape = Shape::FromDims(std::move(dims));
  return Fit(op, One(std::move(t)));
}

}  // namespace onnx_bcast::analysis::shape_fn
