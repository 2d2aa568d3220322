// The operand rewrites of the broadcast-making passes (see operand_rewrites.h).
#include "passes/operand_rewrites.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "broadcast/rules.h"
#include "proto/shapes.h"
#include "proto/tensor_data.h"
#include "proto/tensor_util.h"
#include "targets/targets.h"

namespace onnx_bcast::passes {
namespace {

using broadcast::Shape;

std::string AxesText(const std::vector<int64_t>& axes) {
  return absl::StrCat("[", absl::StrJoin(axes, ","), "]");
}

Shape PrependOnes(const Shape& s, int64_t count) {
  std::vector<broadcast::Dim> dims(static_cast<size_t>(count), broadcast::Dim::Value(1));
  dims.insert(dims.end(), s.dims.begin(), s.dims.end());
  return Shape::FromDims(std::move(dims));
}

int64_t PayloadBytes(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return 0;  // the copy shares the file
  int64_t count = 1;
  for (int64_t d : t.dims()) count *= d;
  return proto::RawByteSize(t.data_type(), count);
}

// When `name` is the only use of an Unsqueeze's output, adds `missing` leading axes to that
// Unsqueeze instead of inserting another one.
bool FoldIntoProducerUnsqueeze(RewriteContext& ctx, const std::string& name, int64_t missing,
                               const Shape& aligned) {
  const int p = ctx.graph().Producer(name);
  if (p < 0 || ctx.graph().UseCount(name) != 1) return false;
  onnx::NodeProto* n = ctx.graph().mutable_node(p);
  if (n->op_type() != "Unsqueeze" || (!n->domain().empty() && n->domain() != "ai.onnx")) {
    return false;
  }
  const Shape out = ctx.ShapeOf(name);
  if (!out.rank_known) return false;
  std::vector<int64_t> axes;
  onnx::AttributeProto* attr = nullptr;
  for (auto& a : *n->mutable_attribute()) {
    if (a.name() == "axes") attr = &a;
  }
  if (attr != nullptr) {
    axes.assign(attr->ints().begin(), attr->ints().end());
  } else if (n->input_size() >= 2) {
    const onnx::TensorProto* t = ctx.graph().ConstantValue(n->input(1));
    if (t == nullptr) return false;
    absl::StatusOr<std::vector<int64_t>> v = proto::ReadIntValues(*t, ctx.model().base_dir);
    if (!v.ok()) return false;
    axes = *v;
  } else {
    return false;
  }
  // Axes index the output; the new leading axes shift the old ones.
  std::vector<int64_t> merged;
  for (int64_t i = 0; i < missing; ++i) merged.push_back(i);
  for (int64_t a : axes) merged.push_back((a < 0 ? a + out.rank() : a) + missing);
  std::sort(merged.begin(), merged.end());
  if (attr != nullptr) {
    attr->clear_ints();
    for (int64_t a : merged) attr->add_ints(a);
  } else {
    const std::string old = n->input(1);
    ctx.graph().SetInput(
        p, 1,
        ctx.Int64Constant(merged, absl::StrCat("unsqueeze_axes_", absl::StrJoin(merged, "_")), p));
    ctx.DropIfUnused(old);
  }
  ctx.SetShape(name, ctx.ElemOf(name), aligned);
  return true;
}

}  // namespace

absl::Status ExpandOperandTo(RewriteContext& ctx, int id, int slot, const std::string& shape_tensor,
                             const Shape& out) {
  if (absl::Status s8 = ctx.RequireOpset(8, absl::StrCat("an Expand for ", ctx.Label(id)));
      !s8.ok()) {
    return s8;
  }
  const std::string name = ctx.graph().node(id).input(slot);
  Rewrite r;
  r.tensor = name;
  r.before = ctx.ShapeOf(name).ToString();
  r.after = out.ToString();
  const std::string e = ctx.InsertExpand(name, shape_tensor, out, id);
  ctx.graph().SetInput(id, slot, e);
  r.action = "inserted";
  r.detail = absl::StrCat("Expand to '", shape_tensor, "' -> '", e, "'");
  ctx.Record(id, std::move(r));
  return absl::OkStatus();
}

std::optional<int64_t> OperandRank(RewriteContext& ctx, int id, int slot) {
  const onnx::NodeProto& c = ctx.graph().node(id);
  const analysis::BroadcastOp op = ctx.OpOf(id);
  auto rank_of = [&](int k) -> std::optional<int64_t> {
    if (k >= c.input_size() || c.input(k).empty()) return std::nullopt;
    const Shape& s = ctx.ShapeOfInput(id, k);
    if (!s.rank_known) return std::nullopt;
    return s.rank();
  };
  if (op.multidirectional()) {
    int64_t rank = 0;
    for (int k = 0; k < c.input_size(); ++k) {
      std::optional<int64_t> r = rank_of(k);
      if (!r) return std::nullopt;
      rank = std::max(rank, *r);
    }
    return rank;
  }
  if (op.legacy) return std::nullopt;
  if (op.kind == analysis::BroadcastOpKind::kPRelu && slot == 1) return rank_of(0);
  if (op.kind == analysis::BroadcastOpKind::kGemm && slot == 2) return 2;
  if (op.kind == analysis::BroadcastOpKind::kMatMul) {
    std::optional<int64_t> a = rank_of(0), b = rank_of(1);
    if (!a || !b || *a < 2 || *b < 2) return std::nullopt;
    return std::max(*a, *b);
  }
  return std::nullopt;
}

std::optional<int64_t> CommonWantedRank(RewriteContext& ctx, const std::string& name) {
  if (ctx.graph().IsGraphOutput(name) || ctx.graph().IsUsedBySubgraph(name)) return std::nullopt;
  std::optional<int64_t> common;
  for (const proto::Use& use : ctx.graph().Consumers(name)) {
    std::optional<int64_t> r = OperandRank(ctx, use.node, use.slot);
    if (!r || (common && *common != *r)) return std::nullopt;
    common = r;
  }
  return common;
}

void AlignOperand(RewriteContext& ctx, int id, int slot, int64_t rank) {
  // A node may lack the operand (a PRelu without slope; found by fuzz_opt).
  if (slot < 0 || slot >= ctx.graph().node(id).input_size()) return;
  const std::string& input = ctx.graph().node(id).input(slot);
  if (input.empty()) return;
  const Shape& current = ctx.ShapeOfInput(id, slot);
  if (!current.rank_known) {
    ctx.Debug(id, absl::StrCat("input '", input, "' has an unknown rank"));
    return;
  }
  // Most operands already have the rank: no copies for them.
  if (rank <= current.rank()) return;
  // Copies: the edits below rewire the node and record shapes.
  const std::string name = input;
  const Shape s = current;
  const int64_t missing = rank - s.rank();
  const Shape aligned = PrependOnes(s, missing);
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < missing; ++i) axes.push_back(i);
  Rewrite r;
  r.tensor = name;
  r.before = s.ToString();
  r.after = aligned.ToString();
  if (onnx::TensorProto* t = ctx.graph().MutableConstantValue(name); t != nullptr) {
    const auto key = std::make_pair(name, rank);
    if (auto it = ctx.constant_copies().aligned.find(key);
        it != ctx.constant_copies().aligned.end()) {
      ctx.graph().SetInput(id, slot, it->second);
      ctx.DropIfUnused(name);
      r.action = "folded";
      r.detail = absl::StrCat("uses the rank-", rank, " copy '", it->second, "'");
      ctx.Record(id, std::move(r));
      return;
    }
    if (CommonWantedRank(ctx, name) == rank) {
      // Every user wants this rank: prepend the 1s in place (payload unchanged).
      std::vector<int64_t> dims(static_cast<size_t>(missing), 1);
      dims.insert(dims.end(), t->dims().begin(), t->dims().end());
      t->clear_dims();
      for (int64_t d : dims) t->add_dims(d);
      ctx.ConstantShapeChanged(name, aligned);
      ++ctx.stats().initializers_rewritten;
      r.action = "folded";
      r.detail = absl::StrCat("leading 1s folded into constant '", name, "'");
      ctx.Record(id, std::move(r));
      return;
    }
    const int64_t bytes = PayloadBytes(*t);
    if (bytes <= ctx.fold_limit_bytes()) {
      onnx::TensorProto copy = *t;
      const std::string copy_name = ctx.FreshName(absl::StrCat(name, "_rank", rank));
      copy.set_name(copy_name);
      copy.clear_dims();
      for (int64_t i = 0; i < missing; ++i) copy.add_dims(1);
      for (int64_t d : t->dims()) copy.add_dims(d);
      const bool as_initializer = ctx.graph().Initializer(name) != nullptr;
      if (as_initializer) {
        ctx.AllowInitializers();
        ctx.graph().AddInitializer(std::move(copy));
        ctx.NoteInitializerShape(copy_name, ctx.ElemOf(name), aligned);
      } else {
        ctx.graph().InsertBefore(
            id, proto::ConstantNode(ctx.FreshName(absl::StrCat(copy_name, "_const")), copy_name,
                                    std::move(copy)));
        ++ctx.stats().nodes_inserted;
        ctx.SetShape(copy_name, ctx.ElemOf(name), aligned);
      }
      ctx.constant_copies().aligned[key] = copy_name;
      ctx.graph().SetInput(id, slot, copy_name);
      ctx.DropIfUnused(name);
      ++ctx.stats().initializers_rewritten;
      ctx.stats().bytes_added += bytes;
      r.action = "folded";
      r.bytes = bytes;
      r.detail =
          absl::StrCat("copy '", copy_name, "' of shared constant '", name, "' with leading 1s");
      ctx.Record(id, std::move(r));
      return;
    }
  }
  if (FoldIntoProducerUnsqueeze(ctx, name, missing, aligned)) {
    r.action = "folded";
    r.detail = absl::StrCat("leading axes added to the Unsqueeze producing '", name, "'");
    ctx.Record(id, std::move(r));
    return;
  }
  const std::string out = ctx.InsertUnsqueeze(name, axes, id);
  ctx.graph().SetInput(id, slot, out);
  r.action = "inserted";
  r.detail = absl::StrCat("Unsqueeze axes ", AxesText(axes), " -> '", out, "'");
  ctx.Record(id, std::move(r));
}

bool FoldsToConstant(RewriteContext& ctx, const std::string& name, const Shape& out) {
  const std::optional<int64_t> count = out.NumElements();
  const onnx::TensorProto* t = ctx.graph().ConstantValue(name);
  if (t == nullptr || !count || !out.Extents() || !proto::HasFixedWidthPayload(t->data_type())) {
    return false;
  }
  const int bits = proto::ElementBits(t->data_type());
  return *count <= ctx.fold_limit_bytes() / std::max(1, bits / 8);
}

absl::StatusOr<bool> ExpandOperand(RewriteContext& ctx, int id, int slot, const Shape& out,
                                   const std::vector<std::string>* operands) {
  if (slot < 0 || slot >= ctx.graph().node(id).input_size()) return true;  // no such operand
  const std::string name = ctx.graph().node(id).input(slot);
  if (name.empty()) return true;
  const Shape s = ctx.ShapeOf(name);
  if (s == out) return true;
  if (!s.rank_known || !out.rank_known) {
    ctx.Debug(id, absl::StrCat("input '", name, "' or the output has an unknown rank"));
    return false;
  }
  Rewrite r;
  r.tensor = name;
  r.before = s.ToString();
  r.after = out.ToString();
  std::optional<std::vector<int64_t>> extents = out.Extents();
  if (extents) {
    const onnx::TensorProto* t = ctx.graph().ConstantValue(name);
    if (FoldsToConstant(ctx, name, out)) {
      const auto key = std::make_pair(name, out.ToString());
      if (auto it = ctx.constant_copies().broadcast.find(key);
          it != ctx.constant_copies().broadcast.end()) {
        ctx.graph().SetInput(id, slot, it->second);
        ctx.DropIfUnused(name);
        r.action = "folded";
        r.detail = absl::StrCat("uses the broadcast copy '", it->second, "'");
        ctx.Record(id, std::move(r));
        return true;
      }
      const bool in_place = ctx.graph().UseCount(name) == 1;
      const bool is_initializer = ctx.graph().Initializer(name) != nullptr;
      const std::string new_name = in_place ? name : ctx.FreshName(absl::StrCat(name, "_expanded"));
      absl::StatusOr<onnx::TensorProto> folded = proto::BroadcastTensorTo(
          *t, *extents, new_name, ctx.model().base_dir, ctx.fold_limit_bytes());
      if (folded.ok()) {
        const int64_t old_bytes = PayloadBytes(*t);
        const int64_t new_bytes = PayloadBytes(*folded);
        if (in_place) {
          onnx::TensorProto* target = ctx.graph().MutableConstantValue(name);
          if (!is_initializer) folded->set_name(target->name());
          *target = std::move(*folded);
          ctx.ConstantShapeChanged(name, out);
          r.bytes = new_bytes - old_bytes;
          r.detail = absl::StrCat("constant '", name, "' broadcast in place");
        } else if (is_initializer) {
          ctx.AllowInitializers();
          ctx.graph().AddInitializer(std::move(*folded));
          ctx.NoteInitializerShape(new_name, ctx.ElemOf(name), out);
          ctx.graph().SetInput(id, slot, new_name);
          ctx.constant_copies().broadcast[key] = new_name;
          r.bytes = new_bytes;
          r.detail = absl::StrCat("constant '", name, "' broadcast into '", new_name, "'");
        } else {
          ctx.graph().InsertBefore(
              id, proto::ConstantNode(ctx.FreshName(absl::StrCat(new_name, "_const")), new_name,
                                      std::move(*folded)));
          ++ctx.stats().nodes_inserted;
          ctx.SetShape(new_name, ctx.ElemOf(name), out);
          ctx.graph().SetInput(id, slot, new_name);
          ctx.constant_copies().broadcast[key] = new_name;
          r.bytes = new_bytes;
          r.detail = absl::StrCat("constant '", name, "' broadcast into Constant '", new_name, "'");
        }
        ctx.stats().bytes_added += r.bytes;
        ++ctx.stats().initializers_rewritten;
        r.action = "folded";
        ctx.Record(id, std::move(r));
        return true;
      }
      ctx.Debug(id, absl::StrCat("constant '", name, "' not folded: ", folded.status().message()));
    }
  }
  if (absl::Status s8 = ctx.RequireOpset(8, absl::StrCat("an Expand for ", ctx.Label(id)));
      !s8.ok()) {
    return s8;
  }
  if (extents) {
    const std::string target = ctx.Int64Constant(*extents, "expand_shape", id);
    const std::string e = ctx.InsertExpand(name, target, out, id);
    ctx.graph().SetInput(id, slot, e);
    r.action = "inserted";
    r.detail = absl::StrCat("Expand to constant shape ", out.ToString(), " -> '", e, "'");
    ctx.Record(id, std::move(r));
    return true;
  }
  if (!ctx.RuntimeShapesAllowed()) {
    ctx.Debug(id,
              absl::StrCat("'", name, "' would need an Expand to a shape known only at run time ",
                           out.ToString(), ", and ", ctx.options().target->name,
                           " has no run-time shapes: left for the target check"));
    return false;
  }
  // Symbolic: Expand is bidirectional, so expanding against each other operand's Shape gives
  // the broadcast of all of them.
  const onnx::NodeProto& n = ctx.graph().node(id);
  const std::vector<std::string> inputs =
      operands != nullptr ? *operands
                          : std::vector<std::string>(n.input().begin(), n.input().end());
  std::vector<std::string> others;
  std::vector<Shape> other_shapes;
  for (int k = 0; k < static_cast<int>(inputs.size()); ++k) {
    if (k == slot || inputs[k].empty()) continue;
    const Shape sk = ctx.ShapeOf(inputs[k]);
    if (!sk.rank_known) {
      ctx.Debug(id, absl::StrCat("input '", inputs[k], "' has an unknown rank"));
      return false;
    }
    others.push_back(inputs[k]);
    other_shapes.push_back(sk);
  }
  std::string cur = name;
  Shape cur_shape = s;
  std::vector<std::string> via;
  for (size_t k = 0; k < others.size(); ++k) {
    const Shape pair[] = {cur_shape, other_shapes[k]};
    const broadcast::BroadcastResult br = broadcast::BroadcastNumpy(pair);
    if (br.verdict == broadcast::Verdict::kError || br.verdict == broadcast::Verdict::kUnknown) {
      ctx.Debug(id, absl::StrCat("cannot expand '", name, "': ", br.ToString()));
      return false;
    }
    if (br.output == cur_shape) continue;
    cur = ctx.InsertExpand(cur, ctx.InsertShape(others[k], id), br.output, id);
    cur_shape = br.output;
    via.push_back(others[k]);
  }
  ctx.graph().SetInput(id, slot, cur);
  r.action = "inserted";
  r.after = cur_shape.ToString();
  r.detail = absl::StrCat("Expand to Shape(", absl::StrJoin(via, "), Shape("), ") -> '", cur, "'");
  ctx.Record(id, std::move(r));
  return true;
}

namespace {

int64_t GemmIntAttr(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.i();
  }
  return fallback;
}

}  // namespace

// Gemm's C to (M,N): M from A, N from B (after transA/transB). A static (M,N) is a constant
// Expand target. A symbolic one is taken at run time from a [M,1] slice of A and a [1,N] slice
// of B (one row or column each, no arithmetic): Expand is bidirectional, so C expanded against
// their shapes in turn is exactly (M,N) when C broadcasts to it, and the analysis follows
// Shape -> Expand, so the result provably has shape (M,N). The slices need K >= 1; with K not
// known to be so, the target is Concat(Gather(Shape(A)), Gather(Shape(B))) instead, correct at
// run time though the analysis may not see through it.
absl::Status ExpandGemmC(RewriteContext& ctx, int id) {
  const onnx::NodeProto& n = ctx.graph().node(id);
  // DecideNode reports C against (M,N), which it reads from A, B, transA and transB.
  analysis::NodeVerdict v;
  if (!ctx.Decide(id, &v) || v.inputs.size() != 2 || !v.inputs[1].rank_known) {
    ctx.Debug(id, "Gemm's A or B is not known to be 2-D; C left as is");
    return absl::OkStatus();
  }
  if (v.verdict != broadcast::Verdict::kOk) {
    ctx.Debug(id, "C not provably broadcastable to (M,N)");
    return absl::OkStatus();
  }
  const broadcast::Shape& c = v.inputs[0];
  const broadcast::Shape& mn = v.inputs[1];
  const bool trans_a = GemmIntAttr(n, "transA", 0) != 0;
  const bool trans_b = GemmIntAttr(n, "transB", 0) != 0;
  const broadcast::Shape a = ctx.ShapeOf(n.input(0));
  const broadcast::Dim& m = mn.dims[0];
  const broadcast::Dim& k = a.dims[trans_a ? 0 : 1];
  const broadcast::Dim& nd = mn.dims[1];
  if (c == mn) return absl::OkStatus();
  if (mn.IsFullyKnown()) return ExpandOperand(ctx, id, 2, mn).status();
  if (!ctx.RuntimeShapesAllowed()) {
    ctx.Debug(id, absl::StrCat("C would need an Expand to (M,N) ", mn.ToString(),
                               ", known only at run time, and ", ctx.options().target->name,
                               " has no run-time shapes: left for the target check"));
    return absl::OkStatus();
  }
  const std::string a_name = n.input(0), b_name = n.input(1), c_name = n.input(2);
  const int32_t elem = ctx.ElemOf(a_name);
  if (k.is_value() && k.value() >= 1) {
    // [M,1] from A and [1,N] from B, each only where C does not already have that extent.
    const broadcast::Dim c0 = c.rank() == 2 ? c.dims[0] : broadcast::Dim::Value(1);
    const broadcast::Dim c1 = c.rank() >= 1 ? c.dims[c.rank() - 1] : broadcast::Dim::Value(1);
    // ExpandOperand reads `operands` by slot: C stays at slot 2, absent slices are empty.
    std::vector<std::string> operands(3);
    if (!(c0 == m)) {
      std::string col =
          ctx.InsertNode("Gather", {a_name, ctx.Int64Constant({0}, "gemm_first", id)},
                         {{"axis", trans_a ? 0 : 1}}, absl::StrCat(a_name, "_m_slice"), elem,
                         trans_a ? broadcast::Shape::FromDims({broadcast::Dim::Value(1), m})
                                 : broadcast::Shape::FromDims({m, broadcast::Dim::Value(1)}),
                         id);
      if (trans_a) {
        col = ctx.InsertNode("Transpose", {col}, {}, absl::StrCat(a_name, "_m_column"), elem,
                             broadcast::Shape::FromDims({m, broadcast::Dim::Value(1)}), id);
      }
      operands[0] = col;
    }
    if (!(c1 == nd)) {
      std::string row = ctx.InsertNode(
          "Gather", {b_name, ctx.Int64Constant({0}, "gemm_first", id)}, {{"axis", trans_b ? 1 : 0}},
          absl::StrCat(b_name, "_n_slice"), ctx.ElemOf(b_name),
          trans_b ? broadcast::Shape::FromDims({nd, broadcast::Dim::Value(1)})
                  : broadcast::Shape::FromDims({broadcast::Dim::Value(1), nd}),
          id);
      if (trans_b) {
        row = ctx.InsertNode("Transpose", {row}, {}, absl::StrCat(b_name, "_n_row"),
                             ctx.ElemOf(b_name),
                             broadcast::Shape::FromDims({broadcast::Dim::Value(1), nd}), id);
      }
      operands[1] = row;
    }
    operands[2] = c_name;
    return ExpandOperand(ctx, id, 2, mn, &operands).status();
  }
  const broadcast::Shape one = broadcast::Shape::Of({1});
  const std::string mt = ctx.InsertNode(
      "Gather",
      {ctx.InsertShape(a_name, id), ctx.Int64Constant({trans_a ? 1 : 0}, "gemm_axis", id)}, {},
      "gemm_m", onnx::TensorProto::INT64, one, id);
  const std::string nt = ctx.InsertNode(
      "Gather",
      {ctx.InsertShape(b_name, id), ctx.Int64Constant({trans_b ? 0 : 1}, "gemm_axis", id)}, {},
      "gemm_n", onnx::TensorProto::INT64, one, id);
  const std::string target =
      ctx.InsertNode("Concat", {mt, nt}, {{"axis", 0}}, "gemm_mn", onnx::TensorProto::INT64,
                     broadcast::Shape::Of({2}), id);
  return ExpandOperandTo(ctx, id, 2, target, mn);
}

}  // namespace onnx_bcast::passes
