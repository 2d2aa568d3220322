// Integer dim expressions over named symbols: the values a symbolic tensor extent can take.
// Part of the rule library; no ONNX dependency.
//
// An `Expr` is a handle to an immutable, hash-consed node in a process-wide pool: two
// expressions are equal exactly when their handles are equal (pointer comparison), because
// every constructor returns the canonical form. The canonical form is a sum
//     c0 + c1*m1 + c2*m2 + ...
// of integer coefficients times monomials (products of atoms, sorted), where an atom is a
// symbol or a non-linear operation on canonical sub-expressions: floor(e/k), mod(e, k) for a
// constant k > 0 (ceil(e/k) is floor((e+k-1)/k)), min and max (operands sorted, nested ones
// flattened). Constant sub-expressions are folded.
//
// Domain: symbols stand for tensor extents and range over the integers >= 1 (an empty
// dynamic dim is out of scope; docs/symbolic-shapes.md says why). Facts that need this
// (floor(H/H) == 1, max(H, 1) == H) use it.
//
// Printing is for people: "2*ceil(H/32)", "past_seq + seq", "H mod 32", "max(N, 1)".
#ifndef ONNX_BCAST_BROADCAST_EXPR_H_
#define ONNX_BCAST_BROADCAST_EXPR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace onnx_bcast::broadcast {

class Dim;
struct ExprNode;  // Defined in expr.cc; pool-owned, never freed while the process runs.

/// An integer expression in canonical form. Default-constructed: the constant 0.
class Expr {
 public:
  Expr();

  /// The constant `value`.
  static Expr Const(int64_t value);
  /// The symbol `name` (an ONNX dim_param, or a fresh name such as "NonZero_3.out0").
  /// Precondition: `name` is not empty.
  static Expr Symbol(std::string_view name);
  /// A fresh symbol that equals nothing but itself, named "opaque#<n>". The builders return
  /// one instead of an expression that would exceed the size bound (256 tree nodes or depth
  /// 32) or whose folded constants overflow int64, so hostile models cannot blow up memory
  /// or time; like every symbol it ranges over the integers >= 1.
  static Expr Opaque();

  /// Arithmetic; every result is canonical. Overflow of a folded constant, or a divisor that
  /// is not a positive constant, yields nullopt from the `Try` forms; the operator forms of
  /// `/`, `%` are not provided (use FloorDiv/CeilDiv/Mod).
  friend Expr operator+(Expr a, Expr b);
  friend Expr operator-(Expr a, Expr b);
  friend Expr operator*(Expr a, Expr b);
  Expr operator-() const;
  /// floor(a / b), ceil(a / b), a mod b (result in [0, b)) for a constant b > 0; when `b` is
  /// not a positive constant, an exact quotient is still found when `a` is a multiple of `b`
  /// (e.g. (N*C*H) / (C*H) = N), otherwise nullopt.
  static std::optional<Expr> FloorDiv(Expr a, Expr b);
  static std::optional<Expr> CeilDiv(Expr a, Expr b);
  static std::optional<Expr> Mod(Expr a, Expr b);
  /// a / b when it is exact for every value of the symbols (Reshape's -1), else nullopt.
  static std::optional<Expr> ExactDiv(Expr a, Expr b);
  static Expr Min(Expr a, Expr b);
  static Expr Max(Expr a, Expr b);

  /// The constant's value, when this is a constant.
  std::optional<int64_t> AsConst() const;
  bool IsConst(int64_t v) const { return AsConst() == v; }
  /// The symbol's name, when this is a single symbol.
  std::optional<std::string_view> AsSymbol() const;
  /// The symbol's name, kept by the pool for the life of the process; empty when this is not
  /// a single symbol.
  const std::string& SymbolName() const;
  /// True for a symbol made by `Opaque()`.
  bool IsOpaque() const;
  /// Every symbol this expression mentions, sorted.
  std::vector<std::string> Symbols() const;

  /// The value under `bindings` (symbol -> value); nullopt when a symbol is unbound or an
  /// intermediate overflows int64.
  std::optional<int64_t> Evaluate(const std::map<std::string, int64_t>& bindings) const;
  /// Replaces symbols by expressions (symbols not in `subst` stay).
  Expr Substitute(const std::map<std::string, Expr>& subst) const;

  /// Readable form; `Parse(ToString())` gives back an equal expression.
  std::string ToString() const;
  /// Parses the printed form: integers, symbol names ([A-Za-z_][A-Za-z0-9_.:]*), + - *,
  /// parentheses, floor(e/k), ceil(e/k), e mod k, min(a, b, ...), max(a, b, ...).
  static absl::StatusOr<Expr> Parse(std::string_view text);

  /// Lower and upper bounds over the domain (symbols >= 1); nullopt where unbounded.
  std::optional<int64_t> LowerBound() const;
  std::optional<int64_t> UpperBound() const;

  bool operator==(const Expr& o) const { return node_ == o.node_; }
  bool operator!=(const Expr& o) const { return node_ != o.node_; }
  /// A deterministic total order (structural, not by address), for sorted output.
  bool operator<(const Expr& o) const;
  size_t Hash() const { return std::hash<const void*>()(node_); }

  const ExprNode* node() const { return node_; }

 private:
  explicit Expr(const ExprNode* node) : node_(node) {}
  friend struct ExprPool;
  friend class Dim;
  const ExprNode* node_;
};

struct ExprHash {
  size_t operator()(const Expr& e) const { return e.Hash(); }
};

/// What is known of a relation between expressions over the domain (symbols >= 1).
enum class Truth { kAlways, kNever, kSometimes };

/// Decides `a == b` for every value of the symbols: always, never, or sometimes. Exact for
/// expressions in one symbol (periodicity of floor/mod beyond the point where the linear
/// parts dominate, brute force below it) and for a constant difference; `kSometimes`
/// otherwise when it cannot prove either.
Truth DecideEqual(Expr a, Expr b);

/// The shape of the zero set of a one-symbol expression d(H): for H >= threshold, d(H) == 0
/// exactly when d(H + period) == 0, so evaluating H in [1, threshold + period) decides every
/// equality in H. nullopt when d mentions several symbols, is not built from +, constant *,
/// floor, mod, min and max of H (e.g. H*H), or the span is beyond 2^20. A constant gives {1, 1}.
struct ZeroSetShape {
  int64_t threshold = 1;
  int64_t period = 1;
};
std::optional<ZeroSetShape> ZeroSetPeriodicity(Expr d);

}  // namespace onnx_bcast::broadcast

template <>
struct std::hash<onnx_bcast::broadcast::Expr> {
  size_t operator()(const onnx_bcast::broadcast::Expr& e) const { return e.Hash(); }
};

#endif  // ONNX_BCAST_BROADCAST_EXPR_H_
