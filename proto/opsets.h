// Default-domain opset facts from libonnx's schema registry, and its version converter behind
// absl::Status.
#ifndef ONNX_BCAST_PROTO_OPSETS_H_
#define ONNX_BCAST_PROTO_OPSETS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/onnx.h"

#include "proto/model_io.h"

namespace onnx_bcast::proto {

/// The model's default-domain ("" or "ai.onnx") opset, or 0 when none is imported.
int64_t DefaultOpset(const onnx::ModelProto& model);

/// Sets the default-domain opset import to `version` (adding it when missing).
void SetDefaultOpset(onnx::ModelProto* model, int64_t version);

/// The since_version of the schema `op_type` resolves to at `opset`, or -1 when none.
int64_t SchemaSinceVersion(const std::string& op_type, int64_t opset);

/// Default-domain op types used anywhere in the main graph (subgraphs included) whose schema
/// differs between `from` and `to` (or that do not exist at `to`). Sorted, unique.
std::vector<std::string> OpsChangedBetween(const onnx::ModelProto& model, int64_t from, int64_t to);

/// libonnx's version converter (ConvertVersion) to `to`; its exceptions become
/// UnimplementedError with libonnx's message. The model must first pass libonnx's structural
/// checker (InvalidArgument otherwise): the converter's adapters index node inputs unchecked
/// (an opset-6 Add without inputs segfaults it; found by fuzz_opt).
absl::StatusOr<onnx::ModelProto> ConvertDefaultOpset(const Model& model, int64_t to);

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_OPSETS_H_
