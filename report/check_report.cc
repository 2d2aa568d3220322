// Renders a broadcast Analysis as text and JSON.
#include "report/check_report.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/dim_evaluation.h"
#include "report/report_json.h"

namespace onnx_bcast::report {
namespace {

// The compact graph path of `v`; "" in the main graph (the long path where an Analysis was
// built without compact names).
const std::string& ShortGraph(const analysis::NodeVerdict& v) {
  static const std::string kMain;
  if (v.graph == "main") return kMain;
  return v.short_graph.empty() ? v.graph : v.short_graph;
}

int64_t LintCount(const analysis::Analysis& a) {
  int64_t n = 0;
  for (const analysis::NodeVerdict& v : a.nodes) n += static_cast<int64_t>(v.lints.size());
  return n;
}

Json Strings(const std::vector<std::string>& items) {
  Json out = Json::array();
  for (const std::string& s : items) out.push_back(s);
  return out;
}

Json Ints(const std::set<int64_t>& items) {
  Json out = Json::array();
  for (int64_t v : items) out.push_back(v);
  return out;
}

Json CombinedPerSymbol(const analysis::Analysis& a);

// The condition as data: its symbols, every clause as atoms `lhs == rhs` over dim expressions
// (printed in the form Expr::Parse reads back, with the symbols each mentions), the exact value
// set of every one-symbol constraint, and the finite value sets.
Json Condition(const broadcast::ConditionSet& c, const analysis::Analysis* per_symbol = nullptr) {
  if (c.empty()) return nullptr;
  Json out;
  out["text"] = c.ToString();
  out["symbols"] = Strings(c.Symbols());
  Json clauses = Json::array();
  for (const broadcast::Clause& clause : c.clauses()) {
    Json atoms = Json::array();
    for (const broadcast::Atom& atom : clause.atoms) {
      Json j;
      j["symbol"] = atom.symbol;
      if (atom.is_value()) {
        j["equals"] = *atom.value;
      } else {
        j["equals_symbol"] = atom.other;
      }
      j["lhs"] = atom.lhs.ToString();
      j["rhs"] = atom.rhs.ToString();
      j["symbols"] = Strings(atom.Symbols());
      atoms.push_back(std::move(j));
    }
    clauses.push_back(std::move(atoms));
  }
  out["clauses"] = std::move(clauses);
  Json values = Json::object();
  for (const auto& [symbol, set] : c.value_sets()) values[symbol] = Ints(set);
  out["values"] = std::move(values);
  // One-symbol constraints exactly: the members below `threshold`, then from `threshold` on
  // the values whose remainder modulo `period` is in `residues`.
  Json sets = Json::object();
  for (const auto& [symbol, set] : c.symbol_sets()) {
    Json j;
    j["text"] = set.ToString(symbol);
    j["small"] = Ints(set.small);
    j["threshold"] = set.threshold;
    j["period"] = set.period;
    j["residues"] = Ints(set.residues);
    sets[symbol] = std::move(j);
  }
  out["sets"] = std::move(sets);
  if (per_symbol != nullptr) out["per_symbol"] = CombinedPerSymbol(*per_symbol);
  return out;
}

// The combined condition per symbol: what the model needs of it (its exact set and the
// clauses that relate it to other symbols) and the nodes imposing each part.
Json CombinedPerSymbol(const analysis::Analysis& a) {
  struct Part {
    const analysis::NodeVerdict* node;
    std::string condition;
  };
  std::map<std::string, std::vector<Part>> parts;
  for (const analysis::NodeVerdict& v : a.nodes) {
    if (v.verdict != broadcast::Verdict::kConditional) continue;
    for (const broadcast::Clause& clause : v.condition.clauses()) {
      for (const std::string& s : clause.Symbols()) parts[s].push_back({&v, clause.ToString()});
    }
  }
  Json out = Json::object();
  for (const std::string& symbol : a.combined.Symbols()) {
    Json j;
    auto set = a.combined.symbol_sets().find(symbol);
    j["set"] =
        set == a.combined.symbol_sets().end() ? Json(nullptr) : Json(set->second.ToString(symbol));
    std::vector<std::string> related;
    for (const broadcast::Clause& clause : a.combined.clauses()) {
      const std::vector<std::string> syms = clause.Symbols();
      if (syms.size() > 1 && std::find(syms.begin(), syms.end(), symbol) != syms.end()) {
        related.push_back(clause.ToString());
      }
    }
    j["clauses"] = Strings(related);
    Json imposed = Json::array();
    for (const Part& p : parts[symbol]) {
      imposed.push_back(Json{{"node", p.node->node},
                             {"op", p.node->op},
                             {"graph", p.node->graph},
                             {"condition", p.condition}});
    }
    j["imposed_by"] = std::move(imposed);
    out[symbol] = std::move(j);
  }
  return out;
}

Json ShapeJson(const broadcast::Shape& s) {
  if (!s.rank_known) return nullptr;
  Json out = Json::array();
  for (const broadcast::Dim& d : s.dims) {
    if (d.is_value()) {
      out.push_back(d.value());
    } else if (d.is_symbol()) {
      out.push_back(d.symbol());
    } else if (d.is_expr()) {
      out.push_back(d.ToString());
    } else {
      out.push_back("?");
    }
  }
  return out;
}

// ShapeJson's bytes, written directly: null, or the dims on one line.
void AppendShape(const broadcast::Shape& s, JsonText* out) {
  if (!s.rank_known) {
    out->Append("null");
    return;
  }
  out->Append('[');
  for (size_t k = 0; k < s.dims.size(); ++k) {
    if (k > 0) out->Append(", ");
    const broadcast::Dim& d = s.dims[k];
    if (d.is_value()) {
      out->AppendInt(d.value());
    } else if (d.is_symbol()) {
      AppendJsonString(d.symbol(), out);
    } else if (d.is_expr()) {
      AppendJsonString(d.ToString(), out);
    } else {
      out->Append("\"?\"");
    }
  }
  out->Append(']');
}

}  // namespace

std::string NodePath(const analysis::NodeVerdict& v) {
  const std::string& graph = ShortGraph(v);
  return graph.empty() ? v.node : absl::StrCat(graph, "/", v.node);
}

std::string LocatedMessage(const analysis::NodeVerdict& v, const std::string& message) {
  const std::string& graph = ShortGraph(v);
  if (graph.empty()) return message;
  const std::string prefix = absl::StrCat(v.op, " '", v.node, "'");
  if (absl::StartsWith(message, prefix)) {
    return absl::StrCat(v.op, " '", NodePath(v), "'", message.substr(prefix.size()));
  }
  return absl::StrCat(message, " [in ", graph, "]");
}

std::string FormatCheckText(const analysis::Analysis& a, const std::string& model_path, bool lint,
                            const analysis::DimEvaluation* at, CheckDetail detail) {
  const analysis::VerdictCounts counts = a.CountVerdicts();
  std::string out = absl::StrCat(model_path, ": ", a.nodes.size(), " broadcasting nodes: ",
                                 counts.ok, " ok, ", counts.error, " error, ", counts.conditional,
                                 " conditional, ", counts.unknown, " unknown");
  if (lint) absl::StrAppend(&out, ", ", LintCount(a), " lint warnings");
  absl::StrAppend(&out, "\n");
  if (detail == CheckDetail::kSummary) return out;
  if (!a.inference_note.empty()) {
    absl::StrAppend(&out, "note: libonnx shape inference failed (", a.inference_note,
                    "); shapes of other ops are unknown\n");
  }
  // What needs attention first: a 300-node model's report must not bury its one error under
  // the ok nodes (those are only counted unless every node is asked for).
  auto section = [&](broadcast::Verdict verdict, const char* title) {
    if (counts.of(verdict) == 0) return;
    absl::StrAppend(&out, "\n", title, ":\n");
    for (const analysis::NodeVerdict& v : a.nodes) {
      if (v.verdict == verdict) absl::StrAppend(&out, "  ", LocatedMessage(v, v.message), "\n");
    }
  };
  section(broadcast::Verdict::kError, "Errors");
  if (!a.contradiction.empty()) {
    if (counts.error == 0) absl::StrAppend(&out, "\nErrors:\n");
    absl::StrAppend(&out, "  ", a.contradiction, "\n");
  }
  section(broadcast::Verdict::kConditional, "Conditions");
  if (!a.combined.empty() && !a.combined.contradictory()) {
    absl::StrAppend(&out, "  combined: ", a.combined.ToString(), "\n");
  }
  // An unknown's message ends with where its shape was lost ("the shape of 'k' comes from ...").
  section(broadcast::Verdict::kUnknown, "Unknown");
  if (at != nullptr) {
    absl::StrAppend(
        &out, "\nAt ", at->bindings.empty() ? "no bound dims" : analysis::DimBindingsToString(at->bindings),
        ": ", at->fails, " fail, ", at->holds, " hold, ", at->conditional, " still conditional");
    if (!at->unbound.empty()) {
      absl::StrAppend(&out, " (symbols not bound: ", absl::StrJoin(at->unbound, ", "), ")");
    }
    absl::StrAppend(&out, ", ", at->unknown, " unknown\n");
    for (analysis::DimOutcome outcome : {analysis::DimOutcome::kFails, analysis::DimOutcome::kConditional}) {
      for (size_t i = 0; i < a.nodes.size() && i < at->nodes.size(); ++i) {
        const analysis::NodeVerdict& v = a.nodes[i];
        const analysis::NodeDimEvaluation& n = at->nodes[i];
        if (n.outcome != outcome) continue;
        if (outcome == analysis::DimOutcome::kFails) {
          absl::StrAppend(&out, "  fails: ", LocatedMessage(v, n.message), "\n");
        } else {
          absl::StrAppend(&out, "  conditional: ", v.op, " '", NodePath(v), "' needs ", n.message,
                          " (not bound: ", absl::StrJoin(n.unbound, ", "), ")\n");
        }
      }
    }
  }
  if (lint && LintCount(a) > 0) {
    absl::StrAppend(&out, "\nLint:\n");
    for (const analysis::NodeVerdict& v : a.nodes) {
      for (const analysis::LintWarning& w : v.lints) {
        absl::StrAppend(&out, "  warning [", w.lint_class, "] ", LocatedMessage(v, w.message),
                        "\n");
      }
    }
  }
  if (detail != CheckDetail::kAll || a.nodes.empty()) return out;
  std::map<std::string, std::vector<const analysis::NodeVerdict*>> by_class;
  for (const analysis::NodeVerdict& v : a.nodes) by_class[analysis::BroadcastClassText(v)].push_back(&v);
  absl::StrAppend(&out, "\nBy class:\n");
  for (const auto& [klass, nodes] : by_class) {
    absl::StrAppend(&out, "  ", klass, " (", nodes.size(), "):\n");
    for (const analysis::NodeVerdict* v : nodes) {
      std::vector<std::string> shapes;
      for (const broadcast::Shape& s : v->inputs) shapes.push_back(s.ToString());
      absl::StrAppend(&out, "    ", v->op, " '", NodePath(*v), "': ", absl::StrJoin(shapes, " , "),
                      " -> ", v->output.ToString(), "  [", std::string(broadcast::RuleName(v->rule)),
                      ", ", std::string(broadcast::VerdictName(v->verdict)), "]\n");
    }
  }
  return out;
}

std::string FormatCheckJson(const analysis::Analysis& a, const std::string& model_path, bool lint,
                            const analysis::DimEvaluation* at) {
  std::string text;
  // About 470 bytes a node: one allocation instead of doublings whose last copy briefly held
  // the report twice.
  text.reserve(a.nodes.size() * 480 + 4096);
  // Appending to a string cannot fail.
  (void)WriteCheckJson(a, model_path, lint, at, [&text](std::string_view piece) {
    text.append(piece);
    return absl::OkStatus();
  });
  return text;
}

absl::Status WriteCheckJson(const analysis::Analysis& a, const std::string& model_path, bool lint,
                            const analysis::DimEvaluation* at, JsonSink sink) {
  // Written member by member, not as a DOM (at 100k nodes that took several times the
  // analysis's memory), and handed on in pieces (the whole text cost as much as the analysis).
  JsonText text(kJsonPiece + 4096);
  JsonStreamWriter doc(&text);
  doc.Member("schema_version", kReportSchemaVersion);
  doc.Member("kind", "check");
  doc.Member("model", model_path);
  doc.BeginArray("nodes");
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    // Written member by member: a DOM per node cost more than the analysis at 100k nodes.
    const analysis::NodeVerdict& v = a.nodes[i];
    JsonObjectWriter n = doc.ObjectElement();
    n.String("node", v.node);
    n.String("op", v.op);
    n.String("graph", v.graph);
    n.String("path", NodePath(v));
    n.Int("opset", v.opset);
    n.BeginArray("inputs");
    for (size_t k = 0; k < v.inputs.size(); ++k) {
      JsonObjectWriter input = n.ObjectElement();
      input.String("name", k < v.input_names.size() ? v.input_names[k] : "");
      AppendShape(v.inputs[k], input.Raw("shape"));
      input.End();
    }
    n.EndArray();
    AppendShape(v.output, n.Raw("output"));
    n.String("rule", broadcast::RuleName(v.rule));
    n.String("class", analysis::BroadcastClassText(v));
    n.String("verdict", broadcast::VerdictName(v.verdict));
    if (v.condition.empty()) {
      n.Raw("condition")->Append("null");
    } else {
      n.Value("condition", Condition(v.condition));
    }
    n.String("message", v.message);
    if (at != nullptr && i < at->nodes.size()) {
      const analysis::NodeDimEvaluation& e = at->nodes[i];
      Json shapes = Json::array();
      for (const broadcast::Shape& s : e.inputs) shapes.push_back(ShapeJson(s));
      n.Value("at_dims", Json{{"outcome", std::string(analysis::DimOutcomeName(e.outcome))},
                              {"inputs", std::move(shapes)},
                              {"message", e.message},
                              {"unbound", Strings(e.unbound)}});
    }
    if (lint) {
      Json lints = Json::array();
      for (const analysis::LintWarning& w : v.lints) {
        lints.push_back(Json{{"class", w.lint_class}, {"message", w.message}});
      }
      n.Value("lint", lints);
    }
    n.End();
    if (absl::Status s = FlushJsonText(kJsonPiece, &text, sink); !s.ok()) return s;
  }
  doc.EndArray();
  doc.Member("combined_condition",
             a.combined.contradictory() ? Json(nullptr) : Condition(a.combined, &a));
  doc.Member("contradiction", JsonStringOrNull(a.contradiction));
  if (at != nullptr) {
    Json e;
    Json bindings = Json::object();
    for (const auto& [symbol, value] : at->bindings) bindings[symbol] = value;
    e["bindings"] = std::move(bindings);
    e["holds"] = at->holds;
    e["fails"] = at->fails;
    e["conditional"] = at->conditional;
    e["unknown"] = at->unknown;
    e["unbound"] = Strings(at->unbound);
    e["combined"] = at->combined.has_value() ? Json(*at->combined) : Json(nullptr);
    if (at->first_failure < 0) {
      e["first_failure"] = nullptr;
    } else {
      const analysis::NodeVerdict& v = a.nodes[at->first_failure];
      e["first_failure"] = Json{{"node", v.node},
                                {"op", v.op},
                                {"graph", v.graph},
                                {"message", at->nodes[at->first_failure].message}};
    }
    doc.Member("at_dims", e);
  }
  Json summary;
  summary["nodes"] = static_cast<int64_t>(a.nodes.size());
  const analysis::VerdictCounts counts = a.CountVerdicts();
  summary["ok"] = counts.ok;
  summary["error"] = counts.error;
  summary["conditional"] = counts.conditional;
  summary["unknown"] = counts.unknown;
  if (lint) summary["lint"] = LintCount(a);
  doc.Member("summary", summary);
  doc.End();
  return FlushJsonText(1, &text, sink);
}

}  // namespace onnx_bcast::report
