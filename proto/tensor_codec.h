// Tensors decoded from TensorProto into plain little-endian bytes, whatever the encoding
// (typed fields, raw_data or external data), and back; plus .pb tensor files of the ONNX test
// data layout. The runtime builds its tensors from these without touching protobuf.
#ifndef ONNX_BCAST_PROTO_TENSOR_CODEC_H_
#define ONNX_BCAST_PROTO_TENSOR_CODEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/onnx.h"

namespace onnx_bcast::proto {

/// A decoded tensor: `bytes` holds the elements packed little-endian with the natural width of
/// `data_type` (bool and 8-bit types one byte, float16/bfloat16 two); STRING tensors use
/// `strings` instead.
struct RawTensor {
  std::string name;
  int32_t data_type = 0;
  std::vector<int64_t> dims;
  std::string bytes;
  std::vector<std::string> strings;

  int64_t NumElements() const;
};

/// Decodes any numeric, bool or string tensor. External data is read relative to `base_dir`
/// (and confined to it). Refuses payloads that disagree with the dims and tensors over
/// `max_elements`.
absl::StatusOr<RawTensor> DecodeTensor(const onnx::TensorProto& tensor,
                                       const std::string& base_dir,
                                       int64_t max_elements = int64_t{1} << 32);

/// Encodes as raw_data (strings as string_data).
onnx::TensorProto EncodeTensor(const RawTensor& tensor);

/// The bytes of a test-data file (input_K.pb, output_K.pb, --input FILE.pb): only a regular
/// file (a FIFO would hang, /dev/zero never ends), only when its size is at most `max_bytes`
/// (checked with fstat before anything is allocated), read through the descriptor that was
/// checked. Messages start with the path.
absl::StatusOr<std::string> ReadTestDataFile(const std::string& path,
                                             int64_t max_bytes = (int64_t{2} << 30) - 1);

/// Reads a TensorProto file (input_K.pb / output_K.pb). Messages start with the path.
absl::StatusOr<RawTensor> LoadTensorFile(const std::string& path);

/// Writes a TensorProto file atomically.
absl::Status SaveTensorFile(const RawTensor& tensor, const std::string& path);

/// True when `path` holds a TensorProto (as opposed to a SequenceProto/MapProto/OptionalProto
/// of the newer test data).
bool IsTensorFile(const std::string& path);

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_TENSOR_CODEC_H_
