// Symbolic shape functions, matrix ops and reductions: MatMul, Gemm, the Reduce family, Einsum.
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

Outputs MatMulFn(const Op& op) {
  const Shape* a = op.InShape(0);
  const Shape* b = op.InShape(1);
  SymTensor t = Tensor(FirstElem(op), Shape::UnknownRank());
  if (a == nullptr || b == nullptr) return Fit(op, One(std::move(t)));
  broadcast::BroadcastResult r = broadcast::BroadcastMatMul(*a, *b);
  if (r.verdict != broadcast::Verdict::kError) t.shape = r.output;
  return Fit(op, One(std::move(t)));
}

Outputs GemmFn(const Op& op) {
  const Shape* a = op.InShape(0);
  const Shape* b = op.InShape(1);
  SymTensor t = Tensor(FirstElem(op), Shape::UnknownRank());
  Dim m, n;
  if (a != nullptr) {
    if (a->rank() != 2) return Fit(op, One(std::move(t)));
    m = a->dims[op.Int("transA", 0) != 0 ? 1 : 0];
  }
  if (b != nullptr) {
    if (b->rank() != 2) return Fit(op, One(std::move(t)));
    n = b->dims[op.Int("transB", 0) != 0 ? 0 : 1];
  }
  t.shape = Shape::FromDims({m, n});
  return Fit(op, One(std::move(t)));
}

// Reductions: axes from the attribute or (from `input_since`) input 1; keepdims;
// noop_with_empty_axes. ArgMax/ArgMin take one `axis`.
Outputs ReduceFn(const Op& op) {
  const std::string& ty = op.type();
  const bool arg = ty == "ArgMax" || ty == "ArgMin";
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(arg ? onnx::TensorProto::INT64 : op.InElem(0), Shape::UnknownRank());
  if (x == nullptr) return Fit(op, One(std::move(t)));
  const int64_t r = x->rank();
  const bool keep = op.Int("keepdims", 1) != 0;
  std::optional<std::vector<int64_t>> axes;
  if (arg) {
    axes = std::vector<int64_t>{op.Int("axis", 0)};
  } else {
    const int64_t since = ty == "ReduceSum" ? 13 : 18;
    const auto a = AxesOf(op, since);
    if (!a) {
      // Axes computed at run time: with keepdims the rank stays.
      if (keep) t.shape = Shape::FromDims(std::vector<Dim>(x->dims.size(), Dim::Unknown()));
      return Fit(op, One(std::move(t)));
    }
    axes = *a;
    if (!axes || axes->empty()) {
      if (op.Int("noop_with_empty_axes", 0) != 0 && op.opset() >= since) {
        t.shape = *x;
        if (std::optional<Elems> v = op.Value(0)) SetValue(&t, *v);
        return Fit(op, One(std::move(t)));
      }
      axes.emplace();
      for (int64_t i = 0; i < r; ++i) axes->push_back(i);
    }
  }
  const std::optional<std::vector<int64_t>> norm = NormAxes(*axes, r);
  if (!norm) return Fit(op, One(std::move(t)));
  std::vector<bool> reduced(static_cast<size_t>(r), false);
  for (int64_t a : *norm) reduced[static_cast<size_t>(a)] = true;
  std::vector<Dim> dims;
  for (size_t i = 0; i < x->dims.size(); ++i) {
    if (!reduced[i]) {
      dims.push_back(x->dims[i]);
    } else if (keep) {
      dims.push_back(Dim::Value(1));
    }
  }
  t.shape = Shape::FromDims(std::move(dims));
  // A whole shape vector reduced (ReduceProd(Shape(x)) is the element count).
  if (std::optional<Elems> v = op.Value(0); v && r == 1 && !arg && !v->empty()) {
    Elem acc = (*v)[0];
    for (size_t i = 1; i < v->size(); ++i) {
      if (ty == "ReduceProd") {
        acc = Mul(acc, (*v)[i]);
      } else if (ty == "ReduceSum") {
        acc = Add(acc, (*v)[i]);
      } else if (ty == "ReduceMax") {
        acc = Max(acc, (*v)[i]);
      } else if (ty == "ReduceMin") {
        acc = Min(acc, (*v)[i]);
      } else {
        acc = std::nullopt;
      }
    }
    if (ty == "ReduceProd" || ty == "ReduceSum" || ty == "ReduceMax" || ty == "ReduceMin") {
      SetValue(&t, {acc});
    }
  }
  // The largest of a few float sizes (torchvision's batching transform: max over images).
  if (const std::optional<Rats> rats = RatsOf(op.In(0)); rats && IsFloatElem(op.InElem(0)) &&
                                                         r == 1 && !arg &&
                                                         (ty == "ReduceMax" || ty == "ReduceMin")) {
    const Rats& v = *rats;
    Rat acc = v.empty() ? Rat() : v[0];
    for (size_t i = 1; i < v.size(); ++i) acc = RatMinMax(acc, v[i], ty == "ReduceMax");
    SetFloatExprs(&t, {acc});
  }
  return Fit(op, One(std::move(t)));
}

// Einsum: letters name dims; "..." broadcasts (numpy) across operands.
Outputs EinsumFn(const Op& op) {
  SymTensor t = Tensor(FirstElem(op), Shape::UnknownRank());
  std::string eq;
  for (char c : op.String("equation", "")) {
    if (c != ' ') eq.push_back(c);
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(
        lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (static_cast<int>(terms.size()) != op.n_in()) return Fit(op, One(std::move(t)));
  std::map<char, Dim> letters;
  std::map<char, int> counts;
  std::vector<Shape> ellipses;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Shape* s = op.InShape(static_cast<int>(i));
    if (s == nullptr) return Fit(op, One(std::move(t)));
    const std::string& term = terms[i];
    const size_t dots = term.find("...");
    std::string before = term.substr(0, dots), after;
    if (dots != std::string::npos) after = term.substr(dots + 3);
    const int64_t named = static_cast<int64_t>(before.size() + after.size());
    const int64_t ell = s->rank() - named;
    if (ell < 0 || (dots == std::string::npos && ell != 0)) return Fit(op, One(std::move(t)));
    auto take = [&](const std::string& part, int64_t offset) {
      for (size_t j = 0; j < part.size(); ++j) {
        const char c = part[j];
        if (!std::isalpha(static_cast<unsigned char>(c))) return false;
        const Dim& d = s->dims[static_cast<size_t>(offset) + j];
        auto it = letters.find(c);
        if (it == letters.end()) {
          letters[c] = d;
        } else if (!(it->second == d)) {
          // A letter on a 1 broadcasts; otherwise a valid model makes them equal.
          it->second = it->second.Is(1) ? d : d.Is(1) ? it->second : Better(it->second, d);
        }
        ++counts[c];
      }
      return true;
    };
    if (!take(before, 0) || !take(after, static_cast<int64_t>(before.size()) + ell)) {
      return Fit(op, One(std::move(t)));
    }
    if (dots != std::string::npos) {
      ellipses.push_back(Shape::FromDims(
          std::vector<Dim>(s->dims.begin() + static_cast<std::ptrdiff_t>(before.size()),
                           s->dims.begin() + static_cast<std::ptrdiff_t>(before.size()) + ell)));
    }
  }
  Shape ell = Shape::FromDims({});
  if (!ellipses.empty()) {
    broadcast::BroadcastResult r = broadcast::BroadcastNumpy(ellipses);
    if (r.verdict == broadcast::Verdict::kError) return Fit(op, One(std::move(t)));
    ell = r.output;
  }
  std::string rhs;
  if (arrow != std::string::npos) {
    rhs = eq.substr(arrow + 2);
  } else {
    // Implicit output: "..." first, then the letters used once, alphabetically.
    if (!ellipses.empty()) rhs = "...";
    for (const auto& [c, n] : counts) {
      if (n == 1) rhs.push_back(c);
    }
  }
  std::vector<Dim> dims;
  for (size_t j = 0; j < rhs.size(); ++j) {
    if (rhs.compare(j, 3, "...") == 0) {
      if (!ell.rank_known) return Fit(op, One(std::move(t)));
      dims.insert(dims.end(), ell.dims.begin(), ell.dims.end());
      j += 2;
      continue;
    }
    auto it = letters.find(rhs[j]);
    if (it == letters.end()) return Fit(op, One(std::move(t)));
    dims.push_back(it->second);
  }
  t.shape = Shape::FromDims(std::move(dims));
  return Fit(op, One(std::move(t)));
}

}  // namespace onnx_bcast::analysis::shape_fn
