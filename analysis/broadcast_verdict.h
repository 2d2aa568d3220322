// The verdict of one broadcasting node from its input shapes: the rule its op follows, the
// broadcast class, the result, and the message that names the node, its shapes and the rule.
// Internal to analysis/: the walk (shape_propagation.cc) and the public entry points
// (DecideBroadcastNodeInto, ApplyBroadcastRule, ... in shape_propagation.h) call it.
#ifndef ONNX_BCAST_ANALYSIS_BROADCAST_VERDICT_H_
#define ONNX_BCAST_ANALYSIS_BROADCAST_VERDICT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/broadcast_ops.h"
#include "analysis/shape_propagation.h"
#include "broadcast/rules.h"
#include "proto/onnx.h"

namespace onnx_bcast::passes::verdict {

/// Resolves an attribute, following `ref_attr_name` into the calling node's attributes.
const onnx::AttributeProto* Attr(const onnx::NodeProto& node, const std::string& name,
                                 const onnx::NodeProto* caller);
std::optional<int64_t> IntAttr(const onnx::NodeProto& node, const std::string& name,
                               const onnx::NodeProto* caller);

/// The rule, class and result of broadcasting node `node` of kind `info` (neither Expand nor a
/// non-broadcasting op), from the shapes and names of its inputs in `v` (node-input order;
/// Gemm's become C and (M,N)). Attribute references resolve through `caller`. `classify`: name
/// the numpy forms' broadcast class. nullopt for a wrong number of inputs. The walk and the
/// target check over the pass manager's shape tables decide every node with it.
std::optional<bcast::BroadcastResult> DecideBroadcast(const onnx::NodeProto& node,
                                                      const onnx::NodeProto* caller,
                                                      const BroadcastOp& info, bool classify,
                                                      NodeVerdict* v,
                                                      std::vector<std::string>* roles);

/// The verdict, output and condition of a decided node.
void TakeResult(const bcast::BroadcastResult& result, NodeVerdict* v);

/// The node's one-line message: its name, shapes, rule and what was proven.
std::string Describe(const NodeVerdict& v, const std::vector<std::string>& roles,
                     const bcast::BroadcastResult& r);

/// Portability warnings of a decided broadcasting node (check --lint).
void Lint(int64_t opset, const BroadcastOp& info, const bcast::BroadcastResult& result,
          NodeVerdict* v);

}  // namespace onnx_bcast::passes::verdict

#endif  // ONNX_BCAST_ANALYSIS_BROADCAST_VERDICT_H_
