// Default-domain opset facts and libonnx's version converter (see opsets.h).
#include "proto/opsets.h"

#include <exception>
#include <set>

#include "absl/strings/str_cat.h"
#include "onnx/defs/schema.h"
#include "onnx/version_converter/convert.h"
#include "proto/onnx_checks.h"

namespace onnx_bcast::proto {
namespace {

bool IsDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

void CollectOps(const onnx::GraphProto& g, std::set<std::string>* ops) {
  for (const auto& node : g.node()) {
    if (IsDefaultDomain(node.domain())) ops->insert(node.op_type());
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) CollectOps(attr.g(), ops);
      for (const auto& sub : attr.graphs()) CollectOps(sub, ops);
    }
  }
}

}  // namespace

int64_t DefaultOpset(const onnx::ModelProto& model) {
  for (const auto& opset : model.opset_import()) {
    if (IsDefaultDomain(opset.domain())) return opset.version();
  }
  return 0;
}

void SetDefaultOpset(onnx::ModelProto* model, int64_t version) {
  for (auto& opset : *model->mutable_opset_import()) {
    if (IsDefaultDomain(opset.domain())) {
      opset.set_version(version);
      return;
    }
  }
  auto* opset = model->add_opset_import();
  opset->set_domain("");
  opset->set_version(version);
}

int64_t SchemaSinceVersion(const std::string& op_type, int64_t opset) {
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Schema(op_type, static_cast<int>(opset), "");
  return schema == nullptr ? -1 : schema->SinceVersion();
}

std::vector<std::string> OpsChangedBetween(const onnx::ModelProto& model, int64_t from,
                                           int64_t to) {
  std::set<std::string> ops;
  CollectOps(model.graph(), &ops);
  std::vector<std::string> changed;
  for (const std::string& op : ops) {
    const int64_t a = SchemaSinceVersion(op, from);
    const int64_t b = SchemaSinceVersion(op, to);
    if (a != b || b < 0) changed.push_back(op);
  }
  return changed;
}

absl::StatusOr<onnx::ModelProto> ConvertDefaultOpset(const Model& model, int64_t to) {
  if (absl::Status s = CheckModel(model, /*full=*/false); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the version converter needs a model the onnx checker accepts: ",
                     s.message()));
  }
  try {
    return onnx::version_conversion::ConvertVersion(model.proto, static_cast<int>(to));
  } catch (const std::exception& e) {
    std::string msg = e.what();
    for (char& c : msg) {
      if (c == '\n') c = ' ';
    }
    return absl::UnimplementedError(absl::StrCat("libonnx version converter: ", msg));
  }
}

}  // namespace onnx_bcast::proto
