// Test harness for the executor tests: an executor or a runtime model from a model in ONNX text
// form or an in-memory ModelProto.
#ifndef ONNX_BCAST_TESTS_UNIT_RUNTIME_EXEC_HARNESS_H_
#define ONNX_BCAST_TESTS_UNIT_RUNTIME_EXEC_HARNESS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "proto/model_io.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"

namespace onnx_bcast::runtime::testing {

/// `proto` loaded as a runtime model (the tests that build their graph in code).
inline absl::StatusOr<std::shared_ptr<const Model>> LoadProto(const onnx::ModelProto& proto) {
  proto::Model model;
  model.proto = proto;
  model.path = "<memory>";
  model.base_dir = ".";
  return LoadRuntimeModel(model);
}

/// An executor with `options` for the model in ONNX text form `text`.
inline absl::StatusOr<std::unique_ptr<Executor>> ExecutorFromText(const std::string& text,
                                                                  const RunOptions& options) {
  absl::StatusOr<proto::Model> model = proto::ParseModelText(text);
  if (!model.ok()) return model.status();
  absl::StatusOr<std::shared_ptr<const Model>> loaded = LoadRuntimeModel(*model);
  if (!loaded.ok()) return loaded.status();
  return Executor::Create(*loaded, options);
}

}  // namespace onnx_bcast::runtime::testing

#endif  // ONNX_BCAST_TESTS_UNIT_RUNTIME_EXEC_HARNESS_H_
