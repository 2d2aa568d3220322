// legalize-measured's Gemm strategy (see gemm_layout.h).
#include "passes/legalize/gemm_layout.h"

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/legalize/record.h"
#include "proto/graph.h"
#include "proto/tensor_codec.h"
#include "targets/form_oracle.h"

namespace onnx_bcast::passes::legalize {
namespace {

int64_t IntAttr(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  for (const onnx::AttributeProto& a : n.attribute()) {
    if (a.name() == name) return a.i();
  }
  return fallback;
}

// `b` [K,N] transposed to [N,K], named `name`; nullopt unless a float32 matrix whose payload is
// at hand.
std::optional<onnx::TensorProto> Transposed(const onnx::TensorProto& b, const std::string& name,
                                            const std::string& base_dir) {
  if (b.data_type() != onnx::TensorProto::FLOAT || b.dims_size() != 2) return std::nullopt;
  absl::StatusOr<proto::RawTensor> raw = proto::DecodeTensor(b, base_dir, int64_t{1} << 26);
  if (!raw.ok()) return std::nullopt;
  const int64_t k = b.dims(0), n = b.dims(1);
  proto::RawTensor t;
  t.name = name;
  t.data_type = onnx::TensorProto::FLOAT;
  t.dims = {n, k};
  t.bytes.resize(raw->bytes.size());
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      std::memcpy(&t.bytes[(j * k + i) * 4], &raw->bytes[(i * n + j) * 4], 4);
    }
  }
  return proto::EncodeTensor(t);
}

void SetTransB(onnx::NodeProto* n) {
  for (onnx::AttributeProto& a : *n->mutable_attribute()) {
    if (a.name() == "transB") {
      a.set_i(1);
      return;
    }
  }
  proto::AddIntAttribute(n, "transB", 1);
}

}  // namespace

absl::Status LegalizeGemmLayout(RewriteContext& ctx) {
  targets::FormOracle* live = ctx.options().live;
  if (live == nullptr || ctx.path() != "main") return absl::OkStatus();
  for (int id = 0; id < ctx.graph().original_node_count(); ++id) {
    if (!ctx.graph().alive(id)) continue;
    const onnx::NodeProto& n = ctx.graph().node(id);
    if (n.op_type() != "Gemm" || !(n.domain().empty() || n.domain() == "ai.onnx") ||
        n.input_size() < 2 || IntAttr(n, "transB", 0) != 0) {
      continue;
    }
    const onnx::TensorProto* b = ctx.graph().ConstantValue(n.input(1));
    const broadcast::Shape& out = ctx.ShapeOf(n.output(0));
    if (b == nullptr || !out.IsFullyKnown()) continue;
    std::vector<targets::FragmentOperand> as_is;
    bool known = true;
    for (int k = 0; k < n.input_size(); ++k) {
      targets::FragmentOperand o;
      o.name = n.input(k);
      if (!o.name.empty()) {
        o.shape = ctx.ShapeOfInput(id, k);
        o.elem = ctx.ElemOf(o.name);
        o.constant = ctx.graph().ConstantValue(o.name);
        known &= o.shape.IsFullyKnown() && o.elem != 0;
      }
      as_is.push_back(std::move(o));
    }
    if (!known) continue;
    const std::optional<onnx::TensorProto> bt =
        Transposed(*b, absl::StrCat(n.input(1), "_t"), ctx.model().base_dir);
    if (!bt) continue;
    std::vector<targets::FragmentOperand> flipped = as_is;
    flipped[1].name = bt->name();
    flipped[1].shape = broadcast::Shape::Of({b->dims(1), b->dims(0)});
    flipped[1].constant = &*bt;
    onnx::NodeProto candidate = n;
    candidate.set_input(1, bt->name());
    SetTransB(&candidate);
    const int32_t elem = ctx.ElemOf(n.output(0));
    const std::optional<std::vector<absl::StatusOr<targets::LiveVerdict>>> v =
        targets::DecideReplacement(*live, ctx.model(), n, as_is, candidate, flipped, elem, out);
    if (!v || !targets::OnlyReplacementRuns(*v)) continue;
    const std::string old_b = n.input(1);
    onnx::TensorProto tensor = *bt;
    const std::string name = ctx.FreshName(absl::StrCat(old_b, "_t"));
    tensor.set_name(name);
    ctx.AllowInitializers();
    ctx.graph().AddInitializer(std::move(tensor));
    ctx.SetShape(name, onnx::TensorProto::FLOAT, broadcast::Shape::Of({b->dims(1), b->dims(0)}));
    RecordRewrite(&ctx, id, "converted", old_b, ctx.ShapeOf(old_b).ToString(),
                  broadcast::Shape::Of({b->dims(1), b->dims(0)}).ToString(),
                  absl::StrCat("B transposed into a new initializer '", name,
                               "', transB = 1 (decided live on ", live->label(),
                               ": the Gemm as it is ", (*v)[0]->why, ")"),
                  static_cast<int64_t>(bt->raw_data().size()));
    ctx.graph().SetInput(id, 1, name);
    SetTransB(ctx.graph().mutable_node(id));
    ctx.DropIfUnused(old_b);
  }
  return absl::OkStatus();
}

}  // namespace onnx_bcast::passes::legalize
