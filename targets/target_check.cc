// The target check (see targets.h): every node of a model against a target profile's promise,
// decided by the same DecideForm as legalize-measured, from the pass manager's shape tables or
// a fresh analysis.
#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "analysis/decide_node.h"
#include "analysis/shape_propagation.h"
#include "proto/graph_structure.h"
#include "proto/model_io.h"
#include "proto/opsets.h"
#include "proto/shapes.h"
#include "support/status_macros.h"
#include "targets/form_oracle.h"
#include "targets/runtime_shapes.h"
#include "targets/shape_cells.h"
#include "targets/targets.h"

namespace onnx_bcast::targets {

namespace {

// The producer of every tensor of every graph and function body, for "produced by" texts.
class Producers {
 public:
  explicit Producers(const onnx::ModelProto& m) {
    Add(m.graph());
    for (const auto& f : m.functions()) AddNodes(f.node());
  }
  std::string Of(const std::string& tensor) const {
    auto it = by_output_.find(tensor);
    if (it != by_output_.end()) return absl::StrCat("produced by ", it->second);
    return "a graph input or outer-scope value";
  }

 private:
  void Add(const onnx::GraphProto& g) { AddNodes(g.node()); }
  template <typename Nodes>
  void AddNodes(const Nodes& nodes) {
    int index = 0;
    for (const onnx::NodeProto& n : nodes) {
      const std::string label =
          absl::StrCat(n.op_type(), " '",
                       n.name().empty() ? absl::StrCat(n.op_type(), "#", index) : n.name(), "'");
      for (const std::string& out : n.output()) by_output_.emplace(out, label);
      for (const auto& a : n.attribute()) {
        if (a.has_g()) Add(a.g());
        for (const auto& sub : a.graphs()) Add(sub);
      }
      ++index;
    }
  }
  std::unordered_map<std::string, std::string> by_output_;
};

// Names of every initializer and Constant node output, in every graph and function body: the
// operands a profile's per-op rules call constant.
void CollectConstants(const onnx::GraphProto& g, std::set<std::string>* out) {
  for (const auto& init : g.initializer()) out->insert(init.name());
  for (const auto& init : g.sparse_initializer()) out->insert(init.values().name());
  for (const onnx::NodeProto& n : g.node()) {
    if (n.op_type() == "Constant" && (n.domain().empty() || n.domain() == "ai.onnx")) {
      for (const std::string& o : n.output()) out->insert(o);
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectConstants(a.g(), out);
      for (const auto& sub : a.graphs()) CollectConstants(sub, out);
    }
  }
}

// An unnamed main-graph node is labelled "<op>#<index>" by its index in the graph checked;
// after a rewrite that index moved, so the label takes the index the node had in the model
// the pipeline started from (found by its first output), as the passes' own logs do.
std::string OriginalLabel(const onnx::GraphProto& g, const analysis::NodeVerdict& v,
                          const std::unordered_map<std::string, int>* original_index) {
  if (original_index == nullptr || original_index->empty() || v.graph != "main") return v.node;
  const std::string prefix = absl::StrCat(v.op, "#");
  int index = -1;
  if (v.node.rfind(prefix, 0) != 0 ||
      !absl::SimpleAtoi(absl::string_view(v.node).substr(prefix.size()), &index) || index < 0 ||
      index >= g.node_size()) {
    return v.node;
  }
  const onnx::NodeProto& n = g.node(index);
  if (!n.name().empty() || n.op_type() != v.op || n.output_size() == 0) return v.node;
  auto it = original_index->find(n.output(0));
  return it == original_index->end() ? v.node : absl::StrCat(v.op, "#", it->second);
}

// Every main-graph tensor with constant contents (initializers, Constant outputs): the live
// oracle's fragments carry them, and an Expand's target is read from them.
analysis::ConstantTensors MainConstants(const onnx::GraphProto& g) {
  analysis::ConstantTensors values;
  for (const onnx::TensorProto& t : g.initializer()) values.emplace(t.name(), &t);
  for (const onnx::NodeProto& n : g.node()) {
    if (n.op_type() != "Constant" || n.output_size() != 1) continue;
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.name() == "value" && a.has_t()) values.emplace(n.output(0), &a.t());
    }
  }
  return values;
}

// How the target check decides main-graph node `index`: every text, no lints.
analysis::DecideOptions MainGraphNode(int index) {
  analysis::DecideOptions options;
  options.main_graph_index = index;
  return options;
}

// Expand nodes are judged only by a profile that measures Expand (op.Expand): the rewrites'
// own tool, which a profile without the rule lets fit everywhere.
bool SkipsExpand(const onnx::NodeProto& n, const TargetProfile& p) {
  return n.op_type() == "Expand" && p.op_rules.count("Expand") == 0;
}

// What a user can do about symbols a decision waits on: "bind N, S with --dim" for the dims
// of graph inputs, "depends on data at node 'X'" for symbols the analysis made for a
// data-dependent extent ("<node>:<output>:<axis>", NonZero, TopK, a Loop's count) or for a
// value it cannot follow (`opaque#<n>`: at `node`, the node being decided).
std::string SymbolHint(const std::set<std::string>& symbols, const onnx::GraphProto& main,
                       const std::string& node) {
  std::set<std::string> inputs;
  for (const onnx::ValueInfoProto& vi : main.input()) {
    const auto& dims = vi.type().tensor_type().shape().dim();
    for (int axis = 0; axis < dims.size(); ++axis) {
      if (dims[axis].has_dim_param()) inputs.insert(dims[axis].dim_param());
      inputs.insert(absl::StrCat(vi.name(), ":", axis));
    }
  }
  std::vector<std::string> bind;
  std::set<std::string> at;
  for (const std::string& s : symbols) {
    if (inputs.count(s) > 0) {
      bind.push_back(s);
    } else {
      at.insert(DataSymbolNode(s, node));
    }
  }
  std::vector<std::string> parts;
  if (!bind.empty())
    parts.push_back(absl::StrCat("bind ", absl::StrJoin(bind, ", "), " with --dim"));
  if (!at.empty()) {
    std::vector<std::string> quoted;
    for (const std::string& n : at) quoted.push_back(absl::StrCat("'", n, "'"));
    parts.push_back(absl::StrCat("depends on data at node ", absl::StrJoin(quoted, ", ")));
  }
  return absl::StrJoin(parts, "; ");
}

// The violation of node `v` that `d` refused: its label, shapes and why, with what a user can
// do (the producer of an unknown rank, the dims to bind).
TargetViolation ViolationOf(const analysis::NodeVerdict& v, FormDecision d, const proto::Model& model,
                            const TargetProfile& p,
                            const std::unordered_map<std::string, int>* original_index,
                            std::optional<Producers>* producers) {
  TargetViolation t;
  t.graph = v.graph;
  t.node = OriginalLabel(model.proto.graph(), v, original_index);
  t.op = v.op;
  std::vector<std::string> shapes;
  for (const broadcast::Shape& s : v.inputs) shapes.push_back(s.ToString());
  t.shapes = absl::StrJoin(shapes, " and ");
  t.why = std::move(d.why);
  if (d.unknown_rank_input >= 0) {
    if (!*producers) producers->emplace(model.proto);
    const size_t k = static_cast<size_t>(d.unknown_rank_input);
    absl::StrAppend(&t.why, ", ",
                    (*producers)->Of(k < v.input_names.size() ? v.input_names[k] : ""));
  }
  // A conditional node is decided once its symbols are numbers: say which to bind.
  if (v.verdict == broadcast::Verdict::kConditional && !v.condition.empty()) {
    const std::vector<std::string> syms = v.condition.Symbols();
    absl::StrAppend(&t.why, " (it broadcasts only if ", v.condition.ToString(), ": ",
                    SymbolHint({syms.begin(), syms.end()}, model.proto.graph(), t.node), ")");
  } else if (!p.runtime_shapes && v.verdict != broadcast::Verdict::kError) {
    // The rewrite that would fix it needs the output's extents, which a static engine takes
    // only as constants.
    std::set<std::string> symbols;
    for (const broadcast::Dim& dim : v.output.dims) {
      if (dim.is_symbol()) symbols.insert(dim.symbol());
      if (std::optional<broadcast::Expr> e = dim.is_expr() ? dim.expr() : std::nullopt) {
        for (const std::string& sym : e->Symbols()) symbols.insert(sym);
      }
    }
    if (!symbols.empty()) {
      absl::StrAppend(&t.why, " (an Expand to its output shape ", v.output.ToString(),
                      " needs a shape known only at run time, and ", p.name,
                      " has no run-time shapes: ", SymbolHint(symbols, model.proto.graph(), t.node),
                      ")");
    }
  }
  t.cannot_prove = d.cannot_prove;
  return t;
}

// A constant of an element type the engine does not load: it refuses the whole model at load
// for one, used or not.
void AddRefusedConstants(const proto::Model& model, const TargetProfile& p,
                         std::vector<TargetViolation>* out) {
  const onnx::GraphProto& g = model.proto.graph();
  auto refused = [&](const onnx::TensorProto& t, const std::string& node, const std::string& op) {
    if (p.InitializerTypeAllowed(t.data_type())) return;
    TargetViolation v;
    v.graph = "main";
    v.node = node;
    v.op = op;
    std::vector<std::string> dims;
    for (int64_t d : t.dims()) dims.push_back(absl::StrCat(d));
    v.shapes = absl::StrCat(ElementTypeName(t.data_type()), "[", absl::StrJoin(dims, ","), "]");
    v.why = absl::StrCat(
        "a constant of type ", ElementTypeName(t.data_type()), ", which ", p.name,
        " does not load (initializer_types = ", absl::StrJoin(p.initializer_types, ", "), ")");
    out->push_back(std::move(v));
  };
  for (const onnx::TensorProto& t : g.initializer()) refused(t, t.name(), "initializer");
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    if (n.op_type() != "Constant" || !(n.domain().empty() || n.domain() == "ai.onnx")) continue;
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.name() == "value" && a.has_t()) {
        refused(a.t(), n.name().empty() ? absl::StrCat("Constant#", i) : n.name(), "Constant");
      }
    }
  }
}

}  // namespace

absl::StatusOr<std::vector<TargetViolation>> CheckTarget(
    const proto::Model& model, const TargetProfile& p,
    const std::unordered_map<std::string, int>* original_index, const analysis::ShapeTables* tables,
    FormOracle* live) {
  std::vector<TargetViolation> out;
  std::optional<Producers> producers;  // built for the first unknown rank only
  // Constant operands matter only to per-op rules.
  std::set<std::string> constants;
  if (!p.op_rules.empty()) {
    CollectConstants(model.proto.graph(), &constants);
    for (const auto& f : model.proto.functions()) {
      for (const onnx::NodeProto& n : f.node()) {
        if (n.op_type() == "Constant") constants.insert(n.output().begin(), n.output().end());
      }
    }
  }
  const std::function<bool(const std::string&)> is_constant = [&](const std::string& name) {
    return constants.count(name) > 0;
  };
  // One node's conformance (by `verdict` when the engine decided it live).
  auto check = [&](const analysis::NodeVerdict& v, const LiveVerdict* verdict = nullptr) {
    FormDecision d;
    if (verdict != nullptr) {
      if (verdict->matches) return;
      d.fits = false;
      d.why = absl::StrCat("decided live on ", live->label(), ": ", verdict->why);
    } else {
      d = DecideForm(v, p, is_constant);
    }
    if (d.fits) return;
    out.push_back(ViolationOf(v, std::move(d), model, p, original_index, &producers));
  };
  // The live oracle decides the main graph's nodes of a single-graph model from the tables.
  std::optional<analysis::ShapeTables> computed;
  if (live != nullptr && tables == nullptr && proto::IsSingleGraph(model.proto)) {
    BCAST_ASSIGN_OR_RETURN(computed, analysis::ComputeShapeTables(model));
    tables = &*computed;
  }
  if (live != nullptr && tables != nullptr && proto::IsSingleGraph(model.proto)) {
    const onnx::GraphProto& g = model.proto.graph();
    const int64_t opset = proto::DefaultOpset(model.proto);
    const analysis::ConstantTensors values = MainConstants(g);
    // Every node first (table verdicts, or a fragment to run), then one batch of runs, then
    // the violations in node order.
    std::vector<analysis::NodeVerdict> verdicts;
    std::vector<std::optional<proto::Model>> fragments;
    auto fragment = [&](const onnx::NodeProto& n, const broadcast::Shape& out) {
      std::vector<FragmentOperand> ops;
      for (const std::string& in : n.input()) {
        FragmentOperand o;
        o.name = in;
        if (!in.empty()) {
          const broadcast::Shape* s = tables->FindShape(in);
          o.shape = s != nullptr ? *s : broadcast::Shape::UnknownRank();
          o.elem = tables->ElemOf(in);
          auto it = values.find(in);
          o.constant = it != values.end() ? it->second : nullptr;
        }
        ops.push_back(std::move(o));
      }
      return NodeFragment(model, n, ops, tables->ElemOf(n.output(0)), out);
    };
    const analysis::TableShapes shapes(*tables, &values, model.base_dir);
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      analysis::NodeVerdict v;
      if (SkipsExpand(n, p) || !analysis::DecideNode(n, opset, shapes, &v, MainGraphNode(i))) continue;
      // The Expands a live rewrite inserts were run with it: judged the same way.
      std::optional<proto::Model> f;
      if (v.rule != broadcast::RuleFamily::kLegacyAxis) f = fragment(n, v.output);
      verdicts.push_back(std::move(v));
      fragments.push_back(std::move(f));
    }
    std::vector<const proto::Model*> batch;
    for (const auto& f : fragments) {
      if (f) batch.push_back(&*f);
    }
    std::vector<absl::StatusOr<LiveVerdict>> decided = live->Decide(batch);
    size_t next = 0;
    for (size_t k = 0; k < verdicts.size(); ++k) {
      const LiveVerdict* verdict = nullptr;
      if (fragments[k]) {
        if (next < decided.size() && decided[next].ok()) verdict = &*decided[next];
        ++next;
      }
      check(verdicts[k], verdict);
    }
  } else if (tables != nullptr && proto::IsSingleGraph(model.proto)) {
    // The pipeline's tables describe the graph as the passes left it: each node is decided
    // from its inputs' shapes, as the walk would, without walking the model again.
    const onnx::GraphProto& g = model.proto.graph();
    const int64_t opset = proto::DefaultOpset(model.proto);
    analysis::NodeVerdict v;  // one record, its buffers reused node after node
    // The ids the last pass resolved per node, when they describe this node list.
    const proto::NodeTensorIds& hint = tables->node_ids();
    // Constants are read for Expand's target only.
    std::optional<analysis::ConstantTensors> constants;
    if (p.op_rules.count("Expand") > 0) constants = MainConstants(g);
    analysis::TableShapes shapes(*tables, constants ? &*constants : nullptr, model.base_dir);
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      shapes.SetInputIds(hint.Of(i, g.node_size(), n.input_size() + n.output_size()));
      if (SkipsExpand(n, p) || !analysis::DecideNode(n, opset, shapes, &v, MainGraphNode(i))) continue;
      check(v);
    }
  } else {
    analysis::AnalysisOptions verdicts_only;
    verdicts_only.record_shapes = false;
    BCAST_ASSIGN_OR_RETURN(const analysis::Analysis analysis, analysis::AnalyzeBroadcasts(model, verdicts_only));
    for (const analysis::NodeVerdict& v : analysis.nodes) check(v);
  }
  if (!p.initializer_types.empty()) AddRefusedConstants(model, p, &out);
  if (!p.runtime_shapes) {
    BCAST_ASSIGN_OR_RETURN(std::vector<TargetViolation> shapes,
                           FindRuntimeShapeNodes(model, p.name, original_index, tables));
    for (TargetViolation& t : shapes) out.push_back(std::move(t));
  }
  return out;
}

std::unordered_map<std::string, int> OriginalNodeIndex(const onnx::GraphProto& graph) {
  std::unordered_map<std::string, int> index;
  bool unnamed = false;
  for (const auto& n : graph.node()) unnamed |= n.name().empty();
  if (!unnamed) return index;
  for (int i = 0; i < graph.node_size(); ++i) {
    if (graph.node(i).output_size() > 0) index.emplace(graph.node(i).output(0), i);
  }
  return index;
}

absl::StatusOr<std::vector<std::string>> FindTargetViolations(
    const proto::Model& model, const TargetProfile& p,
    const std::unordered_map<std::string, int>* original_index, const analysis::ShapeTables* tables,
    FormOracle* live) {
  BCAST_ASSIGN_OR_RETURN(const std::vector<TargetViolation> v,
                         CheckTarget(model, p, original_index, tables, live));
  std::vector<std::string> out;
  out.reserve(v.size());
  for (const TargetViolation& t : v) out.push_back(t.ToString());
  return out;
}

}  // namespace onnx_bcast::targets
