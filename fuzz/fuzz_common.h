// Shared setup of the libFuzzer harnesses: tight load limits so every input stays cheap (a
// fuzzer that spends seconds on one input finds nothing), and a base directory for external
// data that holds nothing, so no input can make a harness read the machine's files.
#ifndef ONNX_BCAST_FUZZ_FUZZ_COMMON_H_
#define ONNX_BCAST_FUZZ_FUZZ_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "proto/graph_structure.h"
#include "proto/limits.h"
#include "proto/model_io.h"

namespace onnx_bcast::fuzz {

inline proto::Limits FuzzLimits() {
  proto::Limits limits;
  limits.max_file_bytes = 1 << 20;
  limits.max_nodes = 2000;
  limits.max_tensor_elements = 1 << 20;
  limits.max_nesting = 32;
  return limits;
}

/// Elements any one runtime tensor may have in fuzz_run (inputs, initializers, outputs).
inline constexpr int64_t kRunMaxElements = 1 << 16;

/// External data locations resolve here; the directory does not exist.
inline constexpr char kNoDataDir[] = "/nonexistent/onnx-bcast-fuzz";

/// What the CLI does before any command: load, then the structural graph checks.
inline absl::StatusOr<proto::Model> LoadFuzzInput(const uint8_t* data, size_t size) {
  absl::StatusOr<proto::Model> model = proto::ParseModelBytes(
      std::string_view(reinterpret_cast<const char*>(data), size), "<fuzz>", kNoDataDir,
      FuzzLimits());
  if (model.ok()) {
    if (absl::Status s = proto::CheckGraphStructure(*model); !s.ok()) return s;
  }
  return model;
}

}  // namespace onnx_bcast::fuzz

#endif  // ONNX_BCAST_FUZZ_FUZZ_COMMON_H_
