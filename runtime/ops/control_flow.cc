// Op family table: control_flow. Rows are added as kernels land.
#include "runtime/ops/registry.h"

namespace onnx_bcast::rt {

absl::Span<const OpRegistration> ControlFlowOps() { return {}; }

}  // namespace onnx_bcast::rt
