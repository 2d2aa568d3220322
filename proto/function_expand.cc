// Schema function bodies from libonnx (exceptions caught here) and call inlining.
#include "proto/function_expand.h"

#include <exception>
#include <map>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "onnx/defs/schema.h"

namespace onnx_bcast::proto {
namespace {

using RenameMap = std::unordered_map<std::string, std::string>;
using AttrMap = std::map<std::string, const onnx::AttributeProto*>;

std::string Renamed(const RenameMap& names, const std::string& name) {
  if (name.empty()) return name;
  auto it = names.find(name);
  return it == names.end() ? name : it->second;
}

void RewriteGraph(onnx::GraphProto* graph, const RenameMap& names, const AttrMap& attrs);

// Binds attribute references and renames values in `node` (and its subgraphs). Returns false
// when the attribute references an attribute the call does not set (drop it).
bool RewriteAttribute(onnx::AttributeProto* attr, const RenameMap& names, const AttrMap& attrs) {
  if (!attr->ref_attr_name().empty()) {
    auto it = attrs.find(attr->ref_attr_name());
    if (it == attrs.end()) return false;
    const std::string name = attr->name();
    *attr = *it->second;
    attr->set_name(name);
    attr->clear_ref_attr_name();
  }
  if (attr->has_g()) RewriteGraph(attr->mutable_g(), names, attrs);
  for (onnx::GraphProto& g : *attr->mutable_graphs()) RewriteGraph(&g, names, attrs);
  return true;
}

void RewriteNode(onnx::NodeProto* node, const RenameMap& names, const AttrMap& attrs) {
  for (std::string& in : *node->mutable_input()) in = Renamed(names, in);
  for (std::string& out : *node->mutable_output()) out = Renamed(names, out);
  google::protobuf::RepeatedPtrField<onnx::AttributeProto> kept;
  for (onnx::AttributeProto& attr : *node->mutable_attribute()) {
    if (RewriteAttribute(&attr, names, attrs)) *kept.Add() = std::move(attr);
  }
  node->mutable_attribute()->Swap(&kept);
}

void RewriteGraph(onnx::GraphProto* graph, const RenameMap& names, const AttrMap& attrs) {
  for (onnx::NodeProto& node : *graph->mutable_node()) RewriteNode(&node, names, attrs);
  for (onnx::ValueInfoProto& v : *graph->mutable_output()) v.set_name(Renamed(names, v.name()));
}

}  // namespace

absl::StatusOr<FunctionBody> SchemaFunctionBody(const onnx::NodeProto& call,
                                                const std::string& domain, int64_t opset,
                                                const std::vector<onnx::TypeProto>& input_types) {
  try {
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(call.op_type(), static_cast<int>(opset), domain);
    if (schema == nullptr) {
      return absl::NotFoundError(absl::StrCat("no schema for ", call.op_type()));
    }
    FunctionBody out;
    out.call = call;
    // Attribute defaults of the schema, for references the call leaves unset.
    for (const auto& [name, attr] : schema->attributes()) {
      bool present = false;
      for (const onnx::AttributeProto& a : call.attribute()) present = present || a.name() == name;
      if (!present && attr.default_value.type() != onnx::AttributeProto::UNDEFINED) {
        onnx::AttributeProto* added = out.call.add_attribute();
        *added = attr.default_value;
        added->set_name(name);
      }
    }
    if (schema->HasFunction() && schema->GetFunction() != nullptr) {
      out.body = *schema->GetFunction();
      return out;
    }
    if (schema->HasContextDependentFunction()) {
      onnx::FunctionBodyBuildContextImpl ctx(out.call, input_types);
      if (!schema->BuildContextDependentFunction(ctx, out.body)) {
        return absl::InvalidArgumentError(
            absl::StrCat(call.op_type(), ": libonnx could not build its function body"));
      }
      return out;
    }
    return absl::NotFoundError(absl::StrCat(call.op_type(), " has no function body"));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(call.op_type(), ": function body: ", e.what()));
  }
}

std::vector<onnx::NodeProto> InlineCall(const onnx::NodeProto& call,
                                        const onnx::FunctionProto& body,
                                        const std::string& prefix) {
  RenameMap names;
  for (int i = 0; i < body.input_size(); ++i) {
    names[body.input(i)] = i < call.input_size() ? call.input(i) : "";
  }
  for (int i = 0; i < body.output_size(); ++i) {
    const bool bound = i < call.output_size() && !call.output(i).empty();
    names[body.output(i)] = bound ? call.output(i) : prefix + body.output(i);
  }
  for (const onnx::NodeProto& node : body.node()) {
    for (const std::string& out : node.output()) {
      if (!out.empty() && names.count(out) == 0) names[out] = prefix + out;
    }
  }
  AttrMap attrs;
  for (const onnx::AttributeProto& a : call.attribute()) attrs[a.name()] = &a;
  std::vector<onnx::NodeProto> nodes;
  nodes.reserve(body.node_size());
  for (const onnx::NodeProto& node : body.node()) {
    onnx::NodeProto copy = node;
    RewriteNode(&copy, names, attrs);
    if (!copy.name().empty()) copy.set_name(prefix + copy.name());
    nodes.push_back(std::move(copy));
  }
  return nodes;
}

}  // namespace onnx_bcast::proto
