// The value folds of fold-constants (see fold_values.h).
#include "passes/fold_values.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/shape_propagation.h"
#include "passes/node_evaluation.h"
#include "passes/rewrite_context.h"
#include "proto/graph.h"
#include "support/status_macros.h"
#include "targets/targets.h"

namespace onnx_bcast::passes::fold {
namespace {

int64_t IntAttr(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name && a.type() == onnx::AttributeProto::INT) return a.i();
  }
  return fallback;
}

// An integer tensor of `elem` holding `values` (dims `dims`); nullopt for element types an
// analysis value never has (floats, strings).
std::optional<onnx::TensorProto> IntTensor(const std::string& name, int32_t elem,
                                           const std::vector<int64_t>& dims,
                                           const std::vector<int64_t>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(elem);
  for (int64_t d : dims) t.add_dims(d);
  switch (elem) {
    case onnx::TensorProto::INT64:
      for (int64_t v : values) t.add_int64_data(v);
      break;
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      for (int64_t v : values) t.add_int32_data(static_cast<int32_t>(v));
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      for (int64_t v : values) t.add_uint64_data(static_cast<uint64_t>(v));
      break;
    default:
      return std::nullopt;
  }
  return t;
}

// What `n` (one output) computes when the analysis already knows it.
std::optional<onnx::TensorProto> KnownTensor(
    const onnx::NodeProto& n,
    const std::function<const broadcast::Shape*(const std::string&)>& shape_of,
    const absl::flat_hash_map<std::string, analysis::KnownValue>& known) {
  const std::string& out = n.output(0);
  if ((n.op_type() == "Shape" || n.op_type() == "Size") && n.input_size() == 1) {
    const broadcast::Shape* s = shape_of(n.input(0));
    if (s == nullptr || !s->rank_known) return std::nullopt;
    const int64_t rank = s->rank();
    int64_t begin = 0, end = rank;
    if (n.op_type() == "Shape") {
      // opset 15's start/end slice the dims (negative from the back, clamped).
      begin = IntAttr(n, "start", 0);
      end = IntAttr(n, "end", rank);
      if (begin < 0) begin += rank;
      if (end < 0) end += rank;
      begin = std::clamp<int64_t>(begin, 0, rank);
      end = std::clamp<int64_t>(end, 0, rank);
    }
    std::vector<int64_t> dims;
    for (int64_t k = begin; k < end; ++k) {
      const broadcast::Dim& d = s->dims[static_cast<size_t>(k)];
      if (!d.is_value()) return std::nullopt;
      dims.push_back(d.value());
    }
    if (n.op_type() == "Shape") {
      return IntTensor(out, onnx::TensorProto::INT64, {static_cast<int64_t>(dims.size())}, dims);
    }
    int64_t count = 1;
    for (int64_t d : dims) {
      if (d != 0 && count > INT64_MAX / d) return std::nullopt;
      count *= d;
    }
    return IntTensor(out, onnx::TensorProto::INT64, {}, {count});
  }
  if (n.op_type() == "Constant") return std::nullopt;
  auto it = known.find(out);
  if (it == known.end()) return std::nullopt;
  return IntTensor(out, it->second.elem, it->second.dims, it->second.values);
}

// Runs nodes `ids` with the initializers they read (and values from `extra`); `wanted` come
// back in `out`.
absl::Status Evaluate(FoldGraph& fg, const std::vector<int>& ids,
                      const std::vector<std::string>& wanted,
                      std::unordered_map<std::string, onnx::TensorProto>* out,
                      const std::unordered_map<std::string, onnx::TensorProto>* extra = nullptr) {
  proto::Model fragment = proto::FragmentModel(*fg.model(), "fold", kFragmentMinIr);
  onnx::GraphProto* g = fragment.proto.mutable_graph();
  std::unordered_set<std::string> defined;
  std::unordered_set<std::string> added;
  std::unordered_map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : fg.graph()->initializer()) inits[t.name()] = &t;
  for (int i : ids) {
    const onnx::NodeProto& n = fg.graph()->node(i);
    for (const std::string& in : n.input()) {
      if (in.empty() || defined.count(in) > 0 || !added.insert(in).second) continue;
      if (extra != nullptr) {
        if (auto it = extra->find(in); it != extra->end()) {
          *g->add_initializer() = it->second;
          continue;
        }
      }
      auto it = inits.find(in);
      if (it == inits.end()) return absl::InternalError(absl::StrCat("'", in, "' not constant"));
      *g->add_initializer() = *it->second;
    }
    onnx::NodeProto* copy = g->add_node();
    *copy = n;
    // The executor's messages then name the node as the model does.
    if (copy->name().empty()) copy->set_name(fg.Label(i));
    for (const std::string& o : n.output()) defined.insert(o);
  }
  for (const std::string& w : wanted) g->add_output()->set_name(w);
  BCAST_ASSIGN_OR_RETURN(std::vector<onnx::TensorProto> values,
                         (*fg.options().evaluator)(fragment));
  for (size_t k = 0; k < wanted.size() && k < values.size(); ++k) {
    (*out)[wanted[k]] = std::move((values)[k]);
  }
  return absl::OkStatus();
}

// Runs the constant cone (nodes in order) on the evaluator; the values read outside it
// become initializers up to the limit.
absl::StatusOr<bool> FoldCone(FoldGraph& fg, const std::vector<int>& cone) {
  const std::unordered_map<std::string, int> reads = [&] {
    // Reads from outside the cone (and from any subgraph).
    std::unordered_map<std::string, int> r;
    std::unordered_set<int> in_cone(cone.begin(), cone.end());
    for (int i = 0; i < fg.graph()->node_size(); ++i) {
      if (fg.dead(i)) continue;
      if (in_cone.count(i) == 0) {
        for (const std::string& in : fg.graph()->node(i).input()) {
          if (!in.empty()) ++r[in];
        }
      }
      proto::ForEachSubgraphRead(fg.graph()->node(i), [&](const std::string& name) { ++r[name]; });
    }
    return r;
  }();
  std::vector<std::string> wanted;
  for (int i : cone) {
    for (const std::string& o : fg.graph()->node(i).output()) {
      if (!o.empty() && reads.count(o) > 0) wanted.push_back(o);
    }
  }
  if (wanted.empty()) return false;  // dead: RemoveDead takes it
  std::unordered_map<std::string, onnx::TensorProto> values;
  absl::Status whole = Evaluate(fg, cone, wanted, &values);
  if (!whole.ok()) {
    // One node the executor cannot run should not keep the others: node by node, each
    // reading the values computed so far; a failure leaves that node and what depends on it.
    values.clear();
    std::unordered_map<std::string, onnx::TensorProto> all;
    for (int i : cone) {
      const onnx::NodeProto& n = fg.graph()->node(i);
      bool ready = true;
      for (const std::string& in : n.input()) {
        if (!in.empty() && fg.constants().count(in) == 0 && all.count(in) == 0) ready = false;
      }
      if (!ready) continue;
      std::vector<std::string> outs;
      for (const std::string& o : n.output()) {
        if (!o.empty()) outs.push_back(o);
      }
      std::unordered_map<std::string, onnx::TensorProto> one;
      if (absl::Status s = Evaluate(fg, {i}, outs, &one, &all); !s.ok()) {
        // Invalid on its constant inputs is invalid on every input: the model cannot run.
        // Anything else (an op the executor lacks) leaves the node as it is.
        if (s.code() == absl::StatusCode::kInvalidArgument) {
          return absl::InvalidArgumentError(absl::StrCat(
              n.op_type(), " '", fg.Label(i), "' fails on its constant inputs: ", s.message()));
        }
        fg.stats().notes.push_back(absl::StrCat(n.op_type(), " '", fg.Label(i),
                                                "' kept: the executor cannot compute it (",
                                                s.message(), ")"));
        continue;
      }
      for (auto& [name, t] : one) all[name] = std::move(t);
    }
    for (const std::string& w : wanted) {
      if (auto it = all.find(w); it != all.end()) values[w] = std::move(it->second);
    }
  }
  bool changed = false;
  for (int i : cone) {
    const onnx::NodeProto& n = fg.graph()->node(i);
    // Every output read outside the cone must fold, or the node stays whole.
    bool fits = true;
    bool any = false;
    for (const std::string& o : n.output()) {
      if (o.empty() || reads.count(o) == 0) continue;
      any = true;
      auto it = values.find(o);
      if (it == values.end()) {
        fits = false;
        break;
      }
      const int64_t bytes = PayloadBytes(it->second);
      if (!fg.TypeLoads(it->second.data_type())) {
        fg.stats().notes.push_back(absl::StrCat(
            n.op_type(), " '", fg.Label(i), "' kept: its constant result '", o, "' has type ",
            targets::ElementTypeName(it->second.data_type()), ", which ", fg.options().target->name,
            " does not load as a constant (initializer_types)"));
        fg.kept().insert(n.output(0));
        fits = false;
        break;
      }
      if (bytes > fg.options().constant_fold_limit_bytes) {
        fg.stats().notes.push_back(absl::StrCat(
            n.op_type(), " '", fg.Label(i), "' kept: its constant result '", o, "' ",
            DimsText(it->second), " is ", bytes, " bytes, over the fold limit of ",
            fg.options().constant_fold_limit_bytes, " (raise --fold-limit to fold it)"));
        fg.kept().insert(n.output(0));
        fits = false;
        break;
      }
    }
    if (!any || !fits) continue;
    for (const std::string& o : n.output()) {
      if (o.empty() || reads.count(o) == 0) continue;
      onnx::TensorProto t = std::move(values[o]);
      t.set_name(o);
      const std::string dims = DimsText(t);
      const int64_t bytes = PayloadBytes(t);
      fg.DropValueInfo(o);
      fg.AddInitializer(std::move(t));
      fg.Log(i, "folded", o, "computed by the executor (constant inputs)", dims, bytes);
    }
    fg.Kill(i);
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> FoldValues(FoldGraph& fg, std::optional<analysis::ShapeTables>* analysis_out) {
  // The pass manager's own analysis (shape tables), with the known values recorded by the
  // same walk: when nothing is edited after it, the tables go to the next pass as they are.
  absl::flat_hash_map<std::string, analysis::KnownValue> known;
  BCAST_ASSIGN_OR_RETURN(analysis::ShapeTables tables,
                         analysis::ComputeShapeTables(*fg.model(), &known));
  *analysis_out = std::move(tables);
  auto shape_of = [&](const std::string& name) -> const broadcast::Shape* {
    return (*analysis_out)->FindShape(name);
  };

  bool changed = false;
  std::vector<int> cone;
  std::unordered_set<std::string> cone_outputs;
  for (int i = 0; i < fg.graph()->node_size(); ++i) {
    const onnx::NodeProto& n = fg.graph()->node(i);
    bool to_output = false;
    for (const std::string& o : n.output()) to_output |= fg.outputs().count(o) > 0;
    if (to_output) continue;
    // A value known without running anything.
    if (n.output_size() == 1 && DefaultDomain(n) && !HasSubgraph(n)) {
      std::optional<onnx::TensorProto> t = KnownTensor(n, shape_of, known);
      if (t.has_value() && fg.TypeLoads(t->data_type())) {
        const std::string dims = DimsText(*t);
        const int64_t bytes = PayloadBytes(*t);
        const std::string how = n.op_type() == "Shape" || n.op_type() == "Size"
                                    ? absl::StrCat(n.op_type(), " of static dims")
                                    : "known from the shape analysis";
        fg.AddInitializer(*std::move(t));
        fg.Log(i, "folded", n.output(0), how, dims, bytes);
        fg.Kill(i);
        changed = true;
        continue;
      }
    }
    if (!Foldable(n) || fg.kept().count(n.output_size() > 0 ? n.output(0) : "") > 0) continue;
    bool all_constant = false;
    bool any_input = false;
    for (const std::string& in : n.input()) {
      if (in.empty()) continue;
      any_input = true;
      all_constant = fg.constants().count(in) > 0 || cone_outputs.count(in) > 0;
      if (!all_constant) break;
    }
    if (!any_input || !all_constant) continue;
    cone.push_back(i);
    for (const std::string& o : n.output()) {
      if (!o.empty()) cone_outputs.insert(o);
    }
  }
  if (cone.empty()) return changed;
  if (fg.options().evaluator == nullptr) {
    fg.stats().notes.push_back(absl::StrCat(
        cone.size(), " node(s) with only constant inputs kept: no evaluator to compute them"));
    return changed;
  }
  BCAST_ASSIGN_OR_RETURN(bool folded, FoldCone(fg, cone));
  return changed || folded;
}

}  // namespace onnx_bcast::passes::fold
