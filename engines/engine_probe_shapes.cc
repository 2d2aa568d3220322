// The probe's exact-shape cells (issue 35 item 3): the binary elementwise ops at the unit-axis
// patterns exported models meet, so that the profile records where an engine's behaviour
// depends on the dims rather than on the broadcast class (see ShapeDependentCells).
//
// How cells are chosen: A has a batch of 1 and a feature (last) axis of 6, and every
// combination of unit and non-unit axes between them at ranks 2 to 4 (a sequence or channel
// axis of 4 at axis 1, a spatial axis of 3 at axis 2: T = 1 and T > 1, H = 1 and H > 1):
// [1,6], [1,1,6], [1,4,6], [1,1,1,6], [1,4,1,6], [1,1,3,6], [1,4,3,6]. Against each, B is
// A with the last axis reduced (LayerNorm's statistics), all ones at A's rank (a tf2onnx
// clamp's constant), A with axis 1 reduced (an attention mask [B,1,S] against [B,T,S]) and the
// feature vector [6] (LayerNorm's weight); plus rank 1 ([6] and [1]) and rank 0 (two scalars).
// Each pair in both operand orders, with both operands computed, B an initializer, or A an
// initializer (Mul by a constant of ones, one of legalize-measured's forms); and Expand of a
// computed B to A (the Expand a rewrite inserts). Left out: Add and Sub of a constant A and a
// computed B of lower rank, which crash OpenCV 4.6 in some runs only. Extents are kept small:
// the cells are keyed by where the 1s are (passes::ShapeCellOf), and a child's run costs the
// same at any size. (Measured once with extents 8, 5 and 32, 384 or 48 in place of 4, 3 and 6:
// every cell gave the same result, the flaky crashes aside.)
#include "engines/engine_probe_shapes.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/shape_propagation.h"
#include "engines/engine_probe.h"
#include "proto/model_io.h"
#include "targets/shape_cells.h"

namespace onnx_bcast::engines {
namespace {

using Dims = std::vector<int64_t>;

ProbeOperand ExactOperand(Dims shape, OperandKind kind) {
  ProbeOperand o;
  o.shape = std::move(shape);
  o.kind = kind;
  return o;
}

// (A, B) pairs, A with the output's shape.
std::vector<std::pair<Dims, Dims>> ExactPairs() {
  const std::vector<Dims> full = {{1, 6},       {1, 1, 6},    {1, 4, 6},   {1, 1, 1, 6},
                                  {1, 4, 1, 6}, {1, 1, 3, 6}, {1, 4, 3, 6}};
  std::vector<std::pair<Dims, Dims>> pairs;
  for (const Dims& a : full) {
    std::vector<Dims> bs;
    Dims last = a;  // the last axis reduced
    last.back() = 1;
    bs.push_back(last);
    bs.push_back(Dims(a.size(), 1));  // all ones
    if (a[1] > 1 && a.size() > 2) {
      Dims axis1 = a;  // axis 1 reduced
      axis1[1] = 1;
      bs.push_back(axis1);
    }
    bs.push_back({a.back()});  // the feature vector, lower rank
    std::vector<Dims> seen;
    for (const Dims& b : bs) {
      bool dup = false;
      for (const Dims& s : seen) dup = dup || s == b;
      if (dup) continue;
      seen.push_back(b);
      pairs.emplace_back(a, b);
    }
  }
  pairs.emplace_back(Dims{6}, Dims{1});
  pairs.emplace_back(Dims{}, Dims{});
  return pairs;
}

}  // namespace

std::vector<ProbeCell> ShapeDependentCells() {
  std::vector<ProbeCell> cells;
  const std::vector<std::pair<Dims, Dims>> pairs = ExactPairs();
  struct Kinds {
    OperandKind a;
    OperandKind b;
  };
  constexpr Kinds kKinds[] = {{OperandKind::kComputed, OperandKind::kComputed},
                              {OperandKind::kComputed, OperandKind::kInitializer},
                              {OperandKind::kInitializer, OperandKind::kComputed}};
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"}) {
    for (const auto& [a, b] : pairs) {
      for (bool b_first : {false, true}) {
        if (b_first && a == b) continue;  // the same cell
        for (const Kinds& k : kKinds) {
          // Add and Sub of a constant [1,N] and a computed [N] crash OpenCV 4.6 in some runs
          // and run in others (a segfault, either order): a cell that changes from run to run
          // would make the committed table flaky. Their class refuses them anyway
          // (`inner-axis@2:unaligned`: a constant at the output's rank).
          const bool flaky = (std::string(op) == "Add" || std::string(op) == "Sub") &&
                             k.a == OperandKind::kInitializer && b.size() < a.size();
          if (flaky) continue;
          ProbeCell c;
          c.op = op;
          c.form = "exact";
          c.operands = {ExactOperand(a, k.a), ExactOperand(b, k.b)};
          if (b_first) std::swap(c.operands[0], c.operands[1]);
          cells.push_back(std::move(c));
        }
      }
    }
  }
  for (const auto& [a, b] : pairs) {
    if (a == b) continue;
    ProbeCell c;
    c.op = "Expand";
    c.form = "exact";
    ProbeOperand shape = ExactOperand({static_cast<int64_t>(a.size())}, OperandKind::kInitializer);
    shape.int64_values = a;
    c.operands = {ExactOperand(b, OperandKind::kComputed), shape};
    cells.push_back(std::move(c));
  }
  return cells;
}

namespace {

const char* const kExactOps[] = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};

// The operands' shapes in check's order: Expand's second is its target, not the shape tensor.
std::vector<Dims> CheckOrderShapes(const ProbeCell& c) {
  std::vector<Dims> shapes;
  for (const ProbeOperand& o : c.operands) {
    shapes.push_back(o.int64_values.empty() ? o.shape : o.int64_values);
  }
  return shapes;
}

std::string ShapeText(const Dims& d) { return absl::StrCat("[", absl::StrJoin(d, ","), "]"); }

// Whether `profile` without its exact cells (the class rules alone) accepts cell `c`'s node;
// nullopt when the node cannot be rebuilt or analysed.
std::optional<bool> ClassRulesAccept(const ProbeCell& c, const targets::TargetProfile& class_only) {
  absl::StatusOr<ProbeModel> built = BuildProbeModel(c, 1);
  if (!built.ok()) return std::nullopt;
  absl::StatusOr<proto::Model> model = proto::ParseModelText(built->text, "cell");
  if (!model.ok()) return std::nullopt;
  absl::StatusOr<analysis::Analysis> analysis = analysis::AnalyzeBroadcasts(*model, {});
  if (!analysis.ok()) return std::nullopt;
  const analysis::NodeVerdict* probed = nullptr;
  for (const analysis::NodeVerdict& v : analysis->nodes) {
    if (v.op == c.op) probed = &v;  // the probed node is the graph's last
  }
  if (probed == nullptr) return std::nullopt;
  const auto is_constant = [&](const std::string& name) {
    for (size_t k = 0; k < c.operands.size(); ++k) {
      const OperandKind kind = c.operands[k].kind;
      if (name == absl::StrCat("op", k) &&
          (kind == OperandKind::kInitializer || kind == OperandKind::kConstant)) {
        return true;
      }
    }
    return false;
  };
  return targets::DecideForm(*probed, class_only, is_constant).fits;
}

std::string ResultWord(CellResult r) {
  switch (r) {
    case CellResult::kRunsAndMatches:
      return "runs";
    case CellResult::kRefused:
      return "refused";
    case CellResult::kWrong:
      return "**wrong**";
    case CellResult::kCrashed:
      return "**crashed**";
  }
  return "?";
}

}  // namespace

targets::FormSupport FormSupportOf(CellResult r) {
  switch (r) {
    case CellResult::kRunsAndMatches:
      return targets::FormSupport::kRuns;
    case CellResult::kRefused:
      return targets::FormSupport::kRefused;
    case CellResult::kWrong:
      return targets::FormSupport::kWrong;
    case CellResult::kCrashed:
      return targets::FormSupport::kCrashed;
  }
  return targets::FormSupport::kCrashed;
}

int Severity(targets::FormSupport s) {
  switch (s) {
    case targets::FormSupport::kWrong:
      return 3;
    case targets::FormSupport::kCrashed:
      return 2;
    case targets::FormSupport::kRefused:
      return 1;
    default:
      return 0;
  }
}

void AddShapeCells(const std::vector<const ProbeCell*>& exact, targets::TargetProfile* profile) {
  for (const ProbeCell* c : exact) {
    if (c->kind_pattern.empty()) continue;  // no verdict: nothing to key it by
    const targets::ShapeCell cell =
        targets::ShapeCellOf(CheckOrderShapes(*c), FormSupportOf(c->result));
    std::vector<targets::ShapeCell>& cells = profile->op_rules[c->op].shape_cells[c->kind_pattern];
    auto same = std::find_if(cells.begin(), cells.end(), [&](const targets::ShapeCell& o) {
      return o.operands == cell.operands;
    });
    if (same == cells.end()) {
      cells.push_back(cell);
    } else if (Severity(cell.support) > Severity(same->support)) {
      same->support = cell.support;
    }
  }
}

std::string FormatShapeCellSection(const ProbeReport& report,
                                   const targets::TargetProfile& profile) {
  targets::TargetProfile class_only = profile;
  for (auto& [op, rule] : class_only.op_rules) rule.shape_cells.clear();
  // (operand kinds, broadcasting operand first) -> rows (the two shapes) -> op -> text.
  struct Group {
    std::string title;
    std::vector<std::string> rows;
    std::map<std::string, std::map<std::string, std::string>> cells;
  };
  std::vector<Group> groups;
  std::vector<std::string> expand_rows;
  int total = 0, accepted_failing = 0, refused_running = 0;
  std::map<CellResult, int> counts;
  for (const ProbeCell& c : report.cells) {
    if (c.form != "exact") continue;
    ++total;
    ++counts[c.result];
    const std::optional<bool> accepts = ClassRulesAccept(c, class_only);
    const bool runs = c.result == CellResult::kRunsAndMatches;
    const bool differs = accepts.has_value() && *accepts != runs;
    if (differs) ++(runs ? refused_running : accepted_failing);
    std::string text = ResultWord(c.result);
    if (differs) absl::StrAppend(&text, runs ? " (class: refused)" : " (class: runs)");
    if (c.op == "Expand") {
      expand_rows.push_back(absl::StrCat("| ", ShapeText(c.operands[0].shape), " | ",
                                         ShapeText(c.operands[1].int64_values), " | ", text,
                                         " |\n"));
      continue;
    }
    const bool b_first = c.operands[0].shape != c.output_shape;
    const std::string title =
        absl::StrCat("A ", std::string(OperandKindName(c.operands[b_first ? 1 : 0].kind)), ", B ",
                     std::string(OperandKindName(c.operands[b_first ? 0 : 1].kind)),
                     b_first ? ", B first" : ", B second");
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const Group& x) { return x.title == title; });
    if (g == groups.end()) {
      groups.push_back({title, {}, {}});
      g = groups.end() - 1;
    }
    const std::string row =
        absl::StrCat(ShapeText(c.operands[0].shape), " | ", ShapeText(c.operands[1].shape));
    if (g->cells.count(row) == 0) g->rows.push_back(row);
    g->cells[row][c.op] = text;
  }
  if (total == 0) return "";
  std::string out = absl::StrCat(
      "\n## Shape-dependent cells\n\n",
      "Where an engine's behaviour depends on the exact dims, not on the broadcast class, a "
      "class table cannot decide: these ",
      total,
      " cells (form `exact`) run Add, Sub, Mul, Div, Pow, Max, Min and Expand at shapes with unit "
      "axes in every position (A with a batch of 1 and a last axis of 6; axis 1 of 1 or 4, "
      "T = 1 and T > 1; axis 2 of 1 or 3; B with A's last axis reduced, all ones, axis 1 "
      "reduced, or the vector [6]; rank 1 and rank 0), both computed or one an initializer, "
      "in both orders. The profile records each as `op.<Op>.<kinds>.shapes` by where its 1s "
      "are (`[1,N] [1,1]`: N is any extent above 1), and opt decides a node whose static shapes "
      "match one by that cell before its class, with or without the engine at hand "
      "(docs/cli-opt.md, Live probes). Results: ",
      counts[CellResult::kRunsAndMatches], " run and match, ", counts[CellResult::kRefused],
      " refused, ", counts[CellResult::kWrong], " wrong, ", counts[CellResult::kCrashed],
      " crashed. The class rules alone (the profile without these cells) decide ",
      accepted_failing + refused_running, " of them otherwise: ", accepted_failing,
      " accepted that the engine refuses or computes wrongly (`(class: runs)` below), ",
      refused_running, " refused that run and match (`(class: refused)`).\n");
  for (const Group& g : groups) {
    absl::StrAppend(&out, "\n### ", g.title, "\n\n| first | second |");
    for (const char* op : kExactOps) absl::StrAppend(&out, " ", op, " |");
    absl::StrAppend(&out, "\n|---|---|");
    for (size_t k = 0; k < std::size(kExactOps); ++k) absl::StrAppend(&out, "---|");
    absl::StrAppend(&out, "\n");
    for (const std::string& row : g.rows) {
      absl::StrAppend(&out, "| ", row, " |");
      const auto& per_op = g.cells.at(row);
      for (const char* op : kExactOps) {
        auto it = per_op.find(op);
        absl::StrAppend(&out, " ", it == per_op.end() ? "" : it->second, " |");
      }
      absl::StrAppend(&out, "\n");
    }
  }
  if (!expand_rows.empty()) {
    absl::StrAppend(&out,
                    "\n### Expand of a computed B to A's shape\n\n| B | A | result |\n"
                    "|---|---|---|\n");
    for (const std::string& row : expand_rows) absl::StrAppend(&out, row);
  }
  return out;
}

}  // namespace onnx_bcast::engines
