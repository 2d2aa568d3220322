// Safe output files: see safe_write.h for what is required and guaranteed.
#include "proto/safe_write.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "absl/strings/str_cat.h"
#include "proto/model_io.h"
#include "proto/tensor_util.h"
#include "support/status_macros.h"

namespace onnx_bcast::proto {
namespace {

namespace fs = std::filesystem;

std::string Errno() { return std::strerror(errno); }

FileId IdOf(const struct stat& st) { return FileId{st.st_dev, st.st_ino}; }

absl::Status WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("write failed: ", Errno()));
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// Six characters from [a-zA-Z0-9], different in every process and call.
std::string RandomSuffix() {
  static thread_local std::mt19937_64 rng(std::random_device{}() ^
                                          (static_cast<uint64_t>(::getpid()) << 32));
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string s(6, 'x');
  for (char& c : s) c = kChars[rng() % (sizeof(kChars) - 1)];
  return s;
}

void SyncDir(int dir_fd) { ::fsync(dir_fd); }

}  // namespace

void InputFiles::AddPath(const std::string& path, const std::string& what) {
  struct stat st;
  if (!path.empty() && ::stat(path.c_str(), &st) == 0) Add(IdOf(st), what);
}

void InputFiles::Add(FileId id, const std::string& what) {
  if (Find(id) == nullptr) files_.emplace_back(id, what);
}

void InputFiles::AddAll(const InputFiles& other) {
  for (const auto& [id, what] : other.files_) Add(id, what);
  if (other.model_.has_value() && !model_.has_value()) model_ = other.model_;
}

const std::string* InputFiles::Find(FileId id) const {
  for (const auto& [file, what] : files_) {
    if (file == id) return &what;
  }
  return nullptr;
}

absl::StatusOr<InputFiles> InputFilesOf(const Model& model) {
  InputFiles inputs;
  // The identity recorded at load; a model built in memory may still name a file.
  if (model.file_ino != 0) {
    inputs.SetModel(FileId{model.file_dev, model.file_ino});
    inputs.Add(FileId{model.file_dev, model.file_ino}, "the input model");
  }
  struct stat st;
  if (!model.path.empty() && ::stat(model.path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    inputs.SetModel(IdOf(st));
    inputs.Add(IdOf(st), "the input model");
  }
  absl::Status status;
  std::optional<UniqueFd> base;
  ForEachModelTensor(const_cast<onnx::ModelProto*>(&model.proto), [&](onnx::TensorProto* t) {
    if (!status.ok() || t->data_location() != onnx::TensorProto::EXTERNAL) return;
    if (!base.has_value()) {
      absl::StatusOr<UniqueFd> dir = OpenModelDir(model.base_dir);
      if (!dir.ok()) {
        status = dir.status();
        return;
      }
      base = std::move(*dir);
    }
    absl::StatusOr<ExternalFile> file = OpenExternalData(*t, base->get());
    if (!file.ok()) {
      status = file.status();
      return;
    }
    inputs.Add(
        FileId{file->ref.dev, file->ref.ino},
        absl::StrCat("the external data file '", file->ref.location, "' of the input model"));
  });
  if (!status.ok()) return status;
  return inputs;
}

absl::StatusOr<std::shared_ptr<const OutputDir>> OutputDir::Open(const std::string& path) {
  auto dir = std::make_shared<OutputDir>();
  dir->path_ = path.empty() ? "." : path;
  dir->fd_ = UniqueFd(::open(dir->path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir->fd_) {
    if (errno == ENOENT) {
      return absl::FailedPreconditionError(
          absl::StrCat("output directory '", dir->path_, "' does not exist"));
    }
    if (errno == ENOTDIR) {
      return absl::FailedPreconditionError(
          absl::StrCat("output directory '", dir->path_, "' is not a directory"));
    }
    return absl::PermissionDeniedError(
        absl::StrCat("cannot open output directory '", dir->path_, "': ", Errno()));
  }
  struct stat st;
  if (::fstat(dir->fd_.get(), &st) != 0) {
    return absl::PermissionDeniedError(absl::StrCat("cannot stat '", dir->path_, "': ", Errno()));
  }
  dir->id_ = IdOf(st);
  return std::shared_ptr<const OutputDir>(std::move(dir));
}

absl::Status CheckDestination(const OutputDir& dir, const std::string& name,
                              const InputFiles& inputs, bool in_place) {
  if (name.empty() || name == "." || name == "..") {
    return absl::FailedPreconditionError("is a directory");
  }
  struct stat st;
  if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return absl::PermissionDeniedError(absl::StrCat("cannot stat: ", Errno()));
  }
  auto refuse_input = [&](FileId id) -> absl::Status {
    const std::string* what = inputs.Find(id);
    if (what == nullptr || (in_place && inputs.IsModel(id))) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("is ", *what, "; refusing to overwrite it",
                     inputs.IsModel(id) ? " (pass --in-place to allow)" : ""));
  };
  if (S_ISLNK(st.st_mode)) {
    struct stat target;
    if (::fstatat(dir.fd(), name.c_str(), &target, 0) == 0) {
      BCAST_RETURN_IF_ERROR(refuse_input(IdOf(target)));
      // --in-place through a link to the model replaces the link, as it always did.
      if (in_place && inputs.IsModel(IdOf(target))) return absl::OkStatus();
    }
    return absl::FailedPreconditionError("is a symlink; refusing to replace it");
  }
  if (S_ISDIR(st.st_mode)) return absl::FailedPreconditionError("is a directory");
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("is not a regular file (",
                                                      S_ISFIFO(st.st_mode)   ? "a FIFO"
                                                      : S_ISCHR(st.st_mode)  ? "a character device"
                                                      : S_ISBLK(st.st_mode)  ? "a block device"
                                                      : S_ISSOCK(st.st_mode) ? "a socket"
                                                                             : "a special file",
                                                      "); refusing to replace it"));
  }
  return refuse_input(IdOf(st));
}

PendingFile::PendingFile(std::shared_ptr<const OutputDir> dir, std::string name)
    : dir_(std::move(dir)), name_(std::move(name)) {}

PendingFile::~PendingFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty() && !committed_) ::unlinkat(dir_->fd(), temp_.c_str(), 0);
}

absl::Status PendingFile::Create() {
  // Keep the temporary's name within NAME_MAX whatever the destination's length.
  const std::string stem = name_.size() > 200 ? name_.substr(0, 200) : name_;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string temp = absl::StrCat(".", stem, ".tmp.", RandomSuffix());
    fd_ = ::openat(dir_->fd(), temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   0600);
    if (fd_ >= 0) {
      temp_ = temp;
      struct stat st;
      if (::fstat(fd_, &st) == 0) id_ = IdOf(st);
      return absl::OkStatus();
    }
    if (errno != EEXIST) break;
  }
  return absl::PermissionDeniedError(
      absl::StrCat("cannot create a temporary file in '", dir_->path(), "': ", Errno()));
}

absl::Status PendingFile::Append(const char* data, size_t size) {
  BCAST_RETURN_IF_ERROR(WriteAll(fd_, data, size));
  written_ += static_cast<int64_t>(size);
  // Starts the disk write of each few MiB now, so that Finish's fsync waits for the tail
  // only instead of the whole file (29 MB of check --json at 100k nodes: 10 ms of fsync).
  // Advisory: the call starts writeback and returns; a failure is Finish's fsync's to report.
  constexpr int64_t kWritebackStep = 4 << 20;
  if (written_ - written_back_ >= kWritebackStep) {
    ::sync_file_range(fd_, written_back_, written_ - written_back_, SYNC_FILE_RANGE_WRITE);
    written_back_ = written_;
  }
  return absl::OkStatus();
}

absl::Status PendingFile::Finish() {
  if (::fchmod(fd_, 0644) != 0 || ::fsync(fd_) != 0) {
    return absl::InternalError(absl::StrCat("cannot sync '", temp_, "': ", Errno()));
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    return absl::InternalError(absl::StrCat("cannot close '", temp_, "': ", Errno()));
  }
  return absl::OkStatus();
}

absl::Status PendingFile::Commit() {
  if (::renameat(dir_->fd(), temp_.c_str(), dir_->fd(), name_.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("cannot rename onto '", name_, "': ", Errno()));
  }
  committed_ = true;
  SyncDir(dir_->fd());
  return absl::OkStatus();
}

absl::Status PendingFile::CommitNoReplace(const std::string& name) {
  int rc = ::renameat2(dir_->fd(), temp_.c_str(), dir_->fd(), name.c_str(), RENAME_NOREPLACE);
  if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
    // A filesystem without RENAME_NOREPLACE: a hard link is just as exclusive.
    rc = ::linkat(dir_->fd(), temp_.c_str(), dir_->fd(), name.c_str(), 0);
    if (rc == 0) ::unlinkat(dir_->fd(), temp_.c_str(), 0);
  }
  if (rc != 0) {
    if (errno == EEXIST) return absl::AlreadyExistsError(name);
    return absl::InternalError(absl::StrCat("cannot rename onto '", name, "': ", Errno()));
  }
  name_ = name;
  committed_ = true;
  SyncDir(dir_->fd());
  return absl::OkStatus();
}

namespace {

// The directory `path` is written in, opened, with the file's `name`; an error (unprefixed)
// when `path` names a directory, the directory does not open, or CheckDestination refuses.
absl::StatusOr<std::shared_ptr<const OutputDir>> OpenDestination(const std::string& path,
                                                                 const InputFiles& inputs,
                                                                 bool in_place, std::string* name) {
  const fs::path p(path);
  *name = p.filename().string();
  if (name->empty() || *name == "." || *name == "..") {
    return absl::FailedPreconditionError("is a directory");
  }
  absl::StatusOr<std::shared_ptr<const OutputDir>> dir =
      OutputDir::Open(p.parent_path().empty() ? "." : p.parent_path().string());
  if (!dir.ok()) return dir.status();
  if (absl::Status s = CheckDestination(**dir, *name, inputs, in_place); !s.ok()) return s;
  return dir;
}

}  // namespace

absl::Status CheckOutputPath(const std::string& path, const InputFiles& inputs, bool in_place) {
  auto fail = [&path](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
  };
  std::string name;
  absl::StatusOr<std::shared_ptr<const OutputDir>> dir =
      OpenDestination(path, inputs, in_place, &name);
  if (!dir.ok()) return fail(dir.status());
  // The temporary is created in the directory: one we cannot write in fails the save.
  if (::faccessat((*dir)->fd(), ".", W_OK, AT_EACCESS) != 0) {
    return fail(absl::PermissionDeniedError(
        absl::StrCat("cannot write in output directory '", (*dir)->path(), "': ", Errno())));
  }
  return absl::OkStatus();
}

namespace {

// The temporary for `path`, checked as CheckDestination says, filled by `produce` and
// finished (fsynced); messages start with `path`.
absl::StatusOr<std::unique_ptr<PendingFile>> StageOne(
    const std::string& path, const InputFiles& inputs,
    absl::FunctionRef<absl::Status(StagedOutputFiles::Sink)> produce) {
  auto fail = [&path](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(path, ": cannot write: ", s.message()));
  };
  std::string name;
  absl::StatusOr<std::shared_ptr<const OutputDir>> dir =
      OpenDestination(path, inputs, /*in_place=*/false, &name);
  if (!dir.ok()) return fail(dir.status());
  auto file = std::make_unique<PendingFile>(*dir, name);
  absl::Status s = file->Create();
  if (s.ok()) {
    s = produce([&file](std::string_view piece) { return file->Append(piece.data(), piece.size()); });
  }
  if (s.ok()) s = file->Finish();
  if (!s.ok()) return fail(s);
  return file;
}

}  // namespace

absl::StatusOr<StagedOutputFiles> StagedOutputFiles::Stage(const std::vector<OutputFile>& files,
                                                           const InputFiles& inputs) {
  StagedOutputFiles staged;
  for (const OutputFile& f : files) {
    BCAST_ASSIGN_OR_RETURN(std::unique_ptr<PendingFile> file,
                           StageOne(f.path, inputs, [&f](Sink sink) { return sink(f.bytes); }));
    staged.paths_.push_back(f.path);
    staged.pending_.push_back(std::move(file));
  }
  return staged;
}

absl::StatusOr<StagedOutputFiles> StagedOutputFiles::StageStreamed(
    const std::string& path, const InputFiles& inputs,
    absl::FunctionRef<absl::Status(Sink)> produce) {
  StagedOutputFiles staged;
  BCAST_ASSIGN_OR_RETURN(std::unique_ptr<PendingFile> file, StageOne(path, inputs, produce));
  staged.paths_.push_back(path);
  staged.pending_.push_back(std::move(file));
  return staged;
}

absl::Status StagedOutputFiles::Commit() {
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (pending_[i]->committed()) continue;
    if (absl::Status s = pending_[i]->Commit(); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(paths_[i], ": cannot write: ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status WriteOutputFiles(const std::vector<OutputFile>& files, const InputFiles& inputs) {
  BCAST_ASSIGN_OR_RETURN(StagedOutputFiles staged, StagedOutputFiles::Stage(files, inputs));
  return staged.Commit();
}

absl::Status WriteOutputFile(const std::string& path, std::string_view bytes,
                             const InputFiles& inputs) {
  return WriteOutputFiles({OutputFile{path, std::string(bytes)}}, inputs);
}

}  // namespace onnx_bcast::proto
