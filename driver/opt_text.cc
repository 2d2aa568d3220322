// What opt says (see opt_text.h).
#include "driver/opt_text.h"

#include <algorithm>
#include <map>
#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "driver/engine_step.h"
#include "targets/targets.h"

namespace onnx_bcast::driver {
namespace {

void CountOps(const onnx::GraphProto& g, std::map<std::string, int>* counts) {
  for (const onnx::NodeProto& n : g.node()) {
    if (n.domain().empty() || n.domain() == "ai.onnx") ++(*counts)[n.op_type()];
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) CountOps(a.g(), counts);
      for (const onnx::GraphProto& body : a.graphs()) CountOps(body, counts);
    }
  }
}

// The hint a violation gives to make it fit, with the separator before it: "bind H, N with
// --dim" (targets/targets.cc, targets/runtime_shapes.cc word it so).
const std::regex& HintPattern() {
  static const auto* const kPattern =
      new std::regex(R"((: |; |, )?(bind [^ ,()]+(?:, [^ ,()]+)* with --dim))");
  return *kPattern;
}

}  // namespace

std::string TargetCoverageLine(const std::string& target, const onnx::GraphProto& graph,
                               const std::vector<std::string>& unsupported_ops) {
  // A built-in normal form (explicit, none, canonical) is no engine: there is no op list to
  // check, and "whether explicit has a layer for every op" asks a question with no answer.
  for (const targets::TargetProfile& t : targets::BuiltinTargets()) {
    if (t.name == target && !EngineOfTarget(t).has_value()) {
      return absl::StrCat("target ", target,
                          " covers broadcast forms only (a normal form of ONNX, not an engine: "
                          "every op stays as ONNX defines it)");
    }
  }
  std::string line = absl::StrCat("target ", target, " covers broadcast forms only (whether ",
                                  target, " has a layer for every op is not checked)");
  if (unsupported_ops.empty()) return line;
  std::map<std::string, int> counts;
  CountOps(graph, &counts);
  std::vector<std::string> missing;
  for (const std::string& op : unsupported_ops) {
    auto it = counts.find(op);
    if (it != counts.end()) missing.push_back(absl::StrCat(op, " (", it->second, " nodes)"));
  }
  std::sort(missing.begin(), missing.end());
  return absl::StrCat(
      "target ", target, " covers broadcast forms only; ",
      missing.empty() ? absl::StrCat("every op of the model has a layer in ", target)
                      : absl::StrCat(target, " has no layer for ", absl::StrJoin(missing, ", ")));
}

std::string FormatOptText(const report::OptReport& report, const onnx::GraphProto& graph,
                          const std::vector<std::string>& unsupported_ops, bool rewrites,
                          bool debug, bool list_violations) {
  std::string text;
  if (list_violations || report.violations.empty()) {
    text = report::FormatOptText(report, rewrites, debug);
  } else {
    // The report's own lines, the target's count kept and the list left to the caller.
    report::OptReport counted = report;
    counted.violations.clear();
    text = report::FormatOptText(counted, rewrites, debug);
    const std::string zero = absl::StrCat("target ", report.target, ": 0 node(s)");
    const size_t at = text.rfind(zero);
    if (at != std::string::npos) {
      text.replace(
          at, zero.size(),
          absl::StrCat("target ", report.target, ": ", report.violations.size(), " node(s)"));
    }
  }
  if (!report.target.empty()) {
    absl::StrAppend(&text, TargetCoverageLine(report.target, graph, unsupported_ops), "\n");
  }
  return text;
}

FoldedViolations FoldViolationHints(const std::vector<std::string>& violations,
                                    const std::vector<std::string>& no_layer) {
  auto without_layer = [&no_layer](size_t k) {
    return k < no_layer.size() && !no_layer[k].empty();
  };
  std::map<std::string, int> count;
  for (size_t k = 0; k < violations.size(); ++k) {
    if (without_layer(k)) continue;  // no binding makes it run: not one of the hint's nodes
    const std::string& v = violations[k];
    for (std::sregex_iterator it(v.begin(), v.end(), HintPattern()), end; it != end; ++it) {
      ++count[(*it)[2].str()];
    }
  }
  FoldedViolations out;
  for (size_t k = 0; k < violations.size(); ++k) {
    const std::string& v = violations[k];
    std::string line;
    size_t last = 0;
    bool replaced = false;
    for (std::sregex_iterator it(v.begin(), v.end(), HintPattern()), end; it != end; ++it) {
      // A hint of one node stays in its line; a node without a layer says that instead.
      if (!without_layer(k) && count[(*it)[2].str()] < 2) continue;
      const auto at = static_cast<size_t>(it->position());
      line.append(v, last, at - last);
      if (without_layer(k) && !replaced) {
        absl::StrAppend(&line, "; ", no_layer[k]);
        replaced = true;
      }
      last = at + static_cast<size_t>(it->length());
    }
    line.append(v, last);
    if (without_layer(k) && !replaced) absl::StrAppend(&line, "; ", no_layer[k]);
    out.nodes.push_back(std::move(line));
  }
  std::vector<std::pair<int, std::string>> shared;
  for (const auto& [hint, n] : count) {
    if (n >= 2) shared.emplace_back(-n, hint);
  }
  std::sort(shared.begin(), shared.end());
  for (const auto& [n, hint] : shared) out.hints.push_back(absl::StrCat(hint, ": ", -n, " nodes"));
  return out;
}

std::string ViolationHint(const std::string& rule) {
  std::smatch m;
  return std::regex_search(rule, m, HintPattern()) ? m[2].str() : "";
}

void ExplainKeptConstants(const std::vector<passes::PassRun>& runs,
                          std::vector<targets::TargetViolation>* violations) {
  static constexpr char kFoldIt[] = "has only constant inputs: fold it";
  for (targets::TargetViolation& v : *violations) {
    if (v.graph != "main" || !absl::StartsWith(v.why, kFoldIt)) continue;
    // fold-constants notes a node it kept as "<op> '<node>' kept: <why>" (passes/fold_constants).
    const std::string prefix = absl::StrCat(v.op, " '", v.node, "' kept: ");
    for (const passes::PassRun& run : runs) {
      if (run.pass != "fold-constants") continue;
      for (const std::string& note : run.stats.notes) {
        if (!absl::StartsWith(note, prefix)) continue;
        v.why = absl::StrCat("has only constant inputs; fold-constants kept it: ",
                             note.substr(prefix.size()));
      }
    }
  }
}

}  // namespace onnx_bcast::driver
