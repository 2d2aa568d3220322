// Raw payload access and constant broadcasting for initializers (see tensor_data.h).
#include "proto/tensor_data.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "broadcast/view.h"
#include "proto/external_data.h"
#include "proto/tensor_util.h"
#include "support/status_macros.h"

namespace onnx_bcast::proto {
namespace {

template <typename T>
void AppendValues(const T* values, int64_t n, std::string* out) {
  out->append(reinterpret_cast<const char*>(values), static_cast<size_t>(n) * sizeof(T));
}

// Strides (in elements) of a row-major tensor with `dims`.
std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

std::vector<int64_t> DimsOf(const onnx::TensorProto& t) {
  return std::vector<int64_t>(t.dims().begin(), t.dims().end());
}

onnx::TensorProto Header(const onnx::TensorProto& from, const std::string& name,
                         const std::vector<int64_t>& dims) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(from.data_type());
  if (from.has_doc_string()) t.set_doc_string(from.doc_string());
  for (int64_t d : dims) t.add_dims(d);
  return t;
}

}  // namespace

bool HasFixedWidthPayload(int32_t data_type) {
  return data_type != onnx::TensorProto::STRING && ElementBits(data_type) >= 8;
}

absl::StatusOr<std::string> ReadRawBytes(const onnx::TensorProto& tensor,
                                         const std::string& base_dir, int64_t max_bytes) {
  const int32_t type = tensor.data_type();
  if (!HasFixedWidthPayload(type)) {
    return absl::UnimplementedError(absl::StrCat("tensor '", tensor.name(), "' of data type ", type,
                                                 " has no fixed-width payload"));
  }
  const int width = ElementBits(type) / 8;
  BCAST_ASSIGN_OR_RETURN(int64_t count, CheckedElementCount(tensor, max_bytes / width + 1));
  const int64_t bytes = count * width;
  if (bytes > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("tensor '", tensor.name(), "' has ", bytes, " bytes, more than ", max_bytes));
  }
  std::string out;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    BCAST_ASSIGN_OR_RETURN(std::string data, ReadExternalData(tensor, base_dir));
    out = std::move(data);
  } else if (tensor.has_raw_data()) {
    out = tensor.raw_data();
  } else {
    using T = onnx::TensorProto;
    // The typed payload's size first: the dims alone may declare gigabytes that an 11-byte
    // file does not hold, and nothing is allocated for a mismatch.
    const bool complex = type == T::COMPLEX64 || type == T::COMPLEX128;
    const int64_t have = TypedFieldSize(tensor, type) * (complex ? width / 2 : width);
    if (have != bytes) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", tensor.name(), "' payload has ",
                                                     have, " bytes, its dims ",
                                                     DimsToString(tensor), " need ", bytes));
    }
    out.reserve(static_cast<size_t>(bytes));
    switch (type) {
      case T::FLOAT:
      case T::COMPLEX64:
        AppendValues(tensor.float_data().data(), tensor.float_data_size(), &out);
        break;
      case T::DOUBLE:
      case T::COMPLEX128:
        AppendValues(tensor.double_data().data(), tensor.double_data_size(), &out);
        break;
      case T::INT64:
        AppendValues(tensor.int64_data().data(), tensor.int64_data_size(), &out);
        break;
      case T::UINT64:
        AppendValues(tensor.uint64_data().data(), tensor.uint64_data_size(), &out);
        break;
      case T::UINT32:
        for (uint64_t v : tensor.uint64_data()) {
          const uint32_t narrow = static_cast<uint32_t>(v);
          AppendValues(&narrow, 1, &out);
        }
        break;
      default:
        // INT32, INT16, INT8, UINT8, UINT16, BOOL, FLOAT16, BFLOAT16, float8: int32_data,
        // one element each, truncated to the element width (little-endian).
        for (int32_t v : tensor.int32_data()) {
          const uint32_t bits = static_cast<uint32_t>(v);
          out.append(reinterpret_cast<const char*>(&bits), static_cast<size_t>(width));
        }
        break;
    }
  }
  if (static_cast<int64_t>(out.size()) != bytes) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", tensor.name(), "' payload has ",
                                                   out.size(), " bytes, its dims ",
                                                   DimsToString(tensor), " need ", bytes));
  }
  return out;
}

absl::StatusOr<onnx::TensorProto> BroadcastTensorTo(const onnx::TensorProto& tensor,
                                                    const std::vector<int64_t>& target,
                                                    const std::string& name,
                                                    const std::string& base_dir,
                                                    int64_t max_bytes) {
  const std::vector<int64_t> dims = DimsOf(tensor);
  const size_t rank = target.size();
  if (dims.size() > rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", tensor.name(), "' ", DimsToString(tensor),
                     " has a higher rank than [", absl::StrJoin(target, ","), "]"));
  }
  std::vector<int64_t> aligned(rank - dims.size(), 1);
  aligned.insert(aligned.end(), dims.begin(), dims.end());
  int64_t out_count = 1;
  for (size_t i = 0; i < rank; ++i) {
    if (aligned[i] != 1 && aligned[i] != target[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", tensor.name(), "' ", DimsToString(tensor), " does not broadcast to [",
          absl::StrJoin(target, ","), "] (axis ", i, ": ", aligned[i], " vs ", target[i], ")"));
    }
    out_count *= target[i];
  }
  const int width =
      HasFixedWidthPayload(tensor.data_type()) ? ElementBits(tensor.data_type()) / 8 : 0;
  if (width == 0) {
    return absl::UnimplementedError(
        absl::StrCat("tensor '", tensor.name(), "' has no fixed-width payload"));
  }
  if (out_count > max_bytes / width) {
    return absl::ResourceExhaustedError(absl::StrCat("broadcast of '", tensor.name(), "' to [",
                                                     absl::StrJoin(target, ","), "] exceeds ",
                                                     max_bytes, " bytes"));
  }
  BCAST_ASSIGN_OR_RETURN(std::string in, ReadRawBytes(tensor, base_dir, max_bytes));
  BCAST_ASSIGN_OR_RETURN(broadcast::BroadcastView view, broadcast::BroadcastView::Create(dims, target));
  std::string out(static_cast<size_t>(out_count * width), '\0');
  char* dst = out.data();
  view.ForEachOffset(0, [&](int64_t src) {
    std::memcpy(dst, in.data() + src * width, static_cast<size_t>(width));
    dst += width;
  });
  onnx::TensorProto result = Header(tensor, name, target);
  result.set_raw_data(std::move(out));
  return result;
}

absl::StatusOr<std::vector<int64_t>> UniformAxes(const onnx::TensorProto& tensor,
                                                 const std::string& base_dir, int64_t max_bytes) {
  BCAST_ASSIGN_OR_RETURN(std::string bytes, ReadRawBytes(tensor, base_dir, max_bytes));
  const std::vector<int64_t> dims = DimsOf(tensor);
  const std::vector<int64_t> strides = Strides(dims);
  const size_t width = static_cast<size_t>(ElementBits(tensor.data_type()) / 8);
  const int64_t count = static_cast<int64_t>(bytes.size() / width);
  std::vector<int64_t> axes;
  for (size_t a = 0; a < dims.size(); ++a) {
    if (dims[a] <= 1) continue;
    bool uniform = true;
    for (int64_t k = 0; k < count && uniform; ++k) {
      const int64_t i = (k / strides[a]) % dims[a];
      if (i == 0) continue;
      const int64_t base = k - i * strides[a];
      uniform = std::memcmp(bytes.data() + k * width, bytes.data() + base * width, width) == 0;
    }
    if (uniform) axes.push_back(static_cast<int64_t>(a));
  }
  return axes;
}

absl::StatusOr<onnx::TensorProto> SliceToOne(const onnx::TensorProto& tensor,
                                             const std::vector<int64_t>& axes,
                                             const std::string& base_dir, int64_t max_bytes) {
  BCAST_ASSIGN_OR_RETURN(std::string bytes, ReadRawBytes(tensor, base_dir, max_bytes));
  const std::vector<int64_t> dims = DimsOf(tensor);
  std::vector<int64_t> out_dims = dims;
  for (int64_t a : axes) out_dims[a] = 1;
  const std::vector<int64_t> in_strides = Strides(dims);
  const size_t width = static_cast<size_t>(ElementBits(tensor.data_type()) / 8);
  int64_t out_count = 1;
  for (int64_t d : out_dims) out_count *= d;
  std::string out;
  out.reserve(static_cast<size_t>(out_count) * width);
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t k = 0; k < out_count; ++k) {
    int64_t src = 0;
    for (size_t a = 0; a < dims.size(); ++a) src += index[a] * in_strides[a];
    out.append(bytes.data() + src * width, width);
    for (int64_t a = static_cast<int64_t>(dims.size()) - 1; a >= 0; --a) {
      if (++index[a] < out_dims[a]) break;
      index[a] = 0;
    }
  }
  onnx::TensorProto result = Header(tensor, tensor.name(), out_dims);
  result.set_raw_data(std::move(out));
  return result;
}

}  // namespace onnx_bcast::proto
