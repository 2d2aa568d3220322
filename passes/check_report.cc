// Renders a broadcast Analysis as text and JSON.
#include "passes/check_report.h"

#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "passes/json.h"

namespace onnx_bcast::passes {
namespace {

std::string NodeLabel(const NodeVerdict& v) {
  return v.graph == "main" ? v.node : absl::StrCat(v.node, " [", v.graph, "]");
}

int64_t LintCount(const Analysis& a) {
  int64_t n = 0;
  for (const NodeVerdict& v : a.nodes) n += static_cast<int64_t>(v.lints.size());
  return n;
}

void WriteCondition(const bcast::ConditionSet& c, JsonWriter* json) {
  if (c.empty()) {
    json->Null();
    return;
  }
  json->BeginObject();
  json->Member("text", c.ToString());
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
      json->EndObject();
    }
    json->EndArray();
  }
  json->EndArray();
  json->Key("values").BeginObject();
  for (const auto& [symbol, values] : c.value_sets()) {
    json->Key(symbol).BeginInlineArray();
    for (int64_t value : values) json->Int(value);
    json->EndArray();
  }
  json->EndObject();
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

std::string FormatCheckText(const Analysis& a, const std::string& model_path, bool lint) {
  std::string out = absl::StrCat(
      model_path, ": ", a.nodes.size(), " broadcasting nodes: ",
      a.CountVerdict(bcast::Verdict::kOk), " ok, ", a.CountVerdict(bcast::Verdict::kError),
      " error, ", a.CountVerdict(bcast::Verdict::kConditional), " conditional, ",
      a.CountVerdict(bcast::Verdict::kUnknown), " unknown");
  if (lint) absl::StrAppend(&out, ", ", LintCount(a), " lint warnings");
  absl::StrAppend(&out, "\n");
  if (!a.inference_note.empty()) {
    absl::StrAppend(&out, "note: libonnx shape inference failed (", a.inference_note,
                    "); shapes of other ops are unknown\n");
  }
  std::map<std::string, std::vector<const NodeVerdict*>> by_class;
  for (const NodeVerdict& v : a.nodes) by_class[v.broadcast_class].push_back(&v);
  if (!by_class.empty()) absl::StrAppend(&out, "\nBy class:\n");
  for (const auto& [klass, nodes] : by_class) {
    absl::StrAppend(&out, "  ", klass, " (", nodes.size(), "):\n");
    for (const NodeVerdict* v : nodes) {
      std::vector<std::string> shapes;
      for (const bcast::Shape& s : v->inputs) shapes.push_back(s.ToString());
      absl::StrAppend(&out, "    ", v->op, " '", NodeLabel(*v), "': ",
                      absl::StrJoin(shapes, " , "), " -> ", v->output.ToString(), "  [",
                      std::string(bcast::RuleName(v->rule)), ", ", std::string(bcast::VerdictName(v->verdict)), "]\n");
    }
  }
  auto section = [&](bcast::Verdict verdict, const char* title) {
    if (a.CountVerdict(verdict) == 0) return;
    absl::StrAppend(&out, "\n", title, ":\n");
    for (const NodeVerdict& v : a.nodes) {
      if (v.verdict != verdict) continue;
      absl::StrAppend(&out, "  ", v.message,
                      v.graph == "main" ? "" : absl::StrCat(" [in ", v.graph, "]"), "\n");
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
  section(bcast::Verdict::kUnknown, "Unknown");
  if (lint && LintCount(a) > 0) {
    absl::StrAppend(&out, "\nLint:\n");
    for (const NodeVerdict& v : a.nodes) {
      for (const LintWarning& w : v.lints) {
        absl::StrAppend(&out, "  warning [", w.lint_class, "] ", w.message, "\n");
      }
    }
  }
  return out;
}

std::string FormatCheckJson(const Analysis& a, const std::string& model_path, bool lint) {
  JsonWriter json;
  json.BeginObject();
  json.Member("model", model_path);
  json.Key("nodes").BeginArray();
  for (const NodeVerdict& v : a.nodes) {
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
  WriteCondition(a.combined.contradictory() ? bcast::ConditionSet() : a.combined, &json);
  json.Key("contradiction");
  if (a.contradiction.empty()) {
    json.Null();
  } else {
    json.String(a.contradiction);
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
