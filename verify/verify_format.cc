// verify's result as text and as JSON (see verify.h).
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "report/report_json.h"
#include "verify/verify.h"

namespace onnx_bcast::verify {

std::string FormatVerifyText(const VerifyResult& r, const std::string& original_path,
                             const std::string& rewritten_path) {
  std::string out = absl::StrCat(
      original_path, " vs ", rewritten_path, ": ", r.match ? "EQUAL" : "DIFFERENT", " (", r.mode,
      ", ",
      r.tolerance.exact ? std::string("bit-exact")
      : r.error_model   ? absl::StrCat("error model: float64 reference, margin ", r.model.margin)
                        : absl::StrCat("rtol ", r.tolerance.rtol, ", atol ", r.tolerance.atol),
      r.bound.empty() ? "" : "; ", BoundDimsToString(r.bound), ")\n");
  if (!r.note.empty()) absl::StrAppend(&out, "note: verified node by node: ", r.note, "\n");
  if (!r.reference_note.empty()) {
    absl::StrAppend(&out, "note: ", r.reference_note, "; compared within rtol 1e-3, atol 1e-7\n");
  }
  for (const std::string& s : r.structural) absl::StrAppend(&out, "  ", s, "\n");
  for (const SampleResult& s : r.samples) {
    if (s.skipped) {
      absl::StrAppend(&out, "  ", s.label, ": skipped: ", s.note, "\n");
      continue;
    }
    absl::StrAppend(
        &out, "  ", s.label, ": ",
        s.expect_failure ? (s.match ? "both fail" : "RUNS") : (s.match ? "equal" : "DIFFERENT"),
        "\n");
    if (!s.error.empty()) absl::StrAppend(&out, "    ", s.error, "\n");
    if (!s.note.empty()) absl::StrAppend(&out, "    ", s.note, "\n");
    for (const OutputResult& o : s.outputs) {
      absl::StrAppend(&out, "    ",
                      o.comparison.match
                          ? absl::StrCat("output '", o.name, "': equal; ", o.comparison.Figures())
                          : o.comparison.message,
                      "\n");
    }
  }
  if (r.divergence) {
    const Divergence& d = *r.divergence;
    const std::string producer =
        d.node.empty() ? absl::StrCat("unnamed ", d.op, " (first output '", d.node_output, "')")
                       : absl::StrCat(d.op, " '", d.node, "'");
    absl::StrAppend(&out, "first divergence (", d.sample, "): tensor '", d.tensor, "' produced by ",
                    producer, " with inputs ", absl::StrJoin(d.input_shapes, ", "), "; ",
                    d.comparison.message, "\n");
    if (!d.pass.empty()) {
      absl::StrAppend(&out, "  introduced by pass ", d.pass, ": ", d.rewrite, "\n");
    }
  }
  int checked = 0, skipped = 0;
  for (const LocalResult& l : r.local) {
    (l.skipped ? skipped : checked) += 1;
    absl::StrAppend(&out, "  ", l.op, " '", l.node,
                    "': ", l.skipped ? "skipped" : (l.match ? "equal" : "DIFFERENT"), "; ",
                    l.detail, "\n");
  }
  if (!r.local.empty()) {
    absl::StrAppend(&out, "  local: ", checked, " node(s) checked, ", skipped, " skipped\n");
  }
  return out;
}

namespace {

report::Json ComparisonJson(const runtime::Comparison& c) {
  report::Json j;
  j["match"] = c.match;
  j["elements"] = c.elements;
  j["mismatches"] = c.mismatches;
  j["max_abs_error"] = report::JsonNumber(c.max_abs_error);
  j["max_abs_at"] = report::JsonStringOrNull(c.max_abs_at);
  j["max_rel_error"] = report::JsonNumber(c.max_rel_error);
  j["max_rel_at"] = report::JsonStringOrNull(c.max_rel_at);
  j["max_ulp"] = c.max_ulp;
  j["passing_atol"] = c.passing_atol ? report::JsonNumber(*c.passing_atol) : report::Json();
  j["passing_rtol"] = c.passing_rtol ? report::JsonNumber(*c.passing_rtol) : report::Json();
  j["bound_ratio"] = c.error_model ? report::JsonNumber(c.bound_ratio) : report::Json();
  j["message"] = report::JsonStringOrNull(c.message);
  return j;
}

}  // namespace

report::Json VerifyResultJson(const VerifyResult& r, const std::string& original_path,
                              const std::string& rewritten_path) {
  report::Json doc;
  doc["schema_version"] = report::kReportSchemaVersion;
  doc["kind"] = "verify";
  doc["original"] = original_path;
  doc["rewritten"] = rewritten_path;
  doc["match"] = r.match;
  doc["mode"] = r.mode;
  doc["note"] = report::JsonStringOrNull(r.note);
  doc["tolerance"] = report::Json{{"exact", r.tolerance.exact},
                                  {"rtol", report::JsonNumber(r.tolerance.rtol)},
                                  {"atol", report::JsonNumber(r.tolerance.atol)},
                                  {"error_model", r.error_model},
                                  {"margin", report::JsonNumber(r.model.margin)},
                                  {"reference_note", report::JsonStringOrNull(r.reference_note)}};
  report::Json bound = report::Json::array();
  for (const BoundDim& b : r.bound) {
    bound.push_back(report::Json{{"symbol", b.symbol}, {"value", b.value}, {"by", b.by}});
  }
  doc["bound"] = std::move(bound);
  report::Json structural = report::Json::array();
  for (const std::string& s : r.structural) structural.push_back(s);
  doc["structural"] = std::move(structural);
  report::Json samples = report::Json::array();
  double max_abs = 0;
  int64_t max_ulp = 0;
  for (const SampleResult& s : r.samples) {
    for (const OutputResult& o : s.outputs) {
      // NaN-safe: a NaN error is the largest of all.
      if (!(o.comparison.max_abs_error <= max_abs)) max_abs = o.comparison.max_abs_error;
      max_ulp = std::max(max_ulp, o.comparison.max_ulp);
    }
    report::Json j;
    j["sample"] = s.label;
    j["match"] = s.match;
    j["expect_failure"] = s.expect_failure;
    j["skipped"] = s.skipped;
    j["error"] = report::JsonStringOrNull(s.error);
    j["note"] = report::JsonStringOrNull(s.note);
    report::Json outputs = report::Json::array();
    for (const OutputResult& o : s.outputs) {
      report::Json c;
      c["output"] = o.name;
      c.update(ComparisonJson(o.comparison));
      outputs.push_back(std::move(c));
    }
    j["outputs"] = std::move(outputs);
    samples.push_back(std::move(j));
  }
  doc["samples"] = std::move(samples);
  doc["max_abs_error"] = report::JsonNumber(max_abs);
  doc["max_ulp"] = max_ulp;
  if (r.divergence) {
    const Divergence& d = *r.divergence;
    report::Json j;
    j["sample"] = d.sample;
    j["tensor"] = d.tensor;
    j["node"] = d.node;
    j["node_output"] = d.node_output;
    j["op"] = d.op;
    report::Json shapes = report::Json::array();
    for (const std::string& s : d.input_shapes) shapes.push_back(s);
    j["input_shapes"] = std::move(shapes);
    j["pass"] = report::JsonStringOrNull(d.pass);
    j["rewrite"] = report::JsonStringOrNull(d.rewrite);
    j["comparison"] = ComparisonJson(d.comparison);
    doc["divergence"] = std::move(j);
  } else {
    doc["divergence"] = nullptr;
  }
  report::Json local = report::Json::array();
  for (const LocalResult& l : r.local) {
    local.push_back(report::Json{{"node", l.node},
                                 {"op", l.op},
                                 {"match", l.match},
                                 {"skipped", l.skipped},
                                 {"detail", l.detail}});
  }
  doc["local"] = std::move(local);
  return doc;
}

std::string FormatVerifyJson(const VerifyResult& r, const std::string& original_path,
                             const std::string& rewritten_path) {
  return report::DumpJson(VerifyResultJson(r, original_path, rewritten_path));
}

}  // namespace onnx_bcast::verify
