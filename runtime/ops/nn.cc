// Op family table: nn. Rows are added as kernels land.
#include "runtime/ops/registry.h"

namespace onnx_bcast::rt {

absl::Span<const OpRegistration> NnOps() { return {}; }

}  // namespace onnx_bcast::rt
