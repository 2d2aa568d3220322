// Implementation of the rule families in rules.h. Each rule walks the axes once
// and feeds a Collector that applies the verdict precedence (error > unknown >
// conditional > ok) and gathers conditions.
#include "broadcast/rules.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnx_bcast::broadcast {
namespace {

// Gathers per-axis findings of one rule application.
class Collector {
 public:
  // Records an error; only the first one is kept.
  void Error(int axis, std::string reason) {
    if (has_error_) return;
    has_error_ = true;
    error_axis_ = axis;
    error_reason_ = std::move(reason);
  }
  // Records why the verdict cannot be decided; only the first reason is kept.
  void Unknown(std::string reason) {
    if (unknown_reason_.empty()) unknown_reason_ = std::move(reason);
  }
  // Records a condition needed on `axis` ("axis 0: N vs 5").
  void Condition(Clause clause, std::string where) {
    condition_.Add(std::move(clause));
    if (std::find(where_.begin(), where_.end(), where) == where_.end()) {
      where_.push_back(std::move(where));
    }
  }
  void Merge(const BroadcastResult& inner) {
    switch (inner.verdict) {
      case Verdict::kError:
        Error(inner.error_axis, inner.reason);
        break;
      case Verdict::kUnknown:
        Unknown(inner.reason);
        break;
      case Verdict::kConditional:
        condition_.Merge(inner.condition);
        where_.push_back(inner.reason);
        break;
      case Verdict::kOk:
        break;
    }
  }
  bool has_error() const { return has_error_; }

  BroadcastResult Finish(Shape output) {
    BroadcastResult result;
    result.output = std::move(output);
    if (has_error_) {
      result.verdict = Verdict::kError;
      result.reason = error_reason_;
      result.error_axis = error_axis_;
    } else if (condition_.contradictory()) {
      result.verdict = Verdict::kError;
      result.reason = absl::StrCat("contradictory conditions: ", condition_.contradiction());
    } else if (!unknown_reason_.empty()) {
      result.verdict = Verdict::kUnknown;
      result.reason = unknown_reason_;
    } else if (!condition_.empty()) {
      result.verdict = Verdict::kConditional;
      result.condition = condition_;
      result.reason = absl::StrJoin(where_, "; ");
    }
    return result;
  }

 private:
  bool has_error_ = false;
  int error_axis_ = -1;
  std::string error_reason_;
  std::string unknown_reason_;
  ConditionSet condition_;
  std::vector<std::string> where_;
};

std::string AxisVs(int axis, const Dim& a, const Dim& b) {
  return absl::StrCat("axis ", axis, ": ", a.ToString(), " vs ", b.ToString());
}

std::string UnknownExtent(int axis) { return absl::StrCat("axis ", axis, ": unknown extent"); }

// Facts about one symbolic-or-value dim used by every rule.
// Symbols range over every extent >= 1: never provably 1, always possibly 1 (fast paths for
// the common case).
bool ProvablyOne(const Dim& d) {
  if (d.is_value()) return d.value() == 1;
  if (!d.is_symbolic() || d.is_symbol()) return false;
  return DecideEqual(*d.expr(), Expr::Const(1)) == Truth::kAlways;
}

bool CanBeOne(const Dim& d) {
  if (d.is_value()) return d.value() == 1;
  if (!d.is_symbolic() || d.is_symbol()) return true;
  return DecideEqual(*d.expr(), Expr::Const(1)) != Truth::kNever;
}

// The atom `a == b`, the symbolic side first.
Atom EqAtom(const Dim& a, const Dim& b) {
  if (a.is_value() && !b.is_value()) return EqAtom(b, a);
  return Atom::EqExpr(*a.expr(), *b.expr());
}

// The clause under which two known dims broadcast (`a == b or a == 1 or b == 1`, atoms that
// can never hold left out); nullopt when it is always true; an empty clause when never.
std::optional<Clause> PairClause(const Dim& a, const Dim& b, bool a_may_be_one, bool b_may_be_one) {
  const Truth eq = DecideEqual(*a.expr(), *b.expr());
  if (eq == Truth::kAlways) return std::nullopt;
  Clause clause;
  if (eq != Truth::kNever) clause.atoms.push_back(EqAtom(a, b));
  if (a_may_be_one && CanBeOne(a)) clause.atoms.push_back(EqAtom(a, Dim::Value(1)));
  if (b_may_be_one && CanBeOne(b)) clause.atoms.push_back(EqAtom(b, Dim::Value(1)));
  return clause;
}

// numpy rule for the dims that meet on one output axis (missing dims omitted).
Dim MergeNumpyAxis(const std::vector<Dim>& dims, int axis, Collector& out) {
  // Dims that are not provably 1, distinct, in input order; unknowns each count.
  std::vector<Dim> rest;
  int unknowns = 0;
  for (const Dim& dim : dims) {
    if (dim.is_unknown()) {
      ++unknowns;
      rest.push_back(dim);
    } else if (!ProvablyOne(dim) && std::find(rest.begin(), rest.end(), dim) == rest.end()) {
      rest.push_back(dim);
    }
  }
  // A single dim against 1s broadcasts whatever its extent, even unknown.
  if (rest.empty()) return Dim::Value(1);
  if (rest.size() == 1) return rest.front();
  // Known dims, without those always equal to an earlier one (equal by periodicity though
  // not by canonical form, e.g. H mod 2 and H - 2*floor(H/2)).
  std::vector<Dim> known;
  for (const Dim& dim : rest) {
    if (dim.is_unknown()) continue;
    bool same = false;
    for (const Dim& k : known) {
      same = same || DecideEqual(*k.expr(), *dim.expr()) == Truth::kAlways;
    }
    if (!same) known.push_back(dim);
  }
  if (unknowns == 0 && known.size() == 1) return known.front();
  std::vector<Dim> values;
  for (const Dim& dim : known) {
    if (dim.is_value()) values.push_back(dim);
  }
  if (values.size() > 1) {
    out.Error(axis, AxisVs(axis, values[0], values[1]));
    return Dim::Unknown();
  }
  // With a constant c on the axis, each other dim being 1 or c implies every pair.
  for (size_t i = 0; i < known.size(); ++i) {
    for (size_t j = i + 1; j < known.size(); ++j) {
      if (!values.empty() && !known[i].is_value() && !known[j].is_value()) continue;
      std::optional<Clause> clause = PairClause(known[i], known[j], true, true);
      if (!clause) continue;
      if (clause->atoms.empty()) {
        out.Error(axis, AxisVs(axis, known[i], known[j]));
        return Dim::Unknown();
      }
      out.Condition(*std::move(clause), AxisVs(axis, known[i], known[j]));
    }
  }
  if (unknowns > 0) {
    out.Unknown(UnknownExtent(axis));
    return values.empty() ? Dim::Unknown() : values.front();
  }
  if (!values.empty()) return values.front();
  // Under the condition every extent is the common one or 1, so the max is exact, unless an
  // extent can be 0 (floor(H/8) for H < 8): 0 with 1 gives 0, so then the max is multiplied
  // by min(extents, 1), which is 0 exactly when some extent is.
  Expr high = *known.front().expr();
  Expr low = high;
  bool zero_possible = false;
  for (const Dim& dim : known) {
    const Expr e = *dim.expr();
    high = Expr::Max(high, e);
    low = Expr::Min(low, e);
    const std::optional<int64_t> lb = e.LowerBound();
    zero_possible =
        zero_possible || ((!lb || *lb <= 0) && DecideEqual(e, Expr::Const(0)) != Truth::kNever);
  }
  if (zero_possible) high = high * Expr::Min(low, Expr::Const(1));
  return Dim::FromExpr(high);
}

// numpy rule over known-rank shapes; returns the output shape.
Shape NumpyKnownRanks(const std::vector<const Shape*>& shapes, Collector& out) {
  int64_t rank = 0;
  for (const Shape* shape : shapes) rank = std::max(rank, shape->rank());
  Shape output;
  output.dims.reserve(rank);
  std::vector<Dim> dims;
  for (int64_t axis = 0; axis < rank; ++axis) {
    dims.clear();
    for (const Shape* shape : shapes) {
      const int64_t i = axis - (rank - shape->rank());
      if (i >= 0) dims.push_back(shape->dims[i]);
    }
    output.dims.push_back(MergeNumpyAxis(dims, static_cast<int>(axis), out));
  }
  return output;
}

// One-way check: `b` (broadcast source) against `t` (target extent).
void CheckOneWay(const Dim& t, const Dim& b, int axis, Collector& out) {
  if (ProvablyOne(b)) return;
  if (b == t && !b.is_unknown()) return;
  if (b.is_unknown() || t.is_unknown()) {
    out.Unknown(UnknownExtent(axis));
    return;
  }
  std::optional<Clause> clause = PairClause(b, t, true, false);
  if (!clause) return;
  if (clause->atoms.empty()) {
    out.Error(axis, AxisVs(axis, t, b));
  } else {
    out.Condition(*std::move(clause), AxisVs(axis, t, b));
  }
}

// Exact-equality check of two dims.
void CheckEqual(const Dim& a, const Dim& b, int axis, Collector& out, const std::string& label) {
  if (a == b && !a.is_unknown()) return;
  const std::string where = label.empty()
                                ? AxisVs(axis, a, b)
                                : absl::StrCat(label, ": ", a.ToString(), " vs ", b.ToString());
  if (a.is_unknown() || b.is_unknown()) {
    out.Unknown(label.empty() ? UnknownExtent(axis) : absl::StrCat(label, ": unknown extent"));
    return;
  }
  std::optional<Clause> clause = PairClause(a, b, false, false);
  if (!clause) return;
  if (clause->atoms.empty()) {
    out.Error(label.empty() ? axis : -1, where);
  } else {
    out.Condition(*std::move(clause), where);
  }
}

std::string RankTooHigh(int64_t rank_b, int64_t rank_a) {
  return absl::StrCat("B has rank ", rank_b, ", more than rank ", rank_a, " of A");
}

}  // namespace

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kOk:
      return "ok";
    case Verdict::kError:
      return "error";
    case Verdict::kConditional:
      return "conditional";
    case Verdict::kUnknown:
      break;
  }
  return "unknown";
}

std::string BroadcastResult::ToString() const {
  switch (verdict) {
    case Verdict::kOk:
      return absl::StrCat("ok ", output.ToString());
    case Verdict::kError:
      return absl::StrCat("error: ", reason);
    case Verdict::kConditional:
      return absl::StrCat("conditional ", output.ToString(), " if ", condition.ToString());
    case Verdict::kUnknown:
      break;
  }
  return absl::StrCat("unknown ", output.ToString(), ": ", reason);
}

namespace {
constexpr std::pair<RuleFamily, std::string_view> kRuleNames[] = {
    {RuleFamily::kNumpy, "numpy"},
    {RuleFamily::kUnidirectional, "unidirectional"},
    {RuleFamily::kNone, "none"},
    {RuleFamily::kPdpd, "pdpd"},
    {RuleFamily::kLegacyAxis, "legacy-axis"},
    {RuleFamily::kBidirectional, "bidirectional"},
    {RuleFamily::kExplicit, "explicit"},
    {RuleFamily::kMatMul, "matmul"},
};
}  // namespace

std::string_view RuleName(RuleFamily rule) {
  for (const auto& [family, name] : kRuleNames) {
    if (family == rule) return name;
  }
  return "unknown";
}

std::optional<RuleFamily> RuleFromName(std::string_view name) {
  for (const auto& [family, rule_name] : kRuleNames) {
    if (rule_name == name) return family;
  }
  return std::nullopt;
}

BroadcastResult BroadcastNumpyOf(absl::Span<const Shape* const> inputs) {
  Collector out;
  if (inputs.empty()) {
    out.Error(-1, "no inputs");
    return out.Finish(Shape::UnknownRank());
  }
  std::vector<const Shape*> known;
  int unknown_rank_input = -1;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i]->rank_known) {
      known.push_back(inputs[i]);
    } else if (unknown_rank_input < 0) {
      unknown_rank_input = static_cast<int>(i);
    }
  }
  Shape output = NumpyKnownRanks(known, out);
  // A scalar or all-ones operand broadcasts against anything, so when every other input is
  // one, an input of unknown rank decides nothing but the output.
  bool others_all_ones = true;
  int unknown_ranks = 0;
  for (const Shape* input : inputs) {
    if (!input->rank_known) {
      ++unknown_ranks;
      continue;
    }
    for (const Dim& dim : input->dims) others_all_ones = others_all_ones && ProvablyOne(dim);
  }
  if (unknown_rank_input >= 0 && unknown_ranks == 1 && others_all_ones) {
    output = Shape::UnknownRank();
  } else if (unknown_rank_input >= 0) {
    out.Unknown(absl::StrCat("input ", unknown_rank_input, " has unknown rank"));
    output = Shape::UnknownRank();
  }
  return out.Finish(std::move(output));
}

BroadcastResult BroadcastNumpy(absl::Span<const Shape> inputs) {
  std::vector<const Shape*> pointers;
  pointers.reserve(inputs.size());
  for (const Shape& s : inputs) pointers.push_back(&s);
  return BroadcastNumpyOf(pointers);
}

BroadcastResult BroadcastUnidirectional(const Shape& target, const Shape& b) {
  Collector out;
  if (!target.rank_known || !b.rank_known) {
    out.Unknown(!target.rank_known ? "A has unknown rank" : "B has unknown rank");
    return out.Finish(target);
  }
  const int64_t rank = target.rank();
  if (b.rank() > rank) {
    out.Error(-1, RankTooHigh(b.rank(), rank));
    return out.Finish(target);
  }
  for (int64_t i = 0; i < b.rank(); ++i) {
    const int64_t axis = rank - b.rank() + i;
    CheckOneWay(target.dims[axis], b.dims[i], static_cast<int>(axis), out);
  }
  return out.Finish(target);
}

BroadcastResult BroadcastNumpyOneWay(const Shape& input, const Shape& target) {
  return BroadcastUnidirectional(target, input);
}

BroadcastResult BroadcastNone(absl::Span<const Shape> inputs) {
  Collector out;
  if (inputs.empty()) {
    out.Error(-1, "no inputs");
    return out.Finish(Shape::UnknownRank());
  }
  const Shape* first = nullptr;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].rank_known) {
      out.Unknown(absl::StrCat("input ", i, " has unknown rank"));
      continue;
    }
    if (first == nullptr) {
      first = &inputs[i];
      continue;
    }
    if (inputs[i].rank() != first->rank()) {
      out.Error(-1, absl::StrCat("rank ", first->rank(), " vs ", inputs[i].rank()));
      continue;
    }
    for (int64_t axis = 0; axis < first->rank(); ++axis) {
      CheckEqual(first->dims[axis], inputs[i].dims[axis], static_cast<int>(axis), out, "");
    }
  }
  return out.Finish(first == nullptr ? Shape::UnknownRank() : *first);
}

BroadcastResult BroadcastPdpd(const Shape& a, const Shape& b, int64_t axis) {
  Collector out;
  if (!a.rank_known || !b.rank_known) {
    out.Unknown(!a.rank_known ? "A has unknown rank" : "B has unknown rank");
    return out.Finish(a);
  }
  const int64_t rank_a = a.rank();
  const int64_t rank_b = b.rank();
  if (rank_b > rank_a) {
    out.Error(-1, RankTooHigh(rank_b, rank_a));
    return out.Finish(a);
  }
  if (axis < -1 || axis > rank_a) {
    out.Error(-1, absl::StrCat("axis ", axis, " is out of range for A of rank ", rank_a));
    return out.Finish(a);
  }
  const int64_t start = axis == -1 ? rank_a - rank_b : axis;
  for (int64_t i = 0; i < rank_b; ++i) {
    const int64_t pos = start + i;
    if (pos < rank_a) {
      CheckOneWay(a.dims[pos], b.dims[i], static_cast<int>(pos), out);
      continue;
    }
    // Past A's last axis: only B's trailing 1s may be here (they are ignored).
    const Dim& dim = b.dims[i];
    const std::string where = absl::StrCat("B dim ", i, " (", dim.ToString(), ") at axis ", axis,
                                           " falls past the last axis of A (rank ", rank_a, ")");
    if (ProvablyOne(dim)) continue;
    if (dim.is_unknown()) {
      out.Unknown(where);
    } else if (!CanBeOne(dim)) {
      out.Error(-1, where);
    } else {
      out.Condition(Clause::Of({EqAtom(dim, Dim::Value(1))}), where);
    }
  }
  return out.Finish(a);
}

BroadcastResult BroadcastLegacyOnnx(const Shape& a, const Shape& b, bool broadcast,
                                    std::optional<int64_t> axis) {
  if (!broadcast) {
    const Shape both[] = {a, b};
    return BroadcastNone(both);
  }
  return BroadcastPdpd(a, b, axis.value_or(-1));
}

std::optional<Shape> LegacyToNumpyBShape(const Shape& a, const Shape& b,
                                         std::optional<int64_t> axis) {
  if (!a.rank_known || !b.rank_known || b.rank() > a.rank()) return std::nullopt;
  const int64_t start = axis.value_or(-1) == -1 ? a.rank() - b.rank() : *axis;
  if (start < 0 || start > a.rank()) return std::nullopt;
  const int64_t need = a.rank() - start;
  Shape shaped = b;
  while (shaped.rank() > need) {
    if (!shaped.dims.back().Is(1)) return std::nullopt;
    shaped.dims.pop_back();
  }
  while (shaped.rank() < need) shaped.dims.push_back(Dim::Value(1));
  return shaped;
}

std::optional<std::vector<int64_t>> LegacyToNumpyUnsqueezeAxes(const Shape& a, const Shape& b,
                                                               std::optional<int64_t> axis) {
  const std::optional<Shape> shaped = LegacyToNumpyBShape(a, b, axis);
  if (!shaped) return std::nullopt;
  if (shaped->rank() < b.rank()) {
    // b's trailing 1s overhang; harmless only when b is all 1s.
    for (const Dim& dim : b.dims) {
      if (!dim.Is(1)) return std::nullopt;
    }
    return std::vector<int64_t>{};
  }
  std::vector<int64_t> axes;
  for (int64_t i = b.rank(); i < shaped->rank(); ++i) axes.push_back(i);
  return axes;
}

BroadcastResult BroadcastBidirectional(const Shape& input, const Shape& target_shape) {
  const Shape both[] = {input, target_shape};
  return BroadcastNumpy(both);
}

BroadcastResult BroadcastExplicit(const Shape& input, const Shape& target,
                                  absl::Span<const int64_t> axes_mapping) {
  Collector out;
  if (!input.rank_known || !target.rank_known) {
    out.Unknown(!input.rank_known ? "input has unknown rank" : "target has unknown rank");
    return out.Finish(target);
  }
  if (static_cast<int64_t>(axes_mapping.size()) != input.rank()) {
    out.Error(-1, absl::StrCat("axes_mapping has ", axes_mapping.size(),
                               " entries for input of rank ", input.rank()));
    return out.Finish(target);
  }
  for (size_t k = 0; k < axes_mapping.size(); ++k) {
    const int64_t axis = axes_mapping[k];
    if (axis < 0 || axis >= target.rank()) {
      out.Error(-1, absl::StrCat("axes_mapping[", k, "] = ", axis,
                                 " is out of range for target of rank ", target.rank()));
      return out.Finish(target);
    }
    if (k > 0 && axis <= axes_mapping[k - 1]) {
      out.Error(-1, absl::StrCat("axes_mapping must be strictly increasing: [",
                                 absl::StrJoin(axes_mapping, ","), "]"));
      return out.Finish(target);
    }
  }
  for (size_t k = 0; k < axes_mapping.size(); ++k) {
    const int64_t axis = axes_mapping[k];
    CheckOneWay(target.dims[axis], input.dims[k], static_cast<int>(axis), out);
  }
  return out.Finish(target);
}

BroadcastResult BroadcastMatMul(const Shape& a, const Shape& b) {
  Collector out;
  if (!a.rank_known || !b.rank_known) {
    out.Unknown(!a.rank_known ? "A has unknown rank" : "B has unknown rank");
    return out.Finish(Shape::UnknownRank());
  }
  if (a.rank() == 0 || b.rank() == 0) {
    out.Error(-1, absl::StrCat("matmul operand ", a.rank() == 0 ? "A" : "B", " has rank 0"));
    return out.Finish(Shape::UnknownRank());
  }
  const bool a_vector = a.rank() == 1;
  const bool b_vector = b.rank() == 1;
  Shape a2 = a;
  Shape b2 = b;
  if (a_vector) a2.dims.insert(a2.dims.begin(), Dim::Value(1));
  if (b_vector) b2.dims.push_back(Dim::Value(1));
  CheckEqual(a2.dims[a2.rank() - 1], b2.dims[b2.rank() - 2], -1, out, "K");

  Shape batch_a = Shape::FromDims({a2.dims.begin(), a2.dims.end() - 2});
  Shape batch_b = Shape::FromDims({b2.dims.begin(), b2.dims.end() - 2});
  const std::vector<const Shape*> batches = {&batch_a, &batch_b};
  Shape output = NumpyKnownRanks(batches, out);
  if (!a_vector) output.dims.push_back(a2.dims[a2.rank() - 2]);
  if (!b_vector) output.dims.push_back(b2.dims[b2.rank() - 1]);
  return out.Finish(std::move(output));
}

std::string_view BroadcastClassName(BroadcastClass broadcast_class) {
  switch (broadcast_class) {
    case BroadcastClass::kSame:
      return "same";
    case BroadcastClass::kScalar:
      return "scalar";
    case BroadcastClass::kPerChannel:
      return "per-channel";
    case BroadcastClass::kInnerAxis:
      return "inner-axis";
    case BroadcastClass::kOuterAxis:
      return "outer-axis";
    case BroadcastClass::kBidirectional:
      return "bidirectional";
    case BroadcastClass::kGeneral:
      return "general";
    case BroadcastClass::kLegacyAxis:
      return "legacy-axis";
    case BroadcastClass::kMatMulBatch:
      return "matmul-batch";
    case BroadcastClass::kInvalid:
      return "invalid";
    case BroadcastClass::kUnidirectional:
      break;
  }
  return "unidirectional";
}

namespace {

// Class of one input that differs from `output` (both known rank).
BroadcastClass ClassifyOperand(const Shape& input, const Shape& output) {
  if (input.rank() > output.rank()) return BroadcastClass::kGeneral;
  if (AllOnes(input)) return BroadcastClass::kScalar;
  const int64_t rank = output.rank();
  const Shape aligned = PadWithOnes(input, rank, false);
  // Positions where the aligned input is not 1 must hold the output's dim.
  std::vector<int64_t> varying;
  for (int64_t i = 0; i < rank; ++i) {
    if (aligned.dims[i].Is(1)) continue;
    if (!(aligned.dims[i] == output.dims[i])) return BroadcastClass::kGeneral;
    varying.push_back(i);
  }
  if (rank >= 3 && varying.size() == 1 && varying[0] == 1) return BroadcastClass::kPerChannel;
  // Inner-axis: leading 1s, then the output's trailing run.
  int64_t leading_ones = 0;
  while (leading_ones < rank && aligned.dims[leading_ones].Is(1)) ++leading_ones;
  if (leading_ones > 0 && std::equal(aligned.dims.begin() + leading_ones, aligned.dims.end(),
                                     output.dims.begin() + leading_ones)) {
    return BroadcastClass::kInnerAxis;
  }
  // Outer-axis: the output's leading run, then 1s.
  int64_t trailing_ones = 0;
  while (trailing_ones < rank && aligned.dims[rank - 1 - trailing_ones].Is(1)) ++trailing_ones;
  if (trailing_ones > 0 &&
      std::equal(aligned.dims.begin(), aligned.dims.end() - trailing_ones, output.dims.begin())) {
    return BroadcastClass::kOuterAxis;
  }
  return BroadcastClass::kGeneral;
}

}  // namespace

BroadcastClass Classify(absl::Span<const Shape> inputs, const Shape& output) {
  if (!output.rank_known) return BroadcastClass::kGeneral;
  std::vector<const Shape*> broadcast;
  for (const Shape& input : inputs) {
    if (!input.rank_known) return BroadcastClass::kGeneral;
    if (!(input == output)) broadcast.push_back(&input);
  }
  if (broadcast.empty()) return BroadcastClass::kSame;
  if (broadcast.size() == inputs.size()) {
    return inputs.size() >= 2 ? BroadcastClass::kBidirectional : BroadcastClass::kGeneral;
  }
  std::optional<BroadcastClass> common;
  for (const Shape* input : broadcast) {
    const BroadcastClass c = ClassifyOperand(*input, output);
    if (common && *common != c) return BroadcastClass::kGeneral;
    common = c;
  }
  return *common;
}

absl::StatusOr<std::vector<int64_t>> BroadcastConcrete(
    absl::Span<const std::vector<int64_t>> shapes) {
  if (shapes.empty()) return absl::InvalidArgumentError("broadcast of no shapes");
  size_t rank = 0;
  for (const std::vector<int64_t>& shape : shapes) {
    rank = std::max(rank, shape.size());
    for (int64_t extent : shape) {
      if (extent < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("negative extent ", extent, " in [", absl::StrJoin(shape, ","), "]"));
      }
    }
  }
  std::vector<int64_t> output(rank, 1);
  for (size_t axis = 0; axis < rank; ++axis) {
    for (const std::vector<int64_t>& shape : shapes) {
      if (axis + shape.size() < rank) continue;
      const int64_t extent = shape[axis + shape.size() - rank];
      if (extent == 1 || extent == output[axis]) continue;
      if (output[axis] != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("axis ", axis, ": ", output[axis], " vs ", extent));
      }
      output[axis] = extent;
    }
  }
  return output;
}

}  // namespace onnx_bcast::broadcast
