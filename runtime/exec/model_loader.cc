// proto::Model -> runtime::Model: attributes and initializers decoded once, subgraphs converted
// recursively, function calls inlined with per-node opsets taken from the function's imports.
#include "runtime/exec/model_loader.h"

#include <cstring>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "proto/function_expand.h"
#include "proto/onnx_checks.h"
#include "runtime/ops/registry.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {
namespace {

using OpsetMap = std::map<std::string, int64_t>;

// Function calls nest at most this deep (a function calling itself is refused).
constexpr int kMaxInlineDepth = 16;

std::string NormalizeDomain(const std::string& domain) { return domain == "ai.onnx" ? "" : domain; }

OpsetMap WithImports(OpsetMap base,
                     const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
  for (const onnx::OperatorSetIdProto& imp : imports) {
    base[NormalizeDomain(imp.domain())] = imp.version();
  }
  return base;
}

int32_t TensorElemType(const onnx::TypeProto& type) {
  if (type.has_tensor_type()) return type.tensor_type().elem_type();
  if (type.has_sequence_type()) return TensorElemType(type.sequence_type().elem_type());
  if (type.has_optional_type()) return TensorElemType(type.optional_type().elem_type());
  return 0;
}

class Loader {
 public:
  Loader(const proto::Model& model, const LoadOptions& options) : model_(model), options_(options) {
    for (const onnx::FunctionProto& f : model.proto.functions()) {
      functions_[{NormalizeDomain(f.domain()), f.name()}] = &f;
    }
    const onnx::GraphProto& g = model.proto.graph();
    for (const onnx::ValueInfoProto& v : g.input()) types_[v.name()] = v.type();
    for (const onnx::ValueInfoProto& v : g.output()) types_[v.name()] = v.type();
    for (const onnx::ValueInfoProto& v : g.value_info()) types_[v.name()] = v.type();
    for (const onnx::TensorProto& t : g.initializer()) {
      types_[t.name()].mutable_tensor_type()->set_elem_type(t.data_type());
    }
  }

  absl::StatusOr<std::shared_ptr<Graph>> ConvertGraph(const onnx::GraphProto& proto,
                                                      const OpsetMap& opsets);

 private:
  absl::Status ConvertNode(const onnx::NodeProto& proto, const OpsetMap& opsets, int depth,
                           Graph* graph);
  absl::Status Inline(const onnx::NodeProto& call, const onnx::FunctionProto& body,
                      const OpsetMap& opsets, int depth, Graph* graph);
  absl::StatusOr<Attribute> ConvertAttribute(const onnx::AttributeProto& proto,
                                             const OpsetMap& opsets);
  absl::StatusOr<std::shared_ptr<const Tensor>> ConvertTensor(const onnx::TensorProto& proto);
  std::vector<onnx::TypeProto> InputTypes(const onnx::NodeProto& node);
  void GuessOutputTypes(const onnx::NodeProto& node);

  const proto::Model& model_;
  const LoadOptions& options_;
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto*> functions_;
  std::unordered_map<std::string, onnx::TypeProto> types_;
  bool inferred_ = false;
  int64_t inline_count_ = 0;
  int64_t local_inlines_ = 0;  ///< model-local calls inlined so far
};

absl::StatusOr<std::shared_ptr<const Tensor>> Loader::ConvertTensor(
    const onnx::TensorProto& proto) {
  BCAST_ASSIGN_OR_RETURN(proto::RawTensor raw,
                         proto::DecodeTensor(proto, model_.base_dir, options_.max_tensor_elements));
  BCAST_ASSIGN_OR_RETURN(Tensor t, TensorFromRaw(raw));
  return std::make_shared<const Tensor>(std::move(t));
}

absl::StatusOr<Attribute> Loader::ConvertAttribute(const onnx::AttributeProto& proto,
                                                   const OpsetMap& opsets) {
  Attribute a;
  using T = Attribute::Type;
  switch (proto.type()) {
    case onnx::AttributeProto::FLOAT:
      a.type = T::kFloat;
      a.f = proto.f();
      break;
    case onnx::AttributeProto::INT:
      a.type = T::kInt;
      a.i = proto.i();
      break;
    case onnx::AttributeProto::STRING:
      a.type = T::kString;
      a.s = proto.s();
      break;
    case onnx::AttributeProto::TENSOR: {
      a.type = T::kTensor;
      BCAST_ASSIGN_OR_RETURN(a.t, ConvertTensor(proto.t()));
      break;
    }
    case onnx::AttributeProto::GRAPH: {
      a.type = T::kGraph;
      BCAST_ASSIGN_OR_RETURN(a.g, ConvertGraph(proto.g(), opsets));
      break;
    }
    case onnx::AttributeProto::FLOATS:
      a.type = T::kFloats;
      a.floats.assign(proto.floats().begin(), proto.floats().end());
      break;
    case onnx::AttributeProto::INTS:
      a.type = T::kInts;
      a.ints.assign(proto.ints().begin(), proto.ints().end());
      break;
    case onnx::AttributeProto::STRINGS:
      a.type = T::kStrings;
      a.strings.assign(proto.strings().begin(), proto.strings().end());
      break;
    case onnx::AttributeProto::TENSORS:
      a.type = T::kTensors;
      for (const onnx::TensorProto& tp : proto.tensors()) {
        BCAST_ASSIGN_OR_RETURN(std::shared_ptr<const Tensor> t, ConvertTensor(tp));
        a.tensors.push_back(std::move(t));
      }
      break;
    case onnx::AttributeProto::GRAPHS:
      a.type = T::kGraphs;
      for (const onnx::GraphProto& gp : proto.graphs()) {
        BCAST_ASSIGN_OR_RETURN(std::shared_ptr<Graph> g, ConvertGraph(gp, opsets));
        a.graphs.push_back(std::move(g));
      }
      break;
    case onnx::AttributeProto::TYPE_PROTO:
      a.type = T::kTypeProto;
      a.elem_type = static_cast<DType>(TensorElemType(proto.tp()));
      break;
    default:
      // Sparse tensors and unset types: left undefined; a kernel that needs one reports it.
      break;
  }
  return a;
}

std::vector<onnx::TypeProto> Loader::InputTypes(const onnx::NodeProto& node) {
  bool missing = false;
  for (const std::string& in : node.input()) {
    missing = missing || (!in.empty() && types_.count(in) == 0);
  }
  if (missing && !inferred_) {
    // Shape inference once, only when a context-dependent body needs a type we do not have.
    inferred_ = true;
    onnx::ModelProto copy = model_.proto;
    if (proto::InferShapes(&copy, /*strict=*/false).ok()) {
      for (const onnx::ValueInfoProto& v : copy.graph().value_info()) {
        types_.emplace(v.name(), v.type());
      }
    }
  }
  std::vector<onnx::TypeProto> types;
  for (const std::string& in : node.input()) {
    auto it = in.empty() ? types_.end() : types_.find(in);
    types.push_back(it == types_.end() ? onnx::TypeProto() : it->second);
  }
  return types;
}

// Element types of values inside inlined bodies, which shape inference never saw: enough for
// the context-dependent bodies of nested calls (SoftmaxCrossEntropyLoss calls
// NegativeLogLikelihoodLoss on a LogSoftmax output). Shapes are left unknown.
void Loader::GuessOutputTypes(const onnx::NodeProto& node) {
  int32_t elem = 0;
  const std::string& op = node.op_type();
  if (op == "Cast") {
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.name() == "to") elem = static_cast<int32_t>(a.i());
    }
  } else if (op == "Constant" || op == "ConstantOfShape") {
    elem = onnx::TensorProto::FLOAT;
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.has_t()) elem = a.t().data_type();
    }
  } else if (op == "Shape" || op == "Size" || op == "ArgMax" || op == "ArgMin" || op == "NonZero") {
    elem = onnx::TensorProto::INT64;
  } else if (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
             op == "GreaterOrEqual" || op == "Not" || op == "And" || op == "Or" || op == "Xor" ||
             op == "IsNaN" || op == "IsInf") {
    elem = onnx::TensorProto::BOOL;
  } else if (op == "CastLike" && node.input_size() > 1) {
    auto it = types_.find(node.input(1));
    if (it != types_.end()) elem = TensorElemType(it->second);
  } else {
    // Where's first input is the condition; its value inputs carry the type.
    for (int i = op == "Where" ? 1 : 0; i < node.input_size() && elem == 0; ++i) {
      auto it = types_.find(node.input(i));
      if (it != types_.end()) elem = TensorElemType(it->second);
    }
  }
  if (elem == 0) return;
  for (const std::string& out : node.output()) {
    if (!out.empty() && types_.count(out) == 0) {
      types_[out].mutable_tensor_type()->set_elem_type(elem);
    }
  }
}

absl::Status Loader::Inline(const onnx::NodeProto& call, const onnx::FunctionProto& body,
                            const OpsetMap& opsets, int depth, Graph* graph) {
  const std::string label = call.name().empty() ? call.op_type() : call.name();
  const std::string prefix = absl::StrCat(label, "/", call.op_type(), "#", inline_count_++, "/");
  const OpsetMap body_opsets = WithImports(opsets, body.opset_import());
  // Inputs keep their types inside the body, so nested context-dependent calls see them.
  for (int i = 0; i < body.input_size() && i < call.input_size(); ++i) {
    auto it = types_.find(call.input(i));
    if (it != types_.end()) types_.emplace(body.input(i), it->second);
  }
  for (const onnx::NodeProto& node : proto::InlineCall(call, body, prefix)) {
    GuessOutputTypes(node);
    BCAST_RETURN_IF_ERROR(ConvertNode(node, body_opsets, depth + 1, graph));
  }
  return absl::OkStatus();
}

absl::Status Loader::ConvertNode(const onnx::NodeProto& proto, const OpsetMap& opsets, int depth,
                                 Graph* graph) {
  const std::string domain = NormalizeDomain(proto.domain());
  auto opset_it = opsets.find(domain);
  const int64_t opset = opset_it == opsets.end() ? 0 : opset_it->second;
  if (FindOp(domain, proto.op_type(), opset) == nullptr && depth < kMaxInlineDepth) {
    auto fn = functions_.find({domain, proto.op_type()});
    if (fn != functions_.end()) {
      // CheckFunctionInlines bounded this up front; the count keeps the loop itself bounded.
      if (++local_inlines_ > options_.max_function_inlines) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "function '", proto.op_type(), "' expands to more than ",
            options_.max_function_inlines, " nested function calls, the limit"));
      }
      return Inline(proto, *fn->second, opsets, depth, graph);
    }
    if (options_.expand_schema_functions && opset > 0) {
      absl::StatusOr<proto::FunctionBody> body =
          proto::SchemaFunctionBody(proto, domain, opset, InputTypes(proto));
      if (body.ok()) {
        // The body's own imports name the opset its nodes were written for.
        return Inline(body->call, body->body, opsets, depth, graph);
      }
      // No body: the node stays and the executor reports the op as unsupported.
    }
  }
  Node node;
  node.op_type = proto.op_type();
  node.domain = domain;
  node.opset = opset;
  node.name =
      proto.name().empty() ? absl::StrCat(proto.op_type(), "#", graph->nodes.size()) : proto.name();
  node.inputs.assign(proto.input().begin(), proto.input().end());
  node.outputs.assign(proto.output().begin(), proto.output().end());
  for (const onnx::AttributeProto& attr : proto.attribute()) {
    absl::StatusOr<Attribute> a = ConvertAttribute(attr, opsets);
    if (!a.ok()) {
      return absl::Status(
          a.status().code(),
          absl::StrCat(node.Label(), ": attribute '", attr.name(), "': ", a.status().message()));
    }
    node.attrs[attr.name()] = std::move(*a);
  }
  graph->nodes.push_back(std::move(node));
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Graph>> Loader::ConvertGraph(const onnx::GraphProto& proto,
                                                            const OpsetMap& opsets) {
  auto graph = std::make_shared<Graph>();
  graph->name = proto.name();
  for (const onnx::TensorProto& init : proto.initializer()) {
    absl::StatusOr<std::shared_ptr<const Tensor>> t = ConvertTensor(init);
    if (!t.ok()) {
      return absl::Status(t.status().code(),
                          absl::StrCat("initializer '", init.name(), "': ", t.status().message()));
    }
    graph->initializers[init.name()] = std::move(*t);
  }
  for (const onnx::ValueInfoProto& in : proto.input()) {
    if (graph->initializers.count(in.name()) > 0) continue;
    graph->inputs.push_back(in.name());
    DType dtype = DType::kUndefined;
    std::vector<int64_t> shape;
    std::vector<std::string> symbols;
    bool known = false;
    if (in.type().has_tensor_type()) {
      const onnx::TypeProto::Tensor& tt = in.type().tensor_type();
      dtype = static_cast<DType>(tt.elem_type());
      known = tt.has_shape();
      for (const onnx::TensorShapeProto::Dimension& d : tt.shape().dim()) {
        shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
        symbols.push_back(d.has_dim_param() ? d.dim_param() : "");
      }
    }
    graph->input_types.push_back(dtype);
    graph->input_shapes.push_back(std::move(shape));
    graph->input_symbols.push_back(std::move(symbols));
    graph->input_shape_known.push_back(known);
  }
  for (const onnx::ValueInfoProto& out : proto.output()) graph->outputs.push_back(out.name());
  for (const onnx::NodeProto& node : proto.node()) {
    BCAST_RETURN_IF_ERROR(ConvertNode(node, opsets, 0, graph.get()));
  }
  return graph;
}

}  // namespace

absl::StatusOr<Tensor> TensorFromRaw(const proto::RawTensor& raw) {
  const DType dtype = static_cast<DType>(raw.data_type);
  if (!IsSupported(dtype)) {
    return absl::UnimplementedError(absl::StrCat("tensor '", raw.name, "' has data type ",
                                                 DTypeName(dtype), ", not supported"));
  }
  BCAST_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, raw.dims));
  if (raw.bytes.size() != t.byte_size()) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", raw.name, "' has ", raw.bytes.size(),
                                                   " bytes, shape ", ShapeToString(raw.dims),
                                                   " needs ", t.byte_size()));
  }
  if (t.byte_size() > 0) std::memcpy(t.raw_data(), raw.bytes.data(), raw.bytes.size());
  if (dtype == DType::kBool) {
    // Any nonzero byte is true; store canonical 0/1 so kernels may compare bytes.
    auto* bytes = static_cast<uint8_t*>(t.raw_data());
    for (int64_t i = 0; i < t.num_elements(); ++i) bytes[i] = bytes[i] != 0;
  }
  return t;
}

proto::RawTensor RawFromTensor(const Tensor& tensor, const std::string& name) {
  proto::RawTensor raw;
  raw.name = name;
  raw.data_type = static_cast<int32_t>(tensor.dtype());
  raw.dims = tensor.shape();
  raw.bytes.assign(static_cast<const char*>(tensor.raw_data()), tensor.byte_size());
  return raw;
}

absl::StatusOr<std::shared_ptr<const Model>> LoadRuntimeModel(const proto::Model& model,
                                                              const LoadOptions& options) {
  if (!model.proto.has_graph()) return absl::InvalidArgumentError("model has no graph");
  BCAST_RETURN_IF_ERROR(proto::CheckFunctionInlines(model.proto, options.max_function_inlines));
  Loader loader(model, options);
  const OpsetMap opsets = WithImports({}, model.proto.opset_import());
  BCAST_ASSIGN_OR_RETURN(std::shared_ptr<Graph> main,
                         loader.ConvertGraph(model.proto.graph(), opsets));
  auto out = std::make_shared<Model>();
  out->main = std::move(main);
  out->opsets = opsets;
  out->path = model.path;
  return std::shared_ptr<const Model>(std::move(out));
}

}  // namespace onnx_bcast::runtime
