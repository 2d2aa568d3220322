// The rewrite-pass interface: a pass transforms a loaded model in place and reports what it did.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/model_io.h"

namespace onnx_bcast::passes {

/// What one pass did, for `opt`'s per-pass counts and --report.
struct PassStats {
  int64_t nodes_inserted = 0;
  int64_t nodes_removed = 0;
  int64_t initializers_rewritten = 0;
  std::vector<std::string> log;  ///< one JSON object per rewrite
};

/// A rewrite. Run() returns InvalidArgument for a bad model (naming node, op, shapes and rule),
/// Unimplemented for what it cannot handle, and must leave a valid graph otherwise.
class Pass {
 public:
  virtual ~Pass() = default;
  virtual absl::Status Run(proto::Model* model, PassStats* stats) = 0;
};

}  // namespace onnx_bcast::passes
