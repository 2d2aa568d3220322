// Op family table: rnn. Rows are added as kernels land.
#include "runtime/ops/registry.h"

namespace onnx_bcast::rt {

absl::Span<const OpRegistration> RnnOps() { return {}; }

}  // namespace onnx_bcast::rt
