// Shared state of the rewrite passes (see rewrite_context.h).
#include "passes/rewrite_context.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/shape_propagation.h"
#include "proto/graph_structure.h"
#include "proto/opsets.h"
#include "proto/shapes.h"
#include "proto/tensor_util.h"
#include "support/status_macros.h"
#include "targets/targets.h"

namespace onnx_bcast::passes {
namespace {

using broadcast::Shape;

// Ops whose meaning is unchanged (or only extended) between opset 7 and 8.
bool SafeFrom7To8(const std::string& op) {
  return op == "Max" || op == "Min" || op == "Sum" || op == "Mean" || op == "MaxPool";
}

}  // namespace

RewriteContext::RewriteContext(proto::Model* model, std::string pass, const PassOptions& options,
                               PassStats* stats)
    : model_(model), pass_(std::move(pass)), options_(options), stats_(stats) {}

RewriteContext::~RewriteContext() {
  if (graph_ == nullptr) return;
  if (scoped_) {
    // RewriteEveryGraph collects every graph's tables and hands them to the pass manager.
    if (hand_back_ == nullptr) return;
    // A fresh analysis gives a body no element types; the ones recorded here go with it.
    if (scope_.body) tables_.ClearElems();
    *hand_back_ = std::move(tables_);
    return;
  }
  if (options_.analyses == nullptr) return;
  // The tables were kept current with every edit; the pass manager decides whether to keep
  // them (the pass's registry entry says whether it preserves them).
  options_.analyses->Return(std::move(tables_));
}

absl::Status RewriteContext::Init() {
  opset_ = proto::DefaultOpset(model_->proto);
  BCAST_ASSIGN_OR_RETURN(analysis::ShapeTables tables, options_.analyses != nullptr
                                                 ? options_.analyses->Take()
                                                 : analysis::ComputeShapeTables(*model_));
  tables_ = std::move(tables);
  // One id space for the tables and the use-def index: each name is interned once, and the
  // ids the analysis resolved per node are reused (checked by name) rather than looked up.
  const proto::NodeTensorIds hint = tables_.TakeNodeIds();
  graph_ = std::make_unique<proto::GraphEditor>(model_->proto.mutable_graph(),
                                                tables_.mutable_ids(), &hint);
  shared_ids_ = true;
  return absl::OkStatus();
}

void RewriteContext::InitScoped(onnx::GraphProto* graph, GraphScope scope,
                                analysis::ShapeTables tables, analysis::ShapeTables* hand_back) {
  scoped_ = true;
  hand_back_ = hand_back;
  scope_ = std::move(scope);
  opset_ = scope_.function ? scope_.opset : proto::DefaultOpset(model_->proto);
  tables_ = std::move(tables);
  // The editor has its own id space here: the analysis's per-node ids would go stale.
  tables_.TakeNodeIds();
  // A body's interface types are not tracked (see GraphScope::body).
  analysis::ApplyDeclaredElems(*graph, /*interface=*/!scope_.body, &tables_);
  graph_ = std::make_unique<proto::GraphEditor>(graph);
}

std::string RewriteContext::FreshName(std::string_view base) {
  std::string name = graph_->UniqueName(base);
  if (scope_.names == nullptr) return name;
  // The editor knows this graph and its bodies; the model-wide set adds the enclosing graphs
  // (outer-scope captures), sibling bodies and function bodies.
  while ((scope_.frozen_names != nullptr && scope_.frozen_names->count(name) > 0) ||
         !scope_.names->insert(name).second) {
    name = graph_->UniqueName(base);
  }
  return name;
}

void RewriteContext::Commit() {
  graph_->Commit();
  // Node ids are graph indices again: the next pass's index and the target check start from
  // the ids resolved here.
  if (shared_ids_) tables_.AdoptNodeIds(graph_->ExportNodeIds());
}

void RewriteContext::SetOpset(int64_t opset) {
  proto::SetDefaultOpset(&model_->proto, opset);
  opset_ = opset;
}

analysis::BroadcastOp RewriteContext::OpOf(int id) const {
  const onnx::NodeProto& n = graph_->node(id);
  if (!n.domain().empty() && n.domain() != "ai.onnx") return {};
  return analysis::ClassifyBroadcastOp(n.op_type(), opset_);
}

std::optional<analysis::BroadcastOp> RewriteContext::NumpyFormBroadcast(int id) {
  const analysis::BroadcastOp op = OpOf(id);
  if (op.kind == analysis::BroadcastOpKind::kNone || op.kind == analysis::BroadcastOpKind::kExpand) return std::nullopt;
  if (op.legacy) {
    Debug(id, "legacy broadcast form (run upgrade-legacy-broadcast first)");
    return std::nullopt;
  }
  // Passes read output 0 (Gemm's (M,N), the broadcast result); a node without one is malformed
  // and left alone (found by fuzz_opt: a Gemm without outputs).
  const onnx::NodeProto& n = graph_->node(id);
  if (n.output_size() < 1 || n.output(0).empty()) {
    Debug(id, "the node has no output");
    return std::nullopt;
  }
  return op;
}

std::string RewriteContext::Label(int id) const {
  const onnx::NodeProto& n = graph_->node(id);
  if (!n.name().empty()) return n.name();
  // Original indices are the main graph's; a body's nodes keep their index in the body.
  if (!scope_.body && options_.original_index != nullptr && n.output_size() > 0) {
    auto it = options_.original_index->find(n.output(0));
    if (it != options_.original_index->end()) return absl::StrCat(n.op_type(), "#", it->second);
  }
  return absl::StrCat(n.op_type(), "#", id);
}

const Shape& RewriteContext::ShapeOf(const std::string& name) const {
  static const Shape* const kUnknown = new Shape(Shape::UnknownRank());
  if (const Shape* shape = tables_.FindShape(name)) return *shape;
  // A body reads the enclosing graphs' values (outer scope).
  for (const analysis::ShapeTables* outer : scope_.outer) {
    if (const Shape* shape = outer->FindShape(name)) return *shape;
  }
  return *kUnknown;
}

namespace {

// What DecideNode reads of a node in a rewrite context: the context's current shapes, and an
// Expand's target from its constant, else from Shape(z) as z's shape (libonnx's inference does
// not follow Shape's value and invents symbols for it, which would hide an equality).
class ContextShapes : public analysis::ShapeSource {
 public:
  ContextShapes(RewriteContext* ctx, int id) : ctx_(ctx), id_(id) {}
  const Shape* InputShape(int k, const std::string&) const override {
    return &ctx_->ShapeOfInput(id_, k);
  }
  analysis::ExpandTarget TargetOf(const onnx::NodeProto& node) const override {
    analysis::ExpandTarget t;
    proto::GraphEditor& g = ctx_->graph();
    const std::string& target = node.input(1);
    if (const onnx::TensorProto* c = g.ConstantValue(target); c != nullptr) {
      absl::StatusOr<std::vector<int64_t>> values =
          proto::ReadIntValues(*c, ctx_->model().base_dir);
      if (values.ok()) {
        t.values = *std::move(values);
        return t;
      }
    }
    // Else its contents only when it is Shape(z): the tables know no more than its length.
    const int p = g.Producer(target);
    if (p >= 0 && g.node(p).op_type() == "Shape" && g.node(p).attribute_size() == 0) {
      const Shape& z = ctx_->ShapeOf(g.node(p).input(0));
      if (z.rank_known) t.shape = z;
    }
    return t;
  }

 private:
  RewriteContext* ctx_;
  int id_;
};

analysis::DecideOptions PassDecideOptions() {
  analysis::DecideOptions options;
  options.classify = false;
  return options;
}

}  // namespace

bool RewriteContext::Decide(int id, analysis::NodeVerdict* v) {
  v->graph = scope_.path;
  v->node = Label(id);
  return analysis::DecideNode(graph_->node(id), opset_, ContextShapes(this, id), v, PassDecideOptions());
}

bool RewriteContext::DecideWith(int id, absl::Span<const Shape> inputs, analysis::NodeVerdict* v) {
  v->graph = scope_.path;
  v->node = Label(id);
  return analysis::DecideNode(graph_->node(id), opset_, analysis::GivenShapes(inputs), v, PassDecideOptions());
}

const Shape& RewriteContext::ShapeOfInput(int id, int slot) const {
  static const Shape* const kUnknown = new Shape(Shape::UnknownRank());
  const onnx::NodeProto& n = graph_->node(id);
  if (slot < 0 || slot >= n.input_size() || n.input(slot).empty()) return *kUnknown;
  if (shared_ids_) {
    if (const Shape* shape = tables_.FindShapeById(graph_->InputId(id, slot))) return *shape;
  }
  return ShapeOf(n.input(slot));
}

int32_t RewriteContext::ElemOf(const std::string& name) const { return tables_.ElemOf(name); }

void RewriteContext::SetShape(const std::string& name, int32_t elem, const Shape& shape) {
  tables_.SetShape(name, shape);
  if (elem != 0) tables_.SetElem(name, elem);
  // Body tensors' element types are not tracked: a value_info without one would be invalid.
  if (scope_.body) return;
  if (graph_->IsGraphInput(name) || graph_->IsGraphOutput(name)) return;
  if (graph_->Initializer(name) != nullptr) {
    graph_->DropValueInfo(name);
    return;
  }
  // Symbols libonnx invents per inference run (unk__0) and the analysis's derived ones
  // (bcast(M,N)) mean nothing in another run: they are written as unknown dims.
  Shape written = shape;
  for (broadcast::Dim& d : written.dims) {
    if (d.is_expr() || (d.is_symbol() && (d.symbol().rfind("unk__", 0) == 0 ||
                                          d.symbol().find('(') != std::string::npos))) {
      d = broadcast::Dim::Unknown();
    }
  }
  graph_->SetValueInfo(name, elem, written);
}

void AllowInitializers(proto::Model* model, PassStats* stats) {
  if (model->proto.ir_version() >= 4) return;
  // IR < 4 requires every initializer to be a graph input, and Constant before opset 9 holds
  // only floats; IR 4 only relaxes the former, so raising it changes no meaning.
  Rewrite r;
  r.node = "<model>";
  r.action = "upgraded";
  r.detail = absl::StrCat("ir_version ", model->proto.ir_version(),
                          " -> 4 (initializers that are not graph inputs)");
  stats->Log(std::move(r));
  model->proto.set_ir_version(4);
}

void RewriteContext::AllowInitializers() { passes::AllowInitializers(model_, stats_); }

void RewriteContext::ConstantShapeChanged(const std::string& name, const Shape& shape) {
  SetShape(name, ElemOf(name), shape);
}

void RewriteContext::NoteInitializerShape(const std::string& name, int32_t elem,
                                          const Shape& shape) {
  tables_.SetShape(name, shape);
  tables_.SetElem(name, elem);
}

std::string RewriteContext::Int64Constant(const std::vector<int64_t>& values,
                                          const std::string& base, int anchor) {
  if (auto it = int64_constants_.find(values); it != int64_constants_.end()) return it->second;
  const std::string name = FreshName(base);
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t.add_int64_data(v);
  (void)anchor;
  if (scope_.body) {
    // Function bodies have no initializers; in If/Loop/Scan bodies a Constant node keeps the
    // body self-contained. Placed first, so every later use (shared constants) sees it.
    graph_->InsertBefore(
        0, proto::ConstantNode(FreshName(absl::StrCat(name, "_const")), name, std::move(t)));
    ++stats_->nodes_inserted;
    tables_.SetShape(name, Shape::Of({static_cast<int64_t>(values.size())}));
    tables_.SetElem(name, onnx::TensorProto::INT64);
    int64_constants_[values] = name;
    return name;
  }
  AllowInitializers();
  graph_->AddInitializer(std::move(t));
  tables_.SetShape(name, Shape::Of({static_cast<int64_t>(values.size())}));
  tables_.SetElem(name, onnx::TensorProto::INT64);
  int64_constants_[values] = name;
  return name;
}

std::string RewriteContext::InsertBuiltNode(onnx::NodeProto node, const std::string& out_base,
                                            int anchor) {
  const std::string out = FreshName(out_base);
  node.add_output(out);
  graph_->InsertBefore(anchor, std::move(node));
  ++stats_->nodes_inserted;
  return out;
}

std::string RewriteContext::InsertUnsqueeze(const std::string& x, const std::vector<int64_t>& axes,
                                            int anchor) {
  const auto key = std::make_pair(x, axes);
  if (auto it = unsqueezes_.find(key); it != unsqueezes_.end()) return it->second;
  onnx::NodeProto node;
  node.set_op_type("Unsqueeze");
  node.set_name(FreshName(absl::StrCat(x, "_unsqueeze")));
  node.add_input(x);
  if (opset_ >= 13) {
    node.add_input(
        Int64Constant(axes, absl::StrCat("unsqueeze_axes_", absl::StrJoin(axes, "_")), anchor));
  } else {
    proto::AddIntsAttribute(&node, "axes", axes);
  }
  const std::string out = InsertBuiltNode(std::move(node), absl::StrCat(x, "_unsqueezed"), anchor);
  Shape s = ShapeOf(x);
  if (s.rank_known) {
    const int64_t rank = s.rank() + static_cast<int64_t>(axes.size());
    std::vector<broadcast::Dim> dims;
    size_t next = 0;
    for (int64_t i = 0; i < rank; ++i) {
      if (std::find(axes.begin(), axes.end(), i) != axes.end()) {
        dims.push_back(broadcast::Dim::Value(1));
      } else {
        dims.push_back(s.dims[next++]);
      }
    }
    SetShape(out, ElemOf(x), Shape::FromDims(std::move(dims)));
  }
  unsqueezes_[key] = out;
  return out;
}

std::string RewriteContext::InsertReshape(const std::string& x, const std::vector<int64_t>& shape,
                                          const Shape& out_shape, int anchor) {
  onnx::NodeProto node;
  node.set_op_type("Reshape");
  node.set_name(FreshName(absl::StrCat(x, "_reshape")));
  node.add_input(x);
  node.add_input(
      Int64Constant(shape, absl::StrCat("reshape_shape_", absl::StrJoin(shape, "_")), anchor));
  if (opset_ >= 14 && std::find(shape.begin(), shape.end(), 0) != shape.end()) {
    proto::AddIntAttribute(&node, "allowzero", 1);
  }
  const std::string out = InsertBuiltNode(std::move(node), absl::StrCat(x, "_reshaped"), anchor);
  SetShape(out, ElemOf(x), out_shape);
  return out;
}

bool RewriteContext::RuntimeShapesAllowed() const {
  return options_.target == nullptr || options_.target->runtime_shapes;
}

std::string RewriteContext::InsertShape(const std::string& x, int anchor) {
  if (auto it = shape_of_.find(x); it != shape_of_.end()) return it->second;
  onnx::NodeProto node;
  node.set_op_type("Shape");
  node.set_name(FreshName(absl::StrCat(x, "_shape_node")));
  node.add_input(x);
  const std::string out = InsertBuiltNode(std::move(node), absl::StrCat(x, "_shape"), anchor);
  const Shape s = ShapeOf(x);
  SetShape(out, onnx::TensorProto::INT64,
           s.rank_known ? Shape::Of({s.rank()}) : Shape::FromDims({broadcast::Dim::Unknown()}));
  shape_of_[x] = out;
  return out;
}

std::string RewriteContext::InsertExpand(const std::string& x, const std::string& shape_tensor,
                                         const Shape& out_shape, int anchor) {
  onnx::NodeProto node;
  node.set_op_type("Expand");
  node.set_name(FreshName(absl::StrCat(x, "_expand")));
  node.add_input(x);
  node.add_input(shape_tensor);
  const std::string out = InsertBuiltNode(std::move(node), absl::StrCat(x, "_expanded"), anchor);
  SetShape(out, ElemOf(x), out_shape);
  return out;
}

std::string RewriteContext::InsertNode(const std::string& op,
                                       const std::vector<std::string>& inputs,
                                       const std::vector<std::pair<std::string, int64_t>>& ints,
                                       const std::string& out_base, int32_t elem,
                                       const Shape& out_shape, int anchor) {
  onnx::NodeProto node;
  node.set_op_type(op);
  node.set_name(FreshName(absl::StrCat(out_base, "_node")));
  for (const std::string& in : inputs) node.add_input(in);
  for (const auto& [name, value] : ints) {
    proto::AddIntAttribute(&node, name, value);
  }
  const std::string out = InsertBuiltNode(std::move(node), out_base, anchor);
  SetShape(out, elem, out_shape);
  return out;
}

void RewriteContext::DropIfUnused(const std::string& name) {
  if (graph_->UseCount(name) > 0 || graph_->IsGraphInput(name)) return;
  if (graph_->Initializer(name) != nullptr) {
    graph_->RemoveInitializer(name);
    return;
  }
  const int p = graph_->Producer(name);
  if (p >= 0 && graph_->node(p).op_type() == "Constant" && graph_->node(p).output_size() == 1) {
    graph_->RemoveNode(p);
    ++stats_->nodes_removed;
  }
}

absl::Status RewriteContext::RequireOpset(int64_t needed, const std::string& why) {
  if (opset_ >= needed) return absl::OkStatus();
  if (scope_.function) {
    return absl::UnimplementedError(absl::StrCat(why, " needs default-domain opset >= ", needed,
                                                 " but the function body ", scope_.path,
                                                 " imports opset ", opset_));
  }
  if (opset_ < 7) {
    return absl::UnimplementedError(absl::StrCat(why, " needs default-domain opset >= ", needed,
                                                 " but the model has opset ", opset_,
                                                 " (run upgrade-legacy-broadcast first)"));
  }
  std::vector<std::string> blocking;
  for (const std::string& op : proto::OpsChangedBetween(model_->proto, opset_, needed)) {
    if (!(needed == 8 && SafeFrom7To8(op))) blocking.push_back(op);
  }
  if (!blocking.empty()) {
    return absl::UnimplementedError(absl::StrCat(why, " needs default-domain opset >= ", needed,
                                                 "; raising it from ", opset_, " would change ",
                                                 absl::StrJoin(blocking, ", ")));
  }
  Rewrite r;
  r.node = "<model>";
  r.action = "upgraded";
  r.detail = absl::StrCat("default-domain opset ", opset_, " -> ", needed, " (for ", why, ")");
  SetOpset(needed);
  stats_->Log(std::move(r));
  return absl::OkStatus();
}

void RewriteContext::Record(int id, Rewrite rewrite) {
  if (id >= 0 && stats_->keep_log) {
    rewrite.node = scope_.body ? absl::StrCat(scope_.path, "/", Label(id)) : Label(id);
    rewrite.op = graph_->node(id).op_type();
    if (!scope_.body && graph_->node(id).output_size() > 0) {
      rewrite.output = graph_->node(id).output(0);
    }
  }
  stats_->Log(std::move(rewrite));
}

void RewriteContext::Debug(int id, const std::string& why) {
  stats_->debug.push_back(absl::StrCat(pass_, ": ",
                                       scope_.body ? absl::StrCat(scope_.path, "/") : std::string(),
                                       id >= 0 ? Label(id) : std::string("<model>"), ": ", why));
}

}  // namespace onnx_bcast::passes

namespace onnx_bcast::passes {
namespace {

// As the analysis labels nodes in its paths.
std::string PathNodeName(const onnx::NodeProto& n, int index) {
  return n.name().empty() ? absl::StrCat(n.op_type(), "#", index) : n.name();
}

void AddNames(const onnx::NodeProto& n, std::unordered_set<std::string>* names);

void AddNames(const onnx::GraphProto& g, std::unordered_set<std::string>* names) {
  for (const auto& vi : g.input()) names->insert(vi.name());
  for (const auto& vi : g.output()) names->insert(vi.name());
  for (const auto& vi : g.value_info()) names->insert(vi.name());
  for (const auto& t : g.initializer()) names->insert(t.name());
  for (const auto& t : g.sparse_initializer()) names->insert(t.values().name());
  for (const auto& n : g.node()) AddNames(n, names);
}

void AddNames(const onnx::NodeProto& n, std::unordered_set<std::string>* names) {
  names->insert(n.name());
  for (const std::string& s : n.input()) names->insert(s);
  for (const std::string& s : n.output()) names->insert(s);
  for (const auto& a : n.attribute()) {
    if (a.has_g()) AddNames(a.g(), names);
    for (const auto& sub : a.graphs()) AddNames(sub, names);
  }
}

using FunctionKey = std::pair<std::string, std::string>;

struct BodyRef {
  onnx::GraphProto* graph;
  std::string path;
  int parent;  // index into the body list; -1: the main graph
};

struct CallRef {
  onnx::NodeProto* node;
  std::string key;  // the analysis path of the function body walked for this call
};

// Lists the bodies of `g` in pre-order (parents before their bodies) and the function calls
// of `g` and its bodies, with the analysis's paths.
// `order` gets every path listed (bodies and calls) in the order met, a call marked by a
// leading 'c' and a body by 'b'.
void Enumerate(onnx::GraphProto* g, const std::string& path, int self,
               const std::map<FunctionKey, onnx::FunctionProto*>& functions,
               std::vector<BodyRef>* bodies,
               std::map<onnx::FunctionProto*, std::vector<CallRef>>* calls,
               std::vector<std::string>* order) {
  for (int i = 0; i < g->node_size(); ++i) {
    onnx::NodeProto* n = g->mutable_node(i);
    if (auto f = functions.find({n->domain(), n->op_type()}); f != functions.end()) {
      (*calls)[f->second].push_back(
          {n, absl::StrCat(path, "/", n->op_type(), " '", PathNodeName(*n, i), "' (function ",
                           f->second->domain(), ".", f->second->name(), ")")});
      order->push_back(absl::StrCat("c", (*calls)[f->second].back().key));
    }
    for (auto& a : *n->mutable_attribute()) {
      if (!a.has_g() && a.graphs_size() == 0) continue;
      const std::string sub =
          absl::StrCat(path, "/", n->op_type(), " '", PathNodeName(*n, i), "'.", a.name());
      if (a.has_g()) {
        bodies->push_back({a.mutable_g(), sub, self});
        order->push_back(absl::StrCat("b", sub));
        const int me = static_cast<int>(bodies->size()) - 1;
        Enumerate(a.mutable_g(), sub, me, functions, bodies, calls, order);
      }
      for (int k = 0; k < a.graphs_size(); ++k) {
        const std::string item = absl::StrCat(sub, "[", k, "]");
        bodies->push_back({a.mutable_graphs(k), item, self});
        order->push_back(absl::StrCat("b", item));
        const int me = static_cast<int>(bodies->size()) - 1;
        Enumerate(a.mutable_graphs(k), item, me, functions, bodies, calls, order);
      }
    }
  }
}

int64_t FunctionOpset(const onnx::FunctionProto& fn, const onnx::ModelProto& m) {
  for (const auto& o : fn.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  }
  return proto::DefaultOpset(m);
}

// `fn`'s body rewritten for the shapes `table` of one call site (names drawn from `names`);
// `edited` gets the table kept current with the rewrite.
absl::StatusOr<onnx::GraphProto> RewriteFunctionBody(
    proto::Model* model, const onnx::FunctionProto& fn, const std::string& label,
    const analysis::ShapeTables& table, std::unordered_set<std::string>* names,
    const std::unordered_set<std::string>* frozen_names, const std::string& pass,
    const PassOptions& options, PassStats* stats,
    const std::function<absl::Status(RewriteContext&)>& rewrite, analysis::ShapeTables* edited) {
  onnx::GraphProto body;
  *body.mutable_node() = fn.node();
  for (const std::string& in : fn.input()) body.add_input()->set_name(in);
  for (const std::string& out : fn.output()) body.add_output()->set_name(out);
  RewriteContext ctx(model, pass, options, stats);
  GraphScope scope;
  scope.path = label;
  scope.names = names;
  scope.frozen_names = frozen_names;
  scope.body = true;
  scope.function = true;
  scope.opset = FunctionOpset(fn, model->proto);
  ctx.InitScoped(&body, std::move(scope), table, edited);
  if (absl::Status s = rewrite(ctx); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(label, ": ", s.message()));
  }
  ctx.Commit();
  return body;
}

std::string NodesText(const onnx::GraphProto& g) {
  std::string out;
  for (const auto& n : g.node()) {
    std::string bytes;
    n.SerializeToString(&bytes);
    absl::StrAppend(&out, bytes.size(), ":", bytes);
  }
  return out;
}

}  // namespace

absl::Status RewriteEveryGraph(proto::Model* model, const std::string& pass,
                               const PassOptions& options, PassStats* stats,
                               const std::function<absl::Status(RewriteContext&)>& rewrite) {
  if (proto::IsSingleGraph(model->proto)) {
    RewriteContext ctx(model, pass, options, stats);
    BCAST_RETURN_IF_ERROR(ctx.Init());
    BCAST_RETURN_IF_ERROR(rewrite(ctx));
    ctx.Commit();
    return absl::OkStatus();
  }
  // One analysis serves every graph: bodies see their outer scope with its shapes, and each
  // function call site has its own table. The pass manager holds it across passes; each
  // context below edits its graph's table with the graph and hands it back, so a pass that
  // preserves shapes leaves every graph's table current for the next one.
  analysis::ModelTables tables;
  if (options.analyses != nullptr) {
    BCAST_ASSIGN_OR_RETURN(tables, options.analyses->TakeModel());
  } else {
    BCAST_ASSIGN_OR_RETURN(tables, analysis::ComputeModelTables(*model));
  }
  // Paths whose tables could not be kept current (see below): the pass manager then holds only
  // the main graph's, and the next pass that needs the others analyses the model again.
  bool graphs_current = true;
  static const analysis::ShapeTables* const kEmpty = new analysis::ShapeTables();
  auto table = [&](const std::string& path) -> analysis::ShapeTables* {
    auto it = tables.graphs.find(path);
    return it == tables.graphs.end() ? nullptr : &it->second;
  };
  std::unordered_set<std::string> names;
  AddNames(model->proto.graph(), &names);
  for (const auto& f : model->proto.functions()) {
    for (const auto& n : f.node()) AddNames(n, &names);
    for (const std::string& s : f.input()) names.insert(s);
    for (const std::string& s : f.output()) names.insert(s);
  }
  std::map<FunctionKey, onnx::FunctionProto*> functions;
  for (auto& f : *model->proto.mutable_functions()) functions[{f.domain(), f.name()}] = &f;
  std::vector<BodyRef> bodies;
  std::map<onnx::FunctionProto*, std::vector<CallRef>> calls;
  std::vector<std::string> paths_before;
  Enumerate(model->proto.mutable_graph(), "main", -1, functions, &bodies, &calls, &paths_before);
  bool function_bodies_changed = false;

  // Function bodies first: call nodes are retargeted to copies before any graph is edited.
  std::vector<onnx::FunctionProto*> order;
  for (auto& f : *model->proto.mutable_functions()) order.push_back(&f);
  std::set<FunctionKey> taken;
  for (const auto& f : model->proto.functions()) taken.insert({f.domain(), f.name()});
  for (onnx::FunctionProto* fn : order) {
    const std::string suffix = absl::StrCat(" (function ", fn->domain(), ".", fn->name(), ")");
    // Every walk of this body: call sites in graphs and inside other function bodies.
    std::vector<std::string> keys;
    for (const auto& [path, t] : tables.graphs) {
      if (path.size() > suffix.size() &&
          path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
        keys.push_back(path);
      }
    }
    if (keys.empty()) continue;  // never called: nothing to rewrite for
    const std::string label = absl::StrCat("function ", fn->domain(), ".", fn->name());
    // Trial rewrites, one per call site, each drawing fresh names against the model's names
    // without adding to them (so equal rewrites come out equal); grouped by the body they
    // produce.
    std::vector<std::string> results;
    std::map<std::string, std::vector<size_t>> groups;  // body text -> keys
    std::vector<std::string> group_order;
    std::vector<analysis::ShapeTables> trial_tables(keys.size());
    for (size_t k = 0; k < keys.size(); ++k) {
      std::unordered_set<std::string> trial_names;
      PassStats trial;
      BCAST_ASSIGN_OR_RETURN(
          onnx::GraphProto body,
          RewriteFunctionBody(model, *fn, label, *table(keys[k]), &trial_names, &names, pass,
                              options, &trial, rewrite, &trial_tables[k]));
      std::string text = NodesText(body);
      if (groups.count(text) == 0) group_order.push_back(text);
      groups[text].push_back(k);
    }
    std::map<std::string, const CallRef*> call_of;
    for (const CallRef& c : calls[fn]) call_of[c.key] = &c;
    if (group_order.size() > 1) {
      bool retargetable = true;
      for (const std::string& key : keys) retargetable &= call_of.count(key) > 0;
      if (!retargetable) {
        stats->debug.push_back(absl::StrCat(
            pass, ": ", label,
            ": call sites need different rewrites and one is inside another function body; "
            "the function is left as is"));
        continue;  // the body is not edited: its tables stay as they are
      }
    }
    const onnx::FunctionProto original = *fn;  // every group starts from the original body
    onnx::GraphProto original_body;
    *original_body.mutable_node() = original.node();
    function_bodies_changed |= group_order.size() > 1 || group_order[0] != NodesText(original_body);
    for (size_t gi = 0; gi < group_order.size(); ++gi) {
      const std::vector<size_t>& members = groups[group_order[gi]];
      onnx::FunctionProto* target = fn;
      std::string target_label = label;
      if (gi > 0) {
        // A copy of the original body for the call sites whose shapes need another rewrite.
        std::string name;
        for (int n = static_cast<int>(gi);; ++n) {
          name = absl::StrCat(fn->name(), "__", n);
          if (taken.insert({fn->domain(), name}).second) break;
        }
        target = model->proto.add_functions();
        *target = original;
        target->set_name(name);
        target_label = absl::StrCat("function ", fn->domain(), ".", name);
        for (size_t k : members) call_of[keys[k]]->node->set_op_type(name);
        Rewrite r;
        r.node = target_label;
        r.action = "inserted";
        r.detail = absl::StrCat("copy of ", label,
                                " for the call site(s) whose shapes need another rewrite");
        for (size_t k : members) absl::StrAppend(&r.detail, k == members[0] ? ": " : ", ", keys[k]);
        stats->Log(std::move(r));
      }
      // The body rewritten again with the model-wide names (the trial used a snapshot). The
      // names as they were before it, when the group's other call sites may need them below.
      std::optional<std::unordered_set<std::string>> names_before;
      if (gi > 0 && members.size() > 1) names_before = names;
      analysis::ShapeTables edited;
      BCAST_ASSIGN_OR_RETURN(
          onnx::GraphProto body,
          RewriteFunctionBody(model, original, target_label, *table(keys[members[0]]), &names,
                              nullptr, pass, options, stats, rewrite, &edited));
      // Each call site's table describes the body as rewritten for it: the first member's is
      // the one just edited; the others' trials describe it too when it came out the same,
      // names included (the trials drew theirs against the model-wide names, which only an
      // earlier group's rewrite has added to since). Otherwise each of the others is rewritten
      // once more against the names as this rewrite found them, which draws the same names: a
      // rewrite of a small body, where the analysis could only walk the whole model again.
      const std::string text = NodesText(body);
      const bool trials_current = text == group_order[gi];
      *target->mutable_node() = std::move(*body.mutable_node());
      *table(keys[members[0]]) = std::move(edited);
      for (size_t m = 1; m < members.size(); ++m) {
        if (trials_current) {
          *table(keys[members[m]]) = std::move(trial_tables[members[m]]);
          continue;
        }
        analysis::ShapeTables redone;
        bool same = false;
        if (names_before.has_value()) {
          std::unordered_set<std::string> redo_names;
          PassStats redo;
          BCAST_ASSIGN_OR_RETURN(
              onnx::GraphProto again,
              RewriteFunctionBody(model, original, target_label, *table(keys[members[m]]),
                                  &redo_names, &*names_before, pass, options, &redo, rewrite,
                                  &redone));
          same = NodesText(again) == text;
        }
        if (same) {
          *table(keys[members[m]]) = std::move(redone);
        } else {
          graphs_current = false;  // not expected; never a stale table
        }
      }
    }
  }

  // If/Loop/Scan bodies, innermost first (pre-order reversed): a body's own table moves into
  // its context once every body nested in it, which reads it as outer scope, is done, and
  // comes back as the context ends.
  for (int i = static_cast<int>(bodies.size()) - 1; i >= 0; --i) {
    GraphScope scope;
    scope.path = bodies[i].path;
    scope.names = &names;
    scope.body = true;
    for (int p = bodies[i].parent; p >= 0; p = bodies[p].parent) {
      const analysis::ShapeTables* t = table(bodies[p].path);
      scope.outer.push_back(t != nullptr ? t : kEmpty);
    }
    scope.outer.push_back(&tables.main);
    analysis::ShapeTables* own = table(bodies[i].path);
    RewriteContext ctx(model, pass, options, stats);
    // A body the analysis did not walk gets no table back (a fresh analysis has none).
    ctx.InitScoped(bodies[i].graph, std::move(scope),
                   own != nullptr ? std::move(*own) : analysis::ShapeTables(), own);
    if (absl::Status s = rewrite(ctx); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(bodies[i].path, ": ", s.message()));
    }
    ctx.Commit();
  }

  {
    GraphScope scope;
    scope.names = &names;
    RewriteContext ctx(model, pass, options, stats);
    ctx.InitScoped(model->proto.mutable_graph(), std::move(scope), std::move(tables.main),
                   &tables.main);
    BCAST_RETURN_IF_ERROR(rewrite(ctx));
    ctx.Commit();
  }
  if (options.analyses == nullptr) return absl::OkStatus();

  // The paths name their owning nodes, "<op>#<index>" when unnamed, and the functions called:
  // insertions before an owner and retargeted calls rename them. Passes insert and remove only
  // nodes without bodies or calls, so the graphs' owners are met in the same order as before:
  // each old path maps to the one met at its place now.
  std::vector<BodyRef> bodies_after;
  std::map<onnx::FunctionProto*, std::vector<CallRef>> calls_after;
  std::vector<std::string> paths_after;
  functions.clear();
  for (auto& f : *model->proto.mutable_functions()) functions[{f.domain(), f.name()}] = &f;
  Enumerate(model->proto.mutable_graph(), "main", -1, functions, &bodies_after, &calls_after,
            &paths_after);
  std::map<std::string, std::string> renamed;  // old path -> new
  bool same_structure = paths_before.size() == paths_after.size();
  for (size_t i = 0; same_structure && i < paths_before.size(); ++i) {
    same_structure = paths_before[i][0] == paths_after[i][0] &&
                     renamed.emplace(paths_before[i].substr(1), paths_after[i].substr(1)).second;
  }
  if (!same_structure) graphs_current = false;
  std::map<std::string, analysis::ShapeTables> graphs;
  for (auto& [path, t] : tables.graphs) {
    if (!graphs_current) break;
    // The longest listed path that `path` is or lies under; what lies under a call is a walk
    // inside a function body, named by that body's nodes, which is renamed only when no
    // function body changed.
    std::string prefix = path;
    auto it = renamed.find(prefix);
    while (it == renamed.end()) {
      const size_t slash = prefix.rfind('/');
      if (slash == std::string::npos || slash == 0) break;
      prefix.resize(slash);
      it = renamed.find(prefix);
    }
    if (it == renamed.end() || (prefix != path && function_bodies_changed)) {
      graphs_current = false;
      break;
    }
    graphs.emplace(it->second + path.substr(prefix.size()), std::move(t));
  }
  if (graphs_current && graphs.size() == tables.graphs.size()) {
    tables.graphs = std::move(graphs);
    options.analyses->ReturnModel(std::move(tables));
  } else {
    options.analyses->Return(std::move(tables.main));
  }
  return absl::OkStatus();
}

}  // namespace onnx_bcast::passes
