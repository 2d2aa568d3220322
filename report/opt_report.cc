// Text and JSON forms of an opt run (see opt_report.h).
#include "report/opt_report.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "report/report_json.h"
#include "support/status_macros.h"

namespace onnx_bcast::report {
namespace {

std::string RewriteLine(const passes::Rewrite& r) {
  std::string line =
      absl::StrCat("  ", r.node, r.op.empty() ? "" : absl::StrCat(" (", r.op, ")"), ": ", r.action);
  if (!r.tensor.empty()) absl::StrAppend(&line, " '", r.tensor, "'");
  if (!r.before.empty() || !r.after.empty()) {
    absl::StrAppend(&line, " ", r.before, " -> ", r.after);
  }
  if (!r.detail.empty()) absl::StrAppend(&line, ": ", r.detail);
  if (r.bytes != 0) absl::StrAppend(&line, " (", r.bytes > 0 ? "+" : "", r.bytes, " bytes)");
  return line;
}

Json SummaryJson(const passes::ModelSummary& s) {
  return Json{{"nodes", s.nodes},
              {"initializers", s.initializers},
              {"initializer_bytes", s.initializer_bytes},
              {"opset", s.opset}};
}

}  // namespace

std::string FormatOptText(const OptReport& report, bool rewrites, bool debug) {
  std::string out;
  if (!report.bindings.empty()) {
    std::vector<std::string> parts;
    for (const auto& [symbol, value] : report.bindings) {
      parts.push_back(absl::StrCat(symbol, "=", value));
    }
    absl::StrAppend(&out, "dims bound: ", absl::StrJoin(parts, ", "), " (", report.dims_fixed,
                    " declared dims made static)\n");
  }
  for (const passes::PassRun& run : report.runs) {
    char ms[32];
    std::snprintf(ms, sizeof(ms), "%.1f ms", run.seconds * 1000);
    absl::StrAppend(&out, run.pass, ": ", run.stats.nodes_inserted, " nodes inserted, ",
                    run.stats.initializers_rewritten, " initializers rewritten, ",
                    run.stats.nodes_removed, " nodes removed");
    if (run.stats.bytes_added != 0) {
      absl::StrAppend(&out, ", ", run.stats.bytes_added > 0 ? "+" : "", run.stats.bytes_added,
                      " initializer bytes");
    }
    absl::StrAppend(&out, " (", ms, ")\n");
    if (rewrites) {
      for (const passes::Rewrite& r : run.stats.log) absl::StrAppend(&out, RewriteLine(r), "\n");
    }
    for (const std::string& n : run.stats.notes) absl::StrAppend(&out, "  note: ", n, "\n");
    if (debug) {
      for (const std::string& d : run.stats.debug) absl::StrAppend(&out, "  debug: ", d, "\n");
    }
  }
  absl::StrAppend(&out, "nodes ", report.before.nodes, " -> ", report.after.nodes,
                  ", initializer bytes ", report.before.initializer_bytes, " -> ",
                  report.after.initializer_bytes, ", opset ", report.before.opset, " -> ",
                  report.after.opset, "\n");
  if (!report.decided_by.empty()) {
    absl::StrAppend(&out, "forms decided by ", report.decided_by, "\n");
  }
  if (!report.target.empty()) {
    absl::StrAppend(&out, "target ", report.target, ": ", report.violations.size(),
                    " node(s) outside its table");
    if (!report.unsupported_ops.empty()) {
      int64_t nodes = 0;
      for (const auto& [op, n] : report.unsupported_ops) nodes += n;
      absl::StrAppend(&out, ", ", nodes, " node(s) of ", report.unsupported_ops.size(),
                      " op(s) it has no layer for");
    }
    absl::StrAppend(&out, "\n");
    for (const std::string& v : report.violations) absl::StrAppend(&out, "  ", v, "\n");
  }
  return out;
}

Json OptReportJson(const OptReport& report, bool with_rewrites) {
  Json doc;
  doc["schema_version"] = kReportSchemaVersion;
  doc["kind"] = "opt";
  doc["model"] = report.model_path;
  doc["output"] = JsonStringOrNull(report.output_path);
  doc["target"] = JsonStringOrNull(report.target);
  if (!report.bindings.empty()) {
    Json dims = Json::object();
    for (const auto& [symbol, value] : report.bindings) dims[symbol] = value;
    doc["dims"] = std::move(dims);
  }
  Json passes = Json::array();
  int64_t total = 0;
  for (const passes::PassRun& run : report.runs) {
    Json p;
    p["pass"] = run.pass;
    p["seconds"] = JsonNumber(run.seconds);
    p["nodes_inserted"] = run.stats.nodes_inserted;
    p["nodes_removed"] = run.stats.nodes_removed;
    p["initializers_rewritten"] = run.stats.initializers_rewritten;
    p["bytes_added"] = run.stats.bytes_added;
    Json rewrites = Json::array();
    for (const passes::Rewrite& r : run.stats.log) {
      ++total;
      if (!with_rewrites) continue;
      rewrites.push_back(Json{{"node", r.node},
                              {"output", r.output},
                              {"op", r.op},
                              {"action", r.action},
                              {"tensor", r.tensor},
                              {"before", r.before},
                              {"after", r.after},
                              {"detail", r.detail},
                              {"bytes", r.bytes}});
    }
    p["rewrites"] = std::move(rewrites);
    if (!run.stats.notes.empty()) p["notes"] = run.stats.notes;
    passes.push_back(std::move(p));
  }
  doc["passes"] = std::move(passes);
  Json summary;
  summary["rewrites"] = total;
  summary["before"] = SummaryJson(report.before);
  summary["after"] = SummaryJson(report.after);
  Json violations = Json::array();
  for (const std::string& v : report.violations) violations.push_back(v);
  summary["violations"] = std::move(violations);
  summary["error"] = JsonStringOrNull(report.error);
  doc["summary"] = std::move(summary);
  if (!report.target.empty()) {
    Json unsupported = Json::object();
    for (const auto& [op, n] : report.unsupported_ops) unsupported[op] = n;
    doc["unsupported_ops"] = std::move(unsupported);
  }
  if (!report.engine_line.empty() || !report.engine_note.empty()) {
    doc["engine"] = Json{{"outcome", JsonStringOrNull(report.engine_outcome)},
                         {"line", JsonStringOrNull(report.engine_line)},
                         {"dims", JsonStringOrNull(report.engine_dims)},
                         {"divergence", JsonStringOrNull(report.engine_divergence)},
                         {"note", JsonStringOrNull(report.engine_note)}};
  }
  if (!report.waived.empty()) doc["waived"] = report.waived;
  if (!report.refused.empty()) {
    doc["refused"] = Json{{"exit", report.refused_exit}, {"why", report.refused}};
  }
  if (!report.violation_details.empty()) {
    Json details = Json::array();
    for (const targets::TargetViolation& v : report.violation_details) {
      details.push_back(Json{{"graph", v.graph},
                             {"node", v.node},
                             {"op", v.op},
                             {"shapes", v.shapes},
                             {"rule", v.why},
                             {"cannot_prove", v.cannot_prove},
                             {"hint", JsonStringOrNull(v.hint)}});
    }
    doc["violation_details"] = std::move(details);
  }
  return doc;
}

std::string FormatOptJson(const OptReport& report) {
  std::string text;
  // Appending to a string cannot fail.
  (void)WriteOptJson(report, [&text](std::string_view piece) {
    text.append(piece);
    return absl::OkStatus();
  });
  return text;
}

absl::Status WriteOptJson(const OptReport& report, JsonSink sink) {
  // OptReportJson's bytes, with the rewrites written one by one: at 1M nodes the quarter of a
  // million rewrites as a DOM took more memory than the whole opt did without --report
  // (issue 46). The members around them are small and go through the DOM.
  JsonText text(kJsonPiece + 4096);
  const Json rest = OptReportJson(report, /*with_rewrites=*/false);
  JsonStreamWriter doc(&text);
  for (auto it = rest.begin(); it != rest.end(); ++it) {
    if (it.key() != "passes") {
      doc.Member(it.key(), it.value());
      continue;
    }
    doc.BeginArray("passes");
    size_t i = 0;
    for (const Json& run_json : it.value()) {
      const passes::PassRun& run = report.runs[i++];
      JsonObjectWriter p = doc.ObjectElement();
      for (auto m = run_json.begin(); m != run_json.end(); ++m) {
        if (m.key() != "rewrites") {
          p.Value(m.key(), m.value());
          continue;
        }
        p.BeginArray("rewrites");
        for (const passes::Rewrite& r : run.stats.log) {
          JsonObjectWriter w = p.ObjectElement();
          w.String("node", r.node);
          w.String("output", r.output);
          w.String("op", r.op);
          w.String("action", r.action);
          w.String("tensor", r.tensor);
          w.String("before", r.before);
          w.String("after", r.after);
          w.String("detail", r.detail);
          w.Int("bytes", r.bytes);
          w.End();
          if (absl::Status s = FlushJsonText(kJsonPiece, &text, sink); !s.ok()) return s;
        }
        p.EndArray();
      }
      p.End();
    }
    doc.EndArray();
  }
  doc.End();
  return FlushJsonText(1, &text, sink);
}

namespace {

std::string StringAt(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

int64_t IntAt(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

double NumberAt(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0;
}

passes::ModelSummary SummaryAt(const Json& j, const char* key) {
  passes::ModelSummary s;
  const auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return s;
  s.nodes = IntAt(*it, "nodes");
  s.initializers = IntAt(*it, "initializers");
  s.initializer_bytes = IntAt(*it, "initializer_bytes");
  s.opset = IntAt(*it, "opset");
  return s;
}

}  // namespace

absl::StatusOr<OptReport> ParseOptReport(std::string_view text) {
  BCAST_ASSIGN_OR_RETURN(Json doc, ParseJson(text));
  const auto passes = doc.is_object() ? doc.find("passes") : doc.end();
  if (!doc.is_object() || passes == doc.end() || !passes->is_array()) {
    return absl::InvalidArgumentError("not an `opt --report` document (no \"passes\" array)");
  }
  if (const int64_t v = IntAt(doc, "schema_version"); v > kReportSchemaVersion) {
    return absl::InvalidArgumentError(absl::StrCat("report schema_version ", v,
                                                   " is newer than this onnx-bcast reads (",
                                                   kReportSchemaVersion, ")"));
  }
  OptReport report;
  report.model_path = StringAt(doc, "model");
  report.output_path = StringAt(doc, "output");
  report.target = StringAt(doc, "target");
  for (const Json& p : *passes) {
    if (!p.is_object()) {
      return absl::InvalidArgumentError("not an `opt --report` document (a pass is not an object)");
    }
    passes::PassRun run;
    run.pass = StringAt(p, "pass");
    run.seconds = NumberAt(p, "seconds");
    run.stats.nodes_inserted = IntAt(p, "nodes_inserted");
    run.stats.nodes_removed = IntAt(p, "nodes_removed");
    run.stats.initializers_rewritten = IntAt(p, "initializers_rewritten");
    run.stats.bytes_added = IntAt(p, "bytes_added");
    if (const auto rewrites = p.find("rewrites"); rewrites != p.end() && rewrites->is_array()) {
      for (const Json& r : *rewrites) {
        if (!r.is_object()) continue;
        passes::Rewrite rw;
        rw.node = StringAt(r, "node");
        rw.output = StringAt(r, "output");
        rw.op = StringAt(r, "op");
        rw.action = StringAt(r, "action");
        rw.tensor = StringAt(r, "tensor");
        rw.before = StringAt(r, "before");
        rw.after = StringAt(r, "after");
        rw.detail = StringAt(r, "detail");
        rw.bytes = IntAt(r, "bytes");
        run.stats.Log(std::move(rw));
      }
    }
    report.runs.push_back(std::move(run));
  }
  if (const auto summary = doc.find("summary"); summary != doc.end() && summary->is_object()) {
    report.before = SummaryAt(*summary, "before");
    report.after = SummaryAt(*summary, "after");
    report.error = StringAt(*summary, "error");
    if (const auto v = summary->find("violations"); v != summary->end() && v->is_array()) {
      for (const Json& e : *v) {
        if (e.is_string()) report.violations.push_back(e.get<std::string>());
      }
    }
  }
  return report;
}

}  // namespace onnx_bcast::report
