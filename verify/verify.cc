// Differential verification of a rewritten model against its original (see verify.h).
#include "verify/verify.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/dim_evaluation.h"
#include "analysis/shape_propagation.h"
#include "proto/dim_binding.h"
#include "proto/shapes.h"
#include "report/opt_report.h"
#include "report/report_json.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/input_check.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/random_inputs.h"
#include "runtime/exec/test_data.h"
#include "verify/inputs.h"

namespace onnx_bcast::verify {
namespace {

// Ops that only move or copy data: a rewrite made of them must give bit-identical outputs.
const std::set<std::string>& ExactOps() {
  static const auto* const kOps = new std::set<std::string>{
      "Reshape",  "Unsqueeze", "Squeeze", "Expand", "Shape",     "Identity",
      "Constant", "Flatten",   "Tile",    "Gather", "Transpose", "Concat"};
  return *kOps;
}

std::map<std::string, int> OpCounts(const onnx::GraphProto& g) {
  std::map<std::string, int> counts;
  for (const auto& n : g.node()) ++counts[n.op_type()];
  return counts;
}

std::vector<std::string> OutputNames(const onnx::GraphProto& g) {
  std::vector<std::string> names;
  for (const auto& o : g.output()) names.push_back(o.name());
  return names;
}

// A copy of `model` whose main graph also outputs `extra` (for bisecting intermediates).
std::shared_ptr<const rt::Model> WithExtraOutputs(const rt::Model& model,
                                                  const std::vector<std::string>& extra) {
  auto graph = std::make_shared<rt::Graph>(*model.main);
  for (const std::string& name : extra) graph->outputs.push_back(name);
  auto copy = std::make_shared<rt::Model>(model);
  copy->main = graph;
  return copy;
}

std::string ShapeOf(const rt::Value& v) {
  if (v.is_tensor()) return rt::ShapeToString(v.tensor->shape());
  if (v.is_sequence()) return absl::StrCat("sequence(", v.sequence.size(), ")");
  return "none";
}

// The opt report: options.report, or parsed from report_path or report_json; null when none
// is given.
absl::StatusOr<std::optional<passes::OptReport>> LoadReport(const VerifyOptions& options) {
  if (options.report != nullptr) return std::optional<passes::OptReport>(*options.report);
  std::string text = options.report_json;
  std::string label = "the given report";
  if (!options.report_path.empty()) {
    label = absl::StrCat("report '", options.report_path, "'");
    absl::StatusOr<std::string> bytes = proto::ReadFileBytes(options.report_path);
    if (!bytes.ok()) {
      return absl::Status(bytes.status().code(),
                          absl::StrCat(label, ": cannot be read: ", bytes.status().message()));
    }
    text = *std::move(bytes);
  } else if (text.empty()) {
    return std::optional<passes::OptReport>();
  }
  absl::StatusOr<passes::OptReport> report = passes::ParseOptReport(text);
  if (!report.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": ", report.status().message()));
  }
  return std::optional<passes::OptReport>(*std::move(report));
}

// Finds the pass and rewrite the report says touched the divergent node: by its first output,
// which insertions do not shift (positional labels of unnamed nodes do), or by name for a report
// written before outputs were recorded.
void Attribute(const passes::OptReport& report, Divergence* d) {
  for (const passes::PassRun& run : report.runs) {
    for (const passes::Rewrite& rw : run.stats.log) {
      // The executor labels an unnamed node by its position in the rewritten graph, which
      // is not the report's; the first output is the same in both.
      const bool by_output = !d->node_output.empty() && rw.output == d->node_output;
      if (!by_output && rw.node != d->node) continue;
      d->node = rw.node;
      d->pass = run.pass;
      d->rewrite = absl::StrCat(rw.action, " ", rw.tensor, " ", rw.before, " -> ", rw.after, ": ",
                                rw.detail);
      return;
    }
  }
}

rt::RunOptions RunOptionsFor(int threads, const rt::RunBudget* budget,
                             std::shared_ptr<rt::MemoryBudget> memory) {
  rt::RunOptions options;
  options.threads = threads;
  options.budget = budget;
  options.memory = std::move(memory);
  return options;
}

// A run that must end the verification instead of counting as a mismatch or a skipped sample:
// past the deadline, or refused by the memory budget (other ResourceExhausted refusals, such as
// --max-tensor-elements, are the inputs' doing).
bool EndsVerification(const absl::Status& s, const rt::MemoryBudget* memory) {
  return s.code() == absl::StatusCode::kDeadlineExceeded ||
         (s.code() == absl::StatusCode::kResourceExhausted && memory != nullptr &&
          memory->refusals() > 0);
}

absl::StatusOr<std::unique_ptr<rt::Executor>> Prepare(const proto::Model& model,
                                                      const VerifyOptions& verify,
                                                      std::shared_ptr<const rt::Model>* loaded) {
  absl::StatusOr<std::shared_ptr<const rt::Model>> m = rt::LoadRuntimeModel(model);
  if (!m.ok()) return m.status();
  *loaded = *m;
  return rt::Executor::Create(*m, RunOptionsFor(verify.threads, verify.budget, verify.memory));
}

// ---------------------------------------------------------------- bisect

std::optional<Divergence> Bisect(const rt::Model& a, const rt::Model& b, const rt::Feeds& feeds,
                                 const rt::Tolerance& tolerance, const std::string& label,
                                 const passes::OptReport* report, int threads,
                                 const rt::RunBudget* budget,
                                 std::shared_ptr<rt::MemoryBudget> memory) {
  std::unordered_map<std::string, const rt::Node*> producer_b;
  for (const rt::Node& n : b.main->nodes) {
    for (const std::string& o : n.outputs) {
      if (!o.empty()) producer_b[o] = &n;
    }
  }
  std::vector<std::string> common;
  for (const rt::Node& n : a.main->nodes) {
    for (const std::string& o : n.outputs) {
      if (!o.empty() && producer_b.count(o) > 0) common.push_back(o);
    }
  }
  // Every intermediate of b, so the diverging node's input shapes can be reported.
  std::vector<std::string> all_b;
  for (const auto& [name, node] : producer_b) all_b.push_back(name);
  const rt::RunOptions options = RunOptionsFor(threads, budget, std::move(memory));
  absl::StatusOr<std::unique_ptr<rt::Executor>> ea =
      rt::Executor::Create(WithExtraOutputs(a, common), options);
  absl::StatusOr<std::unique_ptr<rt::Executor>> eb =
      rt::Executor::Create(WithExtraOutputs(b, all_b), options);
  if (!ea.ok() || !eb.ok()) return std::nullopt;
  absl::StatusOr<std::vector<rt::Value>> va = (*ea)->Run(feeds);
  absl::StatusOr<std::vector<rt::Value>> vb = (*eb)->Run(feeds);
  if (!va.ok() || !vb.ok()) return std::nullopt;
  const size_t base_a = a.main->outputs.size(), base_b = b.main->outputs.size();
  std::unordered_map<std::string, const rt::Value*> values_b;
  for (size_t i = 0; i < all_b.size(); ++i) values_b[all_b[i]] = &(*vb)[base_b + i];
  for (const auto& [name, value] : feeds) values_b.emplace(name, &value);
  for (size_t i = 0; i < common.size(); ++i) {
    const rt::Value& x = (*va)[base_a + i];
    const rt::Value& y = *values_b[common[i]];
    rt::Comparison c = rt::CompareValues(y, x, common[i], tolerance);
    if (c.match) continue;
    Divergence d;
    d.sample = label;
    d.tensor = common[i];
    const rt::Node* node = producer_b[common[i]];
    d.node = node->name;
    d.node_output = node->outputs.empty() ? "" : node->outputs[0];
    d.op = node->op_type;
    for (const std::string& in : node->inputs) {
      if (in.empty()) continue;
      std::string shape = "?";
      if (auto it = values_b.find(in); it != values_b.end()) {
        shape = ShapeOf(*it->second);
      } else if (auto init = b.main->initializers.find(in); init != b.main->initializers.end()) {
        shape = rt::ShapeToString(init->second->shape());
      }
      d.input_shapes.push_back(absl::StrCat(in, " ", shape));
    }
    d.comparison = std::move(c);
    if (report != nullptr) Attribute(*report, &d);
    return d;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- local mode

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
  const bcast::Shape shape = proto::ShapeOfType(*it->second);
  if (!shape.rank_known) return false;
  std::vector<int64_t> dims;
  for (const bcast::Dim& d : shape.dims) {
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
  proto::SetShapeOfType(bcast::Shape::OfVector(dims), vi->mutable_type());
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

// check's analysis of the original: its combined condition decides where samples may bind
// the symbols. A model the analysis cannot take (or whose conditions contradict) gives none.
std::optional<passes::Analysis> AnalyzeOriginal(const proto::Model& original) {
  absl::StatusOr<passes::Analysis> a =
      passes::AnalyzeBroadcasts(original, passes::AnalysisOptions());
  if (!a.ok()) return std::nullopt;
  return *std::move(a);
}

bcast::ConditionSet UsableCondition(const std::optional<passes::Analysis>& a) {
  if (!a || a->combined.contradictory()) return bcast::ConditionSet();
  return a->combined;
}

std::vector<LocalResult> LocalVerify(const proto::Model& original, const proto::Model& rewritten,
                                     const VerifyOptions& options, const rt::Tolerance& tolerance) {
  std::vector<LocalResult> results;
  // From here: the analyses of both models take as long as the checks on a large graph.
  passes::ProgressStep step(options.progress, "verify node by node");
  onnx::ModelProto annotated_a, annotated_b;
  if (!passes::AnalyzeBroadcasts(original, {}, &annotated_a).ok() ||
      !passes::AnalyzeBroadcasts(rewritten, {}, &annotated_b).ok()) {
    return results;
  }
  const TypeTable types_a = Types(annotated_a), types_b = Types(annotated_b);
  const onnx::GraphProto& ga = original.proto.graph();
  const onnx::GraphProto& gb = rewritten.proto.graph();
  // Values the original defines: a rewritten slice stops at them.
  std::unordered_set<std::string> defined_a;
  for (const auto& i : ga.input()) defined_a.insert(i.name());
  for (const auto& n : ga.node()) {
    for (const std::string& o : n.output()) defined_a.insert(o);
  }
  std::unordered_map<std::string, int> producer_b;
  std::unordered_map<std::string, int> node_b;
  for (int i = 0; i < gb.node_size(); ++i) {
    for (const std::string& o : gb.node(i).output()) producer_b[o] = i;
    node_b[gb.node(i).name()] = i;
  }
  std::unordered_set<std::string> inits_a, inits_b;
  for (const auto& t : ga.initializer()) inits_a.insert(t.name());
  for (const auto& t : gb.initializer()) inits_b.insert(t.name());

  std::set<std::string> symbols;
  for (const auto& [name, type] : types_a.types) {
    for (const bcast::Dim& d : proto::ShapeOfType(*type).dims) {
      if (d.is_symbol() && d.symbol().rfind("unk__", 0) != 0) symbols.insert(d.symbol());
    }
  }
  const std::vector<Bindings> samples = SampleBindings(symbols, options.samples, options.edge_cases,
                                                       UsableCondition(AnalyzeOriginal(original)));

  for (int i = 0; i < ga.node_size(); ++i) {
    step.Update(i, ga.node_size());
    const onnx::NodeProto& na = ga.node(i);
    if (!na.domain().empty() || !passes::IsBroadcastingOp(na.op_type())) continue;
    LocalResult lr;
    lr.node = na.name().empty() ? absl::StrCat(na.op_type(), "#", i) : na.name();
    lr.op = na.op_type();
    // The rewritten node: same name, or the producer of the same outputs.
    int jb = -1;
    if (auto it = node_b.find(lr.node); it != node_b.end() && !na.name().empty()) jb = it->second;
    if (jb < 0 && na.output_size() > 0) {
      if (auto it = producer_b.find(na.output(0)); it != producer_b.end()) jb = it->second;
    }
    if (jb < 0) {
      lr.skipped = true;
      lr.detail = "not found in the rewritten model";
      results.push_back(lr);
      continue;
    }
    // Original side: the node alone.
    std::set<std::string> frontier_a, inits_used_a;
    for (const std::string& in : na.input()) {
      if (in.empty()) continue;
      (inits_a.count(in) ? inits_used_a : frontier_a).insert(in);
    }
    // Rewritten side: the backward slice down to values the original defines.
    std::set<std::string> frontier_b, inits_used_b;
    std::vector<int> slice_idx;
    std::unordered_set<int> seen;
    std::vector<int> work = {jb};
    bool too_big = false;
    while (!work.empty()) {
      const int k = work.back();
      work.pop_back();
      if (!seen.insert(k).second) continue;
      if (seen.size() > 64) {
        too_big = true;
        break;
      }
      slice_idx.push_back(k);
      for (const std::string& in : gb.node(k).input()) {
        if (in.empty()) continue;
        if (inits_b.count(in) > 0) {
          inits_used_b.insert(in);
        } else if (defined_a.count(in) > 0 || producer_b.count(in) == 0) {
          frontier_b.insert(in);
        } else {
          work.push_back(producer_b[in]);
        }
      }
    }
    if (too_big) {
      lr.skipped = true;
      lr.detail = "rewrite slice larger than 64 nodes";
      results.push_back(lr);
      continue;
    }
    std::sort(slice_idx.begin(), slice_idx.end());
    std::vector<const onnx::NodeProto*> slice_b;
    for (int k : slice_idx) slice_b.push_back(&gb.node(k));
    std::vector<std::string> outs(na.output().begin(), na.output().end());
    outs.erase(std::remove(outs.begin(), outs.end(), std::string()), outs.end());

    for (size_t s = 0; s < samples.size() && lr.match && !lr.skipped; ++s) {
      std::map<std::string, std::vector<int64_t>> shapes;
      std::map<std::string, int32_t> elems;
      absl::StatusOr<SubModel> sa = MakeSubModel(original, {&na}, frontier_a, inits_used_a, outs,
                                                 types_a, types_a, samples[s], &shapes, &elems);
      absl::StatusOr<SubModel> sb = MakeSubModel(rewritten, slice_b, frontier_b, inits_used_b, outs,
                                                 types_a, types_b, samples[s], &shapes, &elems);
      if (!sa.ok() || !sb.ok()) {
        lr.skipped = true;
        lr.detail = std::string((!sa.ok() ? sa.status() : sb.status()).message());
        break;
      }
      // Same random values by name on both sides.
      std::map<std::string, rt::Value> values;
      uint64_t k = 0;
      for (const auto& [name, dims] : shapes) {
        absl::StatusOr<rt::Tensor> t = rt::RandomTensor(static_cast<rt::DType>(elems[name]), dims,
                                                        options.seed * 7919u + s * 104729u + k++);
        if (!t.ok()) {
          lr.skipped = true;
          lr.detail = std::string(t.status().message());
          break;
        }
        values[name] = rt::Value::Of(std::make_shared<rt::Tensor>(std::move(*t)));
      }
      if (lr.skipped) break;
      std::vector<std::vector<rt::Value>> results_ab;
      for (const SubModel* sub : {&*sa, &*sb}) {
        std::shared_ptr<const rt::Model> loaded;
        absl::StatusOr<std::unique_ptr<rt::Executor>> ex = Prepare(sub->model, options, &loaded);
        rt::Feeds feeds;
        for (const std::string& name : sub->inputs) feeds.emplace_back(name, values[name]);
        absl::StatusOr<std::vector<rt::Value>> out =
            ex.ok() ? (*ex)->Run(feeds) : absl::StatusOr<std::vector<rt::Value>>(ex.status());
        if (!out.ok()) {
          lr.skipped = sub == &*sa;  // the original node itself cannot run: nothing to compare
          lr.match = sub == &*sa;
          lr.detail = absl::StrCat(sub == &*sa ? "original" : "rewritten",
                                   " cannot run: ", out.status().message());
          break;
        }
        results_ab.push_back(std::move(*out));
      }
      if (results_ab.size() != 2) break;
      for (size_t o = 0; o < outs.size(); ++o) {
        rt::Comparison c =
            rt::CompareValues(results_ab[1][o], results_ab[0][o], outs[o], tolerance);
        if (!c.match) {
          lr.match = false;
          lr.detail = absl::StrCat(BindingsToString(samples[s]), ": ", c.message);
          break;
        }
        lr.detail = absl::StrCat("equal on ", samples.size(), " sample(s); ", c.Figures());
      }
    }
    results.push_back(std::move(lr));
  }
  if (step.active()) {
    step.End(absl::StrCat(passes::FormatCount(static_cast<int64_t>(results.size())),
                          " broadcasting nodes checked"));
  }
  return results;
}

}  // namespace

bool OnlyExactOpsChanged(const proto::Model& original, const proto::Model& rewritten) {
  const std::map<std::string, int> a = OpCounts(original.proto.graph());
  const std::map<std::string, int> b = OpCounts(rewritten.proto.graph());
  std::set<std::string> ops;
  for (const auto& [op, n] : a) ops.insert(op);
  for (const auto& [op, n] : b) ops.insert(op);
  for (const std::string& op : ops) {
    const int na = a.count(op) ? a.at(op) : 0, nb = b.count(op) ? b.at(op) : 0;
    if (na != nb && ExactOps().count(op) == 0) return false;
  }
  return true;
}

absl::StatusOr<VerifyResult> Verify(const proto::Model& original_given,
                                    const proto::Model& rewritten_given,
                                    const VerifyOptions& given) {
  // One memory budget for every run of the verification (both models are held at once).
  VerifyOptions options = given;
  if (options.memory == nullptr) {
    if (options.max_memory_bytes <= 0) {
      return absl::InvalidArgumentError("the memory budget must be positive");
    }
    options.memory = std::make_shared<rt::MemoryBudget>(options.max_memory_bytes);
  }
  const rt::MemoryBudget* memory = options.memory.get();
  absl::StatusOr<std::optional<passes::OptReport>> report = LoadReport(options);
  if (!report.ok()) return report.status();
  VerifyResult r;
  // Only inputs both models accept say anything: a dim one declares as a number (opt --dim
  // wrote it) is that number in both, and the samples vary only the dims both leave free.
  absl::StatusOr<std::vector<BoundDim>> bound =
      CommonInputBindings(original_given, rewritten_given, options.dims, options.dims_label);
  if (!bound.ok()) return bound.status();
  r.bound = *std::move(bound);
  const std::map<std::string, int64_t> bound_values = BoundValues(r.bound);
  // Copies only when something is bound: a large model is not copied for nothing.
  std::optional<proto::Model> bound_a, bound_b;
  if (!bound_values.empty()) {
    bound_a = original_given;
    bound_b = rewritten_given;
    proto::ApplyDimBindings(bound_a->proto.mutable_graph(), bound_values);
    proto::ApplyDimBindings(bound_b->proto.mutable_graph(), bound_values);
  }
  const proto::Model& original = bound_a ? *bound_a : original_given;
  const proto::Model& rewritten = bound_b ? *bound_b : rewritten_given;
  if (options.tolerance) {
    r.tolerance = *options.tolerance;
  } else {
    r.tolerance.exact = OnlyExactOpsChanged(original, rewritten);
  }
  const std::vector<std::string> outs_a = OutputNames(original.proto.graph());
  const std::vector<std::string> outs_b = OutputNames(rewritten.proto.graph());
  for (const std::string& n : outs_a) {
    if (std::find(outs_b.begin(), outs_b.end(), n) == outs_b.end()) {
      r.structural.push_back(absl::StrCat("output '", n, "' is missing from the rewritten model"));
    }
  }
  for (const std::string& n : outs_b) {
    if (std::find(outs_a.begin(), outs_a.end(), n) == outs_a.end()) {
      r.structural.push_back(absl::StrCat("output '", n, "' is not in the original model"));
    }
  }
  if (!r.structural.empty()) r.match = false;

  auto go_local = [&](const std::string& why) -> absl::StatusOr<VerifyResult> {
    r.mode = "local";
    r.note = why;
    r.local = LocalVerify(original, rewritten, options, r.tolerance);
    // Runs cut by the deadline fail as if mismatched: report the deadline instead.
    if (options.budget != nullptr) {
      if (absl::Status s = options.budget->Check(); !s.ok()) return s;
    }
    for (const LocalResult& l : r.local) r.match &= l.match;
    return r;
  };
  if (options.local) return go_local("--local");

  std::shared_ptr<const rt::Model> ma, mb;
  // Steps do not nest: each path out of this one ends it before go_local starts its own.
  passes::ProgressStep prepare_step(options.progress, "preparing both models for the executor");
  absl::StatusOr<std::unique_ptr<rt::Executor>> ea = Prepare(original, options, &ma);
  if (!ea.ok()) {
    prepare_step.End("the original cannot run");
    if (ea.status().code() == absl::StatusCode::kUnimplemented ||
        ea.status().code() == absl::StatusCode::kResourceExhausted) {
      return go_local(absl::StrCat("the whole model cannot run: ", ea.status().message()));
    }
    return ea.status();
  }
  absl::StatusOr<std::unique_ptr<rt::Executor>> eb = Prepare(rewritten, options, &mb);
  prepare_step.End(eb.ok() ? "" : "the rewritten model cannot run");
  if (!eb.ok()) {
    if (eb.status().code() == absl::StatusCode::kUnimplemented) {
      return go_local(absl::StrCat("the rewritten model cannot run: ", eb.status().message()));
    }
    r.match = false;
    SampleResult load;
    load.label = "load";
    load.match = false;
    load.error = std::string(eb.status().message());
    r.samples.push_back(std::move(load));
    return r;
  }
  r.mode = "whole-model";

  std::vector<std::pair<std::string, rt::Feeds>> sets;
  // The --edge-cases sample outside the combined condition: both models must fail there.
  std::optional<size_t> must_fail;
  std::string must_fail_why;
  if (!options.test_data.empty()) {
    for (const std::string& dir : options.test_data) {
      absl::StatusOr<rt::TestDataSet> set = rt::LoadTestDataSet(original, dir);
      if (!set.ok()) return set.status();
      // An input a model's declaration refuses is never fed: `run` refuses it too.
      const std::pair<const char*, const rt::Model*> both[] = {{"original", ma.get()},
                                                               {"rewritten", mb.get()}};
      for (const auto& [which, loaded] : both) {
        absl::StatusOr<rt::SymbolValues> fits =
            rt::CheckInputs(*loaded->main, set->feeds, bound_values, options.dims_label);
        if (!fits.ok()) {
          return BadInputError(absl::InvalidArgumentError(
              absl::StrCat(dir, ": the ", which,
                           " model does not accept this input: ", fits.status().message())));
        }
      }
      sets.emplace_back(dir, std::move(set->feeds));
    }
  } else {
    passes::ProgressStep sample_step(options.progress, "choosing samples (analysis)");
    const std::set<std::string> symbols = InputSymbols(*ma->main);
    const std::optional<passes::Analysis> analysis = AnalyzeOriginal(original);
    const bcast::ConditionSet condition = UsableCondition(analysis);
    std::vector<Bindings> bindings =
        SampleBindings(symbols, options.samples, options.edge_cases, condition);
    if (options.edge_cases) {
      if (std::optional<Bindings> bad = ViolatingBinding(symbols, condition); bad) {
        // Name the node check says fails there (the symbols the analysis knows).
        const std::vector<std::string> known = passes::AnalysisSymbols(*analysis);
        passes::DimBindings at;
        for (const auto& [s, v] : *bad) {
          if (std::binary_search(known.begin(), known.end(), s)) at[s] = v;
        }
        absl::StatusOr<passes::DimEvaluation> eval = passes::EvaluateAtDims(*analysis, at);
        must_fail_why = eval.ok() && eval->first_failure >= 0
                            ? eval->nodes[eval->first_failure].message
                            : absl::StrCat(condition.ToString(), " does not hold");
        must_fail = bindings.size();
        bindings.push_back(*bad);
      }
    }
    for (size_t k = 0; k < bindings.size(); ++k) {
      rt::RandomInputOptions random;
      random.seed = options.seed + k;
      random.dims = bindings[k];
      random.default_dim = 2;
      absl::StatusOr<rt::Feeds> feeds = rt::RandomInputs(*ma->main, random);
      if (!feeds.ok()) {
        sample_step.End("failed");
        return go_local(std::string(feeds.status().message()));
      }
      sets.emplace_back(must_fail == k ? absl::StrCat("edge case outside the broadcast condition (",
                                                      BindingsToString(bindings[k]), ")")
                                       : absl::StrCat("random sample ", k, " (",
                                                      bindings[k].empty() && !r.bound.empty()
                                                          ? std::string("every dim bound")
                                                          : BindingsToString(bindings[k]),
                                                      ")"),
                        std::move(*feeds));
    }
    if (sample_step.active()) sample_step.End(absl::StrCat(sets.size(), " input sets"));
  }
  int ran = 0;
  std::string first_failure;
  for (size_t k = 0; k < sets.size(); ++k) {
    auto& [label, feeds] = sets[k];
    SampleResult sample;
    sample.label = label;
    passes::ProgressStep step(options.progress,
                              absl::StrCat("verify ", k + 1, "/", sets.size(), ": ", label));
    if (must_fail == k) {
      // check says a node fails at these dims: a model that runs contradicts the analysis (or
      // hides a broadcast the rewrite should have kept).
      sample.expect_failure = true;
      for (int which = 0; which < 2; ++which) {
        absl::StatusOr<std::vector<rt::Value>> v = (which == 0 ? *ea : *eb)->Run(feeds);
        if (!v.ok() && EndsVerification(v.status(), memory)) return v.status();
        if (v.ok()) {
          sample.match = false;
          absl::StrAppend(&sample.error, sample.error.empty() ? "" : "; ", "the ",
                          which == 0 ? "original" : "rewritten",
                          " model runs where check says it must fail (", must_fail_why, ")");
        } else if (which == 0) {
          sample.note =
              absl::StrCat("check: ", must_fail_why, "; original: ", v.status().message());
        }
      }
      if (sample.match) sample.note = absl::StrCat("both models fail, as expected; ", sample.note);
      step.End(sample.match ? "both models fail, as expected" : "DIFFERENT");
      r.match &= sample.match;
      r.samples.push_back(std::move(sample));
      continue;
    }
    absl::StatusOr<std::vector<rt::Value>> va = (*ea)->Run(feeds);
    if (!va.ok() && EndsVerification(va.status(), memory)) return va.status();
    if (!va.ok()) {
      if (va.status().code() == absl::StatusCode::kUnimplemented) {
        step.End("the whole model cannot run");  // steps do not nest: the local one follows
        return go_local(absl::StrCat("the whole model cannot run: ", va.status().message()));
      }
      if (first_failure.empty()) first_failure = std::string(va.status().message());
      step.End("skipped: the original rejects these inputs");
      continue;  // inputs the original itself rejects say nothing about the rewrite
    }
    ++ran;
    absl::StatusOr<std::vector<rt::Value>> vb = (*eb)->Run(feeds);
    if (!vb.ok() && EndsVerification(vb.status(), memory)) return vb.status();
    if (!vb.ok()) {
      sample.match = false;
      sample.error = absl::StrCat("the rewritten model fails where the original runs: ",
                                  vb.status().message());
    } else {
      for (size_t i = 0; i < outs_a.size(); ++i) {
        auto it = std::find(outs_b.begin(), outs_b.end(), outs_a[i]);
        if (it == outs_b.end()) continue;
        OutputResult o;
        o.name = outs_a[i];
        o.comparison = rt::CompareValues((*vb)[it - outs_b.begin()], (*va)[i], o.name, r.tolerance);
        sample.match &= o.comparison.match;
        sample.outputs.push_back(std::move(o));
      }
    }
    if (!sample.match && !r.divergence) {
      r.divergence =
          Bisect(*ma, *mb, feeds, r.tolerance, label, report->has_value() ? &**report : nullptr,
                 options.threads, options.budget, options.memory);
    }
    step.End(sample.match ? "equal" : "DIFFERENT");
    r.match &= sample.match;
    r.samples.push_back(std::move(sample));
  }
  if (ran == 0) {
    if (!options.test_data.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the original model fails on every input: ", first_failure));
    }
    return go_local(absl::StrCat("the original model rejects random inputs (", first_failure,
                                 "); give --test-data for a whole-model check"));
  }
  return r;
}

std::string FormatVerifyText(const VerifyResult& r, const std::string& original_path,
                             const std::string& rewritten_path) {
  std::string out = absl::StrCat(
      original_path, " vs ", rewritten_path, ": ", r.match ? "EQUAL" : "DIFFERENT", " (", r.mode,
      ", ",
      r.tolerance.exact ? std::string("bit-exact")
                        : absl::StrCat("rtol ", r.tolerance.rtol, ", atol ", r.tolerance.atol),
      r.bound.empty() ? "" : "; ", BoundDimsToString(r.bound), ")\n");
  if (!r.note.empty()) absl::StrAppend(&out, "note: verified node by node: ", r.note, "\n");
  for (const std::string& s : r.structural) absl::StrAppend(&out, "  ", s, "\n");
  for (const SampleResult& s : r.samples) {
    absl::StrAppend(
        &out, "  ", s.label, ": ",
        s.expect_failure ? (s.match ? "both fail" : "RUNS") : (s.match ? "equal" : "DIFFERENT"),
        "\n");
    if (!s.error.empty()) absl::StrAppend(&out, "    ", s.error, "\n");
    if (!s.note.empty()) absl::StrAppend(&out, "    ", s.note, "\n");
    for (const OutputResult& o : s.outputs) {
      absl::StrAppend(&out, "    ",
                      o.comparison.match
                          ? absl::StrCat("output '", o.name, "': equal; ", o.comparison.Figures())
                          : o.comparison.message,
                      "\n");
    }
  }
  if (r.divergence) {
    const Divergence& d = *r.divergence;
    const std::string producer =
        d.node.empty() ? absl::StrCat("unnamed ", d.op, " (first output '", d.node_output, "')")
                       : absl::StrCat(d.op, " '", d.node, "'");
    absl::StrAppend(&out, "first divergence (", d.sample, "): tensor '", d.tensor, "' produced by ",
                    producer, " with inputs ", absl::StrJoin(d.input_shapes, ", "), "; ",
                    d.comparison.message, "\n");
    if (!d.pass.empty()) {
      absl::StrAppend(&out, "  introduced by pass ", d.pass, ": ", d.rewrite, "\n");
    }
  }
  int checked = 0, skipped = 0;
  for (const LocalResult& l : r.local) {
    (l.skipped ? skipped : checked) += 1;
    absl::StrAppend(&out, "  ", l.op, " '", l.node,
                    "': ", l.skipped ? "skipped" : (l.match ? "equal" : "DIFFERENT"), "; ",
                    l.detail, "\n");
  }
  if (!r.local.empty()) {
    absl::StrAppend(&out, "  local: ", checked, " node(s) checked, ", skipped, " skipped\n");
  }
  return out;
}

namespace {

passes::Json ComparisonJson(const rt::Comparison& c) {
  passes::Json j;
  j["match"] = c.match;
  j["elements"] = c.elements;
  j["mismatches"] = c.mismatches;
  j["max_abs_error"] = passes::JsonNumber(c.max_abs_error);
  j["max_abs_at"] = passes::JsonStringOrNull(c.max_abs_at);
  j["max_rel_error"] = passes::JsonNumber(c.max_rel_error);
  j["max_rel_at"] = passes::JsonStringOrNull(c.max_rel_at);
  j["max_ulp"] = c.max_ulp;
  j["passing_atol"] = c.passing_atol ? passes::JsonNumber(*c.passing_atol) : passes::Json();
  j["passing_rtol"] = c.passing_rtol ? passes::JsonNumber(*c.passing_rtol) : passes::Json();
  j["message"] = passes::JsonStringOrNull(c.message);
  return j;
}

}  // namespace

passes::Json VerifyResultJson(const VerifyResult& r, const std::string& original_path,
                              const std::string& rewritten_path) {
  passes::Json doc;
  doc["schema_version"] = passes::kReportSchemaVersion;
  doc["kind"] = "verify";
  doc["original"] = original_path;
  doc["rewritten"] = rewritten_path;
  doc["match"] = r.match;
  doc["mode"] = r.mode;
  doc["note"] = passes::JsonStringOrNull(r.note);
  doc["tolerance"] = passes::Json{{"exact", r.tolerance.exact},
                                  {"rtol", passes::JsonNumber(r.tolerance.rtol)},
                                  {"atol", passes::JsonNumber(r.tolerance.atol)}};
  passes::Json bound = passes::Json::array();
  for (const BoundDim& b : r.bound) {
    bound.push_back(passes::Json{{"symbol", b.symbol}, {"value", b.value}, {"by", b.by}});
  }
  doc["bound"] = std::move(bound);
  passes::Json structural = passes::Json::array();
  for (const std::string& s : r.structural) structural.push_back(s);
  doc["structural"] = std::move(structural);
  passes::Json samples = passes::Json::array();
  double max_abs = 0;
  int64_t max_ulp = 0;
  for (const SampleResult& s : r.samples) {
    for (const OutputResult& o : s.outputs) {
      // NaN-safe: a NaN error is the largest of all.
      if (!(o.comparison.max_abs_error <= max_abs)) max_abs = o.comparison.max_abs_error;
      max_ulp = std::max(max_ulp, o.comparison.max_ulp);
    }
    passes::Json j;
    j["sample"] = s.label;
    j["match"] = s.match;
    j["expect_failure"] = s.expect_failure;
    j["error"] = passes::JsonStringOrNull(s.error);
    j["note"] = passes::JsonStringOrNull(s.note);
    passes::Json outputs = passes::Json::array();
    for (const OutputResult& o : s.outputs) {
      passes::Json c;
      c["output"] = o.name;
      c.update(ComparisonJson(o.comparison));
      outputs.push_back(std::move(c));
    }
    j["outputs"] = std::move(outputs);
    samples.push_back(std::move(j));
  }
  doc["samples"] = std::move(samples);
  doc["max_abs_error"] = passes::JsonNumber(max_abs);
  doc["max_ulp"] = max_ulp;
  if (r.divergence) {
    const Divergence& d = *r.divergence;
    passes::Json j;
    j["sample"] = d.sample;
    j["tensor"] = d.tensor;
    j["node"] = d.node;
    j["node_output"] = d.node_output;
    j["op"] = d.op;
    passes::Json shapes = passes::Json::array();
    for (const std::string& s : d.input_shapes) shapes.push_back(s);
    j["input_shapes"] = std::move(shapes);
    j["pass"] = passes::JsonStringOrNull(d.pass);
    j["rewrite"] = passes::JsonStringOrNull(d.rewrite);
    j["comparison"] = ComparisonJson(d.comparison);
    doc["divergence"] = std::move(j);
  } else {
    doc["divergence"] = nullptr;
  }
  passes::Json local = passes::Json::array();
  for (const LocalResult& l : r.local) {
    local.push_back(passes::Json{{"node", l.node},
                                 {"op", l.op},
                                 {"match", l.match},
                                 {"skipped", l.skipped},
                                 {"detail", l.detail}});
  }
  doc["local"] = std::move(local);
  return doc;
}

std::string FormatVerifyJson(const VerifyResult& r, const std::string& original_path,
                             const std::string& rewritten_path) {
  return passes::DumpJson(VerifyResultJson(r, original_path, rewritten_path));
}

}  // namespace onnx_bcast::verify
