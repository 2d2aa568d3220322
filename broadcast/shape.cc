// Dim and Shape: construction, parsing of the "[N,3,?]" text form and printing.
#include "broadcast/shape.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnx_bcast::broadcast {

Dim Dim::Value(int64_t value) {
  Dim dim;
  dim.value_ = value;
  return dim;
}

Dim Dim::Symbol(std::string_view name) { return FromExpr(Expr::Symbol(name)); }

Dim Dim::Unknown() { return Dim(); }

Dim Dim::FromExpr(Expr e) {
  Dim dim;
  if (std::optional<int64_t> c = e.AsConst()) {
    if (*c >= 0) dim.value_ = *c;
    return dim;
  }
  dim.value_ = 0;
  dim.node_ = e.node();
  return dim;
}

bool Dim::is_symbol() const { return node_ != nullptr && Expr(node_).AsSymbol().has_value(); }

const std::string& Dim::symbol() const {
  static const std::string* const kEmpty = new std::string();
  if (node_ == nullptr) return *kEmpty;
  return Expr(node_).SymbolName();
}

std::optional<Expr> Dim::expr() const {
  if (node_ != nullptr) return Expr(node_);
  if (value_ >= 0) return Expr::Const(value_);
  return std::nullopt;
}

std::string Dim::ToString() const {
  if (node_ != nullptr) return Expr(node_).ToString();
  if (value_ >= 0) return absl::StrCat(value_);
  return "?";
}

Shape Shape::UnknownRank() {
  Shape shape;
  shape.rank_known = false;
  return shape;
}

Shape Shape::Of(std::initializer_list<int64_t> extents) {
  return OfVector(std::vector<int64_t>(extents));
}

Shape Shape::OfVector(const std::vector<int64_t>& extents) {
  Shape shape;
  shape.dims.reserve(extents.size());
  for (int64_t extent : extents) shape.dims.push_back(Dim::Value(extent));
  return shape;
}

Shape Shape::FromDims(std::vector<Dim> dims) {
  Shape shape;
  shape.dims = std::move(dims);
  return shape;
}

namespace {

// This abseil build has its own string_view type; convert at the boundary.
absl::string_view AV(std::string_view text) { return absl::string_view(text.data(), text.size()); }

std::string_view Trim(std::string_view text) {
  const absl::string_view stripped = absl::StripAsciiWhitespace(AV(text));
  return std::string_view(stripped.data(), stripped.size());
}

// Splits "a,b(c,d),e" at top-level commas (commas inside parentheses are kept).
absl::StatusOr<std::vector<std::string_view>> SplitItems(std::string_view body) {
  std::vector<std::string_view> items;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (--depth < 0) return absl::InvalidArgumentError("unbalanced ')'");
    } else if (c == ',' && depth == 0) {
      items.push_back(body.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) return absl::InvalidArgumentError("unbalanced '('");
  items.push_back(body.substr(start));
  return items;
}

}  // namespace

absl::StatusOr<Shape> Shape::TryParse(std::string_view text) {
  const std::string_view trimmed = Trim(text);
  if (trimmed == "?") return UnknownRank();
  if (trimmed.size() < 2 || trimmed.front() != '[' || trimmed.back() != ']') {
    return absl::InvalidArgumentError(
        absl::StrCat("shape text must be '?' or '[...]': \"", AV(text), "\""));
  }
  const std::string_view body = Trim(trimmed.substr(1, trimmed.size() - 2));
  Shape shape;
  if (body.empty()) return shape;
  absl::StatusOr<std::vector<std::string_view>> items = SplitItems(body);
  if (!items.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad shape text \"", AV(text), "\": ", items.status().message()));
  }
  for (std::string_view raw : *items) {
    const std::string_view item = Trim(raw);
    if (item.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("empty dim in shape text \"", AV(text), "\""));
    }
    if (item == "?") {
      shape.dims.push_back(Dim::Unknown());
      continue;
    }
    const bool integer = item.find_first_not_of("+-0123456789") == std::string_view::npos;
    if (integer) {
      int64_t value = 0;
      if (!absl::SimpleAtoi(AV(item), &value) || value < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "dim \"", AV(item), "\" is not a non-negative integer in \"", AV(text), "\""));
      }
      shape.dims.push_back(Dim::Value(value));
      continue;
    }
    absl::StatusOr<Expr> e = Expr::Parse(item);
    if (!e.ok()) {
      // Older texts name derived symbols freely ("bcast(M,N)"); a name starts with a letter.
      const char first = item.front();
      if (!std::isalpha(static_cast<unsigned char>(first)) && first != '_') {
        return absl::InvalidArgumentError(absl::StrCat("bad dim \"", AV(item), "\" in \"", AV(text),
                                                       "\": ", e.status().message()));
      }
      shape.dims.push_back(Dim::Symbol(item));
      continue;
    }
    if (e->AsConst() && *e->AsConst() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("dim \"", AV(item), "\" is a negative constant in \"", AV(text), "\""));
    }
    shape.dims.push_back(Dim::FromExpr(*e));
  }
  return shape;
}

Shape Shape::Parse(std::string_view text) {
  absl::StatusOr<Shape> shape = TryParse(text);
  if (!shape.ok()) {
    std::fprintf(stderr, "Shape::Parse: %s\n", std::string(shape.status().message()).c_str());
    std::abort();
  }
  return *std::move(shape);
}

std::string Shape::ToString() const {
  if (!rank_known) return "?";
  return absl::StrCat(
      "[",
      absl::StrJoin(dims, ",", [](std::string* out, const Dim& d) { out->append(d.ToString()); }),
      "]");
}

bool Shape::IsFullyKnown() const {
  if (!rank_known) return false;
  for (const Dim& dim : dims) {
    if (!dim.is_value()) return false;
  }
  return true;
}

std::optional<int64_t> Shape::NumElements() const {
  if (!IsFullyKnown()) return std::nullopt;
  int64_t product = 1;
  for (const Dim& dim : dims) {
    if (dim.value() == 0) return 0;
  }
  for (const Dim& dim : dims) {
    if (product > std::numeric_limits<int64_t>::max() / dim.value()) return std::nullopt;
    product *= dim.value();
  }
  return product;
}

std::optional<std::vector<int64_t>> Shape::Extents() const {
  if (!IsFullyKnown()) return std::nullopt;
  std::vector<int64_t> extents;
  extents.reserve(dims.size());
  for (const Dim& dim : dims) extents.push_back(dim.value());
  return extents;
}

bool Shape::operator==(const Shape& other) const {
  if (rank_known != other.rank_known) return false;
  if (!rank_known) return true;
  return dims == other.dims;
}

Shape Substitute(const Shape& shape, const std::map<std::string, Expr>& subst) {
  if (!shape.rank_known) return shape;
  Shape out = shape;
  for (Dim& d : out.dims) {
    if (d.is_symbolic()) d = Dim::FromExpr(d.expr()->Substitute(subst));
  }
  return out;
}

bool AllOnes(const Shape& shape) {
  for (const Dim& dim : shape.dims) {
    if (!dim.Is(1)) return false;
  }
  return true;
}

Shape PadWithOnes(const Shape& shape, int64_t rank, bool at_back) {
  Shape padded = shape;
  if (rank <= shape.rank()) return padded;
  const std::vector<Dim> ones(rank - shape.rank(), Dim::Value(1));
  padded.dims.insert(at_back ? padded.dims.end() : padded.dims.begin(), ones.begin(), ones.end());
  return padded;
}

}  // namespace onnx_bcast::broadcast
