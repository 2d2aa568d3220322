// Renders a broadcast Analysis as text and JSON.
#include "passes/check_report.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "passes/dim_evaluation.h"
#include "passes/json.h"

namespace onnx_bcast::passes {
namespace {

// The compact graph path of `v`; "" in the main graph (the long path where an Analysis was
// built without compact names).
const std::string& ShortGraph(const NodeVerdict& v) {
  static const std::string kMain;
  if (v.graph == "main") return kMain;
  return v.short_graph.empty() ? v.graph : v.short_graph;
}

int64_t LintCount(const Analysis& a) {
  int64_t n = 0;
  for (const NodeVerdict& v : a.nodes) n += static_cast<int64_t>(v.lints.size());
  return n;
}

void WriteStrings(const std::vector<std::string>& items, JsonWriter* json) {
  json->BeginInlineArray();
  for (const std::string& s : items) json->String(s);
  json->EndArray();
}

void WriteInts(const std::set<int64_t>& items, JsonWriter* json) {
  json->BeginInlineArray();
  for (int64_t v : items) json->Int(v);
  json->EndArray();
}

void WriteCombinedPerSymbol(const Analysis& a, JsonWriter* json);

// The condition as data: its symbols, every clause as atoms `lhs == rhs` over dim expressions
// (printed in the form Expr::Parse reads back, with the symbols each mentions), the exact value
// set of every one-symbol constraint, and the finite value sets.
void WriteCondition(const bcast::ConditionSet& c, JsonWriter* json,
                    const Analysis* per_symbol = nullptr) {
  if (c.empty()) {
    json->Null();
    return;
  }
  json->BeginObject();
  json->Member("text", c.ToString());
  json->Key("symbols");
  WriteStrings(c.Symbols(), json);
  json->Key("clauses").BeginArray();
  for (const bcast::Clause& clause : c.clauses()) {
    json->BeginArray();
    for (const bcast::Atom& atom : clause.atoms) {
      json->BeginObject().Member("symbol", atom.symbol);
      if (atom.is_value()) {
        json->Member("equals", *atom.value);
      } else {
        json->Member("equals_symbol", atom.other);
      }
      json->Member("lhs", atom.lhs.ToString()).Member("rhs", atom.rhs.ToString());
      json->Key("symbols");
      WriteStrings(atom.Symbols(), json);
      json->EndObject();
    }
    json->EndArray();
  }
  json->EndArray();
  json->Key("values").BeginObject();
  for (const auto& [symbol, values] : c.value_sets()) {
    json->Key(symbol);
    WriteInts(values, json);
  }
  json->EndObject();
  // One-symbol constraints exactly: the members below `threshold`, then from `threshold` on
  // the values whose remainder modulo `period` is in `residues`.
  json->Key("sets").BeginObject();
  for (const auto& [symbol, set] : c.symbol_sets()) {
    json->Key(symbol).BeginObject();
    json->Member("text", set.ToString(symbol));
    json->Key("small");
    WriteInts(set.small, json);
    json->Member("threshold", set.threshold).Member("period", set.period);
    json->Key("residues");
    WriteInts(set.residues, json);
    json->EndObject();
  }
  json->EndObject();
  if (per_symbol != nullptr) WriteCombinedPerSymbol(*per_symbol, json);
  json->EndObject();
}

// The combined condition per symbol: what the model needs of it (its exact set and the
// clauses that relate it to other symbols) and the nodes imposing each part.
void WriteCombinedPerSymbol(const Analysis& a, JsonWriter* json) {
  struct Part {
    const NodeVerdict* node;
    std::string condition;
  };
  std::map<std::string, std::vector<Part>> parts;
  for (const NodeVerdict& v : a.nodes) {
    if (v.verdict != bcast::Verdict::kConditional) continue;
    for (const bcast::Clause& clause : v.condition.clauses()) {
      for (const std::string& s : clause.Symbols()) parts[s].push_back({&v, clause.ToString()});
    }
  }
  json->Key("per_symbol").BeginObject();
  for (const std::string& symbol : a.combined.Symbols()) {
    json->Key(symbol).BeginObject();
    json->Key("set");
    auto set = a.combined.symbol_sets().find(symbol);
    if (set == a.combined.symbol_sets().end()) {
      json->Null();
    } else {
      json->String(set->second.ToString(symbol));
    }
    std::vector<std::string> related;
    for (const bcast::Clause& clause : a.combined.clauses()) {
      const std::vector<std::string> syms = clause.Symbols();
      if (syms.size() > 1 && std::find(syms.begin(), syms.end(), symbol) != syms.end()) {
        related.push_back(clause.ToString());
      }
    }
    json->Key("clauses");
    WriteStrings(related, json);
    json->Key("imposed_by").BeginArray();
    for (const Part& p : parts[symbol]) {
      json->BeginObject()
          .Member("node", p.node->node)
          .Member("op", p.node->op)
          .Member("graph", p.node->graph)
          .Member("condition", p.condition)
          .EndObject();
    }
    json->EndArray();
    json->EndObject();
  }
  json->EndObject();
}

void WriteShape(const bcast::Shape& s, JsonWriter* json) {
  if (!s.rank_known) {
    json->Null();
    return;
  }
  json->BeginInlineArray();
  for (const bcast::Dim& d : s.dims) {
    if (d.is_value()) {
      json->Int(d.value());
    } else if (d.is_symbol()) {
      json->String(d.symbol());
    } else if (d.is_expr()) {
      json->String(d.ToString());
    } else {
      json->String("?");
    }
  }
  json->EndArray();
}

}  // namespace

std::string NodePath(const NodeVerdict& v) {
  const std::string& graph = ShortGraph(v);
  return graph.empty() ? v.node : absl::StrCat(graph, "/", v.node);
}

std::string LocatedMessage(const NodeVerdict& v, const std::string& message) {
  const std::string& graph = ShortGraph(v);
  if (graph.empty()) return message;
  const std::string prefix = absl::StrCat(v.op, " '", v.node, "'");
  if (absl::StartsWith(message, prefix)) {
    return absl::StrCat(v.op, " '", NodePath(v), "'", message.substr(prefix.size()));
  }
  return absl::StrCat(message, " [in ", graph, "]");
}

std::string FormatCheckText(const Analysis& a, const std::string& model_path, bool lint,
                            const DimEvaluation* at, CheckDetail detail) {
  std::string out = absl::StrCat(
      model_path, ": ", a.nodes.size(), " broadcasting nodes: ",
      a.CountVerdict(bcast::Verdict::kOk), " ok, ", a.CountVerdict(bcast::Verdict::kError),
      " error, ", a.CountVerdict(bcast::Verdict::kConditional), " conditional, ",
      a.CountVerdict(bcast::Verdict::kUnknown), " unknown");
  if (lint) absl::StrAppend(&out, ", ", LintCount(a), " lint warnings");
  absl::StrAppend(&out, "\n");
  if (detail == CheckDetail::kSummary) return out;
  if (!a.inference_note.empty()) {
    absl::StrAppend(&out, "note: libonnx shape inference failed (", a.inference_note,
                    "); shapes of other ops are unknown\n");
  }
  // What needs attention first: a 300-node model's report must not bury its one error under
  // the ok nodes (those are only counted unless every node is asked for).
  auto section = [&](bcast::Verdict verdict, const char* title) {
    if (a.CountVerdict(verdict) == 0) return;
    absl::StrAppend(&out, "\n", title, ":\n");
    for (const NodeVerdict& v : a.nodes) {
      if (v.verdict == verdict) absl::StrAppend(&out, "  ", LocatedMessage(v, v.message), "\n");
    }
  };
  section(bcast::Verdict::kError, "Errors");
  if (!a.contradiction.empty()) {
    if (a.CountVerdict(bcast::Verdict::kError) == 0) absl::StrAppend(&out, "\nErrors:\n");
    absl::StrAppend(&out, "  ", a.contradiction, "\n");
  }
  section(bcast::Verdict::kConditional, "Conditions");
  if (!a.combined.empty() && !a.combined.contradictory()) {
    absl::StrAppend(&out, "  combined: ", a.combined.ToString(), "\n");
  }
  // An unknown's message ends with where its shape was lost ("the shape of 'k' comes from ...").
  section(bcast::Verdict::kUnknown, "Unknown");
  if (at != nullptr) {
    absl::StrAppend(&out, "\nAt ", at->bindings.empty() ? "no bound dims" : DimBindingsToString(at->bindings),
                    ": ", at->fails, " fail, ", at->holds, " hold, ", at->conditional,
                    " still conditional");
    if (!at->unbound.empty()) {
      absl::StrAppend(&out, " (symbols not bound: ", absl::StrJoin(at->unbound, ", "), ")");
    }
    absl::StrAppend(&out, ", ", at->unknown, " unknown\n");
    for (DimOutcome outcome : {DimOutcome::kFails, DimOutcome::kConditional}) {
      for (size_t i = 0; i < a.nodes.size() && i < at->nodes.size(); ++i) {
        const NodeVerdict& v = a.nodes[i];
        const NodeDimEvaluation& n = at->nodes[i];
        if (n.outcome != outcome) continue;
        if (outcome == DimOutcome::kFails) {
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
    for (const NodeVerdict& v : a.nodes) {
      for (const LintWarning& w : v.lints) {
        absl::StrAppend(&out, "  warning [", w.lint_class, "] ", LocatedMessage(v, w.message),
                        "\n");
      }
    }
  }
  if (detail != CheckDetail::kAll || a.nodes.empty()) return out;
  std::map<std::string, std::vector<const NodeVerdict*>> by_class;
  for (const NodeVerdict& v : a.nodes) by_class[v.broadcast_class].push_back(&v);
  absl::StrAppend(&out, "\nBy class:\n");
  for (const auto& [klass, nodes] : by_class) {
    absl::StrAppend(&out, "  ", klass, " (", nodes.size(), "):\n");
    for (const NodeVerdict* v : nodes) {
      std::vector<std::string> shapes;
      for (const bcast::Shape& s : v->inputs) shapes.push_back(s.ToString());
      absl::StrAppend(&out, "    ", v->op, " '", NodePath(*v), "': ", absl::StrJoin(shapes, " , "),
                      " -> ", v->output.ToString(), "  [", std::string(bcast::RuleName(v->rule)),
                      ", ", std::string(bcast::VerdictName(v->verdict)), "]\n");
    }
  }
  return out;
}

std::string FormatCheckJson(const Analysis& a, const std::string& model_path, bool lint,
                            const DimEvaluation* at) {
  JsonWriter json;
  json.BeginObject();
  json.Member("model", model_path);
  json.Key("nodes").BeginArray();
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const NodeVerdict& v = a.nodes[i];
    json.BeginObject();
    json.Member("node", v.node);
    json.Member("op", v.op);
    json.Member("graph", v.graph);
    json.Member("opset", v.opset);
    json.Key("inputs").BeginArray();
    for (size_t i = 0; i < v.inputs.size(); ++i) {
      json.BeginObject();
      json.Member("name", i < v.input_names.size() ? v.input_names[i] : "");
      json.Key("shape");
      WriteShape(v.inputs[i], &json);
      json.EndObject();
    }
    json.EndArray();
    json.Key("output");
    WriteShape(v.output, &json);
    json.Member("rule", std::string(bcast::RuleName(v.rule)));
    json.Member("class", v.broadcast_class);
    json.Member("verdict", std::string(bcast::VerdictName(v.verdict)));
    json.Key("condition");
    WriteCondition(v.condition, &json);
    json.Member("message", v.message);
    if (at != nullptr && i < at->nodes.size()) {
      const NodeDimEvaluation& n = at->nodes[i];
      json.Key("at_dims").BeginObject();
      json.Member("outcome", std::string(DimOutcomeName(n.outcome)));
      json.Key("inputs").BeginArray();
      for (const bcast::Shape& s : n.inputs) WriteShape(s, &json);
      json.EndArray();
      json.Member("message", n.message);
      json.Key("unbound");
      WriteStrings(n.unbound, &json);
      json.EndObject();
    }
    if (lint) {
      json.Key("lint").BeginArray();
      for (const LintWarning& w : v.lints) {
        json.BeginObject().Member("class", w.lint_class).Member("message", w.message).EndObject();
      }
      json.EndArray();
    }
    json.EndObject();
  }
  json.EndArray();
  json.Key("combined_condition");
  if (a.combined.contradictory()) {
    json.Null();
  } else {
    WriteCondition(a.combined, &json, &a);
  }
  json.Key("contradiction");
  if (a.contradiction.empty()) {
    json.Null();
  } else {
    json.String(a.contradiction);
  }
  if (at != nullptr) {
    json.Key("at_dims").BeginObject();
    json.Key("bindings").BeginObject();
    for (const auto& [symbol, value] : at->bindings) json.Member(symbol, value);
    json.EndObject();
    json.Member("holds", at->holds).Member("fails", at->fails);
    json.Member("conditional", at->conditional).Member("unknown", at->unknown);
    json.Key("unbound");
    WriteStrings(at->unbound, &json);
    json.Key("combined");
    if (at->combined.has_value()) {
      json.Bool(*at->combined);
    } else {
      json.Null();
    }
    json.Key("first_failure");
    if (at->first_failure < 0) {
      json.Null();
    } else {
      const NodeVerdict& v = a.nodes[at->first_failure];
      json.BeginObject()
          .Member("node", v.node)
          .Member("op", v.op)
          .Member("graph", v.graph)
          .Member("message", at->nodes[at->first_failure].message)
          .EndObject();
    }
    json.EndObject();
  }
  json.Key("summary").BeginObject();
  json.Member("nodes", static_cast<int64_t>(a.nodes.size()));
  json.Member("ok", a.CountVerdict(bcast::Verdict::kOk));
  json.Member("error", a.CountVerdict(bcast::Verdict::kError));
  json.Member("conditional", a.CountVerdict(bcast::Verdict::kConditional));
  json.Member("unknown", a.CountVerdict(bcast::Verdict::kUnknown));
  if (lint) json.Member("lint", LintCount(a));
  json.EndObject();
  json.EndObject();
  return json.str();
}

}  // namespace onnx_bcast::passes
