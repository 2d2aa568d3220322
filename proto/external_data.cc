// External tensor data: validation that keeps every location inside the model directory
// (the path traversal and link escapes of CVE-2022-25882 / CVE-2024-27318), and lazy reads.
// Requires: nothing but the tensor and the model's directory. Guarantees: a payload is read only
// from a descriptor reached by openat() from the model directory without following any
// symlink, and checked (regular file, one link, size) on that very descriptor.
#include "proto/external_data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "support/status_macros.h"

namespace onnx_bcast::proto {
namespace {

absl::Status Bad(const onnx::TensorProto& t, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("tensor '", t.name(), "': external data ", why));
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

bool ParseStrictDecimal(const std::string& text, int64_t* value) {
  if (text.empty() || text.size() > 19) return false;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const int digit = c - '0';
    if (v > (INT64_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *value = v;
  return true;
}

// The offset or length key: at most once (`seen`), a strict non-negative decimal.
absl::Status ReadDecimalKey(const onnx::TensorProto& tensor, const std::string& key,
                            const std::string& value, bool* seen, int64_t* out) {
  if (*seen) return Bad(tensor, absl::StrCat("has two '", key, "' keys"));
  *seen = true;
  if (!ParseStrictDecimal(value, out)) {
    return Bad(tensor, absl::StrCat(key, " '", value, "' is not a non-negative decimal integer"));
  }
  return absl::OkStatus();
}

absl::StatusOr<UniqueFd> OpenModelDir(const std::string& base_dir) {
  const std::string dir = base_dir.empty() ? "." : base_dir;
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) {
    return absl::InvalidArgumentError(
        absl::StrCat("base directory '", dir, "' cannot be opened: ", std::strerror(errno)));
  }
  return fd;
}

absl::StatusOr<ExternalFile> OpenExternalData(const onnx::TensorProto& tensor, int base_dir_fd) {
  ExternalFile file;
  ExternalRef& ref = file.ref;
  bool has_location = false, has_offset = false, has_length = false;
  for (const auto& entry : tensor.external_data()) {
    const std::string& key = entry.key();
    if (key == "location") {
      if (has_location) return Bad(tensor, "has two 'location' keys");
      has_location = true;
      ref.location = entry.value();
    } else if (key == "offset") {
      BCAST_RETURN_IF_ERROR(ReadDecimalKey(tensor, key, entry.value(), &has_offset, &ref.offset));
    } else if (key == "length") {
      BCAST_RETURN_IF_ERROR(ReadDecimalKey(tensor, key, entry.value(), &has_length, &ref.length));
    }
    // "checksum" and keys from newer versions are kept untouched and not interpreted.
  }
  if (!has_location || ref.location.empty()) return Bad(tensor, "has no 'location'");
  const std::string& loc = ref.location;
  if (loc.front() == '/' || loc.front() == '\\' || (loc.size() > 1 && loc[1] == ':')) {
    return Bad(tensor, absl::StrCat("location '", loc, "' is absolute"));
  }
  if (loc.find('\0') != std::string::npos) {
    return Bad(tensor, "location contains a NUL byte");
  }
  for (absl::string_view part : absl::StrSplit(loc, absl::ByAnyChar("/\\"))) {
    if (part == "..") {
      return Bad(tensor, absl::StrCat("location '", loc, "' escapes the model directory"));
    }
  }
  std::vector<std::string> parts;
  for (absl::string_view part : absl::StrSplit(loc, '/', absl::SkipEmpty())) {
    if (part != ".") parts.emplace_back(part);
  }
  if (parts.empty()) return Bad(tensor, absl::StrCat("location '", loc, "' names no file"));

  // Walk the components ourselves: the kernel never follows a link, and what is checked below
  // is the file that will be read (no path is resolved twice).
  UniqueFd dir;
  int at = base_dir_fd;
  for (size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    // O_NONBLOCK: opening a FIFO must not wait for a writer; the fstat below refuses it.
    const int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY);
    UniqueFd next(::openat(at, parts[i].c_str(), flags));
    if (!next) {
      const int err = errno;
      struct stat st;
      if (err == ELOOP ||
          (::fstatat(at, parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))) {
        return Bad(tensor, absl::StrCat("location '", loc, "' goes through the symlink '", parts[i],
                                        "'; refusing it (a link may lead outside the "
                                        "model directory)"));
      }
      if (err == ENOENT) {
        return absl::NotFoundError(absl::StrCat("tensor '", tensor.name(),
                                                "': external data file '", loc,
                                                "' not found: ", std::strerror(err)));
      }
      if (err == ENOTDIR) {
        return Bad(tensor,
                   absl::StrCat("location '", loc, "': '", parts[i], "' is not a directory"));
      }
      return Bad(tensor, absl::StrCat("file '", loc, "' cannot be read: ", std::strerror(err)));
    }
    dir = std::move(next);
    at = dir.get();
  }
  file.fd = std::move(dir);
  struct stat st;
  if (::fstat(file.fd.get(), &st) != 0) {
    return Bad(tensor, absl::StrCat("file '", loc, "' cannot be read: ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return Bad(tensor, absl::StrCat("location '", loc, "' is not a regular file"));
  }
  if (st.st_nlink > 1) {
    // A hard link may share its inode with a file outside the directory; nothing tells.
    return Bad(tensor, absl::StrCat("location '", loc,
                                    "' is a hard link (may lead outside the model directory)"));
  }
  ref.dev = st.st_dev;
  ref.ino = st.st_ino;
  ref.file_size = st.st_size;
  if (ref.offset > ref.file_size) {
    return Bad(tensor, absl::StrCat("offset ", ref.offset, " is past the end of '", loc, "' (",
                                    ref.file_size, " bytes)"));
  }
  if (!has_length) {
    ref.length = ref.file_size - ref.offset;
  } else if (ref.length > ref.file_size - ref.offset) {
    return Bad(tensor, absl::StrCat("offset ", ref.offset, " + length ", ref.length,
                                    " is past the end of '", loc, "' (", ref.file_size, " bytes)"));
  }
  return file;
}

absl::StatusOr<ExternalRef> ResolveExternalData(const onnx::TensorProto& tensor,
                                                const std::string& base_dir) {
  absl::StatusOr<UniqueFd> dir = OpenModelDir(base_dir);
  if (!dir.ok()) return Bad(tensor, std::string(dir.status().message()));
  BCAST_ASSIGN_OR_RETURN(ExternalFile file, OpenExternalData(tensor, dir->get()));
  return file.ref;
}

absl::StatusOr<std::string> ReadExternalData(const onnx::TensorProto& tensor,
                                             const std::string& base_dir) {
  absl::StatusOr<UniqueFd> dir = OpenModelDir(base_dir);
  if (!dir.ok()) return Bad(tensor, std::string(dir.status().message()));
  BCAST_ASSIGN_OR_RETURN(ExternalFile file, OpenExternalData(tensor, dir->get()));
  const ExternalRef& ref = file.ref;
  std::string data(static_cast<size_t>(ref.length), '\0');
  int64_t done = 0;
  while (done < ref.length) {
    const ssize_t n =
        ::pread(file.fd.get(), data.data() + done, ref.length - done, ref.offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::DataLossError(absl::StrCat("tensor '", tensor.name(), "': short read from '",
                                              ref.location, "' (file changed while read?)"));
    }
    done += n;
  }
  return data;
}

}  // namespace onnx_bcast::proto
