// Op family table: elementwise. Rows are added as kernels land.
#include "runtime/ops/registry.h"

namespace onnx_bcast::rt {

absl::Span<const OpRegistration> ElementwiseOps() { return {}; }

}  // namespace onnx_bcast::rt
