// The live form oracle's fragments (see form_oracle.h).
#include "targets/form_oracle.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"

namespace onnx_bcast::targets {
namespace {

void SetValueInfo(onnx::ValueInfoProto* vi, const std::string& name, int32_t elem,
                  const std::vector<int64_t>& dims) {
  vi->set_name(name);
  onnx::TypeProto_Tensor* t = vi->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  onnx::TensorShapeProto* s = t->mutable_shape();
  for (int64_t d : dims) s->add_dim()->set_dim_value(d);
}

}  // namespace

std::optional<proto::Model> NodeFragment(const proto::Model& model, const onnx::NodeProto& node,
                                         const std::vector<FragmentOperand>& operands,
                                         int32_t out_elem, const broadcast::Shape& out) {
  if (node.output_size() != 1 || out_elem == 0) return std::nullopt;
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.has_g() || a.graphs_size() > 0 || !a.ref_attr_name().empty()) return std::nullopt;
  }
  const std::optional<std::vector<int64_t>> out_dims = out.Extents();
  if (!out_dims) return std::nullopt;
  proto::Model f = proto::FragmentModel(model, "fragment", 7);
  f.path = "<fragment>";
  onnx::GraphProto* g = f.proto.mutable_graph();
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(node.op_type());
  n->set_domain(node.domain());
  *n->mutable_attribute() = node.attribute();
  std::map<std::string, std::string> canonical;
  for (const FragmentOperand& o : operands) {
    if (o.name.empty()) {
      n->add_input("");
      continue;
    }
    auto [it, fresh] = canonical.emplace(o.name, absl::StrCat("in", canonical.size()));
    n->add_input(it->second);
    if (!fresh) continue;
    const std::optional<std::vector<int64_t>> dims = o.shape.Extents();
    if (!dims || o.elem == 0) return std::nullopt;
    if (o.constant != nullptr) {
      if (o.constant->data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
      onnx::TensorProto t = *o.constant;
      t.set_name(it->second);
      t.clear_dims();
      for (int64_t d : *dims) t.add_dims(d);
      *g->add_initializer() = std::move(t);
    } else {
      SetValueInfo(g->add_input(), it->second, o.elem, *dims);
    }
  }
  n->add_output("out");
  SetValueInfo(g->add_output(), "out", out_elem, *out_dims);
  return f;
}

std::optional<std::vector<absl::StatusOr<LiveVerdict>>> DecideReplacement(
    FormOracle& oracle, const proto::Model& model, const onnx::NodeProto& node,
    const std::vector<FragmentOperand>& operands, const onnx::NodeProto& replacement,
    const std::vector<FragmentOperand>& replacement_operands, int32_t out_elem,
    const broadcast::Shape& out) {
  const std::optional<proto::Model> here = NodeFragment(model, node, operands, out_elem, out);
  const std::optional<proto::Model> there =
      NodeFragment(model, replacement, replacement_operands, out_elem, out);
  if (!here || !there) return std::nullopt;
  return oracle.Decide({&*here, &*there});
}

bool OnlyReplacementRuns(const std::vector<absl::StatusOr<LiveVerdict>>& v) {
  return v.size() == 2 && v[0].ok() && v[1].ok() && !v[0]->matches && v[1]->matches;
}

}  // namespace onnx_bcast::targets
