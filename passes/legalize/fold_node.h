// legalize-measured's fold strategy: a node whose operands are all constant computed (with the
// driver's evaluator) into one initializer, every reader of its output re-pointed. Cost 1.
// Offered in the main graph only, for a single-output node whose output is no graph output and
// no subgraph reads. Guarantees: the same values (the executor's own kernels compute them).
#ifndef ONNX_BCAST_PASSES_LEGALIZE_FOLD_NODE_H_
#define ONNX_BCAST_PASSES_LEGALIZE_FOLD_NODE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "passes/legalize/node.h"

namespace onnx_bcast::passes::legalize {

/// Whether `node` is offered the fold.
bool FoldOffered(const Node& node);

/// Whether the target loads a constant of an element type; its name for the note when not.
struct ConstantTypes {
  std::function<bool(int32_t)> allowed;
  std::string target;
};

/// Computes the node into one initializer; leaves it, with a --debug reason, when the
/// evaluator fails or the result's type is not in `types`.
absl::Status ApplyFold(Node* node, const ConstantTypes& types);

}  // namespace onnx_bcast::passes::legalize

#endif  // ONNX_BCAST_PASSES_LEGALIZE_FOLD_NODE_H_
