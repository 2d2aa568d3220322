// Op family table: sequence. Rows are added as kernels land.
#include "runtime/ops/registry.h"

namespace onnx_bcast::rt {

absl::Span<const OpRegistration> SequenceOps() { return {}; }

}  // namespace onnx_bcast::rt
