// Evaluates a broadcast Analysis at bound symbolic dims (see dim_evaluation.h).
#include "analysis/dim_evaluation.h"

#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/decide_node.h"
#include "broadcast/expr.h"

namespace onnx_bcast::analysis {
namespace {

using broadcast::Dim;
using broadcast::Expr;
using broadcast::Shape;
using broadcast::Verdict;

void AddSymbols(const Shape& shape, std::set<std::string>* out) {
  if (!shape.rank_known) return;
  for (const Dim& d : shape.dims) {
    if (!d.is_symbolic()) continue;
    if (d.is_symbol()) {
      out->insert(d.symbol());
      continue;
    }
    for (std::string& s : d.expr()->Symbols()) out->insert(std::move(s));
  }
}

// What `condition` still requires once the bound symbols are replaced by their values
// (`total_seq == past_seq + 3 or total_seq == 1` at seq=3), simplified as any condition.
broadcast::ConditionSet Residual(const broadcast::ConditionSet& condition,
                             const std::map<std::string, Expr>& subst) {
  broadcast::ConditionSet out;
  for (const broadcast::Clause& clause : condition.clauses()) {
    std::vector<broadcast::Atom> atoms;
    for (const broadcast::Atom& atom : clause.atoms) {
      atoms.push_back(broadcast::Atom::EqExpr(atom.lhs.Substitute(subst), atom.rhs.Substitute(subst)));
    }
    out.Add(broadcast::Clause::Of(std::move(atoms)));
  }
  return out;
}

}  // namespace

std::string_view DimOutcomeName(DimOutcome outcome) {
  switch (outcome) {
    case DimOutcome::kHolds:
      return "holds";
    case DimOutcome::kFails:
      return "fails";
    case DimOutcome::kConditional:
      return "conditional";
    case DimOutcome::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::vector<std::string> AnalysisSymbols(const Analysis& analysis) {
  std::set<std::string> symbols;
  for (const auto& [graph, shapes] : analysis.shapes) {
    for (const auto& [name, shape] : shapes) AddSymbols(shape, &symbols);
  }
  for (const NodeVerdict& v : analysis.nodes) {
    for (const Shape& s : v.inputs) AddSymbols(s, &symbols);
    AddSymbols(v.output, &symbols);
    for (std::string& s : v.condition.Symbols()) symbols.insert(std::move(s));
  }
  std::vector<std::string> out;
  for (const std::string& s : symbols) {
    // Opaque placeholders stand for expressions too large to build: not a name to bind.
    if (!absl::StartsWith(s, "opaque#")) out.push_back(s);
  }
  return out;
}

std::string DimBindingsToString(const DimBindings& bindings) {
  return absl::StrJoin(bindings, ", ", absl::PairFormatter("="));
}

absl::StatusOr<DimEvaluation> EvaluateAtDims(const Analysis& analysis,
                                             const DimBindings& bindings) {
  const std::vector<std::string> known = AnalysisSymbols(analysis);
  const std::set<std::string> known_set(known.begin(), known.end());
  for (const auto& [symbol, value] : bindings) {
    if (known_set.count(symbol) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dim ", symbol, ": the model has no symbol '", symbol, "' (its symbols: ",
                       known.empty() ? std::string("none") : absl::StrJoin(known, ", "), ")"));
    }
    if (value < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--dim ", symbol, "=", value,
          ": symbolic dims are extents >= 1 (the analysis does not cover empty dims)"));
    }
  }
  std::map<std::string, Expr> subst;
  for (const auto& [symbol, value] : bindings) subst[symbol] = Expr::Const(value);

  DimEvaluation eval;
  eval.bindings = bindings;
  eval.nodes.reserve(analysis.nodes.size());
  std::set<std::string> unbound;
  for (const NodeVerdict& v : analysis.nodes) {
    NodeDimEvaluation n;
    switch (v.verdict) {
      case Verdict::kOk:
        n.outcome = DimOutcome::kHolds;
        break;
      case Verdict::kError:
        n.outcome = DimOutcome::kFails;
        n.message = v.message;
        break;
      case Verdict::kUnknown:
        n.outcome = DimOutcome::kUnknown;
        n.message = v.message;
        break;
      case Verdict::kConditional: {
        const std::optional<bool> holds = v.condition.Evaluate(bindings);
        if (holds == true) {
          n.outcome = DimOutcome::kHolds;
          break;
        }
        if (!holds.has_value()) {
          for (const std::string& s : v.condition.Symbols()) {
            if (bindings.count(s) == 0) n.unbound.push_back(s);
          }
          if (n.unbound.empty()) {
            // Every symbol is bound, yet an intermediate overflowed int64: nothing is decided.
            n.outcome = DimOutcome::kUnknown;
            n.message = absl::StrCat(v.op, " '", v.node, "': ", v.condition.ToString(),
                                     " cannot be evaluated at these values (int64 overflow)");
            break;
          }
          n.outcome = DimOutcome::kConditional;
          n.message = Residual(v.condition, subst).ToString();
          unbound.insert(n.unbound.begin(), n.unbound.end());
          break;
        }
        n.outcome = DimOutcome::kFails;
        break;
      }
    }
    if (v.verdict != Verdict::kOk) {
      for (const Shape& s : v.inputs) n.inputs.push_back(Substitute(s, subst));
    }
    if (n.outcome == DimOutcome::kFails && v.verdict == Verdict::kConditional) {
      // The rule again on the shapes at these dims: the error a model with these numbers in
      // its shapes would get. The condition is exact, so the rule finds the error; should it
      // not (a dim left symbolic by a fresh symbol), the condition itself is the reason.
      NodeVerdict at;
      if (DecideAgain(v, n.inputs, &at) && at.verdict == Verdict::kError) {
        n.message = std::move(at.message);
      } else {
        std::vector<std::string> shapes;
        for (const Shape& s : n.inputs) shapes.push_back(s.ToString());
        n.message = absl::StrCat(v.op, " '", v.node, "': ", absl::StrJoin(shapes, " and "),
                                 " are not broadcastable (", std::string(broadcast::RuleName(v.rule)),
                                 " rule, ", v.condition.ToString(), " does not hold)");
      }
    }
    switch (n.outcome) {
      case DimOutcome::kHolds:
        ++eval.holds;
        break;
      case DimOutcome::kFails:
        if (eval.first_failure < 0) eval.first_failure = static_cast<int64_t>(eval.nodes.size());
        ++eval.fails;
        break;
      case DimOutcome::kConditional:
        ++eval.conditional;
        break;
      case DimOutcome::kUnknown:
        ++eval.unknown;
        break;
    }
    eval.nodes.push_back(std::move(n));
  }
  eval.combined = analysis.combined.Evaluate(bindings);
  eval.unbound.assign(unbound.begin(), unbound.end());
  return eval;
}

}  // namespace onnx_bcast::analysis
