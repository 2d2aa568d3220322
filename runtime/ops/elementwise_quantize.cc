// Elementwise quantization ops: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear.
#include "runtime/ops/elementwise_internal.h"

namespace onnx_bcast::rt {
namespace elementwise_internal {

absl::Span<const OpRegistration> QuantizeRows() { return {}; }

}  // namespace elementwise_internal
}  // namespace onnx_bcast::rt
