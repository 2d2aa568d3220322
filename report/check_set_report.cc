// Reports over a set of checked models (see check_set_report.h).
#include "report/check_set_report.h"

#include <filesystem>
#include <map>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "support/status_macros.h"

namespace onnx_bcast::report {
namespace {

namespace fs = std::filesystem;

std::string Str(const Json& doc, const char* key) {
  auto it = doc.find(key);
  return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t Int(const Json& doc, const char* key) {
  auto it = doc.find(key);
  return it != doc.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

const char* RuleOf(FindingKind kind) {
  switch (kind) {
    case FindingKind::kError:
      return "broadcast-error";
    case FindingKind::kConditional:
      return "conditional-broadcast";
    case FindingKind::kUnknown:
      return "unknown-shape";
    case FindingKind::kLint:
      return "lint";
  }
  return "";
}

// The findings of one model's check document.
void FindingsOf(const std::string& model, const Json& report, std::vector<Finding>* out) {
  auto nodes = report.find("nodes");
  if (nodes == report.end() || !nodes->is_array()) return;
  for (const Json& n : *nodes) {
    const std::string verdict = Str(n, "verdict");
    Finding f;
    f.model = model;
    f.node_path = Str(n, "path");
    f.op = Str(n, "op");
    f.message = Str(n, "message");
    // Messages name a body's node by its own name; the path says where it is.
    const std::string node = Str(n, "node"), prefix = absl::StrCat(f.op, " '", node, "'");
    if (f.node_path != node && absl::StartsWith(f.message, prefix)) {
      f.message = absl::StrCat(f.op, " '", f.node_path, "'", f.message.substr(prefix.size()));
    }
    if (verdict == "error") {
      f.kind = FindingKind::kError;
    } else if (verdict == "conditional") {
      f.kind = FindingKind::kConditional;
    } else if (verdict == "unknown") {
      f.kind = FindingKind::kUnknown;
    }
    if (verdict == "error" || verdict == "conditional" || verdict == "unknown") {
      f.rule = RuleOf(f.kind);
      out->push_back(f);
    }
    auto lints = n.find("lint");
    if (lints == n.end() || !lints->is_array()) continue;
    for (const Json& l : *lints) {
      Finding w = f;
      w.kind = FindingKind::kLint;
      w.rule = absl::StrCat("lint/", Str(l, "class"));
      w.message = Str(l, "message");
      out->push_back(std::move(w));
    }
  }
}

std::string KindWord(FindingKind kind) {
  switch (kind) {
    case FindingKind::kError:
      return "error";
    case FindingKind::kConditional:
      return "condition";
    case FindingKind::kUnknown:
      return "unknown";
    case FindingKind::kLint:
      return "lint";
  }
  return "";
}

bool Readable(const CheckSetEntry& e) { return e.exit_code == 0 || e.exit_code == 1; }

// XML character data and attribute values: the five entities, and every control character but
// tab and newline dropped (XML 1.0 cannot hold them at all).
std::string Xml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') break;
        out.push_back(c);
    }
  }
  return out;
}

struct RuleText {
  const char* id;
  const char* name;
  const char* short_text;
  const char* help;
  const char* level;
};

const RuleText kRules[] = {
    {"broadcast-error", "BroadcastError", "A broadcasting node whose operands can never broadcast",
     "The node's operand shapes are incompatible under the op's broadcast rule (numpy, "
     "unidirectional, MatMul batch or legacy axis) for every value of the model's symbols: the "
     "model fails at run time on this node. The message names the shapes, the rule and the axis.",
     "error"},
    {"conditional-broadcast", "ConditionalBroadcast",
     "A broadcasting node that is valid only under a condition on the input dims",
     "The node broadcasts only when the model's symbolic dims satisfy the stated condition "
     "(e.g. H a multiple of 32). Bind the dims with `check --dim` to decide a deployment, or "
     "state the condition in the model's contract.",
     "warning"},
    {"unknown-shape", "UnknownShape", "A broadcasting node whose operand shapes cannot be derived",
     "The analysis cannot see an operand's rank or dims (a custom op, data-dependent values); "
     "the message names where the shape was lost. The node may or may not broadcast.",
     "warning"},
    {"model-unreadable", "ModelUnreadable", "A model file that cannot be loaded or checked",
     "The file is not a valid ONNX model, exceeds a resource limit or needs something "
     "unsupported; the message says what.",
     "error"},
};

}  // namespace

std::vector<Finding> CollectFindings(const std::vector<CheckSetEntry>& entries) {
  std::vector<Finding> out;
  for (const CheckSetEntry& e : entries) {
    if (e.report.is_object()) FindingsOf(e.path, e.report, &out);
  }
  return out;
}

absl::StatusOr<Baseline> ParseBaseline(std::string_view text) {
  BCAST_ASSIGN_OR_RETURN(Json doc, ParseJson(text));
  const std::string kind = doc.is_object() ? Str(doc, "kind") : "";
  std::vector<std::pair<std::string, const Json*>> reports;
  Baseline b;
  if (kind == "check") {
    reports.emplace_back(Str(doc, "model"), &doc);
  } else if (kind == "check-set") {
    auto models = doc.find("models");
    if (models == doc.end() || !models->is_array()) {
      return absl::InvalidArgumentError("baseline: a check-set document without 'models'");
    }
    for (const Json& m : *models) {
      if (!m.is_object()) continue;
      reports.emplace_back(Str(m, "model"), &m);
    }
  } else {
    return absl::InvalidArgumentError(
        "baseline: not a `check --json` document (kind 'check' or 'check-set')");
  }
  for (const auto& [model, report] : reports) {
    b.models.insert(model);
    std::vector<Finding> found;
    FindingsOf(model, *report, &found);
    for (const Finding& f : found) b.findings.insert(f.Key());
  }
  return b;
}

void ApplyBaseline(const Baseline& baseline, std::vector<Finding>* findings) {
  for (Finding& f : *findings) f.known = baseline.findings.count(f.Key()) > 0;
}

namespace {

// The components of `p`, lexically normalized, without "." and leading "..": what a path
// names below wherever it starts.
std::vector<std::string> Tail(const fs::path& p) {
  std::vector<std::string> out;
  for (const fs::path& c : p.lexically_normal()) {
    const std::string part = c.string();
    if (part.empty() || part == "." || part == "/" || (part == ".." && out.empty())) continue;
    out.push_back(part);
  }
  return out;
}

// How many trailing components `a` and `b` share.
size_t CommonTail(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[a.size() - 1 - n] == b[b.size() - 1 - n]) ++n;
  return n;
}

fs::path Resolved(const std::string& path, const std::string& base) {
  const fs::path p(path);
  return (p.is_absolute() ? p : fs::path(base) / p).lexically_normal();
}

}  // namespace

std::map<std::string, std::string> MatchBaselineModels(const Baseline& baseline,
                                                       const std::vector<std::string>& models,
                                                       const BaselinePaths& where) {
  std::map<fs::path, std::string> same_file;  // a baseline model resolved both ways
  for (const std::string& b : baseline.models) {
    same_file.emplace(Resolved(b, where.cwd), b);
    same_file.emplace(Resolved(b, where.baseline_dir), b);
  }
  std::map<std::string, std::string> out;
  for (const std::string& m : models) {
    const fs::path resolved = Resolved(m, where.cwd);
    if (auto it = same_file.find(resolved); it != same_file.end()) {
      out[m] = it->second;
      continue;
    }
    // Another checkout or working directory: the baseline path whose trailing components the
    // model's path ends with, most of them, one baseline model only.
    const std::vector<std::string> tail = Tail(resolved);
    size_t best = 0;
    int at_best = 0;
    std::string chosen;
    for (const std::string& b : baseline.models) {
      const std::vector<std::string> b_tail = Tail(b);
      const size_t n = CommonTail(tail, b_tail);
      if (n == 0 || (n < 2 && n < b_tail.size())) continue;
      if (n > best) {
        best = n;
        at_best = 1;
        chosen = b;
      } else if (n == best) {
        ++at_best;
      }
    }
    if (at_best == 1) out[m] = chosen;
  }
  return out;
}

int64_t ApplyBaseline(const Baseline& baseline, const std::map<std::string, std::string>& matched,
                      std::vector<Finding>* findings) {
  for (Finding& f : *findings) {
    auto it = matched.find(f.model);
    if (it == matched.end()) {
      f.known = false;
      continue;
    }
    f.known = baseline.findings.count({it->second, f.node_path, f.op, f.rule}) > 0;
  }
  return static_cast<int64_t>(matched.size());
}

std::string FindingFingerprint(const Finding& f) {
  // FNV-1a, 64 bits: stable across builds and platforms (std::hash is not).
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const std::string& s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;  // a separator no string holds
    h *= 1099511628211ull;
  };
  // "zoo/m.onnx" whether the run named it "./zoo/m.onnx" or "../zoo/m.onnx".
  mix(absl::StrJoin(Tail(f.model), "/"));
  mix(f.node_path);
  mix(f.op);
  mix(f.rule);
  return absl::StrFormat("%016x", h);
}

bool Counts(const Finding& f, bool strict) {
  if (f.known) return false;
  switch (f.kind) {
    case FindingKind::kError:
      return true;
    case FindingKind::kConditional:
    case FindingKind::kUnknown:
      return strict;
    case FindingKind::kLint:
      return false;
  }
  return false;
}

int SetExitCode(const std::vector<CheckSetEntry>& entries, const std::vector<Finding>& findings,
                bool strict) {
  for (const CheckSetEntry& e : entries) {
    if (!Readable(e)) return 2;
  }
  for (const Finding& f : findings) {
    if (Counts(f, strict)) return 1;
  }
  return 0;
}

std::string FormatCheckSetText(const std::vector<CheckSetEntry>& entries,
                               const std::vector<Finding>& findings, bool strict,
                               bool with_baseline) {
  std::map<std::string, std::vector<const Finding*>> by_model;
  for (const Finding& f : findings) by_model[f.model].push_back(&f);
  std::string out;
  int64_t readable = 0, unreadable = 0, failing = 0, nodes = 0, errors = 0, conditional = 0,
          unknown = 0, known = 0;
  for (const CheckSetEntry& e : entries) {
    std::string text = e.text;
    while (!text.empty() && text.back() == '\n') text.pop_back();
    if (text.empty()) text = absl::StrCat(e.path, ": exit ", e.exit_code);
    absl::StrAppend(&out, text, "\n");
    if (!Readable(e)) {
      ++unreadable;
      continue;
    }
    ++readable;
    const Json summary =
        e.report.is_object() && e.report.contains("summary") ? e.report["summary"] : Json::object();
    nodes += Int(summary, "nodes");
    errors += Int(summary, "error");
    conditional += Int(summary, "conditional");
    unknown += Int(summary, "unknown");
    bool fails = false;
    for (const Finding* f : by_model[e.path]) {
      known += f->known;
      const bool counts = Counts(*f, strict);
      fails |= counts;
      // What counts is listed; with a baseline, what it accepted is listed too, marked.
      if (!counts && !(with_baseline && f->known && f->kind != FindingKind::kLint)) continue;
      absl::StrAppend(&out, "  ", with_baseline ? (f->known ? "known " : "new ") : "",
                      KindWord(f->kind), ": ", f->message.empty() ? f->node_path : f->message,
                      "\n");
    }
    failing += fails;
  }
  absl::StrAppend(&out, entries.size(), " models: ", readable - failing, " pass, ", failing,
                  " fail, ", unreadable, " unreadable; ", nodes, " broadcasting nodes: ", errors,
                  " error, ", conditional, " conditional, ", unknown, " unknown");
  if (with_baseline) absl::StrAppend(&out, "; ", known, " findings known to the baseline");
  absl::StrAppend(&out, "\n");
  return out;
}

std::string FormatCheckSetJson(const std::vector<CheckSetEntry>& entries,
                               const std::vector<Finding>& findings, bool strict) {
  JsonText text;
  JsonStreamWriter doc(&text);
  doc.Member("schema_version", kReportSchemaVersion);
  doc.Member("kind", "check-set");
  doc.BeginArray("models");
  int64_t unreadable = 0;
  for (const CheckSetEntry& e : entries) {
    if (Readable(e) && e.report.is_object()) {
      doc.Element(e.report);
    } else {
      ++unreadable;
      std::string message = e.text;
      while (!message.empty() && message.back() == '\n') message.pop_back();
      doc.Element(Json{{"model", e.path}, {"error", message}, {"exit", e.exit_code}});
    }
  }
  doc.EndArray();
  int64_t counted = 0, known = 0;
  for (const Finding& f : findings) {
    counted += Counts(f, strict);
    known += f.known;
  }
  doc.Member("summary", Json{{"models", static_cast<int64_t>(entries.size())},
                             {"unreadable", unreadable},
                             {"findings", static_cast<int64_t>(findings.size())},
                             {"counted", counted},
                             {"known", known},
                             {"exit", SetExitCode(entries, findings, strict)}});
  doc.End();
  return std::move(text).Release();
}

std::string FormatJUnit(const std::vector<CheckSetEntry>& entries,
                        const std::vector<Finding>& findings, bool strict) {
  std::map<std::string, std::vector<const Finding*>> by_model;
  for (const Finding& f : findings) {
    if (Counts(f, strict)) by_model[f.model].push_back(&f);
  }
  int64_t failures = 0, errors = 0;
  double total = 0;
  for (const CheckSetEntry& e : entries) {
    total += e.seconds;
    if (!Readable(e)) {
      ++errors;
    } else if (!by_model[e.path].empty()) {
      ++failures;
    }
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  const std::string counts =
      absl::StrFormat("tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"%.3f\"", entries.size(),
                      failures, errors, total);
  absl::StrAppend(&out, "<testsuites name=\"onnx-bcast check\" ", counts, ">\n");
  absl::StrAppend(&out, "  <testsuite name=\"onnx-bcast check\" ", counts, ">\n");
  for (const CheckSetEntry& e : entries) {
    absl::StrAppend(&out, "    <testcase classname=\"onnx-bcast.check\" name=\"", Xml(e.path),
                    "\" file=\"", Xml(e.path), "\" time=\"", absl::StrFormat("%.3f", e.seconds),
                    "\"");
    const std::vector<const Finding*>& fs = by_model[e.path];
    if (Readable(e) && fs.empty()) {
      absl::StrAppend(&out, "/>\n");
      continue;
    }
    absl::StrAppend(&out, ">\n");
    if (!Readable(e)) {
      std::string message = e.text;
      while (!message.empty() && message.back() == '\n') message.pop_back();
      absl::StrAppend(&out, "      <error type=\"model-unreadable\" message=\"", Xml(message),
                      "\">", Xml(message), "</error>\n");
    } else {
      std::string body;
      for (const Finding* f : fs) absl::StrAppend(&body, f->rule, ": ", f->message, "\n");
      absl::StrAppend(&out, "      <failure type=\"", Xml(fs.front()->rule), "\" message=\"",
                      Xml(absl::StrCat(fs.size(), " finding(s); first: ", fs.front()->message)),
                      "\">", Xml(body), "</failure>\n");
    }
    absl::StrAppend(&out, "    </testcase>\n");
  }
  absl::StrAppend(&out, "  </testsuite>\n</testsuites>\n");
  return out;
}

std::string FormatSarif(const std::vector<CheckSetEntry>& entries,
                        const std::vector<Finding>& findings, const std::string& version) {
  Json rules = Json::array();
  std::map<std::string, int> rule_index;
  auto add_rule = [&](const std::string& id, const std::string& name, const std::string& short_text,
                      const std::string& help, const std::string& level) {
    rule_index[id] = static_cast<int>(rules.size());
    rules.push_back(Json{{"id", id},
                         {"name", name},
                         {"shortDescription", Json{{"text", short_text}}},
                         {"fullDescription", Json{{"text", help}}},
                         {"help", Json{{"text", help}}},
                         {"defaultConfiguration", Json{{"level", level}}}});
  };
  for (const RuleText& r : kRules) add_rule(r.id, r.name, r.short_text, r.help, r.level);
  for (const Finding& f : findings) {
    if (f.kind != FindingKind::kLint || rule_index.count(f.rule) > 0) continue;
    const std::string lint = f.rule.substr(5);
    add_rule(f.rule, absl::StrCat("Lint-", lint),
             absl::StrCat("A broadcast engines interpret differently (", lint, ")"),
             absl::StrCat("check --lint's '", lint,
                          "' warning: the model is valid ONNX, but some engines compute this "
                          "broadcast differently from onnxruntime. The message names the engines "
                          "and the shapes."),
             "note");
  }
  Json artifacts = Json::array();
  std::map<std::string, int> artifact_index;
  for (const CheckSetEntry& e : entries) {
    artifact_index[e.path] = static_cast<int>(artifacts.size());
    artifacts.push_back(Json{{"location", Json{{"uri", e.path}}}});
  }
  // A model is no text file of lines: every result points at its first line (GitHub code
  // scanning needs a region on each location) and names the node as a logical location.
  auto location = [&](const std::string& model, const std::string& node) {
    Json loc =
        Json{{"physicalLocation",
              Json{{"artifactLocation", Json{{"uri", model}, {"index", artifact_index[model]}}},
                   {"region", Json{{"startLine", 1}}}}}};
    if (!node.empty()) {
      loc["logicalLocations"] =
          Json::array({Json{{"fullyQualifiedName", node}, {"kind", "object"}}});
    }
    return loc;
  };
  Json results = Json::array();
  for (const CheckSetEntry& e : entries) {
    if (Readable(e)) continue;
    std::string message = e.text;
    while (!message.empty() && message.back() == '\n') message.pop_back();
    Finding unreadable;
    unreadable.model = e.path;
    unreadable.rule = "model-unreadable";
    results.push_back(Json{
        {"ruleId", "model-unreadable"},
        {"ruleIndex", rule_index["model-unreadable"]},
        {"level", "error"},
        {"message", Json{{"text", message}}},
        {"locations", Json::array({location(e.path, "")})},
        {"partialFingerprints", Json{{"onnxBcastFinding/v1", FindingFingerprint(unreadable)}}}});
  }
  for (const Finding& f : findings) {
    const char* level = f.kind == FindingKind::kError  ? "error"
                        : f.kind == FindingKind::kLint ? "note"
                                                       : "warning";
    Json r{{"ruleId", f.rule},
           {"ruleIndex", rule_index[f.rule]},
           {"level", level},
           {"message", Json{{"text", f.message.empty() ? f.node_path : f.message}}},
           {"locations", Json::array({location(f.model, f.node_path)})},
           // Code scanning de-duplicates alerts across runs by these (a line hash means
           // nothing in a binary model).
           {"partialFingerprints", Json{{"onnxBcastFinding/v1", FindingFingerprint(f)}}}};
    if (f.known) r["baselineState"] = "unchanged";
    results.push_back(std::move(r));
  }
  Json run{
      {"tool",
       Json{{"driver",
             Json{{"name", "onnx-bcast"}, {"version", version}, {"rules", std::move(rules)}}}}},
      {"artifacts", std::move(artifacts)},
      {"results", std::move(results)}};
  Json doc{{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
           {"version", "2.1.0"},
           {"runs", Json::array({std::move(run)})}};
  return DumpJson(doc);
}

}  // namespace onnx_bcast::report
