// Op family table: matrix. Rows are added as kernels land.
#include "runtime/ops/registry.h"

namespace onnx_bcast::rt {

absl::Span<const OpRegistration> MatrixOps() { return {}; }

}  // namespace onnx_bcast::rt
