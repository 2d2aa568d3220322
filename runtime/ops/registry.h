// The op table: each family file contributes its rows; FindOp picks the row for a node's opset.
#ifndef ONNX_BCAST_RUNTIME_OPS_REGISTRY_H_
#define ONNX_BCAST_RUNTIME_OPS_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "runtime/ops/op.h"

namespace onnx_bcast::runtime {

// One function per op family, each defined in its own file under runtime/ops/.
absl::Span<const OpRegistration> ElementwiseOps();   ///< elementwise.cc: unary, binary, Cast, Clip...
absl::Span<const OpRegistration> MovementOps();      ///< movement.cc: Reshape, Slice, Gather...
absl::Span<const OpRegistration> SequenceOps();      ///< sequence.cc: Sequence*, Optional*
absl::Span<const OpRegistration> NnOps();            ///< nn.cc: Conv, pooling, normalization, Resize
absl::Span<const OpRegistration> ReduceOps();        ///< reduce.cc: Reduce*, ArgMax, Softmax...
absl::Span<const OpRegistration> MatrixOps();        ///< matrix.cc: MatMul, Gemm, Einsum...
absl::Span<const OpRegistration> RnnOps();           ///< rnn.cc: LSTM, GRU, RNN
absl::Span<const OpRegistration> ControlFlowOps();   ///< control_flow.cc: If, Loop, Scan...

/// The kernel for (domain, op_type) at `opset`: the row with the largest since_version <= opset.
/// Null when none.
const OpRegistration* FindOp(const std::string& domain, const std::string& op_type,
                             int64_t opset);

/// Every registered (domain, op_type), sorted, for --help and the README.
std::vector<std::string> RegisteredOps();

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_OPS_REGISTRY_H_
