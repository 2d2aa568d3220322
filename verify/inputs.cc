// Symbol bindings for verification samples (see inputs.h).
#include "verify/inputs.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnx_bcast::verify {
namespace {

// Values searched for a symbol: a set may start late (`H >= 40`) or be sparse (`H mod 32 == 0`).
constexpr int64_t kSearchLimit = 1 << 17;
// Values tried per symbol of a condition over several symbols, and the nodes of that search.
constexpr int64_t kSmallLimit = 64;
constexpr int64_t kSearchBudget = 200000;

bool Allowed(const broadcast::ConditionSet& c, const std::string& symbol, int64_t v) {
  auto it = c.symbol_sets().find(symbol);
  return it == c.symbol_sets().end() || it->second.Contains(v);
}

// The first allowed value >= `from` not in `avoid` (then any allowed value >= 2, then 1).
int64_t Pick(const broadcast::ConditionSet& c, const std::string& symbol, int64_t from,
             const std::set<int64_t>& avoid) {
  for (int64_t v = from; v < from + kSearchLimit; ++v) {
    if (avoid.count(v) == 0 && Allowed(c, symbol, v)) return v;
  }
  for (int64_t v = 2; v < kSearchLimit; ++v) {
    if (Allowed(c, symbol, v)) return v;
  }
  return 1;
}

// Symbols (of `symbols`) in the clauses over several symbols, in sorted order.
std::vector<std::string> RelatedSymbols(const std::set<std::string>& symbols,
                                        const broadcast::ConditionSet& c) {
  std::set<std::string> out;
  for (const broadcast::Clause& clause : c.clauses()) {
    const std::vector<std::string> syms = clause.Symbols();
    if (syms.size() < 2) continue;
    for (const std::string& s : syms) {
      if (symbols.count(s) > 0) out.insert(s);
    }
  }
  return {out.begin(), out.end()};
}

// Depth-first search for values of `order[i..]` (candidates: the preferred value, then other
// small allowed values, those not yet used in the sample first) that leave `c` not false.
bool Search(const broadcast::ConditionSet& c, const std::vector<std::string>& order, size_t i,
            const Bindings& preferred, std::set<int64_t>* used, Bindings* b, int64_t* budget) {
  if (i == order.size()) return c.Evaluate(*b) != false;
  const std::string& s = order[i];
  std::vector<int64_t> candidates = {preferred.at(s)};
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t v = 1; v <= kSmallLimit; ++v) {
      if (v == preferred.at(s) || !Allowed(c, s, v)) continue;
      const bool fresh = used->count(v) == 0 && v > 1;
      if (fresh == (pass == 0)) candidates.push_back(v);
    }
  }
  for (int64_t v : candidates) {
    if (--*budget < 0) return false;
    (*b)[s] = v;
    if (c.Evaluate(*b) == false) continue;  // already broken with the values bound so far
    const bool was_used = !used->insert(v).second;
    if (Search(c, order, i + 1, preferred, used, b, budget)) return true;
    if (!was_used) used->erase(v);
  }
  b->erase(s);
  return false;
}

}  // namespace

std::vector<Bindings> SampleBindings(const std::set<std::string>& symbols, int samples,
                                     bool edge_cases, const broadcast::ConditionSet& condition) {
  std::vector<Bindings> out;
  std::map<std::string, std::set<int64_t>> taken;  // values each symbol had in earlier samples
  const std::vector<std::string> related = RelatedSymbols(symbols, condition);
  for (int k = 0; k < std::max(samples, 1); ++k) {
    Bindings b;
    std::set<int64_t> used;
    int64_t j = 0;
    for (const std::string& s : symbols) {
      // Sample 0: 1 where allowed. Sample k > 0: from 1 + k + j on, distinct within the
      // sample and from this symbol's earlier values.
      if (k == 0) {
        b[s] = Allowed(condition, s, 1) ? 1 : Pick(condition, s, 2, {});
      } else {
        std::set<int64_t> avoid = used;
        avoid.insert(taken[s].begin(), taken[s].end());
        avoid.insert(1);
        b[s] = Pick(condition, s, 1 + k + j, avoid);
      }
      used.insert(b[s]);
      ++j;
    }
    if (!related.empty() && condition.Evaluate(b) == false) {
      // Conditions over several symbols (`total == past + seq or total == 1`): keep the
      // others, search the related symbols' values near the preferred ones.
      const Bindings preferred = b;
      for (const std::string& s : related) {
        b.erase(s);
        used.erase(preferred.at(s));
      }
      int64_t budget = kSearchBudget;
      Bindings found = b;
      if (Search(condition, related, 0, preferred, &used, &found, &budget)) {
        b = std::move(found);
      } else {
        b = preferred;  // no satisfying binding in reach: sample where the analysis says fail
      }
    }
    for (const auto& [s, v] : b) taken[s].insert(v);
    out.push_back(std::move(b));
  }
  if (edge_cases && !symbols.empty()) {
    Bindings zero;
    for (const std::string& s : symbols) zero[s] = 0;
    out.push_back(std::move(zero));
  }
  return out;
}

std::optional<Bindings> ViolatingBinding(const std::set<std::string>& symbols,
                                         const broadcast::ConditionSet& condition) {
  if (symbols.empty() || condition.empty()) return std::nullopt;
  // A satisfying binding with values > 1 to start from (sample 1).
  const std::vector<Bindings> base = SampleBindings(symbols, 2, false, condition);
  const Bindings& start = base.back();
  for (const broadcast::Clause& clause : condition.clauses()) {
    for (const std::string& s : clause.Symbols()) {
      if (symbols.count(s) == 0) continue;
      for (int64_t v = 2; v <= kSmallLimit + 1; ++v) {
        Bindings b = start;
        b[s] = v == kSmallLimit + 1 ? 1 : v;
        if (condition.Evaluate(b) == false) return b;
      }
    }
  }
  return std::nullopt;
}

std::string BindingsToString(const Bindings& bindings) {
  if (bindings.empty()) return "no symbols";
  return absl::StrJoin(bindings, ", ", absl::PairFormatter("="));
}

std::set<std::string> InputSymbols(const runtime::Graph& graph) {
  std::set<std::string> symbols;
  for (const auto& names : graph.input_symbols) {
    for (const std::string& s : names) {
      if (!s.empty()) symbols.insert(s);
    }
  }
  return symbols;
}

}  // namespace onnx_bcast::verify
