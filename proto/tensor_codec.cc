// Tensors decoded from and encoded to TensorProto, and .pb tensor files.
#include "proto/tensor_codec.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "proto/model_io.h"
#include "proto/tensor_data.h"
#include "proto/tensor_util.h"
#include "support/status_macros.h"

namespace onnx_bcast::proto {

int64_t RawTensor::NumElements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

absl::StatusOr<RawTensor> DecodeTensor(const onnx::TensorProto& tensor, const std::string& base_dir,
                                       int64_t max_elements) {
  RawTensor out;
  out.name = tensor.name();
  out.data_type = tensor.data_type();
  BCAST_ASSIGN_OR_RETURN(int64_t count, CheckedElementCount(tensor, max_elements));
  out.dims.assign(tensor.dims().begin(), tensor.dims().end());
  if (tensor.data_type() == onnx::TensorProto::STRING) {
    if (tensor.string_data_size() != count) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", tensor.name(), "' has ",
                                                     tensor.string_data_size(),
                                                     " strings, dims need ", count));
    }
    out.strings.assign(tensor.string_data().begin(), tensor.string_data().end());
    return out;
  }
  const int bits = ElementBits(tensor.data_type());
  if (bits < 8) {
    return absl::UnimplementedError(absl::StrCat("tensor '", tensor.name(), "' has data type ",
                                                 tensor.data_type(), ", not supported"));
  }
  BCAST_ASSIGN_OR_RETURN(
      std::string bytes,
      ReadRawBytes(tensor, base_dir, RawByteSize(tensor.data_type(), max_elements)));
  out.bytes = std::move(bytes);
  return out;
}

onnx::TensorProto EncodeTensor(const RawTensor& tensor) {
  onnx::TensorProto t;
  t.set_name(tensor.name);
  t.set_data_type(tensor.data_type);
  for (int64_t d : tensor.dims) t.add_dims(d);
  if (tensor.data_type == onnx::TensorProto::STRING) {
    for (const std::string& s : tensor.strings) t.add_string_data(s);
  } else {
    t.set_raw_data(tensor.bytes);
  }
  return t;
}

absl::StatusOr<std::string> ReadTestDataFile(const std::string& path, int64_t max_bytes) {
  auto error = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", what));
  };
  // O_NONBLOCK: opening a FIFO for reading does not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return error(absl::StrCat("cannot open: ", std::strerror(errno)));
  }
  absl::Cleanup closer = [fd] { ::close(fd); };
  struct stat st;
  if (::fstat(fd, &st) != 0) return error(std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return error("is a directory, not a tensor file");
  if (!S_ISREG(st.st_mode)) return error("is not a regular file (FIFO, device or socket)");
  if (st.st_size > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": file is ", st.st_size, " bytes, more than the limit of ", max_bytes));
  }
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return error(absl::StrCat("cannot read: ", std::strerror(errno)));
    if (n == 0) return error("the file shrank while it was read");
    done += static_cast<size_t>(n);
  }
  return bytes;
}

bool IsTensorFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadTestDataFile(path);
  onnx::TensorProto t;
  // Sequence/Map/Optional protos of the newer test data parse as TensorProtos with unknown
  // fields only; a real tensor has a data type.
  return bytes.ok() && t.ParseFromString(*bytes) && t.data_type() != 0;
}

absl::StatusOr<RawTensor> LoadTensorFile(const std::string& path) {
  BCAST_ASSIGN_OR_RETURN(std::string bytes, ReadTestDataFile(path));
  onnx::TensorProto t;
  if (!t.ParseFromString(bytes) || t.data_type() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a TensorProto"));
  }
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  absl::StatusOr<RawTensor> decoded = DecodeTensor(t, dir);
  if (!decoded.ok()) {
    return absl::Status(decoded.status().code(),
                        absl::StrCat(path, ": ", decoded.status().message()));
  }
  return decoded;
}

absl::Status SaveTensorFile(const RawTensor& tensor, const std::string& path) {
  return WriteFileAtomically(path, EncodeTensor(tensor).SerializeAsString());
}

}  // namespace onnx_bcast::proto
