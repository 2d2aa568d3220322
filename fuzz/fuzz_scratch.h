// Scratch directories and the "#FILE#"-separated input format shared by the harnesses that
// write files (fuzz_test_data, fuzz_save). Every path the harness itself creates is checked to
// stay inside the scratch root: only the code under test may be tempted by hostile names.
#ifndef ONNX_BCAST_FUZZ_FUZZ_SCRATCH_H_
#define ONNX_BCAST_FUZZ_FUZZ_SCRATCH_H_

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace onnx_bcast::fuzz {

/// Separates the parts of a structured input (a text header, then file contents).
inline constexpr std::string_view kPartSeparator = "#FILE#";

inline std::vector<std::string_view> SplitParts(std::string_view data) {
  std::vector<std::string_view> parts;
  for (;;) {
    const size_t at = data.find(kPartSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(data.substr(0, at));
    data.remove_prefix(at + kPartSeparator.size());
  }
  parts.push_back(data);
  return parts;
}

/// A process-wide scratch root: /dev/shm when present (fsync is free on tmpfs, so a save
/// costs microseconds, not milliseconds), else $TMPDIR. Removed at exit.
inline const std::string& ScratchRoot() {
  static const std::string root = [] {
    std::string base = "/dev/shm";
    struct stat st;
    if (::stat(base.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || ::access(base.c_str(), W_OK)) {
      const char* tmp = std::getenv("TMPDIR");
      base = tmp != nullptr ? tmp : "/tmp";
    }
    std::string templ = base + "/onnx-bcast-fuzz.XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    static std::string keep = templ;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(keep, ec);
    });
    return templ;
  }();
  return root;
}

/// True when `rel` is a relative path without "." or ".." components or empty ones: the
/// harness creates its own files only at such names below a directory it owns.
inline bool IsPlainRelative(std::string_view rel) {
  if (rel.empty() || rel.front() == '/' || rel.size() > 200) return false;
  size_t start = 0;
  while (start <= rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string_view::npos) end = rel.size();
    const std::string_view part = rel.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    for (char c : part) {
      if (c == '\0') return false;
    }
    start = end + 1;
  }
  return true;
}

/// Creates the directories above `dir/rel` (not following symlinks is not needed: the harness
/// only ever creates below its own fresh tree, and IsPlainRelative rules out "..").
inline bool MakeParents(const std::string& dir, std::string_view rel) {
  const size_t slash = rel.rfind('/');
  if (slash == std::string_view::npos) return true;
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(dir) / std::string(rel.substr(0, slash));
  // A symlinked directory on the way would take the harness's own write outside; refuse.
  std::filesystem::path walk = dir;
  for (const auto& part : std::filesystem::path(std::string(rel.substr(0, slash)))) {
    walk /= part;
    struct stat st;
    if (::lstat(walk.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) return false;
  }
  std::filesystem::create_directories(parent, ec);
  return !ec;
}

/// Writes `bytes` to `dir/rel` (O_EXCL|O_NOFOLLOW: never through a link the input made).
inline bool WriteScratchFile(const std::string& dir, std::string_view rel, std::string_view bytes) {
  if (!IsPlainRelative(rel) || !MakeParents(dir, rel)) return false;
  const std::string path = dir + "/" + std::string(rel);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return done == bytes.size();
}

}  // namespace onnx_bcast::fuzz

#endif  // ONNX_BCAST_FUZZ_FUZZ_SCRATCH_H_
