// libFuzzer harness: test-data loading (input_K.pb / output_K.pb: TensorProto, SequenceProto,
// OptionalProto, external data beside them) as `run` and `verify` read it, one file or a whole
// test_data_set directory, in a fresh scratch directory per input.
//
// Input: parts separated by "#FILE#" (fuzz_scratch.h). Part 0 is a header of raw bytes:
//   [0] bits 0-2: declared kind of input 0, bits 3-5: of input 1
//       (0 no type, 1 tensor, 2 sequence of tensors, 3 optional tensor, 4 optional sequence)
//   [1] element type of both declarations
//   [2] bit 0: directory form (LoadTestDataSet) instead of one file (LoadValue);
//       bits 1-2: one entry made special (1 a directory, 2 a FIFO, 3 a symlink to /dev/zero)
//   [3] which entry is special (index into the names below)
// Then the files: input_0.pb, input_1.pb, output_0.pb, output_1.pb, w.bin (single-file form:
// input_0.pb, w.bin). An empty part writes no file.
// A value that loads must round-trip: saved as a test-data file and loaded again, it is the
// same value.
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include "fuzz/fuzz_scratch.h"
#include "proto/model_io.h"
#include "proto/sequence_codec.h"
#include "proto/tensor_codec.h"
#include "runtime/exec/test_data.h"

namespace {

namespace fs = std::filesystem;
namespace proto = onnx_bcast::proto;
namespace runtime = onnx_bcast::runtime;

void SetType(int kind, int32_t elem, onnx::TypeProto* type) {
  switch (kind % 5) {
    case 1:
      type->mutable_tensor_type()->set_elem_type(elem);
      break;
    case 2:
      type->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
          elem);
      break;
    case 3:
      type->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
          elem);
      break;
    case 4:
      type->mutable_optional_type()
          ->mutable_elem_type()
          ->mutable_sequence_type()
          ->mutable_elem_type()
          ->mutable_tensor_type()
          ->set_elem_type(elem);
      break;
    default:
      break;
  }
}

bool SameRaw(const proto::RawValue& a, const proto::RawValue& b) {
  auto same_tensor = [](const proto::RawTensor& x, const proto::RawTensor& y) {
    return x.data_type == y.data_type && x.dims == y.dims && x.bytes == y.bytes &&
           x.strings == y.strings;
  };
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case proto::RawValue::Kind::kTensor:
      return same_tensor(a.tensor, b.tensor);
    case proto::RawValue::Kind::kSequence:
      if (a.sequence.size() != b.sequence.size()) return false;
      for (size_t i = 0; i < a.sequence.size(); ++i) {
        if (!same_tensor(a.sequence[i], b.sequence[i])) return false;
      }
      return true;
    case proto::RawValue::Kind::kEmptyOptional:
      return true;
  }
  return false;
}

// A loaded value saved as a test-data file and read back is the same value.
void CheckRoundTrip(const runtime::Value& value, const onnx::TypeProto* type, const std::string& dir) {
  absl::StatusOr<proto::RawValue> raw = runtime::RawFromValue(value, "v", type);
  if (!raw.ok()) return;  // e.g. a kind the file format cannot hold
  const std::string path = dir + "/roundtrip.pb";
  if (!proto::SaveValueFile(*raw, path).ok()) return;
  absl::StatusOr<runtime::Value> again = runtime::LoadValue(path, type);
  if (!again.ok()) {
    std::fprintf(stderr, "saved value does not load again: %s\n",
                 std::string(again.status().message()).c_str());
    std::abort();
  }
  absl::StatusOr<proto::RawValue> raw_again = runtime::RawFromValue(*again, "v", type);
  if (!raw_again.ok() || !SameRaw(*raw, *raw_again)) {
    std::fprintf(stderr, "value changed in a save/load round trip\n");
    std::abort();
  }
  fs::remove(path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fz = onnx_bcast::fuzz;
  const std::vector<std::string_view> parts =
      fz::SplitParts(std::string_view(reinterpret_cast<const char*>(data), size));
  std::string header(parts[0]);
  header.resize(4, '\0');
  const int kind0 = static_cast<uint8_t>(header[0]) & 7;
  const int kind1 = (static_cast<uint8_t>(header[0]) >> 3) & 7;
  const int32_t elem = static_cast<uint8_t>(header[1]) % 24;
  const bool dir_form = header[2] & 1;
  const int special = (static_cast<uint8_t>(header[2]) >> 1) & 3;
  const size_t special_at = static_cast<uint8_t>(header[3]);

  static int counter = 0;
  const std::string dir = fz::ScratchRoot() + "/t" + std::to_string(counter++);
  std::error_code ec;
  fs::create_directory(dir, ec);
  if (ec) std::abort();

  const std::vector<std::string> names =
      dir_form ? std::vector<std::string>{"input_0.pb", "input_1.pb", "output_0.pb",
                                          "output_1.pb", "w.bin"}
               : std::vector<std::string>{"input_0.pb", "w.bin"};
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string path = dir + "/" + names[i];
    if (special != 0 && i == special_at % names.size()) {
      if (special == 1) fs::create_directory(path, ec);
      if (special == 2) ::mkfifo(path.c_str(), 0644);
      if (special == 3) fs::create_symlink("/dev/zero", path, ec);
      continue;
    }
    if (i + 1 < parts.size() && !parts[i + 1].empty()) {
      fz::WriteScratchFile(dir, names[i], parts[i + 1]);
    }
  }

  onnx::TypeProto type0, type1;
  SetType(kind0, elem, &type0);
  SetType(kind1, elem, &type1);
  if (dir_form) {
    proto::Model model;
    onnx::GraphProto* graph = model.proto.mutable_graph();
    for (const auto& [name, type] : {std::pair{"x0", &type0}, std::pair{"x1", &type1}}) {
      onnx::ValueInfoProto* in = graph->add_input();
      in->set_name(name);
      *in->mutable_type() = *type;
    }
    for (const auto& [name, type] : {std::pair{"y0", &type0}, std::pair{"y1", &type1}}) {
      onnx::ValueInfoProto* out = graph->add_output();
      out->set_name(name);
      *out->mutable_type() = *type;
    }
    absl::StatusOr<runtime::TestDataSet> set = runtime::LoadTestDataSet(model, dir);
    if (set.ok()) {
      for (size_t k = 0; k < set->feeds.size(); ++k) {
        CheckRoundTrip(set->feeds[k].second, k == 0 ? &type0 : &type1, dir);
      }
      for (size_t k = 0; k < set->expected.size(); ++k) {
        CheckRoundTrip(set->expected[k], k == 0 ? &type0 : &type1, dir);
      }
    }
  } else {
    const std::string path = dir + "/input_0.pb";
    (void)proto::ReadTestDataFile(path, 1 << 12);
    if (proto::IsTensorFile(path)) (void)proto::LoadTensorFile(path);
    const onnx::TypeProto* type = kind0 == 0 ? nullptr : &type0;
    absl::StatusOr<runtime::Value> value = runtime::LoadValue(path, type);
    if (value.ok()) CheckRoundTrip(*value, type, dir);
  }
  fs::remove_all(dir, ec);
  return 0;
}
