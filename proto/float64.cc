// A model promoted from float32 to float64 (see float64.h).
#include "proto/float64.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "proto/opsets.h"
#include "proto/tensor_codec.h"
#include "support/status_macros.h"

namespace onnx_bcast::proto {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kDouble = onnx::TensorProto::DOUBLE;

void PromoteType(onnx::TypeProto* t) {
  switch (t->value_case()) {
    case onnx::TypeProto::kTensorType:
      if (t->tensor_type().elem_type() == kFloat) t->mutable_tensor_type()->set_elem_type(kDouble);
      break;
    case onnx::TypeProto::kSequenceType:
      PromoteType(t->mutable_sequence_type()->mutable_elem_type());
      break;
    case onnx::TypeProto::kOptionalType:
      PromoteType(t->mutable_optional_type()->mutable_elem_type());
      break;
    case onnx::TypeProto::kMapType:
      PromoteType(t->mutable_map_type()->mutable_value_type());
      break;
    case onnx::TypeProto::kSparseTensorType:
      if (t->sparse_tensor_type().elem_type() == kFloat) {
        t->mutable_sparse_tensor_type()->set_elem_type(kDouble);
      }
      break;
    default:
      break;
  }
}

onnx::TensorProto DoubleTensor(const std::string& name, const std::vector<int64_t>& dims,
                               const std::vector<double>& values) {
  RawTensor raw;
  raw.name = name;
  raw.data_type = kDouble;
  raw.dims = dims;
  raw.bytes.resize(values.size() * sizeof(double));
  if (!values.empty()) std::memcpy(raw.bytes.data(), values.data(), raw.bytes.size());
  return EncodeTensor(raw);
}

class Promoter {
 public:
  Promoter(const Model& model, int64_t max_bytes)
      : base_dir_(model.base_dir), max_bytes_(max_bytes), opset_(DefaultOpset(model.proto)) {}

  absl::Status Graph(onnx::GraphProto* g) {
    for (auto* list : {g->mutable_input(), g->mutable_output(), g->mutable_value_info()}) {
      for (onnx::ValueInfoProto& v : *list) {
        if (v.has_type()) PromoteType(v.mutable_type());
      }
    }
    for (onnx::TensorProto& t : *g->mutable_initializer()) BCAST_RETURN_IF_ERROR(Tensor(&t));
    for (const onnx::SparseTensorProto& s : g->sparse_initializer()) {
      if (s.values().data_type() == kFloat) {
        return absl::UnimplementedError(
            absl::StrCat("sparse float initializer '", s.values().name(), "' is not promoted"));
      }
    }
    return Nodes(g->mutable_node());
  }

  absl::Status Nodes(google::protobuf::RepeatedPtrField<onnx::NodeProto>* nodes) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> out;
    for (onnx::NodeProto& n : *nodes) {
      BCAST_RETURN_IF_ERROR(Node(&n, &out));
      *out.Add() = std::move(n);
    }
    nodes->Swap(&out);
    return absl::OkStatus();
  }

 private:
  absl::Status Tensor(onnx::TensorProto* t) {
    if (t->data_type() != kFloat) return absl::OkStatus();
    BCAST_ASSIGN_OR_RETURN(RawTensor raw, DecodeTensor(*t, base_dir_, max_bytes_ / 8));
    const int64_t n = raw.NumElements();
    std::vector<double> values(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      float f;
      std::memcpy(&f, raw.bytes.data() + k * sizeof(float), sizeof(float));
      values[k] = f;
    }
    onnx::TensorProto promoted = DoubleTensor(raw.name, raw.dims, values);
    if (t->has_doc_string()) promoted.set_doc_string(t->doc_string());
    *t = std::move(promoted);
    return absl::OkStatus();
  }

  static onnx::AttributeProto* Find(onnx::NodeProto* n, const std::string& name) {
    for (onnx::AttributeProto& a : *n->mutable_attribute()) {
      if (a.name() == name) return &a;
    }
    return nullptr;
  }

  static void SetInt(onnx::NodeProto* n, const std::string& name, int64_t v) {
    onnx::AttributeProto* a = Find(n, name);
    if (a == nullptr) {
      a = n->add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::INT);
    }
    a->set_i(v);
  }

  // The node's attributes and subgraphs; Cast nodes it needs before it go to `before`.
  absl::Status Node(onnx::NodeProto* n,
                    google::protobuf::RepeatedPtrField<onnx::NodeProto>* before) {
    const bool default_domain = n->domain().empty() || n->domain() == "ai.onnx";
    const std::string& op = n->op_type();
    for (onnx::AttributeProto& a : *n->mutable_attribute()) {
      if (a.has_t()) BCAST_RETURN_IF_ERROR(Tensor(a.mutable_t()));
      for (onnx::TensorProto& t : *a.mutable_tensors()) BCAST_RETURN_IF_ERROR(Tensor(&t));
      if (a.has_g()) BCAST_RETURN_IF_ERROR(Graph(a.mutable_g()));
      for (onnx::GraphProto& g : *a.mutable_graphs()) BCAST_RETURN_IF_ERROR(Graph(&g));
      if (a.has_tp()) PromoteType(a.mutable_tp());
    }
    if (!default_domain) return absl::OkStatus();
    if (op == "Constant") {
      // value_float / value_floats hold float32 by definition: a float64 tensor instead.
      for (int k = 0; k < n->attribute_size(); ++k) {
        onnx::AttributeProto& a = *n->mutable_attribute(k);
        if (a.name() != "value_float" && a.name() != "value_floats") continue;
        const bool scalar = a.name() == "value_float";
        std::vector<double> values;
        if (scalar) {
          values.push_back(a.f());
        } else {
          for (float f : a.floats()) values.push_back(f);
        }
        onnx::AttributeProto value;
        value.set_name("value");
        value.set_type(onnx::AttributeProto::TENSOR);
        *value.mutable_t() =
            DoubleTensor("",
                         scalar ? std::vector<int64_t>{}
                                : std::vector<int64_t>{static_cast<int64_t>(values.size())},
                         values);
        a = std::move(value);
      }
    } else if (op == "Cast") {
      if (onnx::AttributeProto* to = Find(n, "to"); to != nullptr && to->i() == kFloat) {
        to->set_i(kDouble);
      }
    } else if (op == "ConstantOfShape") {
      if (Find(n, "value") == nullptr) {
        onnx::AttributeProto* value = n->add_attribute();
        value->set_name("value");
        value->set_type(onnx::AttributeProto::TENSOR);
        *value->mutable_t() = DoubleTensor("", {1}, {0.0});
      }
    } else if (op == "EyeLike" || op == "RandomNormalLike" || op == "RandomUniformLike") {
      if (onnx::AttributeProto* d = Find(n, "dtype"); d != nullptr && d->i() == kFloat) {
        d->set_i(kDouble);
      }
    } else if (op == "RandomNormal" || op == "RandomUniform" || op == "SequenceEmpty") {
      // Float32 when no dtype is given.
      onnx::AttributeProto* d = Find(n, "dtype");
      if (d == nullptr || d->i() == kFloat) SetInt(n, "dtype", kDouble);
    } else if (op == "Resize" || op == "Upsample") {
      // Scales are typed float32 whatever X is.
      const int scales = op == "Resize" && opset_ >= 11 ? 2 : 1;
      if (n->input_size() > scales && !n->input(scales).empty()) {
        onnx::NodeProto cast;
        cast.set_op_type("Cast");
        const std::string out = absl::StrCat(n->input(scales), "__bcast_f32_", ++counter_);
        cast.set_name(out);
        cast.add_input(n->input(scales));
        cast.add_output(out);
        SetInt(&cast, "to", kFloat);
        *before->Add() = std::move(cast);
        n->set_input(scales, out);
      }
    }
    return absl::OkStatus();
  }

  const std::string base_dir_;
  const int64_t max_bytes_;
  const int64_t opset_;
  int64_t counter_ = 0;
};

}  // namespace

absl::StatusOr<Model> PromoteToFloat64(const Model& model,
                                       const std::vector<std::string>& extra_outputs,
                                       int64_t max_bytes) {
  Model out = model;
  Promoter promoter(model, max_bytes);
  BCAST_RETURN_IF_ERROR(promoter.Graph(out.proto.mutable_graph()));
  for (onnx::FunctionProto& f : *out.proto.mutable_functions()) {
    BCAST_RETURN_IF_ERROR(promoter.Nodes(f.mutable_node()));
  }
  absl::flat_hash_set<std::string> outputs;
  for (const onnx::ValueInfoProto& o : out.proto.graph().output()) outputs.insert(o.name());
  for (const std::string& name : extra_outputs) {
    if (outputs.insert(name).second) out.proto.mutable_graph()->add_output()->set_name(name);
  }
  return out;
}

namespace {

int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t Product(const std::vector<int64_t>& shape, size_t from) {
  int64_t n = 1;
  for (size_t k = from; k < shape.size(); ++k) n *= shape[k];
  return n;
}

int64_t IntAttribute(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  for (const onnx::AttributeProto& a : n.attribute()) {
    if (a.name() == name) return a.i();
  }
  return fallback;
}

using Shapes = std::vector<std::vector<int64_t>>;
using TermCount = std::function<int64_t(const Shapes&, const std::vector<int64_t>&)>;

// How many terms each output element of `n` sums; null for an op that does not sum products.
TermCount TermsOf(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  const auto has = [](const Shapes& in, size_t k) { return in.size() > k && !in[k].empty(); };
  if (op == "MatMul") {
    return [](const Shapes& in, const std::vector<int64_t>&) -> int64_t {
      return in.empty() || in[0].empty() ? 1 : in[0].back();
    };
  }
  if (op == "Gemm") {
    const bool trans_a = IntAttribute(n, "transA", 0) != 0;
    return [trans_a, has](const Shapes& in, const std::vector<int64_t>&) -> int64_t {
      if (in.empty() || in[0].size() != 2) return 1;
      return (trans_a ? in[0][0] : in[0][1]) + (has(in, 2) ? 1 : 0);
    };
  }
  if (op == "Conv") {
    return [has](const Shapes& in, const std::vector<int64_t>&) -> int64_t {
      if (in.size() < 2 || in[1].size() < 2) return 1;
      return Product(in[1], 1) + (has(in, 2) ? 1 : 0);
    };
  }
  if (op == "ConvTranspose") {
    const int64_t group = std::max<int64_t>(1, IntAttribute(n, "group", 1));
    return [group, has](const Shapes& in, const std::vector<int64_t>&) -> int64_t {
      if (in.size() < 2 || in[1].size() < 2) return 1;
      return std::max<int64_t>(1, in[1][0] / group) * Product(in[1], 2) + (has(in, 2) ? 1 : 0);
    };
  }
  if (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceSumSquare" || op == "ReduceL1" ||
      op == "ReduceL2" || op == "GlobalAveragePool") {
    return [](const Shapes& in, const std::vector<int64_t>& out) -> int64_t {
      const int64_t o = Elements(out);
      return in.empty() || o <= 0 ? 1 : std::max<int64_t>(1, Elements(in[0]) / o);
    };
  }
  if (op == "AveragePool") {
    int64_t taps = 1;
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.name() == "kernel_shape") {
        for (int64_t d : a.ints()) taps *= d;
      }
    }
    return [taps](const Shapes&, const std::vector<int64_t>&) { return taps; };
  }
  if (op == "Sum" || op == "Mean") {
    return [](const Shapes& in, const std::vector<int64_t>&) -> int64_t {
      return std::max<int64_t>(1, static_cast<int64_t>(in.size()));
    };
  }
  if (op == "Add" || op == "Sub") {
    return [](const Shapes&, const std::vector<int64_t>&) -> int64_t { return 1; };
  }
  return nullptr;
}

}  // namespace

Producer FindProducer(const Model& model, const std::string& output) {
  Producer p;
  const onnx::GraphProto& g = model.proto.graph();
  const onnx::NodeProto* node = nullptr;
  for (const onnx::NodeProto& n : g.node()) {
    for (const std::string& o : n.output()) {
      if (o == output) node = &n;
    }
  }
  if (node == nullptr) return p;
  p.op = node->op_type();
  absl::flat_hash_set<std::string> given;
  for (const onnx::ValueInfoProto& v : g.input()) given.insert(v.name());
  for (const onnx::TensorProto& t : g.initializer()) given.insert(t.name());
  for (const std::string& in : node->input()) {
    p.inputs.push_back(in);
    if (!in.empty() && !given.contains(in)) p.computed_inputs.push_back(in);
  }
  const bool default_domain = node->domain().empty() || node->domain() == "ai.onnx";
  if (!default_domain || node->output_size() != 1) return p;
  p.terms = TermsOf(*node);
  if (!p.terms) return p;
  Model m = FragmentModel(model, "magnitude", 7);
  onnx::GraphProto* fg = m.proto.mutable_graph();
  onnx::NodeProto* copy = fg->add_node();
  *copy = *node;
  copy->clear_input();
  copy->clear_output();
  copy->set_name("magnitude");
  if (copy->op_type() == "Sub") copy->set_op_type("Add");
  for (onnx::AttributeProto& a : *copy->mutable_attribute()) {
    if (a.type() == onnx::AttributeProto::FLOAT) a.set_f(std::fabs(a.f()));
  }
  int k = 0;
  for (const std::string& in : node->input()) {
    if (in.empty()) {
      copy->add_input("");
      continue;
    }
    const std::string name = absl::StrCat("in", k++);
    copy->add_input(name);
    onnx::ValueInfoProto* v = fg->add_input();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(kDouble);
  }
  copy->add_output("out");
  fg->add_output()->set_name("out");
  p.magnitude = std::move(m);
  return p;
}

}  // namespace onnx_bcast::proto
