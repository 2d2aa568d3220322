// External tensor data: parsing and confining `external_data` entries to the model directory,
// and reading payloads lazily.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "proto/onnx.h"

namespace onnx_bcast::proto {

/// A validated external-data reference.
struct ExternalRef {
  std::string location;  ///< as written in the model (relative, no "..")
  std::string resolved;  ///< real path of the file, inside the model directory
  int64_t offset = 0;
  int64_t length = 0;  ///< bytes; when absent in the model, the rest of the file
  int64_t file_size = 0;
};

/// Parses a strict non-negative decimal (no sign, no spaces, at most 19 digits, no overflow).
bool ParseStrictDecimal(const std::string& text, int64_t* value);

/// Validates `tensor`'s external_data against `base_dir`: location relative, no "..", resolving
/// inside base_dir (symlinks followed, then checked), a regular file with a single link,
/// offset/length strict decimals within the file. Does not read the payload.
absl::StatusOr<ExternalRef> ResolveExternalData(const onnx::TensorProto& tensor,
                                                const std::string& base_dir);

/// Reads an external payload (validating first).
absl::StatusOr<std::string> ReadExternalData(const onnx::TensorProto& tensor,
                                             const std::string& base_dir);

}  // namespace onnx_bcast::proto
