// External tensor data: parsing `external_data` entries and opening their files confined to the
// model directory, through descriptors: every component is opened relative to the previous one
// with O_NOFOLLOW, the checks are made on the opened file, and the payload is read from that
// same descriptor, so nothing can be swapped between the check and the read.
#ifndef ONNX_BCAST_PROTO_EXTERNAL_DATA_H_
#define ONNX_BCAST_PROTO_EXTERNAL_DATA_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "proto/onnx.h"

namespace onnx_bcast::proto {

/// A validated external-data reference.
struct ExternalRef {
  std::string location;  ///< as written in the model (relative, no "..", no symlink)
  int64_t offset = 0;
  int64_t length = 0;  ///< bytes; when absent in the model, the rest of the file
  int64_t file_size = 0;
  dev_t dev = 0;  ///< identity of the file that was opened and checked
  ino_t ino = 0;
};

/// An owned file descriptor (closed on destruction; movable).
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

/// An external data file opened and validated: read the payload through `fd`, nothing else.
struct ExternalFile {
  ExternalRef ref;
  UniqueFd fd;
};

/// Parses a strict non-negative decimal (no sign, no spaces, at most 19 digits, no overflow).
bool ParseStrictDecimal(const std::string& text, int64_t* value);

/// Opens `base_dir` (the model's directory) for OpenExternalData.
absl::StatusOr<UniqueFd> OpenModelDir(const std::string& base_dir);

/// Validates `tensor`'s external_data and opens its file under `base_dir_fd`: the location is
/// relative, has no "..", and is walked one component at a time with O_NOFOLLOW (a symlink
/// anywhere is refused); the opened file must be a regular file with a single link, and
/// offset/length strict decimals within it.
absl::StatusOr<ExternalFile> OpenExternalData(const onnx::TensorProto& tensor, int base_dir_fd);

/// OpenExternalData against `base_dir`, keeping only the reference (validation at load).
absl::StatusOr<ExternalRef> ResolveExternalData(const onnx::TensorProto& tensor,
                                                const std::string& base_dir);

/// Reads an external payload from the descriptor that was validated.
absl::StatusOr<std::string> ReadExternalData(const onnx::TensorProto& tensor,
                                             const std::string& base_dir);

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_EXTERNAL_DATA_H_
