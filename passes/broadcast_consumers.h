// Whether every consumer of a tensor computes the same thing reading a smaller shape: the
// question eliminate-redundant-broadcast asks of a node it may remove and of a constant it may
// shrink.
#ifndef ONNX_BCAST_PASSES_BROADCAST_CONSUMERS_H_
#define ONNX_BCAST_PASSES_BROADCAST_CONSUMERS_H_

#include <string>
#include <vector>

#include "analysis/shape_propagation.h"
#include "broadcast/shape.h"
#include "passes/rewrite_context.h"

namespace onnx_bcast::passes {

/// Judges the consumers of one graph's tensors with the graph's own verdict routine.
class BroadcastConsumers {
 public:
  explicit BroadcastConsumers(RewriteContext& ctx) : ctx_(&ctx) {}

  /// True when every use of `y` (of shape `sy`) would compute the same output shape reading a
  /// tensor of shape `sx` instead (numpy broadcasting then gives the same values); else false
  /// with the reason in `why`.
  bool Accept(const std::string& y, const broadcast::Shape& sy, const broadcast::Shape& sx,
              std::string* why);

 private:
  RewriteContext* ctx_;
  analysis::NodeVerdict before_v_, after_v_;  // Accept's records, buffers reused
};

/// True when `sy` is `sx` with leading 1s and another operand already has sy's rank: the
/// leading 1s then change neither the broadcast result nor its values, whatever the other
/// extents are (unknown ones included).
bool LeadingOnesOnly(const broadcast::Shape& sy, const broadcast::Shape& sx,
                     const std::vector<broadcast::Shape>& after);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_BROADCAST_CONSUMERS_H_
