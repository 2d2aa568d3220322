// Constant parts of a model, computed by the executor (see constant_eval.h).
#include "runtime/exec/constant_eval.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/tensor_codec.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {

absl::StatusOr<std::vector<onnx::TensorProto>> EvaluateConstantModel(
    const proto::Model& fragment, const RunOptions& options) {
  LoadOptions load;
  load.max_tensor_elements = options.max_tensor_elements;
  BCAST_ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, LoadRuntimeModel(fragment, load));
  BCAST_ASSIGN_OR_RETURN(std::unique_ptr<Executor> exec,
                         Executor::Create(std::move(model), options));
  BCAST_ASSIGN_OR_RETURN(std::vector<Value> values, exec->Run({}));
  const auto& outputs = fragment.proto.graph().output();
  std::vector<onnx::TensorProto> out;
  out.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string& name = outputs[static_cast<int>(i)].name();
    const Value& v = values[i];
    if (!v.is_tensor() || v.tensor == nullptr) {
      return absl::UnimplementedError(absl::StrCat("'", name, "' is not a tensor"));
    }
    out.push_back(proto::EncodeTensor(RawFromTensor(*v.tensor, name)));
  }
  return out;
}

}  // namespace onnx_bcast::runtime
