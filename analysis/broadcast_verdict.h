// What DecideNode (decide_node.h) writes beside the rule's result: attributes as the node's
// caller resolves them, the message that names the node, its shapes and the rule, and the
// lints. Internal to analysis/.
#ifndef ONNX_BCAST_ANALYSIS_BROADCAST_VERDICT_H_
#define ONNX_BCAST_ANALYSIS_BROADCAST_VERDICT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "analysis/broadcast_ops.h"
#include "analysis/shape_propagation.h"
#include "broadcast/rules.h"
#include "proto/onnx.h"

namespace onnx_bcast::analysis::verdict {

/// Resolves an attribute, following `ref_attr_name` into the calling node's attributes.
const onnx::AttributeProto* Attr(const onnx::NodeProto& node, const std::string& name,
                                 const onnx::NodeProto* caller);
std::optional<int64_t> IntAttr(const onnx::NodeProto& node, const std::string& name,
                               const onnx::NodeProto* caller);

/// The node's one-line message: its name, shapes, rule and what was proven.
std::string Describe(const NodeVerdict& v, const std::vector<std::string>& roles,
                     const broadcast::BroadcastResult& r);

/// Portability warnings of a decided broadcasting node (check --lint); `binary_lints` are the
/// engines' own, run on a valid non-legacy binary broadcast.
void Lint(int64_t opset, const BroadcastOp& info, const broadcast::BroadcastResult& result,
          absl::Span<const BinaryLint> binary_lints, NodeVerdict* v);

}  // namespace onnx_bcast::analysis::verdict

#endif  // ONNX_BCAST_ANALYSIS_BROADCAST_VERDICT_H_
