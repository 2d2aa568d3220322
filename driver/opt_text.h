// What opt says, for the CLI and the API alike (issue 31): the readable report with its last
// line saying what a target's verdict covers, and the nodes outside the target's form listed
// once, each hint that several share ("bind N with --dim") said once with its count.
#ifndef ONNX_BCAST_DRIVER_OPT_TEXT_H_
#define ONNX_BCAST_DRIVER_OPT_TEXT_H_

#include <string>
#include <vector>

#include "proto/onnx.h"
#include "report/opt_report.h"

namespace onnx_bcast::driver {

/// The last line of a report with a target: a target's verdict covers the broadcast forms of
/// its table, not whether the engine has a layer for every op. `unsupported_ops` is the
/// target's list of ops the engine has no layer for, when its profile measured one (empty:
/// none known); the ops of `graph` (main graph and bodies) on it are named with their counts.
std::string TargetCoverageLine(const std::string& target, const onnx::GraphProto& graph,
                               const std::vector<std::string>& unsupported_ops);

/// passes::FormatOptText, without the list of nodes outside the target's form when
/// `list_violations` is false (the CLI says them once, on stderr: FoldViolationHints), and with
/// TargetCoverageLine last when the report has a target.
std::string FormatOptText(const report::OptReport& report, const onnx::GraphProto& graph,
                          const std::vector<std::string>& unsupported_ops, bool rewrites,
                          bool debug, bool list_violations);

/// Violations with every hint that several of them give ("bind N with --dim") taken out of
/// their lines and said once: "bind N with --dim: 30 nodes". `no_layer`, when given, holds one
/// entry per violation: non-empty for a node of an op the engine has no layer for (what to
/// say instead, "ncnn has no layer for Expand: no --dim makes it run"). Such a node's hint is
/// replaced by it and not counted: binding dims does not make it run (issue 44 item 7).
struct FoldedViolations {
  std::vector<std::string> nodes;  ///< one per violation, in order
  std::vector<std::string> hints;  ///< one per shared hint, most frequent first
};
FoldedViolations FoldViolationHints(const std::vector<std::string>& violations,
                                    const std::vector<std::string>& no_layer = {});

/// The hint a violation's rule gives to make the node fit, "bind N, H with --dim" (in the
/// CLI's words), or "" when it gives none.
std::string ViolationHint(const std::string& rule);

/// Nodes the target check asks to fold ("has only constant inputs: fold it ...") that
/// fold-constants kept, with its reason from the pass's notes in `runs` instead of the advice
/// to raise --fold-limit, which only a result kept for its size needs (a bool constant the
/// engine does not load folds at no limit; issue 44 item 7).
void ExplainKeptConstants(const std::vector<passes::PassRun>& runs,
                          std::vector<targets::TargetViolation>* violations);

}  // namespace onnx_bcast::driver

#endif  // ONNX_BCAST_DRIVER_OPT_TEXT_H_
