// External tensor data: validation that keeps every location inside the model directory
// (the path traversal and link escapes of CVE-2022-25882 / CVE-2024-27318), and lazy reads.
#include "proto/external_data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace onnx_bcast::proto {
namespace {

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return "";
  return buf;
}

absl::Status Bad(const onnx::TensorProto& t, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("tensor '", t.name(), "': external data ", why));
}

}  // namespace

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

absl::StatusOr<ExternalRef> ResolveExternalData(const onnx::TensorProto& tensor,
                                                const std::string& base_dir) {
  ExternalRef ref;
  bool has_location = false, has_offset = false, has_length = false;
  for (const auto& entry : tensor.external_data()) {
    const std::string& key = entry.key();
    if (key == "location") {
      if (has_location) return Bad(tensor, "has two 'location' keys");
      has_location = true;
      ref.location = entry.value();
    } else if (key == "offset") {
      if (has_offset) return Bad(tensor, "has two 'offset' keys");
      has_offset = true;
      if (!ParseStrictDecimal(entry.value(), &ref.offset)) {
        return Bad(tensor, absl::StrCat("offset '", entry.value(),
                                        "' is not a non-negative decimal integer"));
      }
    } else if (key == "length") {
      if (has_length) return Bad(tensor, "has two 'length' keys");
      has_length = true;
      if (!ParseStrictDecimal(entry.value(), &ref.length)) {
        return Bad(tensor, absl::StrCat("length '", entry.value(),
                                        "' is not a non-negative decimal integer"));
      }
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
  const std::string base = RealPath(base_dir.empty() ? "." : base_dir);
  if (base.empty()) {
    return Bad(tensor, absl::StrCat("base directory '", base_dir, "' cannot be resolved"));
  }
  const std::string joined = absl::StrCat(base, "/", loc);
  ref.resolved = RealPath(joined);
  if (ref.resolved.empty()) {
    return absl::NotFoundError(absl::StrCat("tensor '", tensor.name(), "': external data file '",
                                            loc, "' not found: ", std::strerror(errno)));
  }
  // A symlink may stay inside the directory; whatever it resolves to must too.
  if (ref.resolved.compare(0, base.size() + 1, base + "/") != 0) {
    return Bad(tensor, absl::StrCat("location '", loc, "' resolves outside the model directory"));
  }
  struct stat st;
  if (::stat(ref.resolved.c_str(), &st) != 0) {
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
  ref.file_size = st.st_size;
  if (ref.offset > ref.file_size) {
    return Bad(tensor, absl::StrCat("offset ", ref.offset, " is past the end of '", loc, "' (",
                                    ref.file_size, " bytes)"));
  }
  if (!has_length) {
    ref.length = ref.file_size - ref.offset;
  } else if (ref.length > ref.file_size - ref.offset) {
    return Bad(tensor, absl::StrCat("offset ", ref.offset, " + length ", ref.length,
                                    " is past the end of '", loc, "' (", ref.file_size,
                                    " bytes)"));
  }
  return ref;
}

absl::StatusOr<std::string> ReadExternalData(const onnx::TensorProto& tensor,
                                             const std::string& base_dir) {
  absl::StatusOr<ExternalRef> ref = ResolveExternalData(tensor, base_dir);
  if (!ref.ok()) return ref.status();
  const int fd = ::open(ref->resolved.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot open '", ref->location, "': ", std::strerror(errno)));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != ref->file_size) {
    ::close(fd);
    return absl::DataLossError(absl::StrCat("'", ref->location, "' changed while being read"));
  }
  std::string data(static_cast<size_t>(ref->length), '\0');
  int64_t done = 0;
  while (done < ref->length) {
    const ssize_t n = ::pread(fd, data.data() + done, ref->length - done, ref->offset + done);
    if (n <= 0) {
      ::close(fd);
      return absl::DataLossError(absl::StrCat("short read from '", ref->location, "'"));
    }
    done += n;
  }
  ::close(fd);
  return data;
}

}  // namespace onnx_bcast::proto
