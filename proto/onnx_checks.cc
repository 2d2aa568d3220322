// libonnx's checker and shape inference behind absl::Status.
#include "proto/onnx_checks.h"

#include <exception>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"

namespace onnx_bcast::proto {
namespace {

// libonnx messages span several lines; the CLI contract is one line per error.
std::string OneLine(const std::string& text) {
  return absl::StrReplaceAll(text, {{"\n\n==> Context: ", "; context: "}, {"\n", " "}});
}

}  // namespace

absl::Status CheckModel(const Model& model, bool full) {
  try {
    onnx::checker::CheckerContext ctx;
    ctx.set_ir_version(static_cast<int>(model.proto.ir_version()));
    std::unordered_map<std::string, int> opsets;
    for (const auto& opset : model.proto.opset_import()) {
      opsets[opset.domain()] = static_cast<int>(opset.version());
    }
    ctx.set_opset_imports(opsets);
    ctx.set_model_dir(model.base_dir);
    onnx::checker::check_model(model.proto);
    if (full) {
      onnx::ModelProto copy = model.proto;
      onnx::ShapeInferenceOptions options(/*check_type=*/true, /*strict_mode=*/1);
      onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
    }
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("onnx checker: ", OneLine(e.what())));
  }
  return absl::OkStatus();
}

absl::Status InferShapes(onnx::ModelProto* model, bool strict) {
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false, strict ? 1 : 0);
    onnx::shape_inference::InferShapes(*model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("shape inference: ", OneLine(e.what())));
  }
  return absl::OkStatus();
}

}  // namespace onnx_bcast::proto
