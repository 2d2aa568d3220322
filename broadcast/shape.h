// Tensor shapes whose dimensions may be known values, named symbols or unknown.
// This is the vocabulary of the broadcast rule library; it has no ONNX dependency.
#ifndef ONNX_BCAST_BROADCAST_SHAPE_H_
#define ONNX_BCAST_BROADCAST_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "broadcast/expr.h"

namespace onnx_bcast::broadcast {

/// One dimension of a shape: a known extent (>= 0), a named symbol (an ONNX
/// dim_param such as "N"), a compound dim expression over symbols
/// ("floor(H/2)", "past + seq"; see expr.h) or unknown. Two symbolic dims are
/// equal exactly when their expressions are (canonical form); two unknown dims
/// are unrelated even though they compare equal.
///
/// A Dim is 16 bytes and trivially copyable: a value, or a handle to a
/// hash-consed expression node.
class Dim {
 public:
  /// An unknown dimension.
  Dim() = default;

  /// A known extent. Precondition: `value >= 0`.
  static Dim Value(int64_t value);
  /// A named symbolic extent. Precondition: `name` is not empty.
  static Dim Symbol(std::string_view name);
  /// An extent about which nothing is known.
  static Dim Unknown();
  /// From an expression: a constant >= 0 gives a value, a negative constant
  /// gives unknown, a single symbol gives a symbol, anything else an
  /// expression dim.
  static Dim FromExpr(Expr e);

  bool is_value() const { return node_ == nullptr && value_ >= 0; }
  bool is_unknown() const { return node_ == nullptr && value_ < 0; }
  bool is_symbol() const;
  /// A compound expression (not a value, not a single symbol).
  bool is_expr() const { return node_ != nullptr && !is_symbol(); }
  /// A symbol or a compound expression.
  bool is_symbolic() const { return node_ != nullptr; }
  /// True when this is the known extent `v`.
  bool Is(int64_t v) const { return node_ == nullptr && value_ == v && v >= 0; }

  /// The extent; only meaningful when `is_value()`.
  int64_t value() const { return value_; }
  /// The symbol name; empty unless `is_symbol()`.
  const std::string& symbol() const;
  /// The expression of a value, symbol or expression dim; nullopt when unknown.
  std::optional<Expr> expr() const;

  /// "5", "N", "floor(H/2)" or "?".
  std::string ToString() const;

  /// Same value, or the same (canonical) expression.
  bool operator==(const Dim& other) const = default;

 private:
  int64_t value_ = -1;  // the extent when node_ is null; -1: unknown
  const ExprNode* node_ = nullptr;
};

/// A tensor shape in numpy order (outermost axis first). `rank_known == false`
/// means the rank itself is unknown and `dims` is ignored (kept empty).
/// Rank 0 (`[]`, a scalar) and rank 1 `[1]` are distinct shapes.
struct Shape {
  bool rank_known = true;
  std::vector<Dim> dims;

  /// A shape whose rank is unknown; prints as "?".
  static Shape UnknownRank();
  /// A fully known shape, e.g. `Shape::Of({2, 3})`; `Shape::Of({})` is rank 0.
  static Shape Of(std::initializer_list<int64_t> extents);
  /// A fully known shape from a vector of extents.
  static Shape OfVector(const std::vector<int64_t>& extents);
  /// A shape from a list of dims.
  static Shape FromDims(std::vector<Dim> dims);

  /// Parses the text form printed by `ToString()`: "[N,3,?]", "[]" (rank 0),
  /// "?" (unknown rank), "[N,floor(H/2),3]". Items are non-negative integers,
  /// "?" or dim expressions (`Expr::Parse`); an item that is not a valid
  /// expression is taken whole as a symbol name (which may contain balanced
  /// parentheses, e.g. "bcast(M,N)"). Whitespace is ignored around items.
  static absl::StatusOr<Shape> TryParse(std::string_view text);
  /// Like `TryParse` but aborts with a message on malformed text. Meant for
  /// literals in code and tests, never for user input.
  static Shape Parse(std::string_view text);

  /// The rank; only meaningful when `rank_known`.
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  /// "[2,3,4]", "[]", "[N,3]" or "?".
  std::string ToString() const;
  /// True when the rank and every dim are known values.
  bool IsFullyKnown() const;
  /// The number of elements when fully known and the product fits in int64_t.
  std::optional<int64_t> NumElements() const;
  /// The extents when fully known.
  std::optional<std::vector<int64_t>> Extents() const;

  bool operator==(const Shape& other) const;
};

/// `shape` with its symbols replaced by `subst`'s expressions (each symbolic dim rebuilt from
/// its substituted, simplified expression); an unknown rank stays unknown.
Shape Substitute(const Shape& shape, const std::map<std::string, Expr>& subst);

/// True when every dim of `shape` is the value 1 (a rank-0 shape too).
bool AllOnes(const Shape& shape);

/// `shape` padded with 1s to `rank` (at least its own), in front (numpy's alignment) or at the
/// back (an engine that aligns the lower-rank operand to the leading axes).
Shape PadWithOnes(const Shape& shape, int64_t rank, bool at_back);

}  // namespace onnx_bcast::broadcast

#endif  // ONNX_BCAST_BROADCAST_SHAPE_H_
