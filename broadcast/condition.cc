// ConditionSet simplification: value-set intersection, substitution of pinned
// symbols, removal of true clauses and duplicates, contradiction detection.
#include "broadcast/condition.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnx_bcast::bcast {

Atom Atom::Eq(std::string symbol, int64_t value) {
  Atom atom;
  atom.symbol = std::move(symbol);
  atom.value = value;
  return atom;
}

Atom Atom::EqSymbol(std::string symbol, std::string other) {
  Atom atom;
  atom.symbol = std::move(symbol);
  atom.other = std::move(other);
  return atom;
}

Atom Atom::EqExpr(Expr a, Expr b) {
  if (a.AsConst() && !b.AsConst()) std::swap(a, b);
  if (std::optional<int64_t> v = b.AsConst()) return Eq(a.ToString(), *v);
  return EqSymbol(a.ToString(), b.ToString());
}

std::string Atom::ToString() const {
  if (is_value()) return absl::StrCat(symbol, " == ", *value);
  return absl::StrCat(symbol, " == ", other);
}

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
  if (atoms.empty()) return std::nullopt;
  for (const Atom& atom : atoms) {
    if (!atom.is_value() || atom.symbol != atoms.front().symbol) return std::nullopt;
  }
  return atoms.front().symbol;
}

std::set<int64_t> Clause::Values() const {
  std::set<int64_t> values;
  for (const Atom& atom : atoms) {
    if (atom.is_value()) values.insert(*atom.value);
  }
  return values;
}

std::string ValueSetToString(const std::set<int64_t>& values) {
  return absl::StrCat("{", absl::StrJoin(values, ", "), "}");
}

std::string Clause::ToString() const {
  if (atoms.empty()) return "false";
  if (std::optional<std::string> symbol = ValueSetSymbol()) {
    const std::set<int64_t> values = Values();
    if (values.size() == 1) return absl::StrCat(*symbol, " == ", *values.begin());
    return absl::StrCat(*symbol, " ∈ ", ValueSetToString(values));
  }
  return absl::StrJoin(atoms, " or ",
                       [](std::string* out, const Atom& atom) { out->append(atom.ToString()); });
}

namespace {

// Order-insensitive identity of a clause, used to remove duplicates.
std::vector<Atom> CanonicalAtoms(const Clause& clause) {
  std::vector<Atom> atoms = clause.atoms;
  for (Atom& atom : atoms) {
    if (!atom.is_value() && atom.other < atom.symbol) std::swap(atom.symbol, atom.other);
  }
  std::sort(atoms.begin(), atoms.end());
  atoms.erase(std::unique(atoms.begin(), atoms.end()), atoms.end());
  return atoms;
}

}  // namespace

void ConditionSet::Add(Clause clause) {
  general_.push_back(std::move(clause));
  Simplify();
}

void ConditionSet::Add(Atom atom) { Add(Clause::Of({std::move(atom)})); }

void ConditionSet::Merge(const ConditionSet& other) {
  if (other.contradictory_) SetContradiction(other.contradiction_);
  for (const Clause& clause : other.clauses_) general_.push_back(clause);
  Simplify();
}

void ConditionSet::SetContradiction(std::string message) {
  if (contradictory_) return;
  contradictory_ = true;
  contradiction_ = std::move(message);
}

std::optional<std::set<int64_t>> ConditionSet::ValuesOf(const std::string& symbol) const {
  auto it = domains_.find(symbol);
  if (it == domains_.end()) return std::nullopt;
  return it->second;
}

std::optional<int64_t> ConditionSet::PinnedValue(const std::string& symbol) const {
  auto it = domains_.find(symbol);
  if (it == domains_.end() || it->second.size() != 1) return std::nullopt;
  return *it->second.begin();
}

bool ConditionSet::IntersectDomain(const std::string& symbol, const std::set<int64_t>& values) {
  auto it = domains_.find(symbol);
  if (it == domains_.end()) {
    domains_.emplace(symbol, values);
    domain_order_.push_back(symbol);
    return !values.empty();
  }
  std::set<int64_t> both;
  std::set_intersection(it->second.begin(), it->second.end(), values.begin(), values.end(),
                        std::inserter(both, both.begin()));
  if (both.empty()) {
    SetContradiction(absl::StrCat(symbol, " ∈ ", ValueSetToString(it->second), " and ", symbol,
                                  " ∈ ", ValueSetToString(values), " have no common value"));
    return false;
  }
  it->second = std::move(both);
  return true;
}

std::optional<Clause> ConditionSet::Reduce(const Clause& clause) const {
  Clause reduced;
  // Returns false when `value` is excluded by the value set of `symbol`.
  auto allowed = [this](const std::string& symbol, int64_t value) {
    auto it = domains_.find(symbol);
    return it == domains_.end() || it->second.count(value) > 0;
  };
  for (const Atom& original : clause.atoms) {
    Atom atom = original;
    if (!atom.is_value()) {
      if (atom.symbol == atom.other) return std::nullopt;
      const std::optional<int64_t> lhs = PinnedValue(atom.symbol);
      const std::optional<int64_t> rhs = PinnedValue(atom.other);
      if (lhs && rhs) {
        if (*lhs == *rhs) return std::nullopt;
        continue;
      }
      if (lhs) {
        atom = Atom::Eq(atom.other, *lhs);
      } else if (rhs) {
        atom = Atom::Eq(atom.symbol, *rhs);
      } else {
        auto a = domains_.find(atom.symbol);
        auto b = domains_.find(atom.other);
        if (a != domains_.end() && b != domains_.end()) {
          bool overlap = false;
          for (int64_t v : a->second) overlap = overlap || b->second.count(v) > 0;
          if (!overlap) continue;
        }
      }
    }
    if (atom.is_value()) {
      if (!allowed(atom.symbol, *atom.value)) continue;
      if (PinnedValue(atom.symbol) == atom.value) return std::nullopt;
    }
    if (std::find(reduced.atoms.begin(), reduced.atoms.end(), atom) == reduced.atoms.end()) {
      reduced.atoms.push_back(std::move(atom));
    }
  }
  return reduced;
}

void ConditionSet::Simplify() {
  bool changed = true;
  while (changed && !contradictory_) {
    changed = false;
    std::vector<Clause> kept;
    for (const Clause& clause : general_) {
      if (contradictory_) break;
      // A value set intersects directly, so a clash names both sets.
      if (std::optional<std::string> symbol = clause.ValueSetSymbol()) {
        IntersectDomain(*symbol, clause.Values());
        changed = true;
        continue;
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
          for (const std::string* s : {&atom.symbol, &atom.other}) {
            if (s->empty() || !seen.insert(*s).second) continue;
            if (std::optional<std::set<int64_t>> values = ValuesOf(*s)) {
              facts.push_back(Clause::InSet(*s, *values).ToString());
            }
          }
        }
        SetContradiction(facts.empty() ? absl::StrCat(clause.ToString(), " cannot hold")
                                       : absl::StrCat(clause.ToString(), " cannot hold given ",
                                                      absl::StrJoin(facts, " and ")));
        break;
      }
      if (std::optional<std::string> symbol = reduced->ValueSetSymbol()) {
        IntersectDomain(*symbol, reduced->Values());
        changed = true;
        continue;
      }
      if (!(*reduced == clause)) changed = true;
      const std::vector<Atom> canonical = CanonicalAtoms(*reduced);
      bool duplicate = false;
      for (const Clause& other : kept) duplicate = duplicate || CanonicalAtoms(other) == canonical;
      if (duplicate) {
        changed = true;
        continue;
      }
      kept.push_back(*std::move(reduced));
    }
    general_ = std::move(kept);
  }
  Rebuild();
}

void ConditionSet::Rebuild() {
  clauses_.clear();
  for (const std::string& symbol : domain_order_) {
    clauses_.push_back(Clause::InSet(symbol, domains_.at(symbol)));
  }
  for (const Clause& clause : general_) clauses_.push_back(clause);
}

std::string ConditionSet::ToString() const {
  if (contradictory_) return absl::StrCat("false: ", contradiction_);
  if (clauses_.empty()) return "true";
  return absl::StrJoin(clauses_, " and ", [](std::string* out, const Clause& clause) {
    out->append(clause.ToString());
  });
}

}  // namespace onnx_bcast::bcast
