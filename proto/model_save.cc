// Atomic, lossless saving: every file is written to a temporary in its destination directory,
// fsynced, and renamed only once all of them are complete; on failure nothing is left behind.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "proto/external_data.h"
#include "proto/model_io.h"
#include "proto/tensor_util.h"

namespace onnx_bcast::proto {
namespace {

namespace fs = std::filesystem;

std::string Errno() { return std::strerror(errno); }

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return "";
  return buf;
}

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

// A file being written under a temporary name, renamed over its destination on Commit().
class PendingFile {
 public:
  ~PendingFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!temp_.empty() && !committed_) ::unlink(temp_.c_str());
  }
  absl::Status Create(const std::string& dest) {
    dest_ = dest;
    const fs::path p(dest);
    const std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
    std::string pattern = absl::StrCat(dir, "/.", p.filename().string(), ".tmp.XXXXXX");
    fd_ = ::mkostemp(pattern.data(), O_CLOEXEC);
    if (fd_ < 0) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot create a temporary file in '", dir, "': ", Errno()));
    }
    temp_ = pattern;
    return absl::OkStatus();
  }
  int fd() const { return fd_; }
  absl::Status Append(const char* data, size_t size) {
    if (absl::Status s = WriteAll(fd_, data, size); !s.ok()) return s;
    written_ += static_cast<int64_t>(size);
    return absl::OkStatus();
  }
  int64_t written() const { return written_; }
  absl::Status Finish() {
    if (::fchmod(fd_, 0644) != 0 || ::fsync(fd_) != 0) {
      return absl::InternalError(absl::StrCat("cannot sync '", temp_, "': ", Errno()));
    }
    if (::close(fd_) != 0) {
      fd_ = -1;
      return absl::InternalError(absl::StrCat("cannot close '", temp_, "': ", Errno()));
    }
    fd_ = -1;
    return absl::OkStatus();
  }
  absl::Status Commit() {
    if (::rename(temp_.c_str(), dest_.c_str()) != 0) {
      return absl::InternalError(absl::StrCat("cannot rename onto '", dest_, "': ", Errno()));
    }
    committed_ = true;
    const fs::path p(dest_);
    const std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
    return absl::OkStatus();
  }

 private:
  std::string dest_, temp_;
  int fd_ = -1;
  int64_t written_ = 0;
  bool committed_ = false;
};

// Refuses a destination that is a symlink: writing "through" it could clobber any file.
absl::Status CheckNotSymlink(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", path, "' is a symlink; refusing to write through it"));
  }
  return absl::OkStatus();
}

bool SameInode(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// Copies `src` into `dst` inside the kernel: a reflink (FICLONE) where the filesystem shares
// extents, else copy_file_range. Weight files then never pass through this process's memory
// (peak RSS stays flat whatever their size, and no read() of a weight byte happens here).
// Falls back to read/write only where neither is supported (old kernels, some filesystems).
absl::Status CopyFileInto(const std::string& src, PendingFile* dst) {
  const int fd = ::open(src.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot read '", src, "': ", Errno()));
  absl::Status status;
  bool done = ::ioctl(dst->fd(), FICLONE, fd) == 0;
  bool copied_any = false;
  while (!done) {
    const ssize_t n = ::copy_file_range(fd, nullptr, dst->fd(), nullptr, size_t{1} << 30, 0);
    if (n > 0) {
      copied_any = true;
      continue;
    }
    if (n == 0) {
      done = true;
    } else if (errno == EINTR) {
      continue;
    } else if (copied_any || (errno != EXDEV && errno != ENOSYS && errno != EINVAL &&
                              errno != EOPNOTSUPP && errno != EBADF)) {
      status = absl::InternalError(absl::StrCat("cannot copy '", src, "': ", Errno()));
      done = true;
    } else {
      break;  // not supported here: copy through a buffer
    }
  }
  std::vector<char> buf(done ? 0 : 1 << 20);
  while (!done) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      status = absl::InternalError(absl::StrCat("cannot read '", src, "': ", Errno()));
      break;
    }
    if (n == 0) break;
    status = dst->Append(buf.data(), static_cast<size_t>(n));
    if (!status.ok()) break;
  }
  ::close(fd);
  return status;
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

// After a save with external data: removes the data files earlier saves of `out_name` wrote
// ("OUT.data", "OUT.<n>.data") that the new model does not reference. Best effort: a leftover
// file is only disk space, never a wrong weight.
void RemoveStaleDataFiles(const std::string& dir, const std::string& out_name,
                          const std::string& keep,
                          const std::map<std::string, std::string>& referenced) {
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == keep || referenced.count(name) > 0) continue;
    if (name.size() < out_name.size() + 5 || name.compare(0, out_name.size(), out_name) != 0 ||
        name.compare(name.size() - 5, 5, ".data") != 0) {
      continue;
    }
    // Between "OUT" and ".data": nothing, or "." and decimal digits.
    const std::string middle = name.substr(out_name.size(), name.size() - out_name.size() - 5);
    bool ours = middle.empty();
    if (middle.size() >= 2 && middle[0] == '.') {
      ours = middle.find_first_not_of("0123456789", 1) == std::string::npos;
    }
    struct stat st;
    if (ours && ::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      ::unlink(it->path().c_str());
    }
  }
}

absl::Status SaveImpl(const Model& model, const std::string& out_path,
                      const SaveOptions& options) {
  const fs::path out(out_path);
  const std::string out_dir = out.parent_path().empty() ? "." : out.parent_path().string();
  struct stat st;
  if (out.filename().empty()) return absl::FailedPreconditionError("is a directory");
  if (::stat(out_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("output directory '", out_dir, "' does not exist"));
  }
  if (::stat(out_path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError("is a directory");
  }
  const std::string out_dir_real = RealPath(out_dir);
  const std::string out_real =
      absl::StrCat(out_dir_real, "/", out.filename().string());
  const bool out_exists = ::lstat(out_path.c_str(), &st) == 0;
  const bool out_is_symlink = out_exists && S_ISLNK(st.st_mode);
  if (!model.path.empty() && model.path[0] != '<') {
    const std::string in_real = RealPath(model.path);
    const bool same = in_real == out_real || (out_is_symlink && RealPath(out_path) == in_real) ||
                      (out_exists && SameInode(out_path, model.path));
    if (same && !options.in_place) {
      return absl::FailedPreconditionError(
          "is the input model; refusing to overwrite it (pass --in-place to allow)");
    }
  }
  if (out_is_symlink && !options.in_place) {
    return absl::FailedPreconditionError("is a symlink; refusing to replace it");
  }

  // Everything pending, in commit order: external data files first, the model last.
  std::vector<std::unique_ptr<PendingFile>> pending;
  const onnx::ModelProto* to_write = &model.proto;
  std::unique_ptr<onnx::ModelProto> copy;

  // 1. Carry referenced external data files to the new directory.
  const std::string in_dir_real = RealPath(model.base_dir.empty() ? "." : model.base_dir);
  std::map<std::string, std::string> locations;  // location -> resolved source
  {
    absl::Status status;
    ForEachModelTensor(const_cast<onnx::ModelProto*>(&model.proto), [&](onnx::TensorProto* t) {
      if (!status.ok() || t->data_location() != onnx::TensorProto::EXTERNAL) return;
      absl::StatusOr<ExternalRef> ref = ResolveExternalData(*t, model.base_dir);
      if (!ref.ok()) {
        status = ref.status();
        return;
      }
      locations[ref->location] = ref->resolved;
    });
    if (!status.ok()) return status;
  }
  if (!locations.empty() && in_dir_real != out_dir_real) {
    for (const auto& [location, source] : locations) {
      const std::string dest = absl::StrCat(out_dir_real, "/", location);
      if (absl::Status s = CheckNotSymlink(dest); !s.ok()) return s;
      if (SameInode(dest, source)) continue;
      std::error_code ec;
      fs::create_directories(fs::path(dest).parent_path(), ec);
      if (ec) {
        return absl::PermissionDeniedError(absl::StrCat("cannot create directory for '", dest,
                                                        "': ", ec.message()));
      }
      auto file = std::make_unique<PendingFile>();
      if (absl::Status s = file->Create(dest); !s.ok()) return s;
      if (absl::Status s = CopyFileInto(source, file.get()); !s.ok()) return s;
      if (absl::Status s = file->Finish(); !s.ok()) return s;
      pending.push_back(std::move(file));
    }
  }

  // 2. Move large payloads out of the protobuf when asked, or when it would not fit in 2 GiB.
  std::string keep_data_name;
  const bool externalize =
      options.external_data || model.proto.ByteSizeLong() > static_cast<size_t>(INT_MAX);
  if (externalize) {
    copy = std::make_unique<onnx::ModelProto>(model.proto);
    to_write = copy.get();
    // The data file is committed before the model, so it must never replace a file the model
    // now at OUT may reference: a kill between the two renames would leave the old model reading
    // new bytes. It gets the first free name of OUT.data, OUT.1.data, ...; the ones left from
    // earlier saves are removed once the new model is in place.
    const std::string data_path_first =
        absl::StrCat(out_dir_real, "/", out.filename().string(), ".data");
    if (absl::Status s = CheckNotSymlink(data_path_first); !s.ok()) return s;
    std::string data_name = absl::StrCat(out.filename().string(), ".data");
    for (int i = 1; locations.count(data_name) > 0 ||
                    ::lstat(absl::StrCat(out_dir_real, "/", data_name).c_str(), &st) == 0;
         ++i) {
      data_name = absl::StrCat(out.filename().string(), ".", i, ".data");
    }
    const std::string data_path = absl::StrCat(out_dir_real, "/", data_name);
    keep_data_name = data_name;
    auto file = std::make_unique<PendingFile>();
    if (absl::Status s = file->Create(data_path); !s.ok()) return s;
    absl::Status status;
    std::string bytes;
    ForEachModelTensor(copy.get(), [&](onnx::TensorProto* t) {
      if (!status.ok() || t->data_location() == onnx::TensorProto::EXTERNAL) return;
      if (t->has_segment() || !RawBytesOf(*t, &bytes)) return;
      if (static_cast<int64_t>(bytes.size()) < options.external_threshold_bytes) return;
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
      auto* e = t->add_external_data();
      e->set_key("location");
      e->set_value(data_name);
      e = t->add_external_data();
      e->set_key("offset");
      e->set_value(absl::StrCat(offset));
      e = t->add_external_data();
      e->set_key("length");
      e->set_value(absl::StrCat(bytes.size()));
    });
    if (!status.ok()) return status;
    if (absl::Status s = file->Finish(); !s.ok()) return s;
    if (file->written() > 0) pending.push_back(std::move(file));
  }

  // 3. The model itself.
  absl::StatusOr<std::string> bytes = SerializeModel(*to_write);
  if (!bytes.ok()) return bytes.status();
  auto model_file = std::make_unique<PendingFile>();
  if (absl::Status s = model_file->Create(out_real); !s.ok()) return s;
  if (absl::Status s = model_file->Append(bytes->data(), bytes->size()); !s.ok()) return s;
  if (absl::Status s = model_file->Finish(); !s.ok()) return s;
  pending.push_back(std::move(model_file));

  for (auto& file : pending) {
    if (absl::Status s = file->Commit(); !s.ok()) return s;
  }
  if (externalize) RemoveStaleDataFiles(out_dir_real, out.filename().string(), keep_data_name,
                                        locations);
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  PendingFile file;
  absl::Status s = file.Create(path);
  if (s.ok()) s = file.Append(bytes.data(), bytes.size());
  if (s.ok()) s = file.Finish();
  if (s.ok()) s = file.Commit();
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
}

absl::StatusOr<std::string> ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

absl::Status SaveModel(const Model& model, const std::string& out_path,
                       const SaveOptions& options) {
  absl::Status s = SaveImpl(model, out_path, options);
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(out_path, ": ", s.message()));
}

}  // namespace onnx_bcast::proto
