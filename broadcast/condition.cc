// Conditions over dim expressions: atoms, clauses, exact one-symbol sets (SymbolSet) and the
// simplifying conjunction (ConditionSet).
//
// Requires: expr.h's canonical form and ZeroSetPeriodicity.
// Guarantees: every simplification preserves the set of symbol values (>= 1) that satisfy
// the conjunction; one-symbol clauses are decided exactly (by one period beyond the
// threshold where floor/mod/min/max expressions turn periodic), others are kept as written.
#include "broadcast/condition.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnx_bcast::broadcast {
namespace {

// One-symbol sets are solved by enumerating [1, threshold + period); beyond this they stay
// as written.
constexpr int64_t kMaxSpan = int64_t{1} << 16;
// Atoms over symbols with finite sets are decided by enumeration up to this many cases.
constexpr int64_t kMaxEnumeration = 4096;

std::string AtomSide(const Expr& e) { return e.ToString(); }

// `text` as one operand of " and ": in parentheses when it is a disjunction at its top level
// ("H == 1 or H mod 2 == 0"), since "and" binds tighter than "or" and the conjunction of two
// such clauses would read as something else (issue 44 item 7).
std::string AsConjunct(std::string text) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')') --depth;
    if (depth == 0 && text.compare(i, 4, " or ") == 0) return absl::StrCat("(", text, ")");
  }
  return text;
}

// Joins conjuncts with " and ", each parenthesized when it needs it; one conjunct alone is
// printed as it is.
std::string JoinConjuncts(const std::vector<std::string>& parts) {
  if (parts.size() == 1) return parts.front();
  return absl::StrJoin(parts, " and ", [](std::string* out, const std::string& part) {
    out->append(AsConjunct(part));
  });
}

// Kleene logic over items' Evaluate: `decisive` as soon as one item is, else unknown when one
// item (or `unknown` on entry) is, else !decisive. Clauses (or) and conjunctions (and) share it.
template <class Items>
std::optional<bool> EvaluateThreeValued(const Items& items, bool decisive,
                                        const std::map<std::string, int64_t>& bindings,
                                        bool unknown = false) {
  for (const auto& item : items) {
    const std::optional<bool> t = item.Evaluate(bindings);
    if (t == decisive) return decisive;
    if (!t) unknown = true;
  }
  if (unknown) return std::nullopt;
  return !decisive;
}

// True when `set` and the residue pattern agree at v.
bool Pattern(const SymbolSet& s, int64_t v) { return s.residues.count(v % s.period) > 0; }

// Makes `s` minimal: smallest period, then smallest threshold.
void Normalize(SymbolSet& s) {
  for (int64_t d = 1; d < s.period; ++d) {
    if (s.period % d != 0) continue;
    bool periodic = true;
    for (int64_t r = 0; r < s.period && periodic; ++r) {
      periodic = s.residues.count(r) == s.residues.count(r % d);
    }
    if (periodic) {
      std::set<int64_t> reduced;
      for (int64_t r : s.residues) reduced.insert(r % d);
      s.residues = std::move(reduced);
      s.period = d;
      break;
    }
  }
  while (s.threshold > 1 && (s.small.count(s.threshold - 1) > 0) == Pattern(s, s.threshold - 1)) {
    s.small.erase(s.threshold - 1);
    --s.threshold;
  }
}

// The set of v in [1, threshold + period) satisfying `member`, as a SymbolSet.
template <typename Member>
SymbolSet Tabulate(int64_t threshold, int64_t period, const Member& member) {
  SymbolSet s;
  s.threshold = threshold;
  s.period = period;
  s.residues.clear();
  for (int64_t v = 1; v < threshold; ++v) {
    if (member(v)) s.small.insert(v);
  }
  for (int64_t v = threshold; v < threshold + period; ++v) {
    if (member(v)) s.residues.insert(v % period);
  }
  Normalize(s);
  return s;
}

bool LcmBounded(int64_t a, int64_t b, int64_t& out) {
  const int64_t g = std::gcd(a, b);
  return !__builtin_mul_overflow(a / g, b, &out) && out <= kMaxSpan;
}

// An atom as an unordered pair, for duplicate detection.
std::pair<Expr, Expr> Unordered(const Atom& a) {
  return a.rhs < a.lhs ? std::make_pair(a.rhs, a.lhs) : std::make_pair(a.lhs, a.rhs);
}

std::vector<std::pair<Expr, Expr>> CanonicalAtoms(const Clause& clause) {
  std::vector<std::pair<Expr, Expr>> atoms;
  for (const Atom& a : clause.atoms) atoms.push_back(Unordered(a));
  std::sort(atoms.begin(), atoms.end());
  atoms.erase(std::unique(atoms.begin(), atoms.end()), atoms.end());
  return atoms;
}

}  // namespace

// ---- Atom ----

Atom Atom::Eq(std::string symbol, int64_t value) {
  return EqExpr(Expr::Symbol(symbol), Expr::Const(value));
}

Atom Atom::EqSymbol(std::string symbol, std::string other) {
  Atom atom;
  atom.lhs = Expr::Symbol(symbol);
  atom.rhs = Expr::Symbol(other);
  atom.symbol = std::move(symbol);
  atom.other = std::move(other);
  return atom;
}

Atom Atom::EqExpr(Expr a, Expr b) {
  if (a.AsConst() && !b.AsConst()) std::swap(a, b);
  if (b.AsSymbol() && !a.AsSymbol() && !a.AsConst()) std::swap(a, b);
  Atom atom;
  atom.lhs = a;
  atom.rhs = b;
  atom.symbol = a.AsSymbol() ? a.SymbolName() : AtomSide(a);
  if (std::optional<int64_t> v = b.AsConst()) {
    atom.value = *v;
  } else {
    atom.other = b.AsSymbol() ? b.SymbolName() : AtomSide(b);
  }
  return atom;
}

std::vector<std::string> Atom::Symbols() const {
  std::vector<std::string> names = lhs.Symbols();
  for (std::string& s : rhs.Symbols()) names.push_back(std::move(s));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::optional<bool> Atom::Evaluate(const std::map<std::string, int64_t>& bindings) const {
  const std::optional<int64_t> a = lhs.Evaluate(bindings);
  const std::optional<int64_t> b = rhs.Evaluate(bindings);
  if (!a || !b) return std::nullopt;
  return *a == *b;
}

std::string Atom::ToString() const {
  return absl::StrCat(AtomSide(lhs), " == ", AtomSide(rhs));
}

// ---- Clause ----

Clause Clause::Of(std::vector<Atom> atoms) {
  Clause clause;
  clause.atoms = std::move(atoms);
  return clause;
}

Clause Clause::InSet(const std::string& symbol, const std::set<int64_t>& values) {
  Clause clause;
  for (int64_t value : values) clause.atoms.push_back(Atom::Eq(symbol, value));
  return clause;
}

std::optional<std::string> Clause::ValueSetSymbol() const {
  if (atoms.empty() || !atoms.front().lhs.AsSymbol()) return std::nullopt;
  for (const Atom& atom : atoms) {
    if (!atom.rhs.AsConst() || atom.lhs != atoms.front().lhs) return std::nullopt;
  }
  return atoms.front().lhs.SymbolName();
}

std::set<int64_t> Clause::Values() const {
  std::set<int64_t> values;
  for (const Atom& atom : atoms) {
    if (std::optional<int64_t> v = atom.rhs.AsConst()) values.insert(*v);
  }
  return values;
}

std::vector<std::string> Clause::Symbols() const {
  std::set<std::string> names;
  for (const Atom& atom : atoms) {
    for (std::string& s : atom.Symbols()) names.insert(std::move(s));
  }
  return std::vector<std::string>(names.begin(), names.end());
}

std::optional<bool> Clause::Evaluate(const std::map<std::string, int64_t>& bindings) const {
  return EvaluateThreeValued(atoms, true, bindings);
}

std::string ValueSetToString(const std::set<int64_t>& values) {
  return absl::StrCat("{", absl::StrJoin(values, ", "), "}");
}

namespace {
std::string MemberText(const std::string& name, const std::set<int64_t>& values) {
  if (values.size() == 1) return absl::StrCat(name, " == ", *values.begin());
  return absl::StrCat(name, " ∈ ", ValueSetToString(values));
}
}  // namespace

std::string Clause::ToString() const {
  if (!text.empty()) return text;
  if (atoms.empty()) return "false";
  if (std::optional<std::string> symbol = ValueSetSymbol()) {
    return MemberText(Expr::Symbol(*symbol).ToString(), Values());
  }
  return absl::StrJoin(atoms, " or ",
                       [](std::string* out, const Atom& atom) { out->append(atom.ToString()); });
}

// ---- SymbolSet ----

SymbolSet SymbolSet::Finite(const std::set<int64_t>& values) {
  SymbolSet s;
  s.residues.clear();
  for (int64_t v : values) {
    if (v >= 1) s.small.insert(v);
  }
  s.threshold = s.small.empty() ? 1 : *s.small.rbegin() + 1;
  Normalize(s);
  return s;
}

bool SymbolSet::Contains(int64_t v) const {
  if (v < 1) return false;
  if (v < threshold) return small.count(v) > 0;
  return Pattern(*this, v);
}

std::optional<SymbolSet> SymbolSet::Intersect(const SymbolSet& o) const {
  int64_t period = 1;
  if (!LcmBounded(this->period, o.period, period)) return std::nullopt;
  const int64_t threshold = std::max(this->threshold, o.threshold);
  if (threshold > kMaxSpan) return std::nullopt;
  return Tabulate(threshold, period,
                  [&](int64_t v) { return Contains(v) && o.Contains(v); });
}

namespace {

struct SetParts {
  std::set<int64_t> extra;  // listed members
  bool pattern = false;     // the periodic part is non-empty
  bool from_threshold = false;
};

SetParts Parts(const SymbolSet& s) {
  SetParts p;
  p.pattern = !s.residues.empty();
  bool excluded = false;
  for (int64_t v = 1; v < s.threshold; ++v) {
    if (Pattern(s, v) && s.small.count(v) == 0) excluded = true;
  }
  // Unless a value below the threshold fits the pattern but is left out, the pattern is
  // stated without the threshold and only the members outside it are listed.
  p.from_threshold = p.pattern && (excluded || s.period == 1);
  for (int64_t v : s.small) {
    if (p.from_threshold || !Pattern(s, v)) p.extra.insert(v);
  }
  return p;
}

std::string Congruence(const std::string& name, const SymbolSet& s) {
  if (s.residues.size() == 1) return absl::StrCat(name, " mod ", s.period, " == ", *s.residues.begin());
  return absl::StrCat(name, " mod ", s.period, " ∈ ", ValueSetToString(s.residues));
}

}  // namespace

std::string SymbolSet::ToString(const std::string& symbol) const {
  if (empty()) return "false";
  if (all()) return "true";
  const std::string name = Expr::Symbol(symbol).ToString();
  const SetParts p = Parts(*this);
  std::vector<std::string> parts;
  if (!p.extra.empty()) parts.push_back(MemberText(name, p.extra));
  if (p.pattern) {
    if (period == 1) {
      parts.push_back(absl::StrCat(name, " >= ", threshold));
    } else if (p.from_threshold) {
      // The first member of the pattern reads better than the threshold itself.
      int64_t first = threshold;
      while (!Pattern(*this, first)) ++first;
      const std::string both = absl::StrCat(name, " >= ", first, " and ", Congruence(name, *this));
      parts.push_back(p.extra.empty() ? both : absl::StrCat("(", both, ")"));
    } else {
      parts.push_back(Congruence(name, *this));
    }
  }
  return absl::StrJoin(parts, " or ");
}

Clause SymbolSet::ToClause(const std::string& symbol) const {
  Clause clause;
  const Expr n = Expr::Symbol(symbol);
  const SetParts p = Parts(*this);
  for (int64_t v : p.extra) clause.atoms.push_back(Atom::EqExpr(n, Expr::Const(v)));
  if (p.pattern) {
    const Expr t = Expr::Const(threshold);
    if (period == 1) {
      // min(N, T) == T exactly when N >= T.
      clause.atoms.push_back(Atom::EqExpr(Expr::Min(n, t), t));
    } else {
      const Expr m = *Expr::Mod(n, Expr::Const(period));
      for (int64_t r : residues) {
        if (p.from_threshold) {
          // min(N, T) + T*(N mod P) == T*(1 + r) exactly when N >= T and N mod P == r.
          clause.atoms.push_back(
              Atom::EqExpr(Expr::Min(n, t) + t * m, t * Expr::Const(1 + r)));
        } else {
          clause.atoms.push_back(Atom::EqExpr(m, Expr::Const(r)));
        }
      }
    }
  }
  clause.text = ToString(symbol);
  if (finite()) clause.text.clear();  // the atoms print the same
  return clause;
}

std::optional<SymbolSet> SolveOneSymbolClause(const Clause& clause, const std::string& symbol) {
  int64_t threshold = 1, period = 1;
  for (const Atom& atom : clause.atoms) {
    for (const std::string& s : atom.Symbols()) {
      if (s != symbol) return std::nullopt;
    }
    std::optional<ZeroSetShape> z = ZeroSetPeriodicity(atom.lhs - atom.rhs);
    if (!z) return std::nullopt;
    threshold = std::max(threshold, z->threshold);
    if (!LcmBounded(period, z->period, period)) return std::nullopt;
  }
  if (threshold + period > kMaxSpan) return std::nullopt;
  std::map<std::string, int64_t> bindings = {{symbol, 0}};
  bool overflow = false;
  SymbolSet s = Tabulate(threshold, period, [&](int64_t v) {
    bindings[symbol] = v;
    for (const Atom& atom : clause.atoms) {
      const std::optional<int64_t> a = atom.lhs.Evaluate(bindings);
      const std::optional<int64_t> b = atom.rhs.Evaluate(bindings);
      if (!a || !b) overflow = true;
      if (a && b && *a == *b) return true;
    }
    return false;
  });
  if (overflow) return std::nullopt;
  return s;
}

// ---- ConditionSet ----

// The former members of ConditionSet, with the methods that use them unchanged.
struct ConditionSet::State {
  void Add(Clause clause);
  void Merge(const State& other);
  void Simplify();
  std::optional<int64_t> PinnedValue(const std::string& symbol) const;
  std::vector<std::string> Symbols() const;
  std::optional<bool> Evaluate(const std::map<std::string, int64_t>& bindings) const;
  std::string ToString() const;
  void SetContradiction(std::string message);
  // Applies pinned values and small finite sets to `clause`; nullopt means it is true.
  std::optional<Clause> Reduce(const Clause& clause) const;
  // Intersects the set of `symbol` with `set`; false on contradiction.
  bool IntersectDomain(const std::string& symbol, const SymbolSet& set);
  void Rebuild();

  std::map<std::string, SymbolSet> domains_;
  std::map<std::string, std::set<int64_t>> finite_;
  std::vector<std::string> domain_order_;
  std::vector<Clause> general_;
  std::vector<Clause> clauses_;
  bool contradictory_ = false;
  std::string contradiction_;
};

void ConditionSet::State::Add(Clause clause) {
  clause.text.clear();
  general_.push_back(std::move(clause));
  Simplify();
}

void ConditionSet::State::Merge(const State& other) {
  if (other.contradictory_) SetContradiction(other.contradiction_);
  for (const std::string& symbol : other.domain_order_) {
    if (!IntersectDomain(symbol, other.domains_.at(symbol))) break;
  }
  for (const Clause& clause : other.general_) general_.push_back(clause);
  Simplify();
}

void ConditionSet::State::SetContradiction(std::string message) {
  if (contradictory_) return;
  contradictory_ = true;
  contradiction_ = std::move(message);
}

std::optional<int64_t> ConditionSet::State::PinnedValue(const std::string& symbol) const {
  auto it = finite_.find(symbol);
  if (it == finite_.end() || it->second.size() != 1) return std::nullopt;
  return *it->second.begin();
}

std::vector<std::string> ConditionSet::State::Symbols() const {
  std::set<std::string> names;
  for (const auto& [symbol, set] : domains_) names.insert(symbol);
  for (const Clause& clause : general_) {
    for (std::string& s : clause.Symbols()) names.insert(std::move(s));
  }
  return std::vector<std::string>(names.begin(), names.end());
}

std::optional<bool> ConditionSet::State::Evaluate(const std::map<std::string, int64_t>& bindings) const {
  if (contradictory_) return false;
  bool unknown = false;
  for (const auto& [symbol, set] : domains_) {
    auto it = bindings.find(symbol);
    if (it == bindings.end()) {
      unknown = true;
    } else if (!set.Contains(it->second)) {
      return false;
    }
  }
  return EvaluateThreeValued(general_, false, bindings, unknown);
}

bool ConditionSet::State::IntersectDomain(const std::string& symbol, const SymbolSet& set) {
  auto it = domains_.find(symbol);
  if (it == domains_.end()) {
    if (set.all()) return true;
    domains_.emplace(symbol, set);
    domain_order_.push_back(symbol);
    if (set.finite()) finite_[symbol] = set.small;
    if (set.empty()) {
      SetContradiction(absl::StrCat(symbol, " has no value >= 1"));
      return false;
    }
    return true;
  }
  std::optional<SymbolSet> both = it->second.Intersect(set);
  if (!both) {
    // Periods too large to combine: keep the new set as a clause of its own.
    general_.push_back(set.ToClause(symbol));
    return true;
  }
  if (both->empty()) {
    SetContradiction(
        absl::StrCat(JoinConjuncts({it->second.ToString(symbol), set.ToString(symbol)}),
                     " have no common value"));
    return false;
  }
  it->second = *std::move(both);
  if (it->second.finite()) finite_[symbol] = it->second.small;
  return true;
}

std::optional<Clause> ConditionSet::State::Reduce(const Clause& clause) const {
  Clause reduced;
  for (const Atom& original : clause.atoms) {
    Atom atom = original;
    const std::vector<std::string> symbols = atom.Symbols();
    // Substitute pinned symbols.
    std::map<std::string, Expr> pinned;
    for (const std::string& s : symbols) {
      if (std::optional<int64_t> v = PinnedValue(s)) pinned.emplace(s, Expr::Const(*v));
    }
    if (!pinned.empty()) {
      atom = Atom::EqExpr(atom.lhs.Substitute(pinned), atom.rhs.Substitute(pinned));
    }
    const Truth truth = DecideEqual(atom.lhs, atom.rhs);
    if (truth == Truth::kAlways) return std::nullopt;
    if (truth == Truth::kNever) continue;
    // Decide by the sets of its symbols when they are all known.
    const std::vector<std::string> left = atom.Symbols();
    bool constrained = !left.empty();
    for (const std::string& s : left) constrained = constrained && domains_.count(s) > 0;
    if (constrained && left.size() == 1) {
      const std::string& s = left.front();
      if (std::optional<SymbolSet> solved = SolveOneSymbolClause(Clause::Of({atom}), s)) {
        std::optional<SymbolSet> both = solved->Intersect(domains_.at(s));
        if (both && both->empty()) continue;
        if (both && *both == domains_.at(s)) return std::nullopt;
      }
    } else if (constrained) {
      int64_t cases = 1;
      for (const std::string& s : left) {
        auto it = finite_.find(s);
        if (it == finite_.end() || __builtin_mul_overflow(cases, static_cast<int64_t>(it->second.size()), &cases) ||
            cases > kMaxEnumeration) {
          cases = -1;
          break;
        }
      }
      if (cases > 0) {
        bool any = false, all = true;
        std::map<std::string, int64_t> bindings;
        // Odometer over the finite sets.
        std::vector<std::set<int64_t>::const_iterator> at;
        for (const std::string& s : left) at.push_back(finite_.at(s).begin());
        while (true) {
          for (size_t i = 0; i < left.size(); ++i) bindings[left[i]] = *at[i];
          const std::optional<bool> t = atom.Evaluate(bindings);
          any = any || t == true;
          all = all && t == true;
          size_t i = 0;
          for (; i < left.size(); ++i) {
            if (++at[i] != finite_.at(left[i]).end()) break;
            at[i] = finite_.at(left[i]).begin();
          }
          if (i == left.size()) break;
        }
        if (all) return std::nullopt;
        if (!any) continue;
      }
    }
    const std::pair<Expr, Expr> key = Unordered(atom);
    bool duplicate = false;
    for (const Atom& kept : reduced.atoms) duplicate = duplicate || Unordered(kept) == key;
    if (!duplicate) reduced.atoms.push_back(std::move(atom));
  }
  return reduced;
}

void ConditionSet::State::Simplify() {
  bool changed = true;
  while (changed && !contradictory_) {
    changed = false;
    std::vector<Clause> kept;
    std::vector<Clause> pending = std::move(general_);
    general_.clear();
    for (const Clause& clause : pending) {
      if (contradictory_) break;
      if (!clause.text.empty()) {  // a one-symbol set that could not be combined
        kept.push_back(clause);
        continue;
      }
      // A one-symbol clause meets its symbol's set directly, so a clash names both sets.
      if (const std::vector<std::string> symbols = clause.Symbols(); symbols.size() == 1) {
        if (std::optional<SymbolSet> set = SolveOneSymbolClause(clause, symbols.front())) {
          IntersectDomain(symbols.front(), *set);
          changed = true;
          continue;
        }
      }
      std::optional<Clause> reduced = Reduce(clause);
      if (!reduced) {
        changed = true;
        continue;
      }
      if (reduced->atoms.empty()) {
        std::vector<std::string> facts;
        std::set<std::string> seen;
        for (const Atom& atom : clause.atoms) {
          for (const Expr* side : {&atom.lhs, &atom.rhs}) {
            for (const std::string& s : side->Symbols()) {
              auto it = domains_.find(s);
              if (it != domains_.end() && seen.insert(s).second) {
                facts.push_back(it->second.ToString(s));
              }
            }
          }
        }
        SetContradiction(facts.empty() ? absl::StrCat(clause.ToString(), " cannot hold")
                                       : absl::StrCat(AsConjunct(clause.ToString()),
                                                      " cannot hold given ", JoinConjuncts(facts)));
        break;
      }
      const std::vector<std::string> symbols = reduced->Symbols();
      if (symbols.size() == 1 && reduced->text.empty()) {
        if (std::optional<SymbolSet> set = SolveOneSymbolClause(*reduced, symbols.front())) {
          IntersectDomain(symbols.front(), *set);
          changed = true;
          continue;
        }
      }
      if (!(*reduced == clause)) changed = true;
      const auto canonical = CanonicalAtoms(*reduced);
      bool duplicate = false;
      for (const Clause& other : kept) duplicate = duplicate || CanonicalAtoms(other) == canonical;
      if (duplicate) {
        changed = true;
        continue;
      }
      kept.push_back(*std::move(reduced));
    }
    // IntersectDomain may have queued clauses it could not combine.
    for (Clause& clause : general_) kept.push_back(std::move(clause));
    general_ = std::move(kept);
  }
  Rebuild();
}

void ConditionSet::State::Rebuild() {
  clauses_.clear();
  finite_.clear();
  for (const std::string& symbol : domain_order_) {
    const SymbolSet& set = domains_.at(symbol);
    if (set.finite()) finite_.emplace(symbol, set.small);
    clauses_.push_back(set.ToClause(symbol));
  }
  for (const Clause& clause : general_) clauses_.push_back(clause);
}

std::string ConditionSet::State::ToString() const {
  if (contradictory_) return absl::StrCat("false: ", contradiction_);
  if (clauses_.empty()) return "true";
  std::vector<std::string> parts;
  parts.reserve(clauses_.size());
  for (const Clause& clause : clauses_) parts.push_back(clause.ToString());
  return JoinConjuncts(parts);
}


// ---- ConditionSet: the empty set has no State ----

namespace {
const std::vector<Clause>& NoClauses() {
  static const auto* const kNone = new std::vector<Clause>();
  return *kNone;
}
}  // namespace

ConditionSet::ConditionSet() = default;
ConditionSet::~ConditionSet() = default;
ConditionSet::ConditionSet(const ConditionSet& other)
    : state_(other.state_ ? std::make_unique<State>(*other.state_) : nullptr) {}
ConditionSet& ConditionSet::operator=(const ConditionSet& other) {
  if (this != &other) state_ = other.state_ ? std::make_unique<State>(*other.state_) : nullptr;
  return *this;
}
ConditionSet::ConditionSet(ConditionSet&& other) noexcept = default;
ConditionSet& ConditionSet::operator=(ConditionSet&& other) noexcept = default;

ConditionSet::State& ConditionSet::Mutable() {
  if (state_ == nullptr) state_ = std::make_unique<State>();
  return *state_;
}

void ConditionSet::Add(Clause clause) { Mutable().Add(std::move(clause)); }
void ConditionSet::Add(Atom atom) { Add(Clause::Of({std::move(atom)})); }
void ConditionSet::Merge(const ConditionSet& other) {
  if (other.state_ != nullptr) Mutable().Merge(*other.state_);
}
void ConditionSet::Simplify() {
  if (state_ != nullptr) state_->Simplify();
}
bool ConditionSet::empty() const {
  return state_ == nullptr || (state_->clauses_.empty() && !state_->contradictory_);
}
bool ConditionSet::contradictory() const { return state_ != nullptr && state_->contradictory_; }
const std::string& ConditionSet::contradiction() const {
  static const auto* const kNone = new std::string();
  return state_ != nullptr ? state_->contradiction_ : *kNone;
}
const std::vector<Clause>& ConditionSet::clauses() const {
  return state_ != nullptr ? state_->clauses_ : NoClauses();
}
const std::map<std::string, std::set<int64_t>>& ConditionSet::value_sets() const {
  static const auto* const kNone = new std::map<std::string, std::set<int64_t>>();
  return state_ != nullptr ? state_->finite_ : *kNone;
}
const std::map<std::string, SymbolSet>& ConditionSet::symbol_sets() const {
  static const auto* const kNone = new std::map<std::string, SymbolSet>();
  return state_ != nullptr ? state_->domains_ : *kNone;
}
std::optional<std::set<int64_t>> ConditionSet::ValuesOf(const std::string& symbol) const {
  if (state_ == nullptr) return std::nullopt;
  auto it = state_->finite_.find(symbol);
  if (it == state_->finite_.end()) return std::nullopt;
  return it->second;
}
std::optional<int64_t> ConditionSet::PinnedValue(const std::string& symbol) const {
  return state_ != nullptr ? state_->PinnedValue(symbol) : std::nullopt;
}
std::vector<std::string> ConditionSet::Symbols() const {
  return state_ != nullptr ? state_->Symbols() : std::vector<std::string>();
}
std::optional<bool> ConditionSet::Evaluate(const std::map<std::string, int64_t>& bindings) const {
  return state_ != nullptr ? state_->Evaluate(bindings) : std::optional<bool>(true);
}
std::string ConditionSet::ToString() const {
  return state_ != nullptr ? state_->ToString() : "true";
}

}  // namespace onnx_bcast::broadcast
