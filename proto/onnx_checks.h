// libonnx's checker and shape inference behind absl::Status (they throw; nothing escapes here).
#ifndef ONNX_BCAST_PROTO_ONNX_CHECKS_H_
#define ONNX_BCAST_PROTO_ONNX_CHECKS_H_

#include "absl/status/status.h"
#include "proto/model_io.h"

namespace onnx_bcast::proto {

/// libonnx's model checker; with `full`, also strict shape inference with type checks (what
/// Python's `onnx.checker.check_model(m, full_check=True)` does).
absl::Status CheckModel(const Model& model, bool full);

/// libonnx's shape inference, writing value_info into `model`. `strict` makes node-level
/// inference errors fail. Symbolic dims are treated by libonnx as compatible with any number;
/// the project's own broadcast rules correct that afterwards.
absl::Status InferShapes(onnx::ModelProto* model, bool strict);

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_ONNX_CHECKS_H_
