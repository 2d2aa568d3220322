// A probe's outputs: the Markdown table and the profile the measurements give.
//
// From cells to a profile, mechanically:
//  - Expand is keyed like the others: its form class is its input's class against the target
//    (passes::FormClass), so the rewrites insert only the Expands the engine runs.
//  - op.<Op>.min_rank / max_rank: when the op's `same` cells with computed operands (a
//    constant operand may fail at every rank for its own reasons) fail at every output rank below
//    the lowest rank where they all run, that rank is the minimum; when they fail at every
//    rank from some R on above it, R - 1 is the maximum. Cells outside decide nothing else.
//  - op.<Op>.<kinds>: per operand-kind pattern (passes::OperandKindPattern of the probed node)
//    and form class (passes::FormClass), the direct cells within the rank limits (a rewrite
//    form's cell may fail in the wrapping node, which no op rule describes; the table shows
//    them): all run and match -> the class alone (runs); else, when every cell whose
//    operands have equal rank runs and matches -> `:aligned`; else, when every cell whose
//    constant operands all have a lower rank than the output runs and matches -> `:unaligned`
//    (a constant kept at its own rank); else the worst failure met,
//    `wrong` before `crashed` before `refused` (a wrong answer is the one nothing reports).
//  - Global keys: `classes` lists the numpy classes every elementwise op that runs `same`
//    runs (plainly or aligned) with computed operands, plus `unidirectional` and
//    `matmul-batch` when PRelu/Gemm and MatMul run some form; the passes align ranks and
//    legalize the rest; equal_rank and max_rank stay off (the per-op rules say it per op).
//  - initializer_types: the element types whose initializer cell runs and matches (no cells:
//    the key is left out, any type).
//  - runtime_shapes: true when every run-time shape cell (a Shape -> Reshape chain on a
//    symbolic dim) runs and matches. The pipeline: upgrade-legacy-broadcast, fold-constants
//    (static engines get shapes as constants) and legalize-measured (the per-op rules).
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "engines/engine_probe.h"
#include "engines/engine_probe_shapes.h"

namespace onnx_bcast::engines {
namespace {

std::string ShapeText(const std::vector<int64_t>& d) {
  return absl::StrCat("[", absl::StrJoin(d, ","), "]");
}

std::string OperandsText(const ProbeCell& c) {
  std::vector<std::string> parts;
  for (size_t k = 0; k < c.operands.size(); ++k) {
    const ProbeOperand& o = c.operands[k];
    std::string text = absl::StrCat(std::string(OperandKindName(o.kind)), " ",
                                    o.is_bool ? "bool" : "", ShapeText(o.shape));
    if (!o.int64_values.empty()) text = absl::StrCat("initializer ", ShapeText(o.int64_values));
    if (static_cast<int>(k) == c.wrapped) {
      text = absl::StrCat(c.form, "(", text, ") ", ShapeText(c.wrapped_shape));
    }
    if (c.op == "Initializer") {
      text = absl::StrCat(text, ", Cast(initializer ", c.form, " [2,3]) added");
    }
    if (c.op == "Reshape" && c.form == "constant-shape") {
      text = absl::StrCat(text, ", to a constant shape");
    } else if (c.op == "Reshape" && c.form != "op") {
      text =
          absl::StrCat(text, c.form == "runtime-shape" ? " declared [N,3,4]" : " declared [2,3,4]",
                       ", to Concat(Gather(Shape), -1)");
    }
    parts.push_back(std::move(text));
  }
  if (!c.attributes.empty()) parts.push_back(c.attributes);
  return absl::StrJoin(parts, ", ");
}

std::string RanksText(const ProbeCell& c) {
  if (c.form == "op") return "one node";
  if (c.form == "constant-shape") {
    return absl::StrCat(c.operands[0].shape.size(), " → ", c.output_shape.size());
  }
  if (c.op == "Reshape") return absl::StrCat("3 → 2");
  if (c.op == "Initializer") return "2, 2 → 2";
  std::vector<std::string> ranks;
  for (size_t k = 0; k < c.operands.size(); ++k) {
    if (c.op == "Expand" && k == 1) break;  // the target shape is not an operand's shape
    ranks.push_back(absl::StrCat(static_cast<int>(k) == c.wrapped ? c.wrapped_shape.size()
                                                                  : c.operands[k].shape.size()));
  }
  return absl::StrCat(absl::StrJoin(ranks, ", "), " → ", c.output_shape.size());
}

std::string Cell(std::string text) {
  return absl::StrReplaceAll(text, {{"|", "\\|"}, {"\n", " "}});
}

bool Running(targets::FormSupport s) {
  return s == targets::FormSupport::kRuns || s == targets::FormSupport::kRunsAligned ||
         s == targets::FormSupport::kRunsUnaligned || s == targets::FormSupport::kRunsFirstFull;
}

bool Elementwise(const std::string& op) {
  return op != "PRelu" && op != "Gemm" && op != "MatMul" && op != "Expand" && op != "Where";
}

}  // namespace

std::string FormatProbeTable(const ProbeReport& r) {
  std::string out = absl::StrCat(
      "# ", r.engine, " ", r.version, ": measured broadcast support\n\n",
      "Generated by `onnx-bcast probe-engine ", r.engine, " --out-dir DIR` from the installed ",
      r.engine, " ", r.version, r.build.empty() ? "" : absl::StrCat(" (", r.build, ")"),
      "; do not edit. The ctest `engines.probe_table` regenerates it and fails on any "
      "difference, so a new engine version shows as a diff. The profile the same run writes is "
      "`engines/profiles/",
      r.Label(), ".profile`.\n\n",
      "Each cell is one small model (opset 13) run on the engine in a child process and on "
      "onnx-bcast's executor with the same seeded inputs: `runs-and-matches` (every element "
      "within the error model's bound of our float64 reference, docs/error-model.md), "
      "`refused` (the engine's message), `wrong` (output "
      "shape or values differ) or `crashed` (signal or timeout). How cells are chosen: dims "
      "2, 3, 4, 5, 6, 7 from the outermost axis; per broadcast class one representative pair "
      "(A has the output shape, B broadcasts) at its lowest output rank, at 4 and at 6 (inner-axis "
      "also at 3) "
      "(`same` at every rank 1..6), with B also aligned by leading 1s where it has a lower "
      "rank. Binary elementwise ops: both operand orders, B a graph input, a computed tensor "
      "(Relu of an input), an initializer or a Constant node; at rank 4, B through each "
      "rewrite form (Unsqueeze, Reshape, Expand, Tile) from an input and from an "
      "initializer. Where, PRelu, Gemm's C (transB = 1, PyTorch's Linear), MatMul batch dims "
      "and Expand (the class of its input against the target): per class, fewer kinds. Op "
      "`Initializer`: an initializer of each element type, cast to "
      "float and added to an input (the profile's initializer_types). The class "
      "is `check`'s, for the model as given.\n\n");
  if (std::any_of(r.cells.begin(), r.cells.end(),
                  [](const ProbeCell& c) { return c.form == "exact"; })) {
    absl::StrAppend(&out,
                    "Cells of class `exact: ...` are run at shapes with unit axes in every "
                    "position (issue 35): the profile records them by where their 1s are and "
                    "opt decides a node that matches one by that cell before its class; the "
                    "section [Shape-dependent cells](#shape-dependent-cells) shows them by op "
                    "and shape.\n\n");
  }
  if (EngineDropsBatchAxis(r.engine)) {
    absl::StrAppend(
        &out, r.engine,
        " has no batch axis: its tools drop a leading axis of 1, so here every operand at the "
        "output's rank has an outermost extent of 1 (a rank-2 MatMul's A is one row), every "
        "lower-rank graph input a leading 1 (the ranks count them), and "
        "Gemm's A is one row. Extra cells: a batch of 2 (form `batch`), rank-0 and rank-1 "
        "operands without a batch, Reshape to a constant shape (`constant-shape`), and one "
        "node of each op of the exporter corpus on its own (form `op`: whether the converter "
        "has the op; the profile's unsupported_ops lists the ops refused with the converter's "
        "\"not supported yet\").\n\n");
  } else if (EngineGetsExtraCells(r.engine)) {
    absl::StrAppend(
        &out, r.engine,
        " keeps its batch axis: the grid's shapes are as they are. Extra cells: a batch of 2 "
        "(form `batch`), rank-0 and rank-1 operands, Reshape to a constant shape "
        "(`constant-shape`), and one node of each op of the exporter corpus on its own (form "
        "`op`: whether the converter and the engine have the op; the profile's unsupported_ops "
        "lists the ops refused in their words: \"These Op Not Support: ONNX::<op>\", \"Don't "
        "support type [<op>]\").\n\n");
  }
  absl::StrAppend(&out, "| result | cells |\n|---|---|\n");
  for (CellResult res : {CellResult::kRunsAndMatches, CellResult::kRefused, CellResult::kWrong,
                         CellResult::kCrashed}) {
    absl::StrAppend(&out, "| ", std::string(CellResultName(res)), " | ", r.Count(res), " |\n");
  }
  absl::StrAppend(&out, "| total | ", r.cells.size(), " |\n\n");
  // Per op, in grid order.
  std::vector<std::string> ops;
  std::map<std::string, std::map<CellResult, int>> per_op;
  for (const ProbeCell& c : r.cells) {
    if (per_op.count(c.op) == 0) ops.push_back(c.op);
    ++per_op[c.op][c.result];
  }
  absl::StrAppend(&out,
                  "| op | runs-and-matches | refused | wrong | crashed |\n|---|---|---|---|---|\n");
  for (const std::string& op : ops) {
    auto& m = per_op[op];
    absl::StrAppend(&out, "| ", op, " | ", m[CellResult::kRunsAndMatches], " | ",
                    m[CellResult::kRefused], " | ", m[CellResult::kWrong], " | ",
                    m[CellResult::kCrashed], " |\n");
  }
  absl::StrAppend(&out, FormatShapeCellSection(r, ProfileFromProbe(r)));
  absl::StrAppend(&out,
                  "\n## Cells\n\n| # | op | class | ranks | operands | result | message |\n"
                  "|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < r.cells.size(); ++i) {
    const ProbeCell& c = r.cells[i];
    std::string cls =
        c.op == "Reshape" || c.op == "Initializer" || c.form == "op" ? c.form : c.broadcast_class;
    if (c.form == "exact") cls = absl::StrCat("exact: ", cls);
    if (!c.form_class.empty() && c.form_class != cls)
      absl::StrAppend(&cls, " (", c.form_class, ")");
    absl::StrAppend(&out, "| ", i + 1, " | ", c.op, " | ", cls, " | ", RanksText(c), " | ",
                    Cell(OperandsText(c)), " | ", std::string(CellResultName(c.result)), " | ",
                    Cell(c.message), " |\n");
  }
  return out;
}

namespace {

// The grid's cells of each op (the class rules), apart from the exact-shape cells, with what the
// other cells say straight into the profile: initializer types, ops the converter lacks, and
// whether shapes computed at run time work.
struct SortedCells {
  std::map<std::string, std::vector<const ProbeCell*>> by_op;
  std::vector<const ProbeCell*> exact;
};

SortedCells SortCells(const ProbeReport& r, targets::TargetProfile* p) {
  SortedCells sorted;
  bool shape_cells = false;
  std::set<std::string> lacking;
  for (const ProbeCell& c : r.cells) {
    // The engine's own word that it has no layer for the op: ncnn's onnx2ncnn says
    // "<op> not supported yet", MNN's MNNConvert "These Op Not Support: ONNX::<op> | ..."
    // and MNN's runtime, for an op the converter keeps, "Don't support type [<op>]".
    if (c.result == CellResult::kRefused &&
        (absl::StrContains(c.message, absl::StrCat(c.op, " not supported yet")) ||
         absl::StrContains(c.message, absl::StrCat("Don't support type [", c.op, "]")) ||
         (absl::StrContains(c.message, "Op Not Support: ") &&
          absl::StrContains(absl::StrCat(c.message, " "), absl::StrCat("ONNX::", c.op, " "))))) {
      lacking.insert(c.op);
    }
    if (c.op == "Initializer") {
      if (c.result == CellResult::kRunsAndMatches) p->initializer_types.push_back(c.form);
    } else if (c.form == "exact") {
      sorted.exact.push_back(&c);  // the exact-shape cells; the class rules come from the grid
    } else if (c.form == "op" || c.form == "batch" || c.form == "constant-shape") {
      // Which ops the engine has, its batch axis, a constant Reshape: the table shows them;
      // the broadcast rules come from the grid's own cells.
    } else if (c.op != "Reshape") {
      sorted.by_op[c.op].push_back(&c);
    } else if (c.form == "runtime-shape") {
      shape_cells = true;
      p->runtime_shapes = p->runtime_shapes && c.result == CellResult::kRunsAndMatches;
    }
  }
  if (!shape_cells) p->runtime_shapes = true;  // not measured: the default
  p->unsupported_ops.assign(lacking.begin(), lacking.end());
  return sorted;
}

// The rank limits of an op, from its `same` cells: failing from some rank on and below some
// rank, passing between.
void SetRankLimits(const std::vector<const ProbeCell*>& cells, targets::OpRule* rule) {
  std::map<int64_t, bool> same_ok;  // output rank -> every same cell there runs
  for (const ProbeCell* c : cells) {
    if (c->form_class != "same" || c->wrapped >= 0 || c->kind_pattern != "computed") continue;
    const int64_t rank = static_cast<int64_t>(c->output_shape.size());
    auto [it, fresh] = same_ok.emplace(rank, true);
    it->second = it->second && c->result == CellResult::kRunsAndMatches;
  }
  int64_t first_failing = 0;
  for (auto it = same_ok.rbegin(); it != same_ok.rend() && !it->second; ++it) {
    first_failing = it->first;
  }
  int64_t first_passing = 0;
  bool any_passing = false;  // rank 0 passes too (ncnn's rank-0 cells)
  for (auto it = same_ok.begin(); it != same_ok.end(); ++it) {
    if (it->second) {
      first_passing = it->first;
      any_passing = true;
      break;
    }
  }
  if (any_passing) {
    if (first_failing > first_passing) rule->max_rank = first_failing - 1;
    if (first_passing > same_ok.begin()->first) rule->min_rank = first_passing;
  }
}

// (pattern, class) -> worst of all cells, and of the cells each refinement keeps.
struct Tally {
  int worst = 0;
  int worst_aligned = 0;
  bool any_aligned = false;
  int worst_below = 0;
  bool any_below = false;
  int worst_first_full = 0;
  bool any_first_full = false;
  CellResult worst_result = CellResult::kRunsAndMatches;

  void Add(const ProbeCell& c) {
    const int s = Severity(FormSupportOf(c.result));
    if (s > worst) {
      worst = s;
      worst_result = c.result;
    }
    if (c.aligned) {
      any_aligned = true;
      worst_aligned = std::max(worst_aligned, s);
    }
    if (c.constants_below) {
      any_below = true;
      worst_below = std::max(worst_below, s);
    }
    if (c.first_full) {
      any_first_full = true;
      worst_first_full = std::max(worst_first_full, s);
    }
  }
  // The least restrictive support that every cell it keeps runs under.
  targets::FormSupport Support() const {
    if (worst > 0 && any_aligned && worst_aligned == 0) {
      return targets::FormSupport::kRunsAligned;
    }
    if (worst > 0 && any_below && worst_below == 0) return targets::FormSupport::kRunsUnaligned;
    if (worst > 0 && any_first_full && worst_first_full == 0) {
      return targets::FormSupport::kRunsFirstFull;
    }
    return FormSupportOf(worst_result);
  }
};

// One op's rule: its rank limits, and per (operand kinds, class) the least restrictive support
// every cell runs under, with `<class>@<rank>` entries where one rank runs and the class does
// not.
targets::OpRule OpRuleFromCells(const std::vector<const ProbeCell*>& cells) {
  targets::OpRule rule;
  SetRankLimits(cells, &rule);
  auto outside = [&](const ProbeCell& c) {
    const int64_t rank = static_cast<int64_t>(c.output_shape.size());
    return (rule.max_rank > 0 && rank > rule.max_rank) ||
           (rule.min_rank > 0 && rank < rule.min_rank);
  };
  std::map<std::string, std::map<std::string, Tally>> tallies;
  // (pattern, class) -> output rank -> the same over that rank's cells.
  std::map<std::string, std::map<std::string, std::map<int64_t, Tally>>> by_rank;
  for (const ProbeCell* c : cells) {
    // A rewrite form's cell may fail in the wrapping node (Tile, a multi-axis Unsqueeze):
    // the op's rules come from the direct cells; the table shows the forms.
    if (c->form_class.empty() || c->wrapped >= 0 || outside(*c)) continue;
    tallies[c->kind_pattern][c->form_class].Add(*c);
    by_rank[c->kind_pattern][c->form_class][static_cast<int64_t>(c->output_shape.size())].Add(*c);
  }
  for (const auto& [pattern, classes] : tallies) {
    for (const auto& [cls, t] : classes) {
      const targets::FormSupport all = t.Support();
      rule.forms[pattern][cls] = all;
      // A rank whose cells run where the class as a whole does not (OpenCV 4.6: Sub of a
      // computed inner-axis operand at rank 2 only): its own entry, `<class>@<rank>`.
      if (all == targets::FormSupport::kRuns) continue;
      for (const auto& [rank, rt] : by_rank[pattern][cls]) {
        const targets::FormSupport at = rt.Support();
        if (at != all && Running(at)) {
          rule.forms[pattern][absl::StrCat(cls, "@", rank)] = at;
        }
      }
    }
  }
  return rule;
}

// The classes the engine runs natively: what every elementwise op that runs `same` runs with
// computed operands, then unidirectional (PRelu, Gemm) and matmul-batch where any form runs.
std::vector<std::string> NativeClasses(const targets::TargetProfile& p) {
  // Global classes: what every elementwise op that runs `same` runs with computed operands.
  std::set<std::string> global = {"same",       "scalar",        "per-channel", "inner-axis",
                                  "outer-axis", "bidirectional", "general"};
  for (const auto& [op, rule] : p.op_rules) {
    if (!Elementwise(op)) continue;
    auto computed = rule.forms.find("computed");
    if (computed == rule.forms.end()) continue;
    auto runs = [&](const std::string& cls) {
      auto it = computed->second.find(cls);
      return it != computed->second.end() && Running(it->second);
    };
    if (!runs("same")) continue;
    for (auto it = global.begin(); it != global.end();) {
      it = runs(*it) ? std::next(it) : global.erase(it);
    }
  }
  std::vector<std::string> native;
  static const char* const kOrder[] = {"same",       "scalar",        "per-channel", "inner-axis",
                                       "outer-axis", "bidirectional", "general"};
  for (const char* cls : kOrder) {
    if (global.count(cls) > 0) native.push_back(cls);
  }
  auto any_runs = [&](std::initializer_list<const char*> ops) {
    for (const char* op : ops) {
      auto it = p.op_rules.find(op);
      if (it == p.op_rules.end()) continue;
      for (const auto& [pattern, forms] : it->second.forms) {
        for (const auto& [cls, s] : forms) {
          if (Running(s)) return true;
        }
      }
    }
    return false;
  };
  if (any_runs({"PRelu", "Gemm"})) native.push_back("unidirectional");
  if (any_runs({"MatMul"})) native.push_back("matmul-batch");
  if (native.empty()) native.push_back("same");
  return native;
}

}  // namespace

targets::TargetProfile ProfileFromProbe(const ProbeReport& r) {
  targets::TargetProfile p;
  p.name = r.Label();
  p.description = absl::StrCat(
      r.engine, " ", r.version, " measured by onnx-bcast probe-engine: ", r.cells.size(),
      " cells, ", r.Count(CellResult::kRunsAndMatches), " run and match, ",
      r.Count(CellResult::kRefused), " refused, ", r.Count(CellResult::kWrong), " wrong, ",
      r.Count(CellResult::kCrashed), " crashed");
  p.passes = {"upgrade-legacy-broadcast", "fold-constants", "legalize-measured"};
  const SortedCells sorted = SortCells(r, &p);
  for (const auto& [op, cells] : sorted.by_op) p.op_rules[op] = OpRuleFromCells(cells);
  AddShapeCells(sorted.exact, &p);
  p.native_classes = NativeClasses(p);
  return p;
}

std::string FormatProbeProfile(const ProbeReport& r) {
  return absl::StrCat(
      "# ", r.engine, " ", r.version, ", measured by `onnx-bcast probe-engine ", r.engine, "` (",
      r.cells.size(), " cells; docs/engines-", r.Label(), ".md has one row per cell).\n",
      r.build.empty() ? "" : absl::StrCat("# Built from ", r.build, ".\n"),
      "# Generated: do not edit. The per-op rules map the table mechanically\n"
      "# (engines/engine_probe_report.cc); the ctest engines.probe_table regenerates both.\n",
      targets::FormatTargetProfile(ProfileFromProbe(r)));
}

}  // namespace onnx_bcast::engines
