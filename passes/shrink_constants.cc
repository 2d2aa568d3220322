// Shrinking and merging broadcast constants (see shrink_constants.h).
#include "passes/shrink_constants.h"

#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "proto/shapes.h"
#include "proto/tensor_data.h"
#include "proto/tensor_util.h"

namespace onnx_bcast::passes {
namespace {

using broadcast::Shape;

// Constants larger than this are not scanned for uniform axes.
constexpr int64_t kMaxShrinkScanBytes = int64_t{64} << 20;

// The initializers and Constant-node outputs of the graph, in that order.
struct ConstantEntry {
  std::string name;
  int node = -1;  // producing Constant node, or -1 for an initializer
};

std::vector<ConstantEntry> Constants(proto::GraphEditor& g, bool skip_graph_inputs) {
  std::vector<ConstantEntry> entries;
  for (const auto& t : g.graph()->initializer()) {
    if (!skip_graph_inputs || !g.IsGraphInput(t.name())) entries.push_back({t.name(), -1});
  }
  for (int id = 0; id < g.original_node_count(); ++id) {
    const onnx::NodeProto& n = g.node(id);
    if (g.alive(id) && n.op_type() == "Constant" && n.output_size() == 1) {
      entries.push_back({n.output(0), id});
    }
  }
  return entries;
}

}  // namespace

std::set<std::string> ShrinkConstants(RewriteContext& ctx, BroadcastConsumers& consumers) {
  proto::GraphEditor& g = ctx.graph();
  PassStats& stats = ctx.stats();
  std::set<std::string> shrunk;
  for (const ConstantEntry& entry : Constants(g, /*skip_graph_inputs=*/false)) {
    const std::string& name = entry.name;
    onnx::TensorProto* t = g.MutableConstantValue(name);
    if (t == nullptr || g.Consumers(name).empty()) continue;
    if (!proto::HasFixedWidthPayload(t->data_type())) continue;
    const Shape s = proto::ShapeOfTensor(*t);
    std::string why;
    if (!consumers.Accept(name, s, s, &why)) continue;  // only broadcast consumers qualify
    Shape smaller = s;
    std::vector<int64_t> axes;
    bool has_wide_axis = false;
    for (int64_t d : t->dims()) has_wide_axis |= d > 1;
    if (has_wide_axis) {
      absl::StatusOr<std::vector<int64_t>> uniform =
          proto::UniformAxes(*t, ctx.model().base_dir, kMaxShrinkScanBytes);
      if (uniform.ok()) axes = *uniform;
      for (int64_t a : axes) smaller.dims[a] = broadcast::Dim::Value(1);
      if (!axes.empty() && !consumers.Accept(name, s, smaller, &why)) {
        axes.clear();
        smaller = s;
      }
    }
    // Leading 1s the consumers would prepend anyway (keeping rank >= 1).
    int64_t leading = 0;
    while (leading + 1 < smaller.rank() && smaller.dims[leading].Is(1)) ++leading;
    Shape stripped = Shape::FromDims({smaller.dims.begin() + leading, smaller.dims.end()});
    if (leading > 0 && !consumers.Accept(name, s, stripped, &why)) {
      leading = 0;
      stripped = smaller;
    }
    if (axes.empty() && leading == 0) continue;
    if (!axes.empty()) {
      absl::StatusOr<onnx::TensorProto> cut =
          proto::SliceToOne(*t, axes, ctx.model().base_dir, kMaxShrinkScanBytes);
      if (!cut.ok()) continue;
      cut->set_name(t->name());
      *t = std::move(*cut);
    }
    t->clear_dims();
    for (const broadcast::Dim& d : stripped.dims) t->add_dims(d.value());
    const int64_t before = proto::RawByteSize(t->data_type(), s.NumElements().value_or(0));
    const int64_t after = proto::RawByteSize(t->data_type(), stripped.NumElements().value_or(0));
    shrunk.insert(name);
    ctx.ConstantShapeChanged(name, stripped);
    ++stats.initializers_rewritten;
    stats.bytes_added += after - before;
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
    stats.Log(std::move(r));
  }
  return shrunk;
}

void MergeShrunkConstants(RewriteContext& ctx, const std::set<std::string>& shrunk) {
  if (shrunk.empty()) return;
  proto::GraphEditor& g = ctx.graph();
  PassStats& stats = ctx.stats();
  std::map<std::string, std::string> first;  // content key -> name
  for (const ConstantEntry& e : Constants(g, /*skip_graph_inputs=*/true)) {
    const onnx::TensorProto* t = g.ConstantValue(e.name);
    if (t == nullptr || !proto::HasFixedWidthPayload(t->data_type())) continue;
    absl::StatusOr<std::string> bytes = proto::ReadRawBytes(*t, ctx.model().base_dir, 4096);
    if (!bytes.ok()) continue;
    const std::string key =
        absl::StrCat(t->data_type(), "|", absl::StrJoin(t->dims(), ","), "|", *bytes);
    auto it = first.find(key);
    if (it == first.end()) {
      first.emplace(key, e.name);
      continue;
    }
    if ((shrunk.count(e.name) == 0 && shrunk.count(it->second) == 0) || g.IsGraphOutput(e.name) ||
        g.IsUsedBySubgraph(e.name)) {
      continue;
    }
    const std::vector<proto::Use> uses = g.ConsumerList(e.name);
    for (const proto::Use& use : uses) g.SetInput(use.node, use.slot, it->second);
    Rewrite r;
    r.node = e.node >= 0 ? ctx.Label(e.node) : "<initializers>";
    r.op = e.node >= 0 ? "Constant" : "";
    r.action = "removed";
    r.tensor = e.name;
    r.detail = absl::StrCat("identical to constant '", it->second, "'");
    r.bytes = -static_cast<int64_t>(bytes->size());
    stats.bytes_added += r.bytes;
    stats.Log(std::move(r));
    if (e.node >= 0) {
      g.RemoveNode(e.node);
      ++stats.nodes_removed;
    } else {
      g.RemoveInitializer(e.name);
    }
  }
}

}  // namespace onnx_bcast::passes
