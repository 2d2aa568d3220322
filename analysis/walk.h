// The walk behind AnalyzeBroadcasts (shape_propagation.h), shared by the files that define it:
// shape_propagation.cc (graphs, scopes, subgraphs, control flow, functions) and walk_node.cc
// (one node: broadcasting ops, shape functions, libonnx's inference). Internal to analysis/.
#ifndef ONNX_BCAST_ANALYSIS_WALK_H_
#define ONNX_BCAST_ANALYSIS_WALK_H_

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/broadcast_ops.h"
#include "analysis/broadcast_verdict.h"
#include "analysis/shape_propagation.h"
#include "proto/node_inference.h"
#include "proto/onnx.h"

namespace onnx_bcast::analysis::walk {

using broadcast::BroadcastResult;
using broadcast::Dim;
using broadcast::RuleFamily;
using broadcast::Shape;
using broadcast::Verdict;
using verdict::Attr;
using verdict::IntAttr;

// Where an unknown rank or dim was first lost: the node (or graph input) responsible.
struct Origin {
  enum class Kind { kNode, kCustomOp, kDataDependent, kGraphInput, kMerge };
  Kind kind = Kind::kNode;
  const onnx::NodeProto* node = nullptr;
  std::string name;  // the node's report name, or the graph input's name
};

// A tensor as the walk knows it.
struct Value {
  SymTensor t;
  const onnx::TensorProto* constant = nullptr;  // initializer or Constant value (libonnx data)
  const onnx::TypeProto* full_type = nullptr;   // sequence/optional/map types (libonnx only)
  int32_t origin = -1;                          // index into the origins, when HasUnknownPart
  const onnx::NodeProto* producer = nullptr;    // the node that made it (null: input/initializer)
  int32_t producer_index = 0;
};

// Names visible in one graph; lookups chain to the enclosing graph (outer scope) without
// copying it. Function bodies get a scope without parent (they see only their inputs).
// Values sit behind dense ids (proto/tensor_ids.h), each in its own allocation so that the
// main graph's walk can free a value after its last use (WalkGraph) and keep only the live
// frontier: the values of a million-node graph were its largest allocation after the model.
class Scope {
 public:
  const Scope* parent = nullptr;

  const Value* Find(std::string_view name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent) {
      if (const Value* v = s->Local(name)) return v;
    }
    return nullptr;
  }
  // This graph's own value of `name` (not the enclosing graphs'), or null.
  const Value* Local(std::string_view name) const {
    if (hint_node_ != nullptr) {
      // One of the visited node's own input strings: its id is known.
      for (int k = 0; k < hint_node_->input_size(); ++k) {
        const std::string& in = hint_node_->input(k);
        if (in.data() == name.data() && in.size() == name.size() && hint_ids_[k] >= 0) {
          return values_[static_cast<size_t>(hint_ids_[k])].get();
        }
      }
    }
    const int id = ids_.Find(name);
    return id >= 0 ? values_[static_cast<size_t>(id)].get() : nullptr;
  }
  // Returns the id of `name`.
  int Set(std::string_view name, Value v) {
    const size_t id = Slot(name);
    std::unique_ptr<Value>& slot = values_[id];
    if (slot == nullptr) {
      slot = std::make_unique<Value>(std::move(v));
    } else {
      *slot = std::move(v);
    }
    return static_cast<int>(id);
  }
  // While `node` is visited, lookups of its input strings (by address) take their ids from
  // `input_ids` (counted up front) instead of hashing; null ends it.
  void HintInputs(const onnx::NodeProto* node, const int* input_ids) {
    hint_node_ = node;
    hint_ids_ = input_ids;
  }
  // Sets the value of an id Id() gave.
  void SetAt(int id, Value v) {
    std::unique_ptr<Value>& slot = values_[static_cast<size_t>(id)];
    if (slot == nullptr) {
      slot = std::make_unique<Value>(std::move(v));
    } else {
      *slot = std::move(v);
    }
  }
  // The dense id of `name` in this scope (interned).
  int Id(std::string_view name) { return static_cast<int>(Slot(name)); }
  std::string_view Name(int id) const { return ids_.name(id); }
  Value* At(int id) { return values_[static_cast<size_t>(id)].get(); }
  void Drop(int id) { values_[static_cast<size_t>(id)].reset(); }
  int size() const { return ids_.size(); }
  void Reserve(size_t n) {
    ids_.Reserve(n);
    values_.reserve(n);
  }
  // The names, for tables indexed by this scope's ids (the scope is done with them).
  proto::TensorIds TakeIds() { return std::move(ids_); }

 private:
  size_t Slot(std::string_view name) {
    const size_t id = static_cast<size_t>(ids_.Intern(name));
    if (id == values_.size()) values_.emplace_back();
    return id;
  }

  proto::TensorIds ids_;
  std::vector<std::unique_ptr<Value>> values_;
  const onnx::NodeProto* hint_node_ = nullptr;
  const int* hint_ids_ = nullptr;
};

// Fresh symbols "<node>:<output>:<axis>"; a name issued again (a function called twice, a
// repeated node name) gets "#<n>" so distinct extents never share a symbol.
class FreshSymbols : public SymbolSource {
 public:
  Dim Fresh(std::string_view node_name, int output, int axis) override {
    std::string name = absl::StrCat(std::string(node_name), ":", output, ":", axis);
    const int n = ++issued_[name];
    if (n > 1) absl::StrAppend(&name, "#", n);
    fresh_.insert(name);
    return Dim::Symbol(std::move(name));
  }
  /// True for a symbol this source made (an extent nothing but the data decides).
  bool IsFresh(const Dim& d) const { return d.is_symbol() && fresh_.count(d.symbol()) > 0; }

 private:
  std::unordered_map<std::string, int> issued_;
  std::unordered_set<std::string> fresh_;
};

bool IsBoolResult(const std::string& op);

// Ops whose output extents depend on tensor contents (an unknown they produce is theirs).
bool IsDataDependent(const std::string& op);

// Ops whose libonnx inference copies input 0's type (propagateShapeAndTypeFromFirstInput):
// answered here without building protos.
bool IsShapePreserving(const std::string& op);

bool HasUnknownPart(const SymTensor& t);

bool Complete(const SymTensor& t);

std::string NodeName(const onnx::NodeProto& node, int index);

// If's branches read as "then"/"else" in compact graph paths; other attributes keep their
// names (Loop and Scan's "body").
std::string ShortAttributeName(const std::string& attr);

// A declared dim (value_info, graph outputs, body inputs): unnamed dims are unknown.
SymTensor DeclaredTensor(const onnx::TypeProto& type);

// Fills what `v` does not know from a declared type (libonnx's merge, without its failure on
// a conflict: the derived type wins there). A fresh data-dependent symbol takes a declared
// extent (the model states what the data gives).
void MergeDeclared(const onnx::TypeProto& declared, Value* v, const FreshSymbols& fresh);

// Fills the unknown parts of `to` from `from` (same rank) or takes `from`'s shape.
void FillGaps(const SymTensor& from, SymTensor* to);

Dim FromLibonnx(const onnx::TensorShapeProto::Dimension& d,
                const std::vector<std::pair<std::string, Dim>>& tokens);

// A tracked integer tensor with constant contents as a TensorProto (libonnx reads shape
// inputs' data: Reshape, Expand, ...).
bool Synthesize(const SymTensor& t, onnx::TensorProto* out);

class Analyzer {
 public:
  Analyzer(const proto::Model& model, const AnalysisOptions& options, Analysis* out)
      : model_(model), options_(options), out_(out), infer_(model.proto) {
    for (const auto& opset : model.proto.opset_import()) {
      model_opsets_[opset.domain() == "ai.onnx" ? "" : opset.domain()] = opset.version();
    }
    for (const auto& fn : model.proto.functions()) {
      functions_[{fn.domain(), fn.name()}] = &fn;
    }
  }

  void Run(onnx::GraphProto* annotate) {
    Scope scope;
    const onnx::GraphProto& g = model_.proto.graph();
    for (const auto& vi : g.input()) scope.Set(vi.name(), MainInput(vi));
    WalkGraph(g, "main", &scope, model_opsets_, nullptr, 0, annotate);
  }

  /// Set when model-local functions nest deeper than the limit (the walk stopped there).
  const std::string& depth_error() const { return depth_error_; }

 private:
  using Opsets = std::map<std::string, int64_t>;

  // A main-graph input: every dim that is not a number is a symbol, its dim_param or, when
  // unnamed, "<input name>:<axis>" (docs/symbolic-shapes.md).
  Value MainInput(const onnx::ValueInfoProto& vi);

  Value WithOrigin(Value v, Origin::Kind kind, const std::string& name,
                   const onnx::NodeProto* node = nullptr) {
    v.origin = static_cast<int32_t>(origins_.size());
    origins_.push_back({kind, node, name});
    return v;
  }

  static std::string DescribeOrigin(const Origin& o);

  // "the shape of 'x' comes from NonZero 'nz' (data-dependent)" for the first input of `node`
  // with an unknown part, or "".
  std::string UnknownSource(const onnx::NodeProto& node, const Scope& scope) const;

  void WalkGraph(const onnx::GraphProto& g, const std::string& path, Scope* scope,
                 const Opsets& opsets, const onnx::NodeProto* caller, int fn_depth,
                 onnx::GraphProto* annotate);

  // Remaining uses of each name of the main graph's scope (by its ids): node inputs, names
  // the node's subgraphs read from it (released when the node is done), and graph outputs
  // (never released).
  struct Liveness {
    std::vector<int32_t> uses;
    // What node i reads (inputs, then names its subgraphs read): reads[reads_begin[i] ..
    // reads_begin[i + 1]).
    std::vector<int> reads;
    std::vector<int> reads_begin;
    // Each node's input ids, then its output ids (-1: empty name); handed to the tables as
    // their proto::NodeTensorIds.
    proto::NodeTensorIds node_ids;
  };
  static Liveness CountUses(const onnx::GraphProto& g, Scope* scope);

  // Records the main graph's value `id` (shape and element type; with record_shapes) and frees
  // it. A retired or absent value is skipped.
  void Retire(Scope* scope, int id);

  // Records `v` in options_.main_values when every element is a known number.
  void RecordKnownValue(const Scope& scope, int id, const Value& v);

  // The origin of an unknown part of `node`'s outputs: the node itself when it is a custom op,
  // data-dependent, or none of its inputs has an unknown part; else the first such input's.
  int32_t OriginFor(const onnx::NodeProto& node, int index, const Scope& scope);

  // --annotate: value_info for every tensor this graph makes (dims as values or the printed
  // symbol/expression), and graph outputs completed where their declared type is silent.
  void Annotate(const Scope* scope, onnx::GraphProto* annotate);

  static int64_t DefaultOpset(const Opsets& opsets) {
    auto it = opsets.find("");
    return it == opsets.end() ? 0 : it->second;
  }

  // Outputs of `node` with nothing known, the node named as the origin.
  std::vector<Value> UnknownOutputs(const onnx::NodeProto& node, int index, Origin::Kind kind) {
    std::vector<Value> outs(static_cast<size_t>(node.output_size()));
    if (!outs.empty()) {
      origins_.push_back({kind, &node, NodeName(node, index)});
      for (Value& v : outs) v.origin = static_cast<int32_t>(origins_.size() - 1);
    }
    return outs;
  }

  std::vector<Value> VisitNode(const onnx::NodeProto& node, int index, const std::string& path,
                               const Scope& scope, const Opsets& opsets,
                               const onnx::NodeProto* caller, int fn_depth,
                               onnx::NodeProto* annotate);

  // Records the compact name of the subgraph `sub` entered from `path` through `owner` (a node
  // name) and `part` (an attribute or function name).
  void NameSubgraph(const std::string& path, const std::string& sub, const std::string& owner,
                    const std::string& part) {
    auto parent = short_graphs_.find(path);
    short_graphs_[sub] = parent == short_graphs_.end() || parent->second.empty()
                             ? absl::StrCat(owner, "/", part)
                             : absl::StrCat(parent->second, "/", owner, "/", part);
  }

  // Walks each subgraph of `node` in a scope chained to `scope`; `typed` gives the body
  // inputs' values for an attribute name (Loop/Scan), others keep their declared types.
  // Returns each walked graph's output values, by attribute name.
  std::map<std::string, std::vector<Value>> WalkSubgraphs(
      const onnx::NodeProto& node, int index, const std::string& path, const Scope& scope,
      const Opsets& opsets, const onnx::NodeProto* caller, int fn_depth, onnx::NodeProto* annotate,
      std::map<std::string, std::vector<Value>> typed);

  // Merges two views of one tensor (If branches; a loop-carried value before and after an
  // iteration): equal dims stay, unequal ones become fresh symbols named after `node`.
  Value MergeValues(const Value& a, const Value& b, const onnx::NodeProto& node, int index,
                    int output);

  // The single known element of a tracked scalar, if any.
  static std::optional<Dim> ScalarValue(const Value* v) {
    if (v == nullptr || !v->t.value || v->t.value->size() != 1) return std::nullopt;
    const Dim& d = v->t.value->front();
    if (d.is_unknown()) return std::nullopt;
    return d;
  }

  // A boolean or integer scalar's constant truth (If/Loop conditions): from the tracked
  // contents, else from a constant tensor's data (bool tensors keep it in int32_data or raw).
  static std::optional<bool> ConstTruth(const Value* v);

  // A loop-carried or state value as a body sees it: same type, contents not constant.
  static Value Carried(const Value* v);

  static Shape WithoutAxes(const Shape& s, std::initializer_list<int64_t> axes);

  static std::optional<int64_t> AxisAttr(const onnx::NodeProto& node, const std::string& name,
                                         size_t k, const onnx::NodeProto* caller) {
    const onnx::AttributeProto* a = Attr(node, name, caller);
    if (a == nullptr || static_cast<int>(k) >= a->ints_size()) return 0;
    return a->ints(static_cast<int>(k));
  }

  // If, Loop and Scan: bodies walked in scopes chained to the enclosing one, outputs from
  // the bodies' outputs (see shape_propagation.h).
  std::vector<Value> VisitControlFlow(const onnx::NodeProto& node, int index,
                                      const std::string& path, const Scope& scope,
                                      const Opsets& opsets, const onnx::NodeProto* caller,
                                      int fn_depth, onnx::NodeProto* annotate);

  static bool SameShape(const Value& a, const Value& b);

  // Walks a Loop/Scan body with `body_in`. When a carried value (body inputs from `in_first`,
  // body outputs from `out_first`, `n` of them) changes shape across an iteration, the body is
  // walked again with those values generalized (changing dims become fresh symbols), and the
  // second walk's verdicts replace the first's: later iterations see the general shapes. Only
  // such loops are walked twice. Returns the body's output values.
  std::vector<Value> WalkBody(const onnx::NodeProto& node, int index, const std::string& path,
                              const Scope& scope, const Opsets& opsets,
                              const onnx::NodeProto* caller, int fn_depth,
                              onnx::NodeProto* annotate, std::vector<Value>* body_in,
                              size_t in_first, size_t out_first, size_t n);

  // `v` with a new axis of extent `extent` inserted at `axis` (negative: from the end of the
  // result), as Loop/Scan stack per-iteration values.
  static Value Stacked(const Value& v, const Dim& extent, int64_t axis);

  // A non-broadcasting default-domain node: the symbolic shape function, then libonnx for
  // what it leaves unknown.
  std::vector<Value> Infer(const onnx::NodeProto& node, int index, const Scope& scope,
                           int64_t opset, const onnx::NodeProto* caller);

  // libonnx's per-node inference for what the symbolic functions left unknown. Our dims are
  // passed as dim_param tokens (a symbol's own name; for other expressions a token mapped
  // back afterwards), so they survive the ops libonnx propagates; its "unk__" dims are unknown.
  void Fallback(const onnx::NodeProto& node, const std::vector<const Value*>& ins,
                const onnx::NodeProto* caller, std::vector<Value>* outs);

  // A broadcasting node: shapes and verdict from broadcast/'s rules; the contents of small
  // tracked tensors (shape arithmetic) from the symbolic functions.
  std::vector<Value> VisitBroadcast(const onnx::NodeProto& node, int index, const std::string& path,
                                    const Scope& scope, int64_t opset,
                                    const onnx::NodeProto* caller, const BroadcastOp& info);

  static std::vector<Value> Single(Value v) {
    std::vector<Value> outs;
    outs.push_back(std::move(v));
    return outs;
  }

  // The node's symbolic shape function (passes/shape_functions) over the walk's values.
  std::optional<std::vector<SymTensor>> RunShapeFunction(const onnx::NodeProto& node, int index,
                                                         int64_t opset,
                                                         const onnx::NodeProto* caller,
                                                         const std::vector<const Value*>& ins);

  // The contents of a broadcasting op's output over tracked inputs (Add of shape values,
  // Equal/Where of the exporters' -1 patterns); the shape stays the rules'.
  void TrackContents(const onnx::NodeProto& node, int index, int64_t opset,
                     const onnx::NodeProto* caller, const std::vector<const Value*>& ins,
                     Value* out);

  std::vector<Value> CallFunction(const onnx::FunctionProto& fn, const onnx::NodeProto& call,
                                  int index, const std::string& path, const Scope& scope,
                                  int fn_depth);

  const proto::Model& model_;
  const AnalysisOptions& options_;
  Analysis* out_;
  proto::NodeInference infer_;
  Opsets model_opsets_;
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto*> functions_;
  std::unordered_map<const onnx::FunctionProto*, onnx::GraphProto> function_bodies_;
  std::map<std::string, std::vector<std::string>> symbol_nodes_;
  FreshSymbols symbols_;
  std::vector<Origin> origins_;
  std::deque<onnx::TypeProto> owned_types_;  // non-tensor types libonnx inferred
  std::string depth_error_;
  // The compact form of every subgraph path walked (NodeVerdict::short_graph); "main" is "".
  std::unordered_map<std::string, std::string> short_graphs_;
};

}  // namespace onnx_bcast::analysis::walk

#endif  // ONNX_BCAST_ANALYSIS_WALK_H_
