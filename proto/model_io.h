// Loading and saving ONNX models: binary and text form, external data confined to the model's
// directory, strict validation of sizes, and atomic, lossless saving.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/limits.h"
#include "proto/onnx.h"

namespace onnx_bcast::proto {

/// A model together with where it came from. External data locations are resolved against
/// `base_dir`; weights are never read at load time.
struct Model {
  onnx::ModelProto proto;
  std::string path;      ///< the file it was loaded from; "<memory>" or "<text>" otherwise
  std::string base_dir;  ///< directory external data locations are relative to
};

/// Loads a binary .onnx model, or ONNX text form when the file name ends in ".onnxtxt".
/// Errors are InvalidArgument/NotFound/ResourceExhausted/DataLoss with a message starting with
/// the offending file's path.
absl::StatusOr<Model> LoadModel(const std::string& path, const Limits& limits = {});

/// Parses serialized model bytes. `label` names the source in messages.
absl::StatusOr<Model> ParseModelBytes(std::string_view bytes, const std::string& label,
                                      const std::string& base_dir, const Limits& limits = {});

/// Parses ONNX text form (onnx/defs/parser.h syntax).
absl::StatusOr<Model> ParseModelText(std::string_view text, const std::string& label = "<text>",
                                     const std::string& base_dir = ".",
                                     const Limits& limits = {});

/// Structural validation done at load: a graph present, opsets imported once, node count,
/// tensor dims and payload sizes consistent, external data references safe and in range.
absl::Status ValidateModel(const Model& model, const Limits& limits = {});

struct SaveOptions {
  /// Allows the output to be the input file itself.
  bool in_place = false;
  /// Moves initializer payloads of at least `external_threshold_bytes` to "<out>.data".
  bool external_data = false;
  int64_t external_threshold_bytes = 1024;
};

/// Saves atomically: a temporary in the destination directory, fsync, rename. On failure the
/// destination is untouched and no temporary remains. Refuses to overwrite `model.path` unless
/// `in_place`. External data files referenced by the model are carried beside the output when
/// it goes to another directory; models over 2 GiB are saved with external data.
/// Errors carry the code FailedPrecondition/PermissionDenied/Internal; messages start with the
/// output path.
absl::Status SaveModel(const Model& model, const std::string& out_path,
                       const SaveOptions& options = {});

/// Writes `bytes` to `path` the way SaveModel writes models: a temporary in the same directory,
/// fsync, rename; nothing is left behind on failure. Messages start with the path.
absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes);

/// The whole file; NotFound/InvalidArgument with a message starting with the path.
absl::StatusOr<std::string> ReadFileBytes(const std::string& path);

/// Serializes deterministically (for tests and in-memory use).
absl::StatusOr<std::string> SerializeModel(const onnx::ModelProto& model);

/// True when the two models are equal field by field, unknown fields included.
bool ModelsEqual(const onnx::ModelProto& a, const onnx::ModelProto& b, std::string* diff = nullptr);

}  // namespace onnx_bcast::proto
