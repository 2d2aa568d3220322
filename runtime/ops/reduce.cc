// Op family table: reduce. Rows are added as kernels land.
#include "runtime/ops/registry.h"

namespace onnx_bcast::rt {

absl::Span<const OpRegistration> ReduceOps() { return {}; }

}  // namespace onnx_bcast::rt
