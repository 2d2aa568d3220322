// DType metadata: support, sizes, names and type classes.
#include "runtime/dtype.h"

namespace onnx_bcast::runtime {

bool IsSupported(DType dtype) { return DTypeSize(dtype) != 0; }

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kBool:
    case DType::kInt8:
    case DType::kUInt8:
      return 1;
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kInt16:
    case DType::kUInt16:
      return 2;
    case DType::kFloat32:
    case DType::kInt32:
    case DType::kUInt32:
      return 4;
    case DType::kFloat64:
    case DType::kInt64:
    case DType::kUInt64:
      return 8;
    default:
      return 0;
  }
}

absl::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kUndefined:
      return "undefined";
    case DType::kFloat32:
      return "float32";
    case DType::kUInt8:
      return "uint8";
    case DType::kInt8:
      return "int8";
    case DType::kUInt16:
      return "uint16";
    case DType::kInt16:
      return "int16";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kString:
      return "string";
    case DType::kBool:
      return "bool";
    case DType::kFloat16:
      return "float16";
    case DType::kFloat64:
      return "float64";
    case DType::kUInt32:
      return "uint32";
    case DType::kUInt64:
      return "uint64";
    case DType::kBFloat16:
      return "bfloat16";
  }
  return "dtype(?)";
}

}  // namespace onnx_bcast::runtime
