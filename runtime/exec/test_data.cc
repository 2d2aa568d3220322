// input_K.pb / output_K.pb files <-> runtime values, bound to a model's inputs and outputs.
#include "runtime/exec/test_data.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <unordered_set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/exec/model_loader.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {
namespace {

namespace fs = std::filesystem;

// Files "<prefix>K.pb" of `dir`, sorted by K.
std::vector<std::string> NumberedFiles(const std::string& dir, const std::string& prefix) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!absl::StartsWith(name, prefix) || !absl::EndsWith(name, ".pb")) continue;
    int64_t k = 0;
    if (!absl::SimpleAtoi(name.substr(prefix.size(), name.size() - prefix.size() - 3), &k)) {
      continue;
    }
    found.emplace_back(k, e.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& [k, path] : found) out.push_back(std::move(path));
  return out;
}

}  // namespace

absl::StatusOr<Value> ValueFromRaw(const proto::RawValue& raw) {
  switch (raw.kind) {
    case proto::RawValue::Kind::kTensor: {
      BCAST_ASSIGN_OR_RETURN(Tensor t, TensorFromRaw(raw.tensor));
      return Value::Of(std::make_shared<Tensor>(std::move(t)));
    }
    case proto::RawValue::Kind::kSequence: {
      std::vector<std::shared_ptr<Tensor>> items;
      for (const proto::RawTensor& r : raw.sequence) {
        BCAST_ASSIGN_OR_RETURN(Tensor t, TensorFromRaw(r));
        items.push_back(std::make_shared<Tensor>(std::move(t)));
      }
      return Value::Sequence(std::move(items), static_cast<DType>(raw.elem_type));
    }
    case proto::RawValue::Kind::kEmptyOptional:
      return Value::EmptyOptional(static_cast<DType>(raw.elem_type));
  }
  return absl::InternalError("unknown value kind");
}

absl::StatusOr<proto::RawValue> RawFromValue(const Value& value, const std::string& name,
                                             const onnx::TypeProto* type) {
  proto::RawValue raw;
  raw.name = name;
  raw.elem_type = static_cast<int32_t>(value.elem_type);
  // A present optional is a plain tensor or sequence at runtime; the file keeps its wrapper.
  raw.in_optional = type != nullptr && type->has_optional_type();
  switch (value.kind) {
    case Value::Kind::kTensor:
      raw.kind = proto::RawValue::Kind::kTensor;
      raw.tensor = RawFromTensor(*value.tensor, name);
      return raw;
    case Value::Kind::kSequence:
      raw.kind = proto::RawValue::Kind::kSequence;
      for (const auto& t : value.sequence) raw.sequence.push_back(RawFromTensor(*t, ""));
      return raw;
    case Value::Kind::kOptionalNone:
      raw.kind = proto::RawValue::Kind::kEmptyOptional;
      return raw;
    case Value::Kind::kNone:
      break;
  }
  return absl::FailedPreconditionError(absl::StrCat("output '", name, "' was not computed"));
}

absl::StatusOr<Value> LoadValue(const std::string& path, const onnx::TypeProto* type) {
  BCAST_ASSIGN_OR_RETURN(proto::RawValue raw, proto::LoadValueFile(path, type));
  // ONNX 1.12 stores bfloat16 test data as uint16 bit patterns; the model's type says which.
  if (type != nullptr && type->has_tensor_type() &&
      type->tensor_type().elem_type() == static_cast<int32_t>(DType::kBFloat16) &&
      raw.kind == proto::RawValue::Kind::kTensor &&
      raw.tensor.data_type == static_cast<int32_t>(DType::kUInt16)) {
    raw.tensor.data_type = static_cast<int32_t>(DType::kBFloat16);
  }
  absl::StatusOr<Value> v = ValueFromRaw(raw);
  if (!v.ok())
    return absl::Status(v.status().code(), absl::StrCat(path, ": ", v.status().message()));
  return v;
}

absl::StatusOr<TestDataSet> LoadTestDataSet(const proto::Model& model, const std::string& dir) {
  TestDataSet set;
  set.dir = dir;
  const onnx::GraphProto& graph = model.proto.graph();
  std::vector<const onnx::ValueInfoProto*> all_inputs, real_inputs;
  std::unordered_set<std::string> initializers;
  for (const onnx::TensorProto& t : graph.initializer()) initializers.insert(t.name());
  for (const onnx::ValueInfoProto& v : graph.input()) {
    all_inputs.push_back(&v);
    if (initializers.count(v.name()) == 0) real_inputs.push_back(&v);
  }
  const std::vector<std::string> input_files = NumberedFiles(dir, "input_");
  const std::vector<std::string> output_files = NumberedFiles(dir, "output_");
  if (input_files.empty() && output_files.empty()) {
    return absl::NotFoundError(absl::StrCat(dir, ": no input_K.pb or output_K.pb files"));
  }
  const auto& bind = input_files.size() > real_inputs.size() ? all_inputs : real_inputs;
  if (input_files.size() > bind.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        dir, ": ", input_files.size(), " input files for ", bind.size(), " model inputs"));
  }
  for (size_t k = 0; k < input_files.size(); ++k) {
    BCAST_ASSIGN_OR_RETURN(Value v, LoadValue(input_files[k], &bind[k]->type()));
    set.feeds.emplace_back(bind[k]->name(), std::move(v));
  }
  if (output_files.size() > static_cast<size_t>(graph.output_size())) {
    return absl::InvalidArgumentError(absl::StrCat(dir, ": ", output_files.size(),
                                                   " output files for ", graph.output_size(),
                                                   " model outputs"));
  }
  for (size_t k = 0; k < output_files.size(); ++k) {
    BCAST_ASSIGN_OR_RETURN(Value v, LoadValue(output_files[k], &graph.output(k).type()));
    set.expected.push_back(std::move(v));
    set.output_names.push_back(graph.output(k).name());
  }
  return set;
}

std::vector<std::string> TestDataSetDirs(const std::string& case_dir) {
  std::vector<std::string> dirs;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(case_dir, ec)) {
    if (e.is_directory() && absl::StartsWith(e.path().filename().string(), "test_data_set_")) {
      dirs.push_back(e.path().string());
    }
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

absl::Status SaveOutputs(const std::vector<Value>& outputs, const std::vector<std::string>& names,
                         const std::string& dir,
                         const std::vector<const onnx::TypeProto*>& types) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat(dir, ": cannot create: ", ec.message()));
  for (size_t k = 0; k < outputs.size(); ++k) {
    BCAST_ASSIGN_OR_RETURN(proto::RawValue raw,
                           RawFromValue(outputs[k], k < names.size() ? names[k] : "",
                                        k < types.size() ? types[k] : nullptr));
    const std::string path = absl::StrCat(dir, "/output_", k, ".pb");
    BCAST_RETURN_IF_ERROR(proto::SaveValueFile(raw, path));
  }
  return absl::OkStatus();
}

}  // namespace onnx_bcast::runtime
