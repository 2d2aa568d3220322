// Op family table: movement. Rows are added as kernels land.
#include "runtime/ops/registry.h"

namespace onnx_bcast::rt {

absl::Span<const OpRegistration> MovementOps() { return {}; }

}  // namespace onnx_bcast::rt
