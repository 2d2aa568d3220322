// Schema function bodies from libonnx (exceptions caught here) and call inlining.
#include "proto/function_expand.h"

#include <algorithm>
#include <exception>
#include <limits>
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

namespace {

std::string NormalizedDomain(const std::string& domain) {
  return domain == "ai.onnx" ? "" : domain;
}

}  // namespace

FunctionInlineCounter::FunctionInlineCounter(const onnx::ModelProto& model, int64_t cap)
    : model_(model),
      // Sums of two counts stay below 2 * (cap + 1): no overflow.
      cap_(std::clamp<int64_t>(cap, 0, std::numeric_limits<int64_t>::max() / 4)),
      body_(static_cast<size_t>(model.functions_size()), -1) {
  for (int i = 0; i < model.functions_size(); ++i) {
    const onnx::FunctionProto& f = model.functions(i);
    index_.emplace(std::make_pair(NormalizedDomain(f.domain()), f.name()), i);
  }
}

int FunctionInlineCounter::Find(const std::string& domain, const std::string& name) const {
  auto it = index_.find({NormalizedDomain(domain), name});
  return it == index_.end() ? -1 : it->second;
}

void FunctionInlineCounter::Calls(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                                  std::vector<int>* out) const {
  for (const onnx::NodeProto& node : nodes) {
    if (const int f = Find(node.domain(), node.op_type()); f >= 0) out->push_back(f);
    // Subgraph nesting is bounded by the parser's nesting limit.
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) Calls(attr.g().node(), out);
      for (const onnx::GraphProto& g : attr.graphs()) Calls(g.node(), out);
    }
  }
}

int64_t FunctionInlineCounter::Body(int root) {
  constexpr int64_t kOnStack = -2;
  if (body_[root] >= 0) return body_[root];
  struct Frame {
    int f;
    std::vector<int> calls;
    size_t next = 0;
    int64_t sum = 0;
  };
  const int64_t saturated = cap_ + 1;
  auto add = [saturated](int64_t a, int64_t b) { return std::min(saturated, a + b); };
  std::vector<Frame> stack;
  auto push = [&](int f) {
    body_[f] = kOnStack;
    Frame frame{f, {}};
    Calls(model_.functions(f).node(), &frame.calls);
    stack.push_back(std::move(frame));
  };
  push(root);
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.sum >= saturated) top.next = top.calls.size();  // the rest cannot matter
    if (top.next == top.calls.size()) {
      const int64_t value = top.sum;
      body_[top.f] = value;
      stack.pop_back();
      if (!stack.empty()) {
        stack.back().sum = add(stack.back().sum, 1 + value);
        ++stack.back().next;
      }
      continue;
    }
    const int callee = top.calls[top.next];
    if (body_[callee] == kOnStack) {  // recursion: unbounded
      top.sum = saturated;
    } else if (body_[callee] >= 0) {
      top.sum = add(top.sum, 1 + body_[callee]);
      ++top.next;
    } else {
      push(callee);  // invalidates `top`
    }
  }
  return body_[root];
}

int64_t FunctionInlineCounter::Count(
    const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
  std::vector<int> calls;
  Calls(nodes, &calls);
  int64_t sum = 0;
  for (int f : calls) {
    sum = std::min(cap_ + 1, sum + 1 + Body(f));
    if (sum > cap_) break;
  }
  return sum;
}

int64_t FunctionInlineCounter::CountCall(const std::string& domain, const std::string& name) {
  const int f = Find(domain, name);
  return f < 0 ? 0 : std::min(cap_ + 1, 1 + Body(f));
}

absl::Status CheckFunctionInlines(const onnx::ModelProto& model, int64_t limit) {
  FunctionInlineCounter counter(model, limit);
  auto over = [&](int f) { return counter.Body(f) > counter.cap(); };
  for (int f = 0; f < model.functions_size(); ++f) {
    if (!over(f)) continue;
    // Name the innermost offender: the function whose callees each stay within the limit.
    int inner = f;
    // Bounded, in case a caller skipped the recursion check.
    for (int steps = 0, descended = 1; descended && steps < model.functions_size(); ++steps) {
      descended = 0;
      std::vector<int> calls;
      counter.Calls(model.functions(inner).node(), &calls);
      for (int g : calls) {
        if (g != inner && over(g)) {
          inner = g;
          descended = 1;
          break;
        }
      }
    }
    const onnx::FunctionProto& fn = model.functions(inner);
    return absl::ResourceExhaustedError(absl::StrCat(
        "function '", fn.domain().empty() ? "" : absl::StrCat(fn.domain(), "."), fn.name(),
        "' expands to more than ", counter.cap(),
        " nested function calls, the limit (--max-function-inlines)"));
  }
  if (counter.Count(model.graph().node()) > counter.cap()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("graph '", model.graph().name(), "' expands to more than ", counter.cap(),
                     " function calls, the limit (--max-function-inlines)"));
  }
  return absl::OkStatus();
}

}  // namespace onnx_bcast::proto
