// Reference binary kernels and Where: for each output element, unravel its index and
// compute every input's offset the slow obvious way. The oracle for the fast kernels.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_BINARY_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_BINARY_H_

#include "absl/status/status.h"
#include "runtime/kernels/elementwise_ops.h"
#include "runtime/tensor.h"

namespace onnx_bcast::runtime::reference {

/// out = op(a, b), numpy broadcasting; `out` pre-allocated with the broadcast shape and the
/// op's output dtype. Same element semantics as runtime::BinaryOp, no plan, one thread.
absl::Status BinaryOp(OpKind op, const Tensor& a, const Tensor& b, Tensor* out,
                      const BinaryAttributes& attrs = {});

/// out = cond ? x : y, broadcasting all three.
absl::Status Where(const Tensor& cond, const Tensor& x, const Tensor& y, Tensor* out);

}  // namespace onnx_bcast::runtime::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_BINARY_H_
