// Conditions on symbolic dimensions kept as data: atoms (`N == 5`, `total == past + seq`),
// clauses (disjunctions of atoms) and condition sets (conjunctions of clauses), over the dim
// expressions of expr.h (symbols range over the integers >= 1).
#ifndef ONNX_BCAST_BROADCAST_CONDITION_H_
#define ONNX_BCAST_BROADCAST_CONDITION_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "broadcast/expr.h"

namespace onnx_bcast::broadcast {

/// `lhs == rhs` over dim expressions.
///
/// The string fields are views kept for consumers of the older symbol-only form: `symbol` is
/// the printed lhs; `value` is set when rhs is a constant, otherwise `other` is the printed
/// rhs. For `N == 5` and `N == M` they are exactly the symbol names and the value.
struct Atom {
  Expr lhs;
  Expr rhs;
  std::string symbol;
  std::optional<int64_t> value;
  std::string other;

  /// `symbol == value`.
  static Atom Eq(std::string symbol, int64_t value);
  /// `symbol == other`.
  static Atom EqSymbol(std::string symbol, std::string other);
  /// `a == b`; a constant side goes to the right, and a lone symbol to the left of a compound
  /// expression.
  static Atom EqExpr(Expr a, Expr b);

  bool is_value() const { return value.has_value(); }
  /// Every symbol both sides mention, sorted.
  std::vector<std::string> Symbols() const;
  /// Truth under `bindings`; nullopt when a symbol is unbound.
  std::optional<bool> Evaluate(const std::map<std::string, int64_t>& bindings) const;
  /// "N == 5", "N == M", "total_seq == past_seq + seq".
  std::string ToString() const;

  bool operator==(const Atom& o) const { return lhs == o.lhs && rhs == o.rhs; }
  bool operator<(const Atom& o) const { return lhs != o.lhs ? lhs < o.lhs : rhs < o.rhs; }
};

/// A disjunction of atoms. An empty clause is false.
struct Clause {
  std::vector<Atom> atoms;
  /// When not empty, what `ToString` prints instead of the atoms (the readable form of a
  /// one-symbol set: "H mod 32 ∈ {0, 29, 30, 31}"); the atoms stay an exact encoding.
  std::string text;

  /// A clause from atoms, in the given (printing) order.
  static Clause Of(std::vector<Atom> atoms);
  /// `symbol ∈ values`: one value atom per value, ascending.
  static Clause InSet(const std::string& symbol, const std::set<int64_t>& values);

  /// When every atom is `S == value` for one symbol S, returns S.
  std::optional<std::string> ValueSetSymbol() const;
  /// The values of a value-set clause (see `ValueSetSymbol`).
  std::set<int64_t> Values() const;
  /// Every symbol the atoms mention, sorted.
  std::vector<std::string> Symbols() const;
  /// Truth under `bindings`; nullopt when it depends on an unbound symbol.
  std::optional<bool> Evaluate(const std::map<std::string, int64_t>& bindings) const;
  /// "N == 1", "N ∈ {1, 5}" for value sets; `text` when set; otherwise atoms joined
  /// with " or ".
  std::string ToString() const;

  bool operator==(const Clause& o) const { return atoms == o.atoms; }
};

/// The exact set of values (>= 1) a single symbol may take: the members below `threshold`
/// listed in `small`, and from `threshold` on the values whose remainder modulo `period` is
/// in `residues`. Kept minimal (smallest period, then smallest threshold), so equal sets
/// have equal representations.
struct SymbolSet {
  int64_t threshold = 1;
  std::set<int64_t> small;
  int64_t period = 1;
  std::set<int64_t> residues = {0};

  /// Every value >= 1.
  static SymbolSet All() { return SymbolSet(); }
  /// A finite set (values < 1 are dropped).
  static SymbolSet Finite(const std::set<int64_t>& values);

  bool Contains(int64_t v) const;
  bool empty() const { return small.empty() && residues.empty(); }
  bool all() const { return threshold == 1 && period == 1 && residues.size() == 1; }
  bool finite() const { return residues.empty(); }
  /// The intersection, minimal; nullopt when the combined period would pass 2^20.
  std::optional<SymbolSet> Intersect(const SymbolSet& o) const;
  /// "N == 5", "N ∈ {1, 5}", "H mod 32 ∈ {0, 29, 30, 31}", "H == 1 or H mod 2 == 0",
  /// "H >= 3", "H ∈ {1, 2} or (H >= 7 and H mod 4 == 3)"; "false" when empty.
  std::string ToString(const std::string& symbol) const;
  /// The clause encoding this set exactly, with `ToString` as its text.
  Clause ToClause(const std::string& symbol) const;

  bool operator==(const SymbolSet&) const = default;
};

/// The exact set of values of `symbol` for which `clause` holds, when every atom mentions
/// only that symbol and is built from +, constant *, floor, mod, min and max; nullopt
/// otherwise.
std::optional<SymbolSet> SolveOneSymbolClause(const Clause& clause, const std::string& symbol);

/// A conjunction of clauses, kept simplified after every change:
/// - atoms that always hold make their clause true; atoms that never hold are dropped;
/// - clauses that mention a single symbol are solved exactly (periodicity, expr.h) and become
///   that symbol's value set (a finite set, a range and/or a congruence), and the sets of one
///   symbol intersect (`N ∈ {1,5}` and `N ∈ {1,7}` give `N == 1`);
/// - a symbol pinned to one value is substituted into the other clauses, and atoms whose
///   symbols all have small finite sets are decided by enumeration; clauses may thereby
///   become true (dropped), false (contradiction) or smaller; duplicates are removed.
/// An empty intersection or a clause that became false makes the set contradictory; the first
/// such finding is kept as a message.
class ConditionSet {
 public:
  ConditionSet();
  ~ConditionSet();
  ConditionSet(const ConditionSet& other);
  ConditionSet& operator=(const ConditionSet& other);
  ConditionSet(ConditionSet&& other) noexcept;
  ConditionSet& operator=(ConditionSet&& other) noexcept;

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
  bool empty() const;
  /// True when the conditions cannot all hold.
  bool contradictory() const;
  /// Why the conditions cannot hold, naming the symbol and the clashing sets,
  /// e.g. "N ∈ {1, 5} and N == 7 have no common value". Empty unless contradictory.
  const std::string& contradiction() const;

  /// All clauses in printing order: per-symbol sets first (in the order their symbols were
  /// first constrained), then the other clauses in the order they were added.
  const std::vector<Clause>& clauses() const;
  /// The value set of every symbol constrained to finitely many values, by symbol name.
  const std::map<std::string, std::set<int64_t>>& value_sets() const;
  /// The set of every symbol constrained by a one-symbol clause, by symbol name.
  const std::map<std::string, SymbolSet>& symbol_sets() const;
  /// The value set of `symbol`, if constrained to finitely many values.
  std::optional<std::set<int64_t>> ValuesOf(const std::string& symbol) const;
  /// The single value `symbol` is pinned to, if any.
  std::optional<int64_t> PinnedValue(const std::string& symbol) const;
  /// Every symbol the conditions mention, sorted.
  std::vector<std::string> Symbols() const;

  /// Truth under `bindings` (symbol -> value); nullopt when a symbol it needs is unbound.
  /// A contradictory set is false.
  std::optional<bool> Evaluate(const std::map<std::string, int64_t>& bindings) const;

  /// Clauses joined with " and ", a clause that is a disjunction in parentheses when there
  /// are several ("(H == 1 or H mod 2 == 0) and (W == 1 or W mod 2 == 0)"); "true" when empty;
  /// "false: <why>" when contradictory. Deterministic.
  std::string ToString() const;

 private:
  struct State;
  // The sets, clauses and contradiction, allocated on the first Add or Merge. Most nodes of
  // a model need no condition, and `check` keeps one set per verdict: on a million-node graph
  // an inline empty set (about 200 bytes) was over 100 MiB of its peak.
  State& Mutable();
  std::unique_ptr<State> state_;
};

/// "{1, 5}".
std::string ValueSetToString(const std::set<int64_t>& values);

}  // namespace onnx_bcast::broadcast

#endif  // ONNX_BCAST_BROADCAST_CONDITION_H_
