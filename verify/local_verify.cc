// Local mode of verify (see verify.h and internal.h): each broadcasting node of the original is
// run alone, and against it the slice of the rewritten model that computes the same outputs,
// both as small models of their own on the same random values.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/broadcast_ops.h"
#include "proto/shapes.h"
#include "report/report_json.h"
#include "runtime/exec/random_inputs.h"
#include "support/status_macros.h"
#include "verify/inputs.h"
#include "verify/internal.h"

namespace onnx_bcast::verify::internal {
namespace {

// Element type and shape of every value of the main graph, from the annotated analysis.
struct TypeTable {
  std::unordered_map<std::string, const onnx::TypeProto*> types;
  std::unordered_map<std::string, const onnx::TensorProto*> initializers;
};

TypeTable Types(const onnx::ModelProto& annotated) {
  TypeTable t;
  const onnx::GraphProto& g = annotated.graph();
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()}) {
    for (const auto& vi : *list) t.types[vi.name()] = &vi.type();
  }
  for (const auto& init : g.initializer()) t.initializers[init.name()] = &init;
  return t;
}

// Declares `name` as a graph input of `g` with a concrete shape; false when its type is unknown.
bool AddInput(const std::string& name, const TypeTable& types, const Bindings& bindings,
              onnx::GraphProto* g, std::map<std::string, std::vector<int64_t>>* shapes,
              std::map<std::string, int32_t>* elems) {
  auto it = types.types.find(name);
  if (it == types.types.end() || !it->second->has_tensor_type() ||
      it->second->tensor_type().elem_type() == 0) {
    return false;
  }
  const broadcast::Shape shape = proto::ShapeOfType(*it->second);
  if (!shape.rank_known) return false;
  std::vector<int64_t> dims;
  for (const broadcast::Dim& d : shape.dims) {
    if (d.is_value()) {
      dims.push_back(d.value());
    } else if (d.is_symbol() && bindings.count(d.symbol()) > 0) {
      dims.push_back(bindings.at(d.symbol()));
    } else {
      dims.push_back(2);
    }
  }
  auto* vi = g->add_input();
  vi->set_name(name);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(it->second->tensor_type().elem_type());
  proto::SetShapeOfType(broadcast::Shape::OfVector(dims), vi->mutable_type());
  (*shapes)[name] = dims;
  (*elems)[name] = it->second->tensor_type().elem_type();
  return true;
}

void AddOutput(const std::string& name, const TypeTable& types, onnx::GraphProto* g) {
  auto* vi = g->add_output();
  vi->set_name(name);
  auto it = types.types.find(name);
  if (it != types.types.end() && it->second->has_tensor_type()) {
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(it->second->tensor_type().elem_type());
  }
}

struct SubModel {
  proto::Model model;
  std::vector<std::string> inputs;
};

// The nodes of `slice` (in graph order) as a model with `frontier` as inputs.
absl::StatusOr<SubModel> MakeSubModel(
    const proto::Model& source, const std::vector<const onnx::NodeProto*>& slice,
    const std::set<std::string>& frontier, const std::set<std::string>& inits,
    const std::vector<std::string>& outputs, const TypeTable& types, const TypeTable& out_types,
    const Bindings& bindings, std::map<std::string, std::vector<int64_t>>* shapes,
    std::map<std::string, int32_t>* elems) {
  SubModel sub;
  sub.model.path = "<local>";
  sub.model.base_dir = source.base_dir;
  onnx::ModelProto& m = sub.model.proto;
  m.set_ir_version(source.proto.ir_version());
  *m.mutable_opset_import() = source.proto.opset_import();
  *m.mutable_functions() = source.proto.functions();
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("local");
  for (const onnx::NodeProto* n : slice) *g->add_node() = *n;
  for (const std::string& name : frontier) {
    if (!AddInput(name, types, bindings, g, shapes, elems)) {
      return absl::UnimplementedError(absl::StrCat("type of '", name, "' is unknown"));
    }
    sub.inputs.push_back(name);
  }
  for (const auto& init : source.proto.graph().initializer()) {
    if (inits.count(init.name()) > 0) *g->add_initializer() = init;
  }
  for (const std::string& o : outputs) AddOutput(o, out_types, g);
  return sub;
}

// One model's graph, indexed for backward slices.
struct GraphIndex {
  std::unordered_map<std::string, int> producer;  // value -> index of the node writing it
  std::unordered_set<std::string> initializers;
  // Values that are the same whatever the graph inputs hold, given their shapes: initializers,
  // Constant outputs, Shape and Size outputs, and what nodes compute from such values alone
  // (an exporter's Identity of a weight, a shape computation). A slice computes them instead
  // of feeding them random values: opt folds them into constants, so one side would see the
  // real values and the other noise.
  std::unordered_set<std::string> fixed;

  explicit GraphIndex(const onnx::GraphProto& g) {
    for (const auto& t : g.initializer()) initializers.insert(t.name());
    fixed = initializers;
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      for (const std::string& o : n.output()) producer[o] = i;
      if (Fixed(n)) fixed.insert(n.output().begin(), n.output().end());
    }
  }

 private:
  bool Fixed(const onnx::NodeProto& n) const {
    if (!n.domain().empty() && n.domain() != "ai.onnx") return false;
    if (n.op_type() == "Shape" || n.op_type() == "Size") return true;
    if (absl::StartsWith(n.op_type(), "Random") || n.op_type() == "Bernoulli" ||
        n.op_type() == "Multinomial") {
      return false;
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g() || a.graphs_size() > 0) return false;  // a body reads outer values
    }
    for (const std::string& in : n.input()) {
      if (!in.empty() && fixed.count(in) == 0) return false;
    }
    return true;
  }
};

// The nodes that compute one original node's outputs on one side: the node itself (or its
// rewrite and what the rewrite inserted before it), back to the values fed from outside.
struct Slice {
  std::vector<const onnx::NodeProto*> nodes;  // in graph order
  std::set<std::string> frontier;             // its inputs, fed the same random values
  std::set<std::string> initializers;         // the initializers it reads
};

// Largest slice compared: a rewrite inserts a few nodes before one; more means the slice ran
// into unrelated computation.
constexpr size_t kMaxSliceNodes = 64;

// The original's and the rewritten model's tables, built once for every node.
class LocalVerifier {
 public:
  LocalVerifier(const proto::Model& original, const proto::Model& rewritten,
                const VerifyOptions& options, const runtime::Tolerance& tolerance,
                const onnx::ModelProto& annotated_a, const onnx::ModelProto& annotated_b)
      : original_(original),
        rewritten_(rewritten),
        options_(options),
        tolerance_(tolerance),
        types_a_(Types(annotated_a)),
        types_b_(Types(annotated_b)),
        index_a_(original.proto.graph()),
        index_b_(rewritten.proto.graph()) {
    const onnx::GraphProto& ga = original.proto.graph();
    const onnx::GraphProto& gb = rewritten.proto.graph();
    for (const auto& i : ga.input()) defined_a_.insert(i.name());
    for (const auto& n : ga.node()) {
      for (const std::string& o : n.output()) defined_a_.insert(o);
    }
    for (int i = 0; i < gb.node_size(); ++i) node_b_[gb.node(i).name()] = i;
    std::set<std::string> symbols;
    for (const auto& [name, type] : types_a_.types) {
      for (const broadcast::Dim& d : proto::ShapeOfType(*type).dims) {
        if (d.is_symbol() && d.symbol().rfind("unk__", 0) != 0) symbols.insert(d.symbol());
      }
    }
    samples_ = SampleBindings(symbols, options.samples, options.edge_cases,
                              UsableCondition(AnalyzeOriginal(original)));
  }

  // Original node `i` against its rewrite on every sample.
  LocalResult VerifyNode(int i) const {
    const onnx::NodeProto& na = original_.proto.graph().node(i);
    LocalResult lr;
    lr.node = na.name().empty() ? absl::StrCat(na.op_type(), "#", i) : na.name();
    lr.op = na.op_type();
    const int jb = RewrittenNode(na, lr.node);
    if (jb < 0) return Skipped(std::move(lr), "not found in the rewritten model");
    // Original side: the node alone, with the fixed values it reads computed.
    std::optional<Slice> a = BackwardSlice(original_.proto.graph(), index_a_, i,
                                           [](const std::string&) { return true; });
    // Rewritten side: down to values the original defines.
    std::optional<Slice> b =
        BackwardSlice(rewritten_.proto.graph(), index_b_, jb,
                      [this](const std::string& v) { return defined_a_.count(v) > 0; });
    if (!a || !b) return Skipped(std::move(lr), "rewrite slice larger than 64 nodes");
    std::vector<std::string> outs(na.output().begin(), na.output().end());
    outs.erase(std::remove(outs.begin(), outs.end(), std::string()), outs.end());
    for (size_t s = 0; s < samples_.size() && lr.match && !lr.skipped; ++s) {
      CompareOnSample(*a, *b, outs, s, &lr);
    }
    return lr;
  }

 private:
  static LocalResult Skipped(LocalResult lr, std::string why) {
    lr.skipped = true;
    lr.detail = std::move(why);
    return lr;
  }

  // The rewritten node: same name, or the producer of the same first output; -1 if none.
  int RewrittenNode(const onnx::NodeProto& na, const std::string& label) const {
    if (auto it = node_b_.find(label); it != node_b_.end() && !na.name().empty()) {
      return it->second;
    }
    if (na.output_size() > 0) {
      if (auto it = index_b_.producer.find(na.output(0)); it != index_b_.producer.end()) {
        return it->second;
      }
    }
    return -1;
  }

  // Identity and (inference) Dropout: opt removes them, so the rewrite reads their input where
  // the original reads their output; a slice goes through them so both sides are fed the same
  // value under the same name.
  static bool PassesThrough(const onnx::NodeProto& n) {
    return (n.domain().empty() || n.domain() == "ai.onnx") &&
           (n.op_type() == "Identity" || n.op_type() == "Dropout");
  }

  // The backward slice from node `start` of `g`: a value becomes an input of the slice (its
  // frontier) where it is a graph input or `stops(value)` holds, unless it is fixed or
  // passed through (then its producers are taken in too). Nullopt when the slice grows past
  // kMaxSliceNodes.
  template <class Stops>
  static std::optional<Slice> BackwardSlice(const onnx::GraphProto& g, const GraphIndex& index,
                                            int start, Stops stops) {
    Slice slice;
    std::vector<int> slice_idx;
    std::unordered_set<int> seen;
    std::vector<int> work = {start};
    while (!work.empty()) {
      const int k = work.back();
      work.pop_back();
      if (!seen.insert(k).second) continue;
      if (seen.size() > kMaxSliceNodes) return std::nullopt;
      slice_idx.push_back(k);
      for (const std::string& in : g.node(k).input()) {
        if (in.empty()) continue;
        auto producer = index.producer.find(in);
        if (index.initializers.count(in) > 0) {
          slice.initializers.insert(in);
        } else if (producer == index.producer.end() || (stops(in) && index.fixed.count(in) == 0 &&
                                                        !PassesThrough(g.node(producer->second)))) {
          slice.frontier.insert(in);
        } else {
          work.push_back(producer->second);
        }
      }
    }
    std::sort(slice_idx.begin(), slice_idx.end());
    for (int k : slice_idx) slice.nodes.push_back(&g.node(k));
    return slice;
  }

  // Runs both slices on sample `s` with the same random values by name; records a mismatch,
  // a skip (the original cannot run, or the sample cannot be made) or the figures in `*lr`.
  void CompareOnSample(const Slice& a, const Slice& b, const std::vector<std::string>& outs,
                       size_t s, LocalResult* lr) const {
    std::map<std::string, std::vector<int64_t>> shapes;
    std::map<std::string, int32_t> elems;
    absl::StatusOr<SubModel> sa = MakeSubModel(original_, a.nodes, a.frontier, a.initializers, outs,
                                               types_a_, types_a_, samples_[s], &shapes, &elems);
    absl::StatusOr<SubModel> sb =
        MakeSubModel(rewritten_, b.nodes, b.frontier, b.initializers, outs, types_a_, types_b_,
                     samples_[s], &shapes, &elems);
    if (!sa.ok() || !sb.ok()) {
      lr->skipped = true;
      lr->detail = std::string((!sa.ok() ? sa.status() : sb.status()).message());
      return;
    }
    std::map<std::string, runtime::Value> values;
    uint64_t k = 0;
    for (const auto& [name, dims] : shapes) {
      absl::StatusOr<runtime::Tensor> t = runtime::RandomTensor(static_cast<runtime::DType>(elems[name]), dims,
                                                      options_.seed * 7919u + s * 104729u + k++);
      if (!t.ok()) {
        lr->skipped = true;
        lr->detail = std::string(t.status().message());
        return;
      }
      values[name] = runtime::Value::Of(std::make_shared<runtime::Tensor>(std::move(*t)));
    }
    std::vector<std::vector<runtime::Value>> results_ab;
    for (const SubModel* sub : {&*sa, &*sb}) {
      absl::StatusOr<std::unique_ptr<runtime::Executor>> ex = Prepare(sub->model, options_);
      runtime::Feeds feeds;
      for (const std::string& name : sub->inputs) feeds.emplace_back(name, values[name]);
      absl::StatusOr<std::vector<runtime::Value>> out =
          ex.ok() ? (*ex)->Run(feeds) : absl::StatusOr<std::vector<runtime::Value>>(ex.status());
      if (!out.ok()) {
        lr->skipped = sub == &*sa;  // the original node itself cannot run: nothing to compare
        lr->match = sub == &*sa;
        lr->detail = absl::StrCat(sub == &*sa ? "original" : "rewritten",
                                  " cannot run: ", out.status().message());
        return;
      }
      results_ab.push_back(std::move(*out));
    }
    for (size_t o = 0; o < outs.size(); ++o) {
      runtime::Comparison c = runtime::CompareValues(results_ab[1][o], results_ab[0][o], outs[o], tolerance_);
      if (!c.match) {
        lr->match = false;
        lr->detail = absl::StrCat(BindingsToString(samples_[s]), ": ", c.message);
        return;
      }
      lr->detail = absl::StrCat("equal on ", samples_.size(), " sample(s); ", c.Figures());
    }
  }

  const proto::Model& original_;
  const proto::Model& rewritten_;
  const VerifyOptions& options_;
  const runtime::Tolerance& tolerance_;
  const TypeTable types_a_, types_b_;
  std::unordered_set<std::string> defined_a_;  // a rewritten slice stops at these
  const GraphIndex index_a_, index_b_;
  std::unordered_map<std::string, int> node_b_;
  std::vector<Bindings> samples_;
};

}  // namespace

std::vector<LocalResult> LocalVerify(const proto::Model& original, const proto::Model& rewritten,
                                     const VerifyOptions& options, const runtime::Tolerance& tolerance) {
  std::vector<LocalResult> results;
  // From here: the analyses of both models take as long as the checks on a large graph.
  support::ProgressStep step(options.progress, "verify node by node");
  onnx::ModelProto annotated_a, annotated_b;
  if (!analysis::AnalyzeBroadcasts(original, {}, &annotated_a).ok() ||
      !analysis::AnalyzeBroadcasts(rewritten, {}, &annotated_b).ok()) {
    return results;
  }
  const LocalVerifier verifier(original, rewritten, options, tolerance, annotated_a, annotated_b);
  const onnx::GraphProto& ga = original.proto.graph();
  for (int i = 0; i < ga.node_size(); ++i) {
    step.Update(i, ga.node_size());
    const onnx::NodeProto& na = ga.node(i);
    if (!na.domain().empty() || !analysis::IsBroadcastingOp(na.op_type())) continue;
    results.push_back(verifier.VerifyNode(i));
  }
  if (step.active()) {
    step.End(absl::StrCat(support::FormatCount(static_cast<int64_t>(results.size())),
                          " broadcasting nodes checked"));
  }
  return results;
}

}  // namespace onnx_bcast::verify::internal
