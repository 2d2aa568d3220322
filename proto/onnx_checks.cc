// libonnx's checker and shape inference behind absl::Status.
#include "proto/onnx_checks.h"

#include "proto/inference_guards.h"

#include <exception>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"
#include "proto/external_data.h"
#include "proto/inference_guards.h"
#include "proto/tensor_util.h"

namespace onnx_bcast::proto {
namespace {

// libonnx messages span several lines; the CLI contract is one line per error.
std::string OneLine(const std::string& text) {
  return absl::StrReplaceAll(text, {{"\n\n==> Context: ", "; context: "}, {"\n", " "}});
}

}  // namespace

absl::Status CheckModel(const Model& model, bool full) {
  // libonnx's in-memory check_model looks for external data relative to the current directory.
  // We validate external references ourselves (confined to base_dir, sizes checked), so the
  // checker sees a copy whose external payloads are replaced by empty raw data.
  std::unique_ptr<onnx::ModelProto> stripped;
  bool has_external = false;
  ForEachModelTensor(const_cast<onnx::ModelProto*>(&model.proto), [&](onnx::TensorProto* t) {
    has_external |= t->data_location() == onnx::TensorProto::EXTERNAL;
  });
  if (has_external) {
    stripped = std::make_unique<onnx::ModelProto>(model.proto);
    absl::Status status;
    ForEachModelTensor(stripped.get(), [&](onnx::TensorProto* t) {
      if (t->data_location() != onnx::TensorProto::EXTERNAL || !status.ok()) return;
      if (absl::StatusOr<ExternalRef> ref = ResolveExternalData(*t, model.base_dir); !ref.ok()) {
        status = ref.status();
        return;
      }
      t->clear_external_data();
      t->set_data_location(onnx::TensorProto::DEFAULT);
      t->set_raw_data("");
    });
    if (!status.ok()) return status;
  }
  const onnx::ModelProto& checked = stripped ? *stripped : model.proto;
  InstallInferenceGuards();
  try {
    onnx::checker::check_model(checked);
    if (full) {
      onnx::ModelProto copy = checked;
      onnx::ShapeInferenceOptions options(/*check_type=*/true, /*strict_mode=*/1);
      onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
    }
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("onnx checker: ", OneLine(e.what())));
  }
  return absl::OkStatus();
}

absl::Status InferShapes(onnx::ModelProto* model, bool strict) {
  InstallInferenceGuards();
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false, strict ? 1 : 0);
    onnx::shape_inference::InferShapes(*model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("shape inference: ", OneLine(e.what())));
  }
  return absl::OkStatus();
}

}  // namespace onnx_bcast::proto
