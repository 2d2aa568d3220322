// What opt says (see opt_text.h).
#include "driver/opt_text.h"

#include <algorithm>
#include <map>
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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

std::string FormatOptText(const passes::OptReport& report, const onnx::GraphProto& graph,
                          const std::vector<std::string>& unsupported_ops, bool rewrites,
                          bool debug, bool list_violations) {
  std::string text;
  if (list_violations || report.violations.empty()) {
    text = passes::FormatOptText(report, rewrites, debug);
  } else {
    // The report's own lines, the target's count kept and the list left to the caller.
    passes::OptReport counted = report;
    counted.violations.clear();
    text = passes::FormatOptText(counted, rewrites, debug);
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

FoldedViolations FoldViolationHints(const std::vector<std::string>& violations) {
  std::map<std::string, int> count;
  for (const std::string& v : violations) {
    for (std::sregex_iterator it(v.begin(), v.end(), HintPattern()), end; it != end; ++it) {
      ++count[(*it)[2].str()];
    }
  }
  FoldedViolations out;
  for (const std::string& v : violations) {
    std::string line;
    size_t last = 0;
    for (std::sregex_iterator it(v.begin(), v.end(), HintPattern()), end; it != end; ++it) {
      if (count[(*it)[2].str()] < 2) continue;  // a hint of one node stays in its line
      const auto at = static_cast<size_t>(it->position());
      line.append(v, last, at - last);
      last = at + static_cast<size_t>(it->length());
    }
    line.append(v, last);
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

}  // namespace onnx_bcast::driver
