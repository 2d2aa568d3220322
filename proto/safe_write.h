// Writing the files a user names as outputs (models, data files, JSON reports, run outputs) so
// that neither a model nor a path can make us write anything else.
//
// Requires: the caller says which files the command reads (InputFiles).
// Guarantees: a file is only ever created fresh, with O_CREAT|O_EXCL|O_NOFOLLOW relative to a
// descriptor of its directory, under a hidden temporary name; it is fsynced and then renamed
// onto its destination. A destination that is a directory, a symlink, a FIFO, a device or any
// other non-regular file, or that is one of the inputs (by inode: symlinks, hard links and
// `a/../b` included) is refused before anything is written. On any failure no temporary
// remains and the destination is untouched.
#ifndef ONNX_BCAST_PROTO_SAFE_WRITE_H_
#define ONNX_BCAST_PROTO_SAFE_WRITE_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/external_data.h"

namespace onnx_bcast::proto {

struct Model;

/// Identity of a file on this machine.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const FileId&) const = default;
};

/// The files a command reads, by identity: no output may be one of them.
class InputFiles {
 public:
  /// Adds the file at `path` (symlinks followed) when it exists; `what` names it in messages,
  /// e.g. "the input model".
  void AddPath(const std::string& path, const std::string& what);
  void Add(FileId id, const std::string& what);
  void AddAll(const InputFiles& other);
  /// What `id` is, or nullptr when it is not an input.
  const std::string* Find(FileId id) const;
  bool IsModel(FileId id) const { return model_.has_value() && *model_ == id; }
  void SetModel(FileId id) { model_ = id; }

 private:
  std::vector<std::pair<FileId, std::string>> files_;
  std::optional<FileId> model_;
};

/// The model's file (when it came from one) and every external data file it references, each
/// opened and validated as for reading.
absl::StatusOr<InputFiles> InputFilesOf(const Model& model);

/// A directory outputs are created in, held open so every file is made relative to it.
class OutputDir {
 public:
  /// Opens `path` (which must be an existing directory). Messages do not repeat the path.
  static absl::StatusOr<std::shared_ptr<const OutputDir>> Open(const std::string& path);
  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }
  FileId id() const { return id_; }

 private:
  UniqueFd fd_;
  std::string path_;
  FileId id_;
};

/// Refuses `name` in `dir` as a destination when it is a directory, a symlink, not a regular
/// file, or one of `inputs` (in_place lets the output replace the input model itself only).
/// Messages do not repeat the path.
absl::Status CheckDestination(const OutputDir& dir, const std::string& name,
                              const InputFiles& inputs, bool in_place = false);

/// What a save or a staged write to `path` would refuse, asked before the work that produces
/// the bytes (opt runs every pass first): a directory that does not exist or cannot be written
/// in, and a destination CheckDestination refuses. Messages start with `path`, as the save's.
absl::Status CheckOutputPath(const std::string& path, const InputFiles& inputs,
                             bool in_place = false);

/// A file being written under a hidden temporary name in its directory, then renamed.
class PendingFile {
 public:
  PendingFile(std::shared_ptr<const OutputDir> dir, std::string name);
  ~PendingFile();
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;

  /// Creates the temporary ".NAME.tmp.XXXXXX" with O_EXCL|O_NOFOLLOW.
  absl::Status Create();
  int fd() const { return fd_; }
  absl::Status Append(const char* data, size_t size);
  int64_t written() const { return written_; }
  /// Mode 0644, fsync, close.
  absl::Status Finish();
  /// Renames the temporary onto the destination name, replacing what is there.
  absl::Status Commit();
  /// Renames the temporary onto `name` only if nothing has that name (AlreadyExists if so).
  absl::Status CommitNoReplace(const std::string& name);
  const std::string& name() const { return name_; }
  FileId id() const { return id_; }
  bool committed() const { return committed_; }
  const OutputDir& dir() const { return *dir_; }

 private:
  std::shared_ptr<const OutputDir> dir_;
  std::string name_, temp_;
  int fd_ = -1;
  int64_t written_ = 0;
  int64_t written_back_ = 0;  // bytes whose writeback Append has started
  FileId id_;
  bool committed_ = false;
};

/// One output file of a set written together.
struct OutputFile {
  std::string path;
  std::string bytes;
};

/// Files written to temporaries now and renamed onto their names only by Commit. A command
/// stages its side outputs (a JSON report) before it writes its main output and commits them
/// once that is in place, so a command that fails leaves none of them. Destroyed uncommitted,
/// it removes its temporaries.
class StagedOutputFiles {
 public:
  /// Nothing staged; Commit does nothing.
  StagedOutputFiles() = default;
  StagedOutputFiles(StagedOutputFiles&&) = default;
  StagedOutputFiles& operator=(StagedOutputFiles&&) = default;

  /// Checks every destination as CheckDestination says and writes each file to a temporary
  /// beside it (fsynced); nothing is renamed. Messages start with the offending path.
  static absl::StatusOr<StagedOutputFiles> Stage(const std::vector<OutputFile>& files,
                                                 const InputFiles& inputs);
  /// Appends the bytes it is given to the file being staged.
  using Sink = absl::FunctionRef<absl::Status(std::string_view)>;
  /// Stage for one file whose bytes `produce` hands, piece by piece, to the sink it is given:
  /// written as they come, so a large report is never whole in memory. An error of `produce`
  /// (or of a write) stages nothing and is returned with the path in front.
  static absl::StatusOr<StagedOutputFiles> StageStreamed(
      const std::string& path, const InputFiles& inputs,
      absl::FunctionRef<absl::Status(Sink)> produce);
  /// Renames every temporary onto its destination (in order); messages start with the path.
  absl::Status Commit();

 private:
  std::vector<std::string> paths_;
  std::vector<std::unique_ptr<PendingFile>> pending_;
};

/// Writes every file of `files` to a temporary, checked as CheckDestination says, and renames
/// them only once all are complete: a failure leaves none of them changed. Messages start with
/// the offending path.
absl::Status WriteOutputFiles(const std::vector<OutputFile>& files, const InputFiles& inputs);

/// WriteOutputFiles for one file.
absl::Status WriteOutputFile(const std::string& path, std::string_view bytes,
                             const InputFiles& inputs);

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_SAFE_WRITE_H_
