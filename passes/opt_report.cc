// Text and JSON forms of an opt run (see opt_report.h).
#include "passes/opt_report.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "passes/json.h"

namespace onnx_bcast::passes {
namespace {

std::string RewriteLine(const Rewrite& r) {
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

void WriteSummary(JsonWriter& w, const ModelSummary& s) {
  w.BeginObject()
      .Member("nodes", s.nodes)
      .Member("initializers", s.initializers)
      .Member("initializer_bytes", s.initializer_bytes)
      .Member("opset", s.opset)
      .EndObject();
}

}  // namespace

std::string FormatOptText(const OptReport& report, bool rewrites, bool debug) {
  std::string out;
  for (const PassRun& run : report.runs) {
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
      for (const Rewrite& r : run.stats.log) absl::StrAppend(&out, RewriteLine(r), "\n");
    }
    if (debug) {
      for (const std::string& d : run.stats.debug) absl::StrAppend(&out, "  debug: ", d, "\n");
    }
  }
  absl::StrAppend(&out, "nodes ", report.before.nodes, " -> ", report.after.nodes,
                  ", initializer bytes ", report.before.initializer_bytes, " -> ",
                  report.after.initializer_bytes, ", opset ", report.before.opset, " -> ",
                  report.after.opset, "\n");
  if (!report.target.empty()) {
    absl::StrAppend(&out, "target ", report.target, ": ", report.violations.size(),
                    " node(s) outside its table\n");
    for (const std::string& v : report.violations) absl::StrAppend(&out, "  ", v, "\n");
  }
  return out;
}

std::string FormatOptJson(const OptReport& report) {
  JsonWriter w;
  w.BeginObject();
  w.Member("model", report.model_path);
  w.Key("output");
  if (report.output_path.empty()) {
    w.Null();
  } else {
    w.String(report.output_path);
  }
  w.Key("target");
  if (report.target.empty()) {
    w.Null();
  } else {
    w.String(report.target);
  }
  w.Key("passes").BeginArray();
  int64_t total = 0;
  for (const PassRun& run : report.runs) {
    w.BeginObject()
        .Member("pass", run.pass)
        .Key("seconds")
        .Double(run.seconds)
        .Member("nodes_inserted", run.stats.nodes_inserted)
        .Member("nodes_removed", run.stats.nodes_removed)
        .Member("initializers_rewritten", run.stats.initializers_rewritten)
        .Member("bytes_added", run.stats.bytes_added);
    w.Key("rewrites").BeginArray();
    for (const Rewrite& r : run.stats.log) {
      ++total;
      w.BeginObject()
          .Member("node", r.node)
          .Member("op", r.op)
          .Member("action", r.action)
          .Member("tensor", r.tensor)
          .Member("before", r.before)
          .Member("after", r.after)
          .Member("detail", r.detail)
          .Member("bytes", r.bytes)
          .EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("summary").BeginObject();
  w.Member("rewrites", total);
  w.Key("before");
  WriteSummary(w, report.before);
  w.Key("after");
  WriteSummary(w, report.after);
  w.Key("violations").BeginArray();
  for (const std::string& v : report.violations) w.String(v);
  w.EndArray();
  w.Key("error");
  if (report.error.empty()) {
    w.Null();
  } else {
    w.String(report.error);
  }
  w.EndObject();
  w.EndObject();
  return w.str();
}

}  // namespace onnx_bcast::passes
