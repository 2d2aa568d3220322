// eliminate-redundant-broadcast (see eliminate_redundant_broadcast.h).
#include "passes/eliminate_redundant_broadcast.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "broadcast/rules.h"
#include "passes/registry.h"
#include "passes/rewrite_context.h"
#include "proto/shapes.h"
#include "proto/tensor_data.h"
#include "proto/tensor_util.h"
#include "support/status_macros.h"
#include "targets/targets.h"

namespace onnx_bcast::passes {
namespace {

using broadcast::Shape;

// Constants larger than this are not scanned for uniform axes.
constexpr int64_t kMaxShrinkScanBytes = int64_t{64} << 20;

class EliminateRedundantBroadcast : public Pass {
 public:
  absl::Status Run(proto::Model* model, const PassOptions& options, PassStats* stats) override {
    return RewriteEveryGraph(model, kEliminateRedundantBroadcastPassName, options, stats,
                             [this](RewriteContext& ctx) -> absl::Status {
                               // Per graph (function trials have their own stats).
                               ctx_ = &ctx;
                               stats_ = &ctx.stats();
                               shrunk_.clear();
                               proto::GraphEditor& g = ctx.graph();
                               for (int id = g.original_node_count() - 1; id >= 0; --id) {
                                 if (!g.alive(id)) continue;
                                 BCAST_RETURN_IF_ERROR(TryRemove(id));
                               }
                               // Under equal ranks the constants are align-ranks'
                               // to shape: shrinking them would undo it every run.
                               if (!KeepRanks()) {
                                 ShrinkConstants();
                                 MergeShrunkConstants();
                               }
                               return absl::OkStatus();
                             });
  }

 private:
  bool KeepRanks() const {
    return ctx_->options().target != nullptr && ctx_->options().target->equal_rank;
  }

  // Why `id` is not a pure broadcast of its first input (empty: it is one).
  std::string NotPureBroadcast(int id, const Shape& sx, const Shape& sy) {
    proto::GraphEditor& g = ctx_->graph();
    const onnx::NodeProto& n = g.node(id);
    const std::string& op = n.op_type();
    if (op == "Expand") return "";
    if (op == "Unsqueeze") {
      std::vector<int64_t> axes;
      bool found = false;
      for (const auto& a : n.attribute()) {
        if (a.name() == "axes") {
          axes.assign(a.ints().begin(), a.ints().end());
          found = true;
        }
      }
      if (!found && n.input_size() >= 2) {
        const onnx::TensorProto* t = g.ConstantValue(n.input(1));
        if (t == nullptr) return "axes are not constant";
        absl::StatusOr<std::vector<int64_t>> v = proto::ReadIntValues(*t, ctx_->model().base_dir);
        if (!v.ok()) return "axes are not readable";
        axes = *v;
      }
      for (int64_t& a : axes) {
        if (a < 0) a += sy.rank();
      }
      std::sort(axes.begin(), axes.end());
      for (size_t i = 0; i < axes.size(); ++i) {
        if (axes[i] != static_cast<int64_t>(i)) return "inserts a non-leading axis";
      }
      return sy.rank() == sx.rank() + static_cast<int64_t>(axes.size()) ? "" : "rank mismatch";
    }
    if (op == "Reshape") {
      const int64_t k = sy.rank() - sx.rank();
      if (k < 0) return "lowers the rank";
      for (int64_t i = 0; i < sy.rank(); ++i) {
        const broadcast::Dim& d = sy.dims[i];
        if (d.is_unknown()) return "unknown output dim";
        if (i < k && !d.Is(1)) return "not only leading 1s added";
        if (i >= k && (sx.dims[i - k].is_unknown() || !(sx.dims[i - k] == d))) {
          return "changes dims";
        }
      }
      return "";
    }
    if (op == "Tile") {
      if (n.input_size() < 2) return "no repeats";
      const onnx::TensorProto* t = g.ConstantValue(n.input(1));
      if (t == nullptr) return "repeats are not constant";
      absl::StatusOr<std::vector<int64_t>> reps = proto::ReadIntValues(*t, ctx_->model().base_dir);
      if (!reps.ok() || static_cast<int64_t>(reps->size()) != sx.rank()) return "bad repeats";
      for (int64_t i = 0; i < sx.rank(); ++i) {
        if ((*reps)[i] != 1 && !sx.dims[i].Is(1)) return "tiles an axis of extent != 1";
      }
      return "";
    }
    return "not a broadcast op";
  }

  // True when every use of `y` (of shape `sy`) would compute the same output shape reading a
  // tensor of shape `sx` instead (numpy broadcasting then gives the same values).
  // True when `sy` is `sx` with leading 1s and another operand already has sy's rank: the
  // leading 1s then change neither the broadcast result nor its values, whatever the other
  // extents are (unknown ones included).
  static bool LeadingOnesOnly(const Shape& sy, const Shape& sx, const std::vector<Shape>& after) {
    if (!sy.rank_known || !sx.rank_known || sy.rank() < sx.rank()) return false;
    const int64_t lead = sy.rank() - sx.rank();
    for (int64_t i = 0; i < sy.rank(); ++i) {
      if (i < lead ? !sy.dims[i].Is(1)
                   : sy.dims[i].is_unknown() || !(sy.dims[i] == sx.dims[i - lead])) {
        return false;
      }
    }
    for (const Shape& other : after) {
      if (other.rank_known && other.rank() >= sy.rank()) return true;
    }
    return false;
  }

  bool ConsumersAccept(const std::string& y, const Shape& sy, const Shape& sx, std::string* why) {
    proto::GraphEditor& g = ctx_->graph();
    if (g.IsGraphOutput(y) || g.IsUsedBySubgraph(y)) {
      *why = "output is a graph output or read by a subgraph";
      return false;
    }
    const std::vector<proto::Use> uses = g.Consumers(y);
    if (uses.empty()) {
      *why = "output has no consumer";
      return false;
    }
    for (const proto::Use& use : uses) {
      const onnx::NodeProto& c = g.node(use.node);
      const analysis::BroadcastOp op = ctx_->OpOf(use.node);
      std::vector<Shape> before, after;
      for (int k = 0; k < c.input_size(); ++k) {
        before.push_back(c.input(k) == y ? sy : ctx_->ShapeOf(c.input(k)));
        after.push_back(c.input(k) == y ? sx : before.back());
      }
      // The consumer decided at both shapes (the routine `check` uses): the operand may go
      // when both are fine with the same output. Only operands that broadcast count: PRelu's
      // slope, Gemm's C, every operand of the numpy forms.
      const bool operand_broadcasts = op.multidirectional() ||
                                      (!op.legacy && op.kind == analysis::BroadcastOpKind::kPRelu &&
                                       c.input_size() == 2 && c.input(0) != y) ||
                                      (!op.legacy && op.kind == analysis::BroadcastOpKind::kGemm &&
                                       c.input_size() >= 3 && c.input(0) != y && c.input(1) != y);
      bool ok = operand_broadcasts && ctx_->DecideWith(use.node, before, &before_v_) &&
                ctx_->DecideWith(use.node, after, &after_v_) &&
                before_v_.verdict == broadcast::Verdict::kOk &&
                after_v_.verdict == broadcast::Verdict::kOk && before_v_.output == after_v_.output;
      if (!ok && op.multidirectional()) ok = LeadingOnesOnly(sy, sx, after);
      if (!ok) {
        std::vector<std::string> b, a;
        for (const Shape& t : before) b.push_back(t.ToString());
        for (const Shape& t : after) a.push_back(t.ToString());
        *why = absl::StrCat("consumer ", ctx_->Label(use.node), " (", c.op_type(),
                            ") would change or does not broadcast: ", absl::StrJoin(b, " and "),
                            " vs ", absl::StrJoin(a, " and "));
        return false;
      }
    }
    return true;
  }

  absl::Status TryRemove(int id) {
    proto::GraphEditor& g = ctx_->graph();
    const onnx::NodeProto& n = g.node(id);
    if (!n.domain().empty() && n.domain() != "ai.onnx") return absl::OkStatus();
    const std::string& op = n.op_type();
    if (op != "Expand" && op != "Unsqueeze" && op != "Reshape" && op != "Tile") {
      return absl::OkStatus();
    }
    if (n.input_size() < 1 || n.output_size() != 1 || n.input(0).empty()) {
      return absl::OkStatus();
    }
    const std::string x = n.input(0);
    const std::string y = n.output(0);
    const Shape sx = ctx_->ShapeOf(x);
    Shape sy = ctx_->ShapeOf(y);
    if (op == "Expand" && n.input_size() == 2 && sx.rank_known && ctx_->Decide(id, &before_v_)) {
      // Its own verdict: a constant target it cannot reach is a proven error, and a decided
      // output is y's shape. For Expand(x, Shape(z)) that is x broadcast with z's shape, where
      // the tables may hold symbols libonnx invented for Shape's value, hiding the equality.
      if (before_v_.verdict == broadcast::Verdict::kError) {
        return absl::InvalidArgumentError(before_v_.message);
      }
      if (before_v_.verdict == broadcast::Verdict::kOk) sy = before_v_.output;
    }
    if (!sx.rank_known || !sy.rank_known) {
      ctx_->Debug(id, "input or output rank unknown");
      return absl::OkStatus();
    }
    if (std::string why = NotPureBroadcast(id, sx, sy); !why.empty()) {
      ctx_->Debug(id, why);
      return absl::OkStatus();
    }
    // A target that needs equal ranks (ncnn runs this pass before align-ranks) keeps every
    // rank-raising node: align-ranks would put it back, and the pipeline would not be
    // idempotent. Expand and Tile of the same rank still go.
    if (KeepRanks() && sy.rank() != sx.rank()) {
      ctx_->Debug(id, "raises the rank, which the target's equal ranks need");
      return absl::OkStatus();
    }
    std::string why;
    if (!ConsumersAccept(y, sy, sx, &why)) {
      ctx_->Debug(id, why);
      return absl::OkStatus();
    }
    const std::vector<proto::Use> uses = g.Consumers(y);
    for (const proto::Use& use : uses) g.SetInput(use.node, use.slot, x);
    Rewrite r;
    r.action = "removed";
    r.tensor = y;
    r.before = sy.ToString();
    r.after = sx.ToString();
    r.detail = absl::StrCat(uses.size(), " consumer(s) now read '", x, "' directly");
    ctx_->Record(id, std::move(r));
    std::vector<std::string> inputs(n.input().begin() + 1, n.input().end());
    g.RemoveNode(id);
    ++stats_->nodes_removed;
    for (const std::string& t : inputs) RemoveIfDead(t);
    return absl::OkStatus();
  }

  // Removes what only fed a removed node: the side-effect-free nodes materialize-broadcast
  // builds Expand targets from (Shape, Constant, and the Gather/Transpose/Concat of a Gemm's
  // (M,N)), transitively, and initializers.
  void RemoveIfDead(const std::string& name) {
    proto::GraphEditor& g = ctx_->graph();
    if (name.empty() || g.UseCount(name) > 0 || g.IsGraphInput(name)) return;
    const int p = g.Producer(name);
    if (p >= 0) {
      const onnx::NodeProto& pn = g.node(p);
      const std::string& op = pn.op_type();
      if ((op != "Shape" && op != "Constant" && op != "Gather" && op != "Transpose" &&
           op != "Concat") ||
          pn.output_size() != 1 || (!pn.domain().empty() && pn.domain() != "ai.onnx")) {
        return;
      }
      Rewrite r;
      r.action = "removed";
      r.tensor = name;
      r.detail = "no uses left";
      ctx_->Record(p, std::move(r));
      const std::vector<std::string> inputs(pn.input().begin(), pn.input().end());
      g.RemoveNode(p);
      ++stats_->nodes_removed;
      for (const std::string& in : inputs) RemoveIfDead(in);
      return;
    }
    if (g.Initializer(name) != nullptr) {
      Rewrite r;
      r.node = "<initializers>";
      r.action = "removed";
      r.tensor = name;
      r.detail = "initializer with no uses left";
      r.bytes = -proto::RawByteSize(g.Initializer(name)->data_type(),
                                    ctx_->ShapeOf(name).NumElements().value_or(0));
      stats_->bytes_added += r.bytes;
      stats_->Log(std::move(r));
      g.RemoveInitializer(name);
    }
  }

  // Constants that are broadcasts of a smaller tensor are cut back to it.
  void ShrinkConstants() {
    proto::GraphEditor& g = ctx_->graph();
    std::vector<std::string> names;
    for (const auto& t : g.graph()->initializer()) names.push_back(t.name());
    for (int id = 0; id < g.original_node_count(); ++id) {
      const onnx::NodeProto& n = g.node(id);
      if (g.alive(id) && n.op_type() == "Constant" && n.output_size() == 1) {
        names.push_back(n.output(0));
      }
    }
    for (const std::string& name : names) {
      onnx::TensorProto* t = g.MutableConstantValue(name);
      if (t == nullptr || g.Consumers(name).empty()) continue;
      if (!proto::HasFixedWidthPayload(t->data_type())) continue;
      const Shape s = proto::ShapeOfTensor(*t);
      std::string why;
      if (!ConsumersAccept(name, s, s, &why)) continue;  // only broadcast consumers qualify
      Shape smaller = s;
      std::vector<int64_t> axes;
      bool has_wide_axis = false;
      for (int64_t d : t->dims()) has_wide_axis |= d > 1;
      if (has_wide_axis) {
        absl::StatusOr<std::vector<int64_t>> uniform =
            proto::UniformAxes(*t, ctx_->model().base_dir, kMaxShrinkScanBytes);
        if (uniform.ok()) axes = *uniform;
        for (int64_t a : axes) smaller.dims[a] = broadcast::Dim::Value(1);
        if (!axes.empty() && !ConsumersAccept(name, s, smaller, &why)) {
          axes.clear();
          smaller = s;
        }
      }
      // Leading 1s the consumers would prepend anyway (keeping rank >= 1), unless the target
      // needs equal ranks (align-ranks would add them back).
      int64_t leading = 0;
      while (!KeepRanks() && leading + 1 < smaller.rank() && smaller.dims[leading].Is(1)) {
        ++leading;
      }
      Shape stripped = Shape::FromDims({smaller.dims.begin() + leading, smaller.dims.end()});
      if (leading > 0 && !ConsumersAccept(name, s, stripped, &why)) {
        leading = 0;
        stripped = smaller;
      }
      if (axes.empty() && leading == 0) continue;
      if (!axes.empty()) {
        absl::StatusOr<onnx::TensorProto> cut =
            proto::SliceToOne(*t, axes, ctx_->model().base_dir, kMaxShrinkScanBytes);
        if (!cut.ok()) continue;
        cut->set_name(t->name());
        *t = std::move(*cut);
      }
      t->clear_dims();
      for (const broadcast::Dim& d : stripped.dims) t->add_dims(d.value());
      const int64_t before = proto::RawByteSize(t->data_type(), s.NumElements().value_or(0));
      const int64_t after = proto::RawByteSize(t->data_type(), stripped.NumElements().value_or(0));
      shrunk_.insert(name);
      ctx_->ConstantShapeChanged(name, stripped);
      ++stats_->initializers_rewritten;
      stats_->bytes_added += after - before;
      Rewrite r;
      r.node = "<initializers>";
      r.action = "shrunk";
      r.tensor = name;
      r.before = s.ToString();
      r.after = stripped.ToString();
      r.bytes = after - before;
      std::vector<std::string> what;
      if (!axes.empty()) {
        what.push_back(
            absl::StrCat("equal along axes [", absl::StrJoin(axes, ","), "] cut to extent 1"));
      }
      if (leading > 0) what.push_back(absl::StrCat(leading, " leading 1s dropped"));
      r.detail =
          absl::StrCat("constant ", absl::StrJoin(what, ", "), " (its consumers broadcast it)");
      stats_->Log(std::move(r));
    }
  }

  // A shrunk constant identical to another constant (type, dims, bytes) is replaced by it:
  // materialize-broadcast's per-shape copies of one constant come back together.
  void MergeShrunkConstants() {
    if (shrunk_.empty()) return;
    proto::GraphEditor& g = ctx_->graph();
    struct Entry {
      std::string name;
      int node = -1;  // producing Constant node, or -1 for an initializer
    };
    std::vector<Entry> entries;
    for (const auto& t : g.graph()->initializer()) {
      if (!g.IsGraphInput(t.name())) entries.push_back({t.name(), -1});
    }
    for (int id = 0; id < g.original_node_count(); ++id) {
      const onnx::NodeProto& n = g.node(id);
      if (g.alive(id) && n.op_type() == "Constant" && n.output_size() == 1) {
        entries.push_back({n.output(0), id});
      }
    }
    std::map<std::string, std::string> first;  // content key -> name
    for (const Entry& e : entries) {
      const onnx::TensorProto* t = g.ConstantValue(e.name);
      if (t == nullptr || !proto::HasFixedWidthPayload(t->data_type())) continue;
      absl::StatusOr<std::string> bytes = proto::ReadRawBytes(*t, ctx_->model().base_dir, 4096);
      if (!bytes.ok()) continue;
      const std::string key =
          absl::StrCat(t->data_type(), "|", absl::StrJoin(t->dims(), ","), "|", *bytes);
      auto it = first.find(key);
      if (it == first.end()) {
        first.emplace(key, e.name);
        continue;
      }
      if ((shrunk_.count(e.name) == 0 && shrunk_.count(it->second) == 0) ||
          g.IsGraphOutput(e.name) || g.IsUsedBySubgraph(e.name)) {
        continue;
      }
      const std::vector<proto::Use> uses = g.Consumers(e.name);
      for (const proto::Use& use : uses) g.SetInput(use.node, use.slot, it->second);
      Rewrite r;
      r.node = e.node >= 0 ? ctx_->Label(e.node) : "<initializers>";
      r.op = e.node >= 0 ? "Constant" : "";
      r.action = "removed";
      r.tensor = e.name;
      r.detail = absl::StrCat("identical to constant '", it->second, "'");
      r.bytes = -static_cast<int64_t>(bytes->size());
      stats_->bytes_added += r.bytes;
      stats_->Log(std::move(r));
      if (e.node >= 0) {
        g.RemoveNode(e.node);
        ++stats_->nodes_removed;
      } else {
        g.RemoveInitializer(e.name);
      }
    }
  }

  RewriteContext* ctx_ = nullptr;
  PassStats* stats_ = nullptr;
  analysis::NodeVerdict before_v_, after_v_;  // ConsumersAccept's records, buffers reused
  std::set<std::string> shrunk_;
};

}  // namespace

std::unique_ptr<Pass> CreateEliminateRedundantBroadcastPass() {
  return std::make_unique<EliminateRedundantBroadcast>();
}

}  // namespace onnx_bcast::passes
