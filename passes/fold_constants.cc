// fold-constants (see fold_constants.h).
#include "passes/fold_constants.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/analysis_manager.h"
#include "analysis/shape_propagation.h"
#include "passes/node_evaluation.h"
#include "passes/rewrite_context.h"
#include "proto/graph.h"
#include "proto/opsets.h"
#include "proto/tensor_codec.h"
#include "proto/tensor_util.h"
#include "support/status_macros.h"
#include "targets/targets.h"

namespace onnx_bcast::passes {
namespace {

// Rounds while one exposes more (a folded If exposes constant nodes; a result kept for its
// size makes its inputs wanted). Real models settle in one.
constexpr int kMaxRounds = 16;

bool DefaultDomain(const onnx::NodeProto& n) {
  return n.domain().empty() || n.domain() == "ai.onnx";
}

bool HasSubgraph(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute()) {
    if (a.has_g() || a.graphs_size() > 0) return true;
  }
  return false;
}

// Ops whose value is not a function of their inputs, or that produce sequences/optionals
// (which are not tensors an initializer can hold).
bool Foldable(const onnx::NodeProto& n) {
  if (!DefaultDomain(n) || HasSubgraph(n)) return false;
  static const auto* const kNever = new std::unordered_set<std::string>{"RandomNormal",
                                                                        "RandomUniform",
                                                                        "RandomNormalLike",
                                                                        "RandomUniformLike",
                                                                        "Multinomial",
                                                                        "Bernoulli",
                                                                        "Constant",
                                                                        "If",
                                                                        "Loop",
                                                                        "Scan",
                                                                        "SequenceMap",
                                                                        "SequenceConstruct",
                                                                        "SequenceEmpty",
                                                                        "SequenceInsert",
                                                                        "SequenceErase",
                                                                        "SequenceAt",
                                                                        "SequenceLength",
                                                                        "SplitToSequence",
                                                                        "ConcatFromSequence",
                                                                        "Optional",
                                                                        "OptionalGetElement",
                                                                        "OptionalHasElement"};
  return kNever->count(n.op_type()) == 0;
}

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

// The payload size of a tensor (what the fold limit counts).
int64_t PayloadBytes(const onnx::TensorProto& t) {
  if (t.has_raw_data()) return static_cast<int64_t>(t.raw_data().size());
  return static_cast<int64_t>(t.int64_data_size()) * 8 + t.int32_data_size() * 4 +
         t.float_data_size() * 4 + t.double_data_size() * 8 + t.uint64_data_size() * 8;
}

std::string DimsText(const onnx::TensorProto& t) {
  return absl::StrCat("[", absl::StrJoin(t.dims(), ","), "]");
}

// Renames reads of `from` to `to` in `nodes` and, at any depth, in their subgraphs, except in
// a subgraph that defines `from` itself (it shadows the outer name there).
void RenameReads(google::protobuf::RepeatedPtrField<onnx::NodeProto>* nodes,
                 const std::string& from, const std::string& to) {
  for (auto& n : *nodes) {
    for (auto& in : *n.mutable_input()) {
      if (in == from) in = to;
    }
    for (auto& a : *n.mutable_attribute()) {
      auto walk = [&](onnx::GraphProto* g) {
        for (const auto& vi : g->input()) {
          if (vi.name() == from) return;
        }
        for (const auto& t : g->initializer()) {
          if (t.name() == from) return;
        }
        for (const auto& inner : g->node()) {
          for (const auto& o : inner.output()) {
            if (o == from) return;
          }
        }
        RenameReads(g->mutable_node(), from, to);
        for (auto& o : *g->mutable_output()) {
          if (o.name() == from) o.set_name(to);
        }
      };
      if (a.has_g()) walk(a.mutable_g());
      for (auto& g : *a.mutable_graphs()) walk(&g);
    }
  }
}

// Renames every occurrence of `from` (outputs, reads, graph outputs) inside `g` and its
// subgraphs: used on an If branch about to be inlined, where `from` is defined.
void RenameEverywhere(onnx::GraphProto* g, const std::string& from, const std::string& to) {
  for (auto& n : *g->mutable_node()) {
    for (auto& o : *n.mutable_output()) {
      if (o == from) o = to;
    }
  }
  RenameReads(g->mutable_node(), from, to);
  for (auto& o : *g->mutable_output()) {
    if (o.name() == from) o.set_name(to);
  }
  for (auto& vi : *g->mutable_value_info()) {
    if (vi.name() == from) vi.set_name(to);
  }
}

class Folder {
 public:
  Folder(proto::Model* model, const PassOptions& options, PassStats* stats,
         std::unordered_set<std::string>* kept)
      : model_(model),
        g_(model->proto.mutable_graph()),
        options_(options),
        stats_(stats),
        kept_(kept) {}

  // One round; true when another round may find more. Within a round constness already
  // propagates (a folded value joins the constants the next nodes read), so only what a round
  // exposes late asks for another: an inlined If branch, or a result kept for its size (its
  // inputs are then wanted as initializers). The idempotence tests hold this to account.
  absl::StatusOr<bool> Round() {
    Index();
    ConstantNodesToInitializers();
    TrimTrailingEmptyInputs();
    RemoveIdentities();
    Rebuild();
    const size_t kept_before = kept_->size();
    BCAST_ASSIGN_OR_RETURN(bool folded, FoldValues());
    Rebuild();
    BCAST_ASSIGN_OR_RETURN(bool ifs, FoldIfs());
    const bool removed = RemoveDead();
    // Tables of the graph as the round leaves it: nothing was edited after the analysis.
    if (folded || ifs || removed) tables_.reset();
    return ifs || kept_->size() > kept_before;
  }

  /// The analysis of the last round, when no edit followed it (else nullopt).
  std::optional<analysis::ShapeTables> TakeTables() { return std::move(tables_); }

 private:
  // Names, producers, graph inputs and outputs, initializers of the main graph as it is now.
  void Index() {
    dead_.assign(static_cast<size_t>(g_->node_size()), false);
    producer_.clear();
    for (int i = 0; i < g_->node_size(); ++i) {
      for (const std::string& o : g_->node(i).output()) {
        if (!o.empty()) producer_[o] = i;
      }
    }
    inputs_.clear();
    for (const auto& vi : g_->input()) inputs_.insert(vi.name());
    outputs_.clear();
    for (const auto& vi : g_->output()) outputs_.insert(vi.name());
    constants_.clear();
    for (const auto& t : g_->initializer()) {
      // An initializer that is also a graph input is a default the caller may override.
      if (inputs_.count(t.name()) == 0) constants_.insert(t.name());
    }
  }

  std::string Label(int i) const {
    const onnx::NodeProto& n = g_->node(i);
    if (!n.name().empty()) return n.name();
    int index = i;
    if (options_.original_index != nullptr && n.output_size() > 0) {
      if (auto it = options_.original_index->find(n.output(0));
          it != options_.original_index->end()) {
        index = it->second;
      }
    }
    return absl::StrCat(n.op_type(), "#", index);
  }

  // Whether the target loads a constant of this element type (a node whose result it does not
  // load stays a node: OpenCV 4.6 refuses a model with a bool initializer at load).
  bool TypeLoads(int32_t data_type) const {
    return options_.target == nullptr || options_.target->InitializerTypeAllowed(data_type);
  }

  void AddInitializer(onnx::TensorProto t) {
    passes::AllowInitializers(model_, stats_);
    constants_.insert(t.name());
    stats_->bytes_added += PayloadBytes(t);
    ++stats_->initializers_rewritten;
    *g_->add_initializer() = std::move(t);
  }

  void Log(int i, std::string action, const std::string& tensor, std::string detail,
           std::string after, int64_t bytes) {
    Rewrite r;
    r.node = Label(i);
    r.output = g_->node(i).output_size() > 0 ? g_->node(i).output(0) : "";
    r.op = g_->node(i).op_type();
    r.action = std::move(action);
    r.tensor = tensor;
    r.detail = std::move(detail);
    r.after = std::move(after);
    r.bytes = bytes;
    stats_->Log(std::move(r));
  }

  void Kill(int i) {
    if (dead_[static_cast<size_t>(i)]) return;
    dead_[static_cast<size_t>(i)] = true;
    ++stats_->nodes_removed;
  }

  // Drops dead nodes and splices inlined branches into the node list.
  void Rebuild() {
    bool any = !splice_.empty();
    for (bool d : dead_) any |= d;
    if (!any) return;
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int i = 0; i < g_->node_size(); ++i) {
      if (auto it = splice_.find(i); it != splice_.end()) {
        for (auto& n : it->second) *nodes.Add() = std::move(n);
      }
      if (!dead_[static_cast<size_t>(i)]) *nodes.Add() = std::move(*g_->mutable_node(i));
    }
    g_->mutable_node()->Swap(&nodes);
    splice_.clear();
    Index();
  }

  bool ConstantNodesToInitializers() {
    bool changed = false;
    for (int i = 0; i < g_->node_size(); ++i) {
      const onnx::NodeProto& n = g_->node(i);
      if (n.op_type() != "Constant" || !DefaultDomain(n) || n.output_size() != 1 ||
          outputs_.count(n.output(0)) > 0) {
        continue;
      }
      std::optional<onnx::TensorProto> t = ConstantTensor(n);
      if (!t.has_value() || !TypeLoads(t->data_type())) continue;
      t->set_name(n.output(0));
      const std::string dims = DimsText(*t);
      const int64_t bytes = PayloadBytes(*t);
      AddInitializer(*std::move(t));
      stats_->bytes_added -= bytes;  // moved, not added
      Log(i, "folded", n.output(0), "Constant node -> initializer", dims, 0);
      Kill(i);
      changed = true;
    }
    return changed;
  }

  // The tensor a Constant node holds, from whichever attribute carries it.
  static std::optional<onnx::TensorProto> ConstantTensor(const onnx::NodeProto& n) {
    if (n.attribute_size() != 1) return std::nullopt;
    const onnx::AttributeProto& a = n.attribute(0);
    if (!a.ref_attr_name().empty()) return std::nullopt;
    onnx::TensorProto t;
    if (a.name() == "value" && a.has_t()) return a.t();
    if (a.name() == "value_float") {
      t.set_data_type(onnx::TensorProto::FLOAT);
      t.add_float_data(a.f());
    } else if (a.name() == "value_floats") {
      t.set_data_type(onnx::TensorProto::FLOAT);
      t.add_dims(a.floats_size());
      for (float f : a.floats()) t.add_float_data(f);
    } else if (a.name() == "value_int") {
      t.set_data_type(onnx::TensorProto::INT64);
      t.add_int64_data(a.i());
    } else if (a.name() == "value_ints") {
      t.set_data_type(onnx::TensorProto::INT64);
      t.add_dims(a.ints_size());
      for (int64_t v : a.ints()) t.add_int64_data(v);
    } else {
      return std::nullopt;  // strings and sparse tensors stay nodes
    }
    return t;
  }

  // Every name read by a node or a subgraph anywhere, counted.
  std::unordered_map<std::string, int> Readers() const {
    std::unordered_map<std::string, int> reads;
    for (int i = 0; i < g_->node_size(); ++i) {
      if (dead_[static_cast<size_t>(i)]) continue;
      for (const std::string& in : g_->node(i).input()) {
        if (!in.empty()) ++reads[in];
      }
      proto::ForEachSubgraphRead(g_->node(i), [&](const std::string& name) { ++reads[name]; });
    }
    return reads;
  }

  // An omitted optional input may be written as an empty name or left out; OpenCV 4.6's
  // importer looks an empty trailing name up as a constant and refuses the model (PyTorch's
  // Pad without a value).
  void TrimTrailingEmptyInputs() {
    for (int i = 0; i < g_->node_size(); ++i) {
      onnx::NodeProto* n = g_->mutable_node(i);
      if (n->input_size() == 0 || !n->input(n->input_size() - 1).empty()) continue;
      while (n->input_size() > 0 && n->input(n->input_size() - 1).empty()) {
        n->mutable_input()->RemoveLast();
      }
      Log(i, "converted", n->output_size() > 0 ? n->output(0) : "",
          "trailing empty optional inputs dropped", "", 0);
    }
  }

  // The tensor of constant `name` (an initializer or a Constant node's value), or null.
  const onnx::TensorProto* ConstantTensor(const std::string& name) const {
    const onnx::TensorProto* t = nullptr;
    if (constants_.count(name) > 0) {
      for (const auto& init : g_->initializer()) {
        if (init.name() == name) t = &init;
      }
    } else if (auto p = producer_.find(name); p != producer_.end()) {
      const onnx::NodeProto& c = g_->node(p->second);
      if (c.op_type() == "Constant" && DefaultDomain(c) && c.attribute_size() == 1 &&
          c.attribute(0).name() == "value") {
        t = &c.attribute(0).t();
      }
    }
    return t;
  }

  // The boolean value of a one-element bool constant.
  std::optional<bool> ConstantBool(const std::string& name) const {
    const onnx::TensorProto* t = ConstantTensor(name);
    if (t == nullptr || t->data_type() != onnx::TensorProto::BOOL) return std::nullopt;
    if (t->int32_data_size() == 1) return t->int32_data(0) != 0;
    if (t->raw_data().size() == 1) return t->raw_data()[0] != 0;
    return std::nullopt;
  }

  // True when `name` is a one-element float constant equal to 0.
  bool ConstantZeroFloat(const std::string& name) const {
    const onnx::TensorProto* t = ConstantTensor(name);
    if (t == nullptr || t->data_type() != onnx::TensorProto::FLOAT) return false;
    if (t->float_data_size() == 1) return t->float_data(0) == 0.0f;
    if (t->raw_data().size() != sizeof(float)) return false;
    float v = 1;
    std::memcpy(&v, t->raw_data().data(), sizeof(float));
    return v == 0.0f;
  }

  // Dropout at inference is its input: training_mode omitted or a constant false (opset 12),
  // none (7..11), or is_test = 1 (before 7); in training mode only with a constant ratio 0
  // (torchvision's Swin calls F.dropout(p=0.0) without its training flag). Its mask output,
  // if any, read by nothing.
  bool InferenceDropout(const onnx::NodeProto& n,
                        const std::unordered_map<std::string, int>& reads) const {
    if (n.op_type() != "Dropout" || !DefaultDomain(n) || n.input_size() < 1 || n.input(0).empty() ||
        n.output_size() < 1 || n.output(0).empty()) {
      return false;
    }
    if (n.output_size() > 1 && !n.output(1).empty() &&
        (reads.count(n.output(1)) > 0 || outputs_.count(n.output(1)) > 0)) {
      return false;
    }
    bool is_test = proto::DefaultOpset(model_->proto) >= 7;
    for (const auto& a : n.attribute()) {
      if (a.name() == "is_test") is_test = a.i() != 0;
    }
    if (!is_test) return false;
    if (n.input_size() >= 3 && !n.input(2).empty()) {
      const std::optional<bool> training = ConstantBool(n.input(2));
      if (!training.has_value()) return false;
      return !*training || (n.input_size() >= 2 && ConstantZeroFloat(n.input(1)));
    }
    return true;
  }

  bool RemoveIdentities() {
    bool changed = false;
    std::unordered_map<std::string, int> reads;
    for (const auto& n : g_->node()) {
      if (n.op_type() == "Dropout") {
        reads = Readers();
        break;
      }
    }
    for (int i = 0; i < g_->node_size(); ++i) {
      onnx::NodeProto* n = g_->mutable_node(i);
      const bool dropout = InferenceDropout(*n, reads);
      if (!dropout && (n->op_type() != "Identity" || !DefaultDomain(*n) || n->input_size() != 1 ||
                       n->output_size() != 1 || n->input(0).empty())) {
        continue;
      }
      if (dropout) {
        n->mutable_input()->DeleteSubrange(1, n->input_size() - 1);
        n->mutable_output()->DeleteSubrange(1, n->output_size() - 1);
      }
      const std::string x = n->input(0);
      const std::string y = n->output(0);
      if (outputs_.count(y) == 0) {
        // Readers of y read x.
        RenameReads(g_->mutable_node(), y, x);
        DropValueInfo(y);
        Log(i, "removed", y,
            absl::StrCat(dropout ? "Dropout at inference" : "Identity", ": readers read '", x, "'"),
            "", 0);
        Kill(i);
        changed = true;
        continue;
      }
      // y is a graph output: the node producing x can produce y itself, when x is nothing
      // else's name to keep (a graph input, output, initializer).
      auto p = producer_.find(x);
      if (p == producer_.end() || outputs_.count(x) > 0 || inputs_.count(x) > 0) continue;
      onnx::NodeProto* prod = g_->mutable_node(p->second);
      for (auto& o : *prod->mutable_output()) {
        if (o == x) o = y;
      }
      n->clear_input();  // the Identity itself is going; keep it from being renamed
      RenameReads(g_->mutable_node(), x, y);
      DropValueInfo(x);
      producer_[y] = p->second;
      producer_.erase(x);
      Log(i, "removed", y,
          absl::StrCat(dropout ? "Dropout at inference" : "Identity", ": '", x,
                       "' renamed to the graph output"),
          "", 0);
      Kill(i);
      changed = true;
    }
    return changed;
  }

  void DropValueInfo(const std::string& name) {
    auto* vis = g_->mutable_value_info();
    for (int k = vis->size() - 1; k >= 0; --k) {
      if (vis->Get(k).name() == name) vis->DeleteSubrange(k, 1);
    }
  }

  // Shape/Size of static dims, values the analysis knows, and constant cones.
  absl::StatusOr<bool> FoldValues() {
    // The pass manager's own analysis (shape tables), with the known values recorded by the
    // same walk: when nothing is edited after it, the tables go to the next pass as they are.
    absl::flat_hash_map<std::string, analysis::KnownValue> known;
    BCAST_ASSIGN_OR_RETURN(analysis::ShapeTables tables, analysis::ComputeShapeTables(*model_, &known));
    tables_ = std::move(tables);
    auto shape_of = [&](const std::string& name) -> const broadcast::Shape* {
      return tables_->FindShape(name);
    };

    bool changed = false;
    std::vector<int> cone;
    std::unordered_set<std::string> cone_outputs;
    for (int i = 0; i < g_->node_size(); ++i) {
      const onnx::NodeProto& n = g_->node(i);
      bool to_output = false;
      for (const std::string& o : n.output()) to_output |= outputs_.count(o) > 0;
      if (to_output) continue;
      // A value known without running anything.
      if (n.output_size() == 1 && DefaultDomain(n) && !HasSubgraph(n)) {
        std::optional<onnx::TensorProto> t = KnownTensor(n, shape_of, known);
        if (t.has_value() && TypeLoads(t->data_type())) {
          const std::string dims = DimsText(*t);
          const int64_t bytes = PayloadBytes(*t);
          const std::string how = n.op_type() == "Shape" || n.op_type() == "Size"
                                      ? absl::StrCat(n.op_type(), " of static dims")
                                      : "known from the shape analysis";
          AddInitializer(*std::move(t));
          Log(i, "folded", n.output(0), how, dims, bytes);
          Kill(i);
          changed = true;
          continue;
        }
      }
      if (!Foldable(n) || kept_->count(n.output_size() > 0 ? n.output(0) : "") > 0) continue;
      bool all_constant = false;
      bool any_input = false;
      for (const std::string& in : n.input()) {
        if (in.empty()) continue;
        any_input = true;
        all_constant = constants_.count(in) > 0 || cone_outputs.count(in) > 0;
        if (!all_constant) break;
      }
      if (!any_input || !all_constant) continue;
      cone.push_back(i);
      for (const std::string& o : n.output()) {
        if (!o.empty()) cone_outputs.insert(o);
      }
    }
    if (cone.empty()) return changed;
    if (options_.evaluator == nullptr) {
      stats_->notes.push_back(absl::StrCat(
          cone.size(), " node(s) with only constant inputs kept: no evaluator to compute them"));
      return changed;
    }
    BCAST_ASSIGN_OR_RETURN(bool folded, FoldCone(cone));
    return changed || folded;
  }

  // What `n` (one output) computes when the analysis already knows it.
  std::optional<onnx::TensorProto> KnownTensor(
      const onnx::NodeProto& n,
      const std::function<const broadcast::Shape*(const std::string&)>& shape_of,
      const absl::flat_hash_map<std::string, analysis::KnownValue>& known) const {
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

  // Runs the constant cone (nodes in order) on the evaluator; the values read outside it
  // become initializers up to the limit.
  absl::StatusOr<bool> FoldCone(const std::vector<int>& cone) {
    const std::unordered_map<std::string, int> reads = [&] {
      // Reads from outside the cone (and from any subgraph).
      std::unordered_map<std::string, int> r;
      std::unordered_set<int> in_cone(cone.begin(), cone.end());
      for (int i = 0; i < g_->node_size(); ++i) {
        if (dead_[static_cast<size_t>(i)]) continue;
        if (in_cone.count(i) == 0) {
          for (const std::string& in : g_->node(i).input()) {
            if (!in.empty()) ++r[in];
          }
        }
        proto::ForEachSubgraphRead(g_->node(i), [&](const std::string& name) { ++r[name]; });
      }
      return r;
    }();
    std::vector<std::string> wanted;
    for (int i : cone) {
      for (const std::string& o : g_->node(i).output()) {
        if (!o.empty() && reads.count(o) > 0) wanted.push_back(o);
      }
    }
    if (wanted.empty()) return false;  // dead: RemoveDead takes it
    std::unordered_map<std::string, onnx::TensorProto> values;
    absl::Status whole = Evaluate(cone, wanted, &values);
    if (!whole.ok()) {
      // One node the executor cannot run should not keep the others: node by node, each
      // reading the values computed so far; a failure leaves that node and what depends on it.
      values.clear();
      std::unordered_map<std::string, onnx::TensorProto> all;
      for (int i : cone) {
        const onnx::NodeProto& n = g_->node(i);
        bool ready = true;
        for (const std::string& in : n.input()) {
          if (!in.empty() && constants_.count(in) == 0 && all.count(in) == 0) ready = false;
        }
        if (!ready) continue;
        std::vector<std::string> outs;
        for (const std::string& o : n.output()) {
          if (!o.empty()) outs.push_back(o);
        }
        std::unordered_map<std::string, onnx::TensorProto> one;
        if (absl::Status s = Evaluate({i}, outs, &one, &all); !s.ok()) {
          // Invalid on its constant inputs is invalid on every input: the model cannot run.
          // Anything else (an op the executor lacks) leaves the node as it is.
          if (s.code() == absl::StatusCode::kInvalidArgument) {
            return absl::InvalidArgumentError(absl::StrCat(
                n.op_type(), " '", Label(i), "' fails on its constant inputs: ", s.message()));
          }
          stats_->notes.push_back(absl::StrCat(n.op_type(), " '", Label(i),
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
      const onnx::NodeProto& n = g_->node(i);
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
        if (!TypeLoads(it->second.data_type())) {
          stats_->notes.push_back(absl::StrCat(
              n.op_type(), " '", Label(i), "' kept: its constant result '", o, "' has type ",
              targets::ElementTypeName(it->second.data_type()), ", which ", options_.target->name,
              " does not load as a constant (initializer_types)"));
          kept_->insert(n.output(0));
          fits = false;
          break;
        }
        if (bytes > options_.constant_fold_limit_bytes) {
          stats_->notes.push_back(
              absl::StrCat(n.op_type(), " '", Label(i), "' kept: its constant result '", o, "' ",
                           DimsText(it->second), " is ", bytes, " bytes, over the fold limit of ",
                           options_.constant_fold_limit_bytes, " (raise --fold-limit to fold it)"));
          kept_->insert(n.output(0));
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
        DropValueInfo(o);
        AddInitializer(std::move(t));
        Log(i, "folded", o, "computed by the executor (constant inputs)", dims, bytes);
      }
      Kill(i);
      changed = true;
    }
    return changed;
  }

  // Runs nodes `ids` with the initializers they read (and values from `extra`); `wanted` come
  // back in `out`.
  absl::Status Evaluate(const std::vector<int>& ids, const std::vector<std::string>& wanted,
                        std::unordered_map<std::string, onnx::TensorProto>* out,
                        const std::unordered_map<std::string, onnx::TensorProto>* extra = nullptr) {
    proto::Model fragment = proto::FragmentModel(*model_, "fold", kFragmentMinIr);
    onnx::GraphProto* g = fragment.proto.mutable_graph();
    std::unordered_set<std::string> defined;
    std::unordered_set<std::string> added;
    std::unordered_map<std::string, const onnx::TensorProto*> inits;
    for (const auto& t : g_->initializer()) inits[t.name()] = &t;
    for (int i : ids) {
      const onnx::NodeProto& n = g_->node(i);
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
      if (copy->name().empty()) copy->set_name(Label(i));
      for (const std::string& o : n.output()) defined.insert(o);
    }
    for (const std::string& w : wanted) g->add_output()->set_name(w);
    BCAST_ASSIGN_OR_RETURN(std::vector<onnx::TensorProto> values, (*options_.evaluator)(fragment));
    for (size_t k = 0; k < wanted.size() && k < values.size(); ++k) {
      (*out)[wanted[k]] = std::move((values)[k]);
    }
    return absl::OkStatus();
  }

  // Replaces each If whose condition is an initializer by the branch it takes.
  absl::StatusOr<bool> FoldIfs() {
    bool changed = false;
    std::unordered_map<std::string, const onnx::TensorProto*> inits;
    for (const auto& t : g_->initializer()) inits[t.name()] = &t;
    std::vector<onnx::TensorProto> moved_initializers;
    for (int i = 0; i < g_->node_size(); ++i) {
      onnx::NodeProto* n = g_->mutable_node(i);
      if (n->op_type() != "If" || !DefaultDomain(*n) || n->input_size() != 1) continue;
      auto c = inits.find(n->input(0));
      if (c == inits.end() || constants_.count(n->input(0)) == 0) continue;
      absl::StatusOr<proto::RawTensor> raw = proto::DecodeTensor(*c->second, model_->base_dir);
      if (!raw.ok() || raw->NumElements() != 1 || raw->bytes.empty()) continue;
      bool nonzero = false;
      for (char byte : raw->bytes) nonzero |= byte != 0;
      const std::string branch_name = nonzero ? "then_branch" : "else_branch";
      onnx::GraphProto branch;
      bool found = false;
      for (const auto& a : n->attribute()) {
        if (a.name() == branch_name && a.has_g()) {
          branch = a.g();
          found = true;
        }
      }
      if (!found || branch.output_size() != n->output_size()) continue;
      // Point each If output at what the branch yields.
      std::unordered_set<std::string> branch_defined;
      for (const auto& bn : branch.node()) {
        for (const std::string& o : bn.output()) branch_defined.insert(o);
      }
      std::vector<std::pair<std::string, std::string>> outer_renames;  // reads of o -> b
      bool ok = true;
      for (int k = 0; k < n->output_size() && ok; ++k) {
        const std::string b = branch.output(k).name();
        const std::string& o = n->output(k);
        if (o.empty()) continue;
        bool is_branch_init = false;
        for (auto& t : *branch.mutable_initializer()) {
          if (t.name() == b) is_branch_init = true;
        }
        if (branch_defined.count(b) > 0 || is_branch_init) {
          RenameEverywhere(&branch, b, o);
          for (auto& t : *branch.mutable_initializer()) {
            if (t.name() == b) t.set_name(o);
          }
        } else if (outputs_.count(o) > 0) {
          ok = false;  // an outer value as a graph output would need an Identity
        } else {
          outer_renames.emplace_back(o, b);
        }
      }
      if (!ok) continue;
      for (const auto& [o, b] : outer_renames) RenameReads(g_->mutable_node(), o, b);
      for (auto& t : *branch.mutable_initializer()) moved_initializers.push_back(std::move(t));
      for (auto& vi : *branch.mutable_value_info()) *g_->add_value_info() = std::move(vi);
      std::vector<onnx::NodeProto> nodes(branch.node().begin(), branch.node().end());
      Log(i, "folded", n->output_size() > 0 ? n->output(0) : "",
          absl::StrCat("If condition is constant ", nonzero ? "true" : "false", ": ", branch_name,
                       " inlined (", nodes.size(), " nodes)"),
          "", 0);
      stats_->nodes_inserted += static_cast<int64_t>(nodes.size());
      splice_[i] = std::move(nodes);
      Kill(i);
      changed = true;
    }
    for (auto& t : moved_initializers) AddInitializer(std::move(t));
    Rebuild();
    return changed;
  }

  // Removes nodes nothing reads (graph outputs, live nodes and subgraphs count), then
  // initializers nothing reads and value_info of names that no longer exist.
  bool RemoveDead() {
    std::unordered_set<std::string> live(outputs_.begin(), outputs_.end());
    std::vector<bool> keep(static_cast<size_t>(g_->node_size()), false);
    for (int i = g_->node_size() - 1; i >= 0; --i) {
      const onnx::NodeProto& n = g_->node(i);
      bool needed = !DefaultDomain(n);  // a custom op may do more than compute its outputs
      for (const std::string& o : n.output()) needed |= !o.empty() && live.count(o) > 0;
      if (!needed) continue;
      keep[static_cast<size_t>(i)] = true;
      for (const std::string& in : n.input()) live.insert(in);
      proto::ForEachSubgraphRead(n, [&](const std::string& name) { live.insert(name); });
    }
    bool changed = false;
    for (int i = 0; i < g_->node_size(); ++i) {
      if (keep[static_cast<size_t>(i)]) continue;
      Log(i, "removed", g_->node(i).output_size() > 0 ? g_->node(i).output(0) : "",
          "dead once the values it fed were folded", "", 0);
      Kill(i);
      changed = true;
    }
    auto* inits = g_->mutable_initializer();
    int64_t dropped = 0;
    for (int k = inits->size() - 1; k >= 0; --k) {
      const std::string& name = inits->Get(k).name();
      if (live.count(name) > 0 || inputs_.count(name) > 0) continue;
      stats_->bytes_added -= PayloadBytes(inits->Get(k));
      inits->DeleteSubrange(k, 1);
      ++dropped;
    }
    if (dropped > 0) {
      Rewrite r;
      r.node = "<graph>";
      r.action = "removed";
      r.detail = absl::StrCat(dropped, " initializer(s) nothing reads any more");
      stats_->Log(std::move(r));
      changed = true;
    }
    Rebuild();
    // value_info of names gone (folded into initializers, or never produced again).
    std::unordered_set<std::string> produced;
    for (const auto& n : g_->node()) {
      for (const std::string& o : n.output()) produced.insert(o);
    }
    auto* vis = g_->mutable_value_info();
    for (int k = vis->size() - 1; k >= 0; --k) {
      if (produced.count(vis->Get(k).name()) == 0) vis->DeleteSubrange(k, 1);
    }
    return changed;
  }

  proto::Model* model_;
  onnx::GraphProto* g_;
  const PassOptions& options_;
  PassStats* stats_;
  std::unordered_set<std::string>* kept_;
  std::vector<bool> dead_;
  std::unordered_map<std::string, int> producer_;
  std::unordered_set<std::string> inputs_, outputs_, constants_;
  std::unordered_map<int, std::vector<onnx::NodeProto>> splice_;
  std::optional<analysis::ShapeTables> tables_;
};

// A cheap look before any analysis: is there anything fold-constants could touch?
bool MayFold(const onnx::GraphProto& g) {
  std::unordered_set<std::string> constants;
  std::unordered_set<std::string> inputs;
  for (const auto& vi : g.input()) inputs.insert(vi.name());
  for (const auto& t : g.initializer()) {
    if (inputs.count(t.name()) == 0) constants.insert(t.name());
  }
  for (const auto& n : g.node()) {
    if (!DefaultDomain(n)) continue;
    const std::string& op = n.op_type();
    if (op == "Shape" || op == "Size" || op == "Identity" || op == "Constant" || op == "If" ||
        op == "Dropout") {
      return true;
    }
    if (n.input_size() > 0 && n.input(n.input_size() - 1).empty()) return true;
    if (HasSubgraph(n)) continue;
    bool all = n.input_size() > 0;
    for (const std::string& in : n.input()) {
      if (!in.empty() && constants.count(in) == 0) all = false;
    }
    if (all) return true;
    // Shape arithmetic the analysis may know (Gather of dims, Concat) starts at a Shape, which
    // is caught above; nothing else becomes constant without one.
  }
  return false;
}

// Inside If/Loop/Scan bodies: a node whose every input is a constant of its own body (an
// initializer or a Constant node) or of an enclosing graph becomes a Constant node with the same
// output name (bodies hold constants as nodes). A value of an enclosing graph that is not a
// constant (an input, a computed value) is never captured: such a node stays. Recursive, outer
// constants visible in nested bodies; each body in order, one sweep (a folded node's result is
// a constant for the nodes after it).
class BodyFolder {
 public:
  BodyFolder(proto::Model* model, const PassOptions& options, PassStats* stats)
      : model_(model), options_(options), stats_(stats) {}

  absl::Status Run() {
    if (options_.evaluator == nullptr) return absl::OkStatus();
    return Graph(model_->proto.mutable_graph(), {}, "main", true);
  }

 private:
  using Constants = std::unordered_map<std::string, const onnx::TensorProto*>;

  absl::Status Graph(onnx::GraphProto* g, Constants constants, const std::string& path,
                     bool is_main) {
    for (const auto& vi : g->input()) constants.erase(vi.name());
    for (const auto& t : g->initializer()) constants[t.name()] = &t;
    for (int i = 0; i < g->node_size(); ++i) {
      onnx::NodeProto* n = g->mutable_node(i);
      if (!is_main && Foldable(*n) && n->output_size() == 1 && n->input_size() > 0) {
        bool all = true;
        for (const std::string& in : n->input())
          all = all && (in.empty() || constants.count(in) > 0);
        if (all) {
          BCAST_RETURN_IF_ERROR(Fold(g, i, constants, path).status());
        }
      }
      n = g->mutable_node(i);
      if (DefaultDomain(*n) && n->op_type() == "Constant" && n->output_size() == 1) {
        for (const auto& a : n->attribute()) {
          if (a.name() == "value" && a.has_t()) constants[n->output(0)] = &a.t();
        }
      }
      for (auto& a : *n->mutable_attribute()) {
        const std::string where =
            absl::StrCat(path, "/", n->op_type(), " '",
                         n->name().empty() ? n->output(0) : n->name(), "'.", a.name());
        if (a.has_g()) {
          BCAST_RETURN_IF_ERROR(Graph(a.mutable_g(), constants, where, false));
        }
        for (auto& sub : *a.mutable_graphs()) {
          BCAST_RETURN_IF_ERROR(Graph(&sub, constants, where, false));
        }
      }
    }
    return absl::OkStatus();
  }

  // Node `i` of body `g` computed on its constant inputs into a Constant node; false (a debug
  // reason) when the executor cannot or the result is over the limit or of a refused type.
  absl::StatusOr<bool> Fold(onnx::GraphProto* g, int i, const Constants& constants,
                            const std::string& path) {
    const onnx::NodeProto n = g->node(i);
    const std::string label =
        absl::StrCat(path, ": ", n.op_type(), " '", n.name().empty() ? n.output(0) : n.name(), "'");
    absl::StatusOr<onnx::TensorProto> value = EvaluateOnConstants(
        *options_.evaluator, *model_, n,
        [&](const std::string& name) { return constants.at(name); }, "fold_body");
    if (!value.ok()) {
      stats_->debug.push_back(
          absl::StrCat(label, ": constant inputs not computed: ", value.status().message()));
      return false;
    }
    onnx::TensorProto t = *std::move(value);
    const int64_t bytes = PayloadBytes(t);
    if (bytes > options_.constant_fold_limit_bytes ||
        (options_.target != nullptr && !options_.target->InitializerTypeAllowed(t.data_type()))) {
      stats_->debug.push_back(absl::StrCat(label, ": result kept as a node (", bytes,
                                           " bytes, type ", t.data_type(), ")"));
      return false;
    }
    *g->mutable_node(i) = proto::ConstantNode(n.name(), n.output(0), std::move(t));
    Rewrite r;
    r.node = n.name().empty() ? absl::StrCat(n.op_type(), " '", n.output(0), "'") : n.name();
    r.op = n.op_type();
    r.action = "folded";
    r.tensor = n.output(0);
    r.detail = absl::StrCat("constant inputs computed into a Constant node inside ", path);
    stats_->Log(std::move(r));
    return true;
  }

  proto::Model* model_;
  const PassOptions& options_;
  PassStats* stats_;
};

class FoldConstants : public Pass {
 public:
  absl::Status Run(proto::Model* model, const PassOptions& options, PassStats* stats) override {
    // Bodies after the main graph (its folded values are constants they may read), then the
    // main graph again when a body folded (an outer constant it no longer reads may be dead).
    for (int round = 0; round < kMaxRounds; ++round) {
      BCAST_RETURN_IF_ERROR(RunMain(model, options, stats));
      const int64_t before = stats->rewrites;
      BCAST_RETURN_IF_ERROR(BodyFolder(model, options, stats).Run());
      if (stats->rewrites == before) break;
    }
    return absl::OkStatus();
  }

 private:
  absl::Status RunMain(proto::Model* model, const PassOptions& options, PassStats* stats) {
    if (!MayFold(model->proto.graph())) {
      stats->debug.push_back(
          "nothing to fold: no Shape, Size, Identity, Constant, If or node "
          "with only constant inputs");
      return absl::OkStatus();
    }
    std::unordered_set<std::string> kept;  // results over the limit, across rounds
    for (int round = 0; round < kMaxRounds; ++round) {
      Folder folder(model, options, stats, &kept);
      BCAST_ASSIGN_OR_RETURN(bool again, folder.Round());
      if (!again) {
        std::optional<analysis::ShapeTables> tables = folder.TakeTables();
        if (tables.has_value() && options.analyses != nullptr) {
          options.analyses->Return(*std::move(tables));
        }
        return absl::OkStatus();
      }
    }
    stats->debug.push_back(absl::StrCat("stopped after ", kMaxRounds, " rounds"));
    return absl::OkStatus();
  }
};

}  // namespace

std::unique_ptr<Pass> CreateFoldConstantsPass() { return std::make_unique<FoldConstants>(); }

}  // namespace onnx_bcast::passes
