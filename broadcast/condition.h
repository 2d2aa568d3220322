// Conditions on symbolic dimensions kept as data: atoms (`N == 5`, `N == M`),
// clauses (disjunctions of atoms) and condition sets (conjunctions of clauses).
#ifndef ONNX_BCAST_BROADCAST_CONDITION_H_
#define ONNX_BCAST_BROADCAST_CONDITION_H_

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "broadcast/expr.h"

namespace onnx_bcast::bcast {

/// `symbol == value` (when `value` is set) or `symbol == other` (otherwise).
struct Atom {
  std::string symbol;
  std::optional<int64_t> value;
  std::string other;

  /// `symbol == value`.
  static Atom Eq(std::string symbol, int64_t value);
  /// `symbol == other`.
  static Atom EqSymbol(std::string symbol, std::string other);
  /// `a == b` over dim expressions.
  static Atom EqExpr(Expr a, Expr b);

  bool is_value() const { return value.has_value(); }
  /// "N == 5" or "N == M".
  std::string ToString() const;

  auto operator<=>(const Atom&) const = default;
};

/// A disjunction of atoms. An empty clause is false.
struct Clause {
  std::vector<Atom> atoms;

  /// A clause from atoms, in the given (printing) order.
  static Clause Of(std::vector<Atom> atoms);
  /// `symbol ∈ values`: one value atom per value, ascending.
  static Clause InSet(const std::string& symbol, const std::set<int64_t>& values);

  /// When every atom is `S == value` for one symbol S, returns S.
  std::optional<std::string> ValueSetSymbol() const;
  /// The values of a value-set clause (see `ValueSetSymbol`).
  std::set<int64_t> Values() const;
  /// "N == 1", "N ∈ {1, 5}" for value sets; otherwise atoms joined with " or ".
  std::string ToString() const;

  bool operator==(const Clause&) const = default;
};

/// A conjunction of clauses, kept simplified after every change:
/// - clauses that constrain a single symbol to values become that symbol's
///   value set, and value sets of the same symbol intersect
///   (`N ∈ {1,5}` and `N ∈ {1,7}` give `N == 1`);
/// - a symbol pinned to one value is substituted into the other clauses, which
///   may become true (dropped), false (contradiction) or smaller;
/// - atoms that contradict a value set are dropped; duplicates are removed.
/// An empty intersection or a clause that became false makes the set
/// contradictory; the first such finding is kept as a message.
class ConditionSet {
 public:
  /// Adds `clause` to the conjunction and simplifies.
  void Add(Clause clause);
  /// Adds the single-atom clause `atom`.
  void Add(Atom atom);
  /// Adds every clause of `other` (and its contradiction, if any).
  void Merge(const ConditionSet& other);
  /// Re-runs simplification to a fixed point. Add/Merge already call it; this is
  /// idempotent.
  void Simplify();

  /// True when the set has no clauses and is not contradictory (i.e. is true).
  bool empty() const { return clauses_.empty() && !contradictory_; }
  /// True when the conditions cannot all hold.
  bool contradictory() const { return contradictory_; }
  /// Why the conditions cannot hold, naming the symbol and the clashing sets,
  /// e.g. "N ∈ {1, 5} and N ∈ {7} have no common value". Empty unless contradictory.
  const std::string& contradiction() const { return contradiction_; }

  /// All clauses in printing order: per-symbol value sets first (in the order
  /// their symbols were first constrained), then the other clauses in the order
  /// they were added.
  const std::vector<Clause>& clauses() const { return clauses_; }
  /// The value set of every symbol constrained to values, by symbol name.
  const std::map<std::string, std::set<int64_t>>& value_sets() const { return domains_; }
  /// The value set of `symbol`, if constrained to values.
  std::optional<std::set<int64_t>> ValuesOf(const std::string& symbol) const;
  /// The single value `symbol` is pinned to, if any.
  std::optional<int64_t> PinnedValue(const std::string& symbol) const;

  /// Clauses joined with " and "; "true" when empty; "false: <why>" when
  /// contradictory. Deterministic.
  std::string ToString() const;

 private:
  void SetContradiction(std::string message);
  // Applies value sets to `clause`; nullopt means the clause is true.
  std::optional<Clause> Reduce(const Clause& clause) const;
  // Intersects the value set of `symbol` with `values`; false on contradiction.
  bool IntersectDomain(const std::string& symbol, const std::set<int64_t>& values);
  void Rebuild();

  std::map<std::string, std::set<int64_t>> domains_;
  std::vector<std::string> domain_order_;
  std::vector<Clause> general_;
  std::vector<Clause> clauses_;
  bool contradictory_ = false;
  std::string contradiction_;
};

/// "{1, 5}".
std::string ValueSetToString(const std::set<int64_t>& values);

}  // namespace onnx_bcast::bcast

#endif  // ONNX_BCAST_BROADCAST_CONDITION_H_
