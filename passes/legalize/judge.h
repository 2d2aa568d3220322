// legalize-measured's conversion target: whether a candidate rewrite of a node lands in a cell
// the target's measured table marks as running, by DecideNode (the node at the candidate's
// shapes, and any node the candidate inserts) and DecideForm, the lookup the target check uses.
#ifndef ONNX_BCAST_PASSES_LEGALIZE_JUDGE_H_
#define ONNX_BCAST_PASSES_LEGALIZE_JUDGE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "analysis/decide_node.h"
#include "passes/legalize/node.h"
#include "targets/targets.h"

namespace onnx_bcast::passes::legalize {

class Judge {
 public:
  Judge(const Node& node, const targets::TargetProfile& profile) : node_(node), profile_(profile) {}

  /// The verdict of `n` (this node, or a candidate for it) at `shapes`, given in its input
  /// order: what the target check would find once the rewrite is made.
  bool Decide(const onnx::NodeProto& n, absl::Span<const broadcast::Shape> shapes,
              analysis::NodeVerdict* v) const;

  /// Whether the node as `plan` would leave it fits the table (a folded node always does).
  bool Fits(const Plan& plan);

  /// "decided by the table", and the exact-shape cell when one decided the last fit.
  std::string TableDecision() const;

  /// `is_constant` over the names of `n`'s inputs, by slot.
  static std::function<bool(const std::string&)> IsConstantFn(const onnx::NodeProto& n,
                                                              const std::vector<bool>& constant);

 private:
  bool FitsEdits(const Plan& plan);
  bool FitsView(const Plan& plan);
  // Whether `d` fits, keeping the exact-shape cell that decided it for the rewrite's log.
  bool Decided(const targets::FormDecision& d);

  const Node& node_;
  const targets::TargetProfile& profile_;
  std::string decided_by_cell_;  // the exact-shape cell of the last Fits, or empty
};

}  // namespace onnx_bcast::passes::legalize

#endif  // ONNX_BCAST_PASSES_LEGALIZE_JUDGE_H_
