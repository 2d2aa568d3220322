// Atomic, lossless saving: every file is written to a temporary in its destination directory,
// fsynced, and renamed only once all of them are complete; on failure nothing is left behind.
// Requires: a loaded (validated) model. Guarantees: the only names written are the output's
// and "OUT.data" / "OUT.<n>.data" beside it (see proto/safe_write.h for how); the model's
// `location` fields are data we rewrite, never paths we write to.
#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "proto/external_data.h"
#include "proto/model_io.h"
#include "proto/safe_write.h"
#include "proto/tensor_util.h"
#include "support/status_macros.h"

namespace onnx_bcast::proto {
namespace {

namespace fs = std::filesystem;

std::string Errno() { return std::strerror(errno); }

// Copies [offset, end) of `src_fd` to the same offsets of `dst_fd` inside the kernel
// (copy_file_range), falling back to pread/pwrite where that is not supported.
absl::Status CopyRange(int src_fd, int dst_fd, off_t offset, off_t end, const std::string& label,
                       std::vector<char>* buf) {
  bool kernel = buf->empty();
  while (offset < end) {
    const size_t want = static_cast<size_t>(std::min<off_t>(end - offset, off_t{1} << 30));
    if (kernel) {
      loff_t in = offset, out = offset;
      const ssize_t n = ::copy_file_range(src_fd, &in, dst_fd, &out, want, 0);
      if (n > 0) {
        offset += n;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP ||
                    errno == EBADF)) {
        kernel = false;  // not supported here: copy through a buffer from now on
        buf->resize(1 << 20);
        continue;
      }
      if (n == 0) return absl::InternalError(absl::StrCat("'", label, "' shrank while copied"));
      return absl::InternalError(absl::StrCat("cannot copy '", label, "': ", Errno()));
    }
    const ssize_t n = ::pread(src_fd, buf->data(), std::min(want, buf->size()), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::InternalError(absl::StrCat("cannot read '", label, "': ", Errno()));
    if (n == 0) return absl::InternalError(absl::StrCat("'", label, "' shrank while copied"));
    for (ssize_t done = 0; done < n;) {
      const ssize_t w =
          ::pwrite(dst_fd, buf->data() + done, static_cast<size_t>(n - done), offset + done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)
        return absl::InternalError(
            absl::StrCat("cannot write the copy of '", label, "': ", Errno()));
      done += w;
    }
    offset += n;
  }
  return absl::OkStatus();
}

// Copies the whole file behind `src_fd` (a descriptor validated by OpenExternalData) into
// `dst`: a reflink (FICLONE) where the filesystem shares extents, else only the data extents
// (SEEK_DATA/SEEK_HOLE) with copy_file_range, and the file's size set with ftruncate. Holes
// stay holes: an 8 GiB sparse weight file costs no disk and no time (copy_file_range alone
// writes the zeros of a hole on ext4). Weight files never pass through this process's memory
// unless the kernel copy is unsupported.
absl::Status CopyFileInto(int src_fd, const std::string& label, PendingFile* dst) {
  if (::ioctl(dst->fd(), FICLONE, src_fd) == 0) return absl::OkStatus();
  struct stat st;
  if (::fstat(src_fd, &st) != 0) {
    return absl::InternalError(absl::StrCat("cannot stat '", label, "': ", Errno()));
  }
  const off_t size = st.st_size;
  std::vector<char> buf;  // empty while the kernel copies
  for (off_t offset = 0; offset < size;) {
    off_t data = ::lseek(src_fd, offset, SEEK_DATA);
    if (data < 0 && errno == ENXIO) break;  // only a hole is left
    off_t hole = data < 0 ? size : ::lseek(src_fd, data, SEEK_HOLE);
    if (data < 0) data = offset;  // no SEEK_DATA here: all of it is data
    if (hole < 0 || hole > size) hole = size;
    if (data >= size) break;
    if (absl::Status s = CopyRange(src_fd, dst->fd(), data, hole, label, &buf); !s.ok()) {
      return s;
    }
    offset = hole;
  }
  if (::ftruncate(dst->fd(), size) != 0) {
    return absl::InternalError(absl::StrCat("cannot size the copy of '", label, "': ", Errno()));
  }
  return absl::OkStatus();
}

// Little-endian raw bytes of a tensor held in typed fields; false for types kept inline.
template <typename Src, typename Dst>
void PackAs(const Src& values, std::string* out) {
  out->resize(values.size() * sizeof(Dst));
  char* p = out->data();
  for (const auto& v : values) {
    const Dst d = static_cast<Dst>(v);
    std::memcpy(p, &d, sizeof(Dst));
    p += sizeof(Dst);
  }
}

bool RawBytesOf(const onnx::TensorProto& t, std::string* out) {
  if (t.has_raw_data()) {
    *out = t.raw_data();
    return true;
  }
  using T = onnx::TensorProto;
  switch (t.data_type()) {
    case T::FLOAT:
      PackAs<decltype(t.float_data()), float>(t.float_data(), out);
      return true;
    case T::DOUBLE:
      PackAs<decltype(t.double_data()), double>(t.double_data(), out);
      return true;
    case T::INT64:
      PackAs<decltype(t.int64_data()), int64_t>(t.int64_data(), out);
      return true;
    case T::UINT64:
      PackAs<decltype(t.uint64_data()), uint64_t>(t.uint64_data(), out);
      return true;
    case T::UINT32:
      PackAs<decltype(t.uint64_data()), uint32_t>(t.uint64_data(), out);
      return true;
    case T::INT32:
      PackAs<decltype(t.int32_data()), int32_t>(t.int32_data(), out);
      return true;
    case T::INT16:
    case T::UINT16:
    case T::FLOAT16:
    case T::BFLOAT16:
      PackAs<decltype(t.int32_data()), uint16_t>(t.int32_data(), out);
      return true;
    case T::INT8:
    case T::UINT8:
    case T::BOOL:
      PackAs<decltype(t.int32_data()), uint8_t>(t.int32_data(), out);
      return true;
    default:
      return false;
  }
}

void ClearPayload(onnx::TensorProto* t) {
  t->clear_raw_data();
  t->clear_float_data();
  t->clear_double_data();
  t->clear_int32_data();
  t->clear_int64_data();
  t->clear_uint64_data();
}

// The `n`th name a data file of a save to `out_name` may take: "OUT.data", then "OUT.<n>.data".
std::string DataFileName(const std::string& out_name, int n) {
  return n == 0 ? absl::StrCat(out_name, ".data") : absl::StrCat(out_name, ".", n, ".data");
}

// True for the names data files of a save to `out_name` get (DataFileName).
bool IsDataFileName(const std::string& name, const std::string& out_name) {
  if (name.size() < out_name.size() + 5 || name.compare(0, out_name.size(), out_name) != 0 ||
      name.compare(name.size() - 5, 5, ".data") != 0) {
    return false;
  }
  const std::string middle = name.substr(out_name.size(), name.size() - out_name.size() - 5);
  return middle.empty() || (middle.size() >= 2 && middle[0] == '.' &&
                            middle.find_first_not_of("0123456789", 1) == std::string::npos);
}

// After a save with data files: removes the data files earlier saves of `out_name` wrote that
// the new model does not reference. Never one of `keep` (the new data files, and every file the
// input model reads, whatever name it has). Best effort: a leftover is only disk space.
void RemoveStaleDataFiles(const OutputDir& dir, const std::string& out_name,
                          const std::vector<FileId>& keep, const InputFiles& inputs) {
  const int fd = ::openat(dir.fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  DIR* listing = ::fdopendir(fd);
  if (listing == nullptr) {
    ::close(fd);
    return;
  }
  std::vector<std::string> stale;
  while (const struct dirent* entry = ::readdir(listing)) {
    const std::string name = entry->d_name;
    if (!IsDataFileName(name, out_name)) continue;
    struct stat st;
    if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
      continue;
    }
    const FileId id{st.st_dev, st.st_ino};
    if (std::find(keep.begin(), keep.end(), id) != keep.end() || inputs.Find(id) != nullptr) {
      continue;
    }
    stale.push_back(name);
  }
  ::closedir(listing);
  for (const std::string& name : stale) ::unlinkat(dir.fd(), name.c_str(), 0);
}

// Sets the `location` entry of an external tensor (adding it when missing).
void SetLocation(onnx::TensorProto* t, const std::string& location) {
  for (auto& entry : *t->mutable_external_data()) {
    if (entry.key() == "location") {
      entry.set_value(location);
      return;
    }
  }
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value(location);
}

// Holds an exclusive flock on the output directory while data files and the model are
// committed and stale data files removed, so that concurrent saves to the same directory do
// not remove each other's data before their model is in place.
class DirLock {
 public:
  explicit DirLock(const OutputDir& dir) {
    fd_ = ::openat(dir.fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ >= 0) {
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
    }
  }
  ~DirLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }

 private:
  int fd_ = -1;
};

// A data file being written, and the tensors whose `location` will name it.
struct DataFile {
  std::unique_ptr<PendingFile> file;
  std::vector<onnx::TensorProto*> tensors;
};

// Feeds protobuf's serializer straight into a pending file, so a save holds no second copy
// of the model's bytes (64 MiB at a million nodes).
class PendingFileSink : public google::protobuf::io::CopyingOutputStream {
 public:
  explicit PendingFileSink(PendingFile* file) : file_(file) {}
  bool Write(const void* buffer, int size) override {
    if (status_.ok()) status_ = file_->Append(static_cast<const char*>(buffer), size);
    return status_.ok();
  }
  const absl::Status& status() const { return status_; }

 private:
  PendingFile* file_;
  absl::Status status_;
};

// Serializes `model` (SerializeModelTo) into `file`; a failed write is reported as itself.
absl::Status SerializeInto(const onnx::ModelProto& model, PendingFile* file) {
  PendingFileSink sink(file);
  google::protobuf::io::CopyingOutputStreamAdaptor stream(&sink, 1 << 20);
  absl::Status s = SerializeModelTo(model, &stream);
  if (s.ok() && !stream.Flush()) s = absl::InternalError("protobuf serialization failed");
  return sink.status().ok() ? s : sink.status();
}

// Refuses to write OUT.data through a symlink an attacker may have planted beside the output.
absl::Status RefuseSymlinkedData(const OutputDir& dir, const std::string& data_name) {
  struct stat st;
  if (::fstatat(dir.fd(), data_name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISLNK(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "'", dir.path(), "/", data_name, "' is a symlink; refusing to write through it"));
  }
  return absl::OkStatus();
}

// 1. Another directory: the model's external data files are copied into files we name
// after the output, one per source file (offsets stay valid), and the saved model's
// `location` fields are rewritten to them. No location is ever used as a path to write.
absl::Status CopyExternalData(const std::shared_ptr<const OutputDir>& dir,
                              const std::string& data_name, int base_fd, onnx::ModelProto* copy,
                              InputFiles* inputs, std::vector<DataFile>* data_files) {
  BCAST_RETURN_IF_ERROR(RefuseSymlinkedData(*dir, data_name));
  std::vector<std::pair<FileId, size_t>> index;
  absl::Status status;
  ForEachModelTensor(copy, [&](onnx::TensorProto* t) {
    if (!status.ok() || t->data_location() != onnx::TensorProto::EXTERNAL) return;
    absl::StatusOr<ExternalFile> source = OpenExternalData(*t, base_fd);
    if (!source.ok()) {
      status = source.status();
      return;
    }
    const FileId id{source->ref.dev, source->ref.ino};
    for (const auto& [known, i] : index) {
      if (known == id) {
        (*data_files)[i].tensors.push_back(t);
        return;
      }
    }
    inputs->Add(
        id, absl::StrCat("the external data file '", source->ref.location, "' of the input model"));
    DataFile data;
    data.file = std::make_unique<PendingFile>(dir, data_name);
    data.tensors.push_back(t);
    status = data.file->Create();
    if (status.ok()) status = CopyFileInto(source->fd.get(), source->ref.location, data.file.get());
    if (status.ok()) status = data.file->Finish();
    index.emplace_back(id, data_files->size());
    data_files->push_back(std::move(data));
  });
  return status;
}

// 2. Moves payloads of at least `threshold_bytes` out of the protobuf into one new data file
// (asked for, or the model would not fit in 2 GiB).
absl::Status ExternalizePayloads(const std::shared_ptr<const OutputDir>& dir,
                                 const std::string& data_name, int64_t threshold_bytes,
                                 onnx::ModelProto* copy, std::vector<DataFile>* data_files) {
  BCAST_RETURN_IF_ERROR(RefuseSymlinkedData(*dir, data_name));
  DataFile data;
  data.file = std::make_unique<PendingFile>(dir, data_name);
  PendingFile* file = data.file.get();
  BCAST_RETURN_IF_ERROR(file->Create());
  absl::Status status;
  std::string bytes;
  ForEachModelTensor(copy, [&](onnx::TensorProto* t) {
    if (!status.ok() || t->data_location() == onnx::TensorProto::EXTERNAL) return;
    if (t->has_segment() || !RawBytesOf(*t, &bytes)) return;
    if (static_cast<int64_t>(bytes.size()) < threshold_bytes) return;
    // 64-byte alignment lets readers map payloads straight into vector loads.
    static const char kZeros[64] = {};
    const int64_t pad = (64 - file->written() % 64) % 64;
    if (pad > 0) status = file->Append(kZeros, static_cast<size_t>(pad));
    if (!status.ok()) return;
    const int64_t offset = file->written();
    status = file->Append(bytes.data(), bytes.size());
    if (!status.ok()) return;
    ClearPayload(t);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    t->clear_external_data();
    SetLocation(t, "");  // named once the file has its final name
    auto* e = t->add_external_data();
    e->set_key("offset");
    e->set_value(absl::StrCat(offset));
    e = t->add_external_data();
    e->set_key("length");
    e->set_value(absl::StrCat(bytes.size()));
    data.tensors.push_back(t);
  });
  if (!status.ok()) return status;
  BCAST_RETURN_IF_ERROR(file->Finish());
  if (!data.tensors.empty()) data_files->push_back(std::move(data));
  return absl::OkStatus();
}

// 3. Commit. Each data file takes the first free name of OUT.data, OUT.1.data, ... and
// never replaces a file (RENAME_NOREPLACE): not the one the model now at OUT may reference
// (a kill between the renames would leave the old model reading new bytes), not a file a
// concurrent save just made, not an input. Then the model, which names them, is serialized
// and renamed into place last.
absl::Status CommitSave(const std::shared_ptr<const OutputDir>& dir, const std::string& name,
                        const onnx::ModelProto& to_write, const InputFiles& inputs,
                        std::vector<DataFile>* data_files) {
  std::optional<DirLock> lock;
  if (!data_files->empty()) lock.emplace(*dir);
  std::vector<FileId> committed_ids;
  std::vector<std::string> committed_names;
  auto undo = [&](const absl::Status& s) {
    // Our own committed data files, by name and inode, so a failure leaves no trace.
    for (size_t i = 0; i < committed_names.size(); ++i) {
      struct stat st;
      if (::fstatat(dir->fd(), committed_names[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          FileId{st.st_dev, st.st_ino} == committed_ids[i]) {
        ::unlinkat(dir->fd(), committed_names[i].c_str(), 0);
      }
    }
    return s;
  };
  int next = 0;
  for (DataFile& data : *data_files) {
    for (;; ++next) {
      absl::Status s = data.file->CommitNoReplace(DataFileName(name, next));
      if (s.ok()) break;
      if (!absl::IsAlreadyExists(s) || next > 100000) return undo(s);
    }
    ++next;
    committed_ids.push_back(data.file->id());
    committed_names.push_back(data.file->name());
    for (onnx::TensorProto* t : data.tensors) SetLocation(t, data.file->name());
  }
  PendingFile model_file(dir, name);
  absl::Status s = model_file.Create();
  if (s.ok()) s = SerializeInto(to_write, &model_file);
  if (s.ok()) s = model_file.Finish();
  if (s.ok()) s = model_file.Commit();
  if (!s.ok()) return undo(s);
  if (!data_files->empty()) RemoveStaleDataFiles(*dir, name, committed_ids, inputs);
  return absl::OkStatus();
}

absl::Status SaveImpl(const Model& model, const std::string& out_path, const SaveOptions& options) {
  const fs::path out(out_path);
  const std::string name = out.filename().string();
  if (name.empty() || name == "." || name == "..") {
    return absl::FailedPreconditionError("is a directory");
  }
  BCAST_ASSIGN_OR_RETURN(
      std::shared_ptr<const OutputDir> opened,
      OutputDir::Open(out.parent_path().empty() ? "." : out.parent_path().string()));
  const std::shared_ptr<const OutputDir> dir = std::move(opened);

  // What the model reads: the output must be none of it. Collected while opening every
  // external data file once, through the validated descriptors the copies are made from.
  BCAST_ASSIGN_OR_RETURN(InputFiles inputs_or, InputFilesOf(model));
  InputFiles& inputs = inputs_or;
  if (options.inputs != nullptr) inputs.AddAll(*options.inputs);
  if (absl::Status s = CheckDestination(*dir, name, inputs, options.in_place); !s.ok()) {
    return s;
  }

  bool has_external = false;
  ForEachModelTensor(const_cast<onnx::ModelProto*>(&model.proto), [&](onnx::TensorProto* t) {
    has_external = has_external || t->data_location() == onnx::TensorProto::EXTERNAL;
  });
  std::optional<UniqueFd> base;
  bool same_dir = false;
  if (has_external) {
    BCAST_ASSIGN_OR_RETURN(UniqueFd b, OpenModelDir(model.base_dir));
    base = std::move(b);
    struct stat st;
    same_dir = ::fstat(base->get(), &st) == 0 && FileId{st.st_dev, st.st_ino} == dir->id();
  }
  const bool copy_external = has_external && !same_dir;
  const bool externalize =
      options.external_data || model.proto.ByteSizeLong() > static_cast<size_t>(INT_MAX);

  const onnx::ModelProto* to_write = &model.proto;
  std::unique_ptr<onnx::ModelProto> copy;
  if (copy_external || externalize) {
    copy = std::make_unique<onnx::ModelProto>(model.proto);
    to_write = copy.get();
  }
  std::vector<DataFile> data_files;  // in commit order
  // Data files are written under the first name and take their final one at commit.
  const std::string data_name = DataFileName(name, 0);
  if (copy_external) {
    BCAST_RETURN_IF_ERROR(
        CopyExternalData(dir, data_name, base->get(), copy.get(), &inputs, &data_files));
  }
  if (externalize) {
    BCAST_RETURN_IF_ERROR(ExternalizePayloads(dir, data_name, options.external_threshold_bytes,
                                              copy.get(), &data_files));
  }
  return CommitSave(dir, name, *to_write, inputs, &data_files);
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  return WriteOutputFile(path, bytes, InputFiles());
}

absl::StatusOr<std::string> ReadFileBytes(const std::string& path, int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer before fstat can refuse it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  std::string out;
  struct stat st;
  absl::Status status;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  } else if (st.st_size > max_bytes) {
    status = absl::InvalidArgumentError(
        absl::StrCat(path, ": ", st.st_size, " bytes, more than the ", max_bytes, " accepted"));
  } else {
    out.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // the file shrank, or an error: what was read is all there is
      done += static_cast<size_t>(n);
    }
    if (done < out.size()) {
      status = absl::InvalidArgumentError(
          absl::StrCat(path, ": cannot read: it changed or ", std::strerror(errno)));
    }
  }
  ::close(fd);
  if (!status.ok()) return status;
  return out;
}

absl::Status SaveModel(const Model& model, const std::string& out_path,
                       const SaveOptions& options) {
  absl::Status s = SaveImpl(model, out_path, options);
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(out_path, ": ", s.message()));
}

}  // namespace onnx_bcast::proto
