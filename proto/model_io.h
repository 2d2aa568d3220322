// Loading and saving ONNX models: binary and text form, external data confined to the model's
// directory, strict validation of sizes, and atomic, lossless saving.
#ifndef ONNX_BCAST_PROTO_MODEL_IO_H_
#define ONNX_BCAST_PROTO_MODEL_IO_H_

#include <sys/types.h>

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/limits.h"
#include "proto/onnx.h"

namespace google::protobuf::io {
class ZeroCopyOutputStream;
}  // namespace google::protobuf::io

namespace onnx_bcast::proto {

/// A model together with where it came from. External data locations are resolved against
/// `base_dir`; weights are never read at load time.
struct Model {
  onnx::ModelProto proto;
  std::string path;      ///< the file it was loaded from; "<memory>" or "<text>" otherwise
  std::string base_dir;  ///< directory external data locations are relative to
  /// Identity of the file it was loaded from (0 when none): outputs must never replace it.
  dev_t file_dev = 0;
  ino_t file_ino = 0;
};

/// An empty model to run a piece of `model` in: its path and folder (external data of copied
/// initializers resolves as in `model`), its opset imports, IR version at least `min_ir`, and an
/// empty graph named `graph_name`. Shared by the passes that compute on constants and the live
/// oracle's single-node fragments.
Model FragmentModel(const Model& model, const std::string& graph_name, int64_t min_ir);

/// Loads a binary .onnx model, or ONNX text form when the file name ends in ".onnxtxt".
/// Errors are InvalidArgument/NotFound/ResourceExhausted/DataLoss with a message starting with
/// the offending file's path.
absl::StatusOr<Model> LoadModel(const std::string& path, const Limits& limits = {});

/// Loads a model from an open descriptor (stdin for a MODEL of '-'): binary, or ONNX text form
/// when it opens with '<'. `label` names it in messages. Reads at most limits.max_file_bytes.
/// A model that references external data is refused: a stream has no folder of its own.
absl::StatusOr<Model> LoadModelStream(int fd, const std::string& label, const Limits& limits = {});

/// The bytes of `model` for a stream (`opt -o -`): FailedPrecondition when a tensor keeps its
/// payload in external data, ResourceExhausted at 2 GiB or more.
absl::StatusOr<std::string> SerializeForStream(const Model& model);

/// Parses serialized model bytes. `label` names the source in messages.
absl::StatusOr<Model> ParseModelBytes(std::string_view bytes, const std::string& label,
                                      const std::string& base_dir, const Limits& limits = {});

/// Parses ONNX text form (onnx/defs/parser.h syntax).
absl::StatusOr<Model> ParseModelText(std::string_view text, const std::string& label = "<text>",
                                     const std::string& base_dir = ".", const Limits& limits = {});

/// Structural validation done at load: a graph present, opsets imported once, node count,
/// tensor dims and payload sizes consistent, external data references safe and in range.
absl::Status ValidateModel(const Model& model, const Limits& limits = {});

class InputFiles;

struct SaveOptions {
  /// Allows the output to be the input file itself.
  bool in_place = false;
  /// Moves initializer payloads of at least `external_threshold_bytes` to "<out>.data".
  bool external_data = false;
  int64_t external_threshold_bytes = 1024;
  /// More files the output must not be, besides the model's own file and external data (e.g.
  /// what the model read before passes rewrote it). Not owned; may be null.
  const InputFiles* inputs = nullptr;
};

/// Saves atomically: a temporary in the destination directory, fsync, rename. On failure the
/// destination is untouched and no temporary remains. Refuses to overwrite the input model
/// unless `in_place`, and always refuses an output that is one of its external data files, a
/// symlink or not a regular file. Only files named after the output are written: external
/// data the model references is copied, when the output goes to another directory, into
/// "OUT.data", "OUT.1.data", ... (the first free names, never replacing a file) and the
/// saved model's `location` fields are rewritten to them; models over 2 GiB are saved with
/// external data. Data files earlier saves of OUT left and the new model does not reference
/// are removed after the model is in place.
/// Errors carry the code FailedPrecondition/PermissionDenied/Internal; messages start with the
/// output path.
absl::Status SaveModel(const Model& model, const std::string& out_path,
                       const SaveOptions& options = {});

/// Writes `bytes` to `path` the way SaveModel writes models: a temporary in the same directory,
/// fsync, rename; nothing is left behind on failure; a symlink, directory or non-regular file
/// at `path` is refused. Messages start with the path.
absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes);

/// The whole of a small file (a report, a target profile): the one reader of such files.
/// NotFound when it cannot be opened; InvalidArgument when it is not a regular file (a FIFO
/// would block, /dev/zero never ends) or holds more than `max_bytes`. Messages start with the
/// path.
absl::StatusOr<std::string> ReadFileBytes(const std::string& path,
                                          int64_t max_bytes = int64_t{256} << 20);

/// Serializes deterministically (for tests and in-memory use).
absl::StatusOr<std::string> SerializeModel(const onnx::ModelProto& model);

/// The bytes of `model` with every external payload read in (relative to model.base_dir) and
/// kept inline: what an engine gets, which has no folder to find "OUT.data" in. Errors: the
/// external data's, ResourceExhausted at 2 GiB or more.
absl::StatusOr<std::string> SerializeSelfContained(const Model& model);

/// Serializes deterministically into `out` (SaveModel streams into its file this way);
/// ResourceExhausted at 2 GiB or more. The caller flushes `out`.
absl::Status SerializeModelTo(const onnx::ModelProto& model,
                              google::protobuf::io::ZeroCopyOutputStream* out);

/// True when the two models are equal field by field, unknown fields included.
bool ModelsEqual(const onnx::ModelProto& a, const onnx::ModelProto& b, std::string* diff = nullptr);

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_MODEL_IO_H_
