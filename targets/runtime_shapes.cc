// Nodes that compute a shape at run time (see runtime_shapes.h).
#include "targets/runtime_shapes.h"

#include <optional>
#include <set>
#include <unordered_set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/shape_propagation.h"
#include "proto/dim_binding.h"
#include "support/status_macros.h"
#include "targets/targets.h"

namespace onnx_bcast::targets {
namespace {

// The inputs of each op that carry a shape, extent, index or axis list: a static engine needs
// them constant. (Resize's roi, scales and sizes; Slice's starts, ends, axes, steps; ...)
const std::vector<int>* ShapeInputs(const std::string& op) {
  static const auto* const kTable = new std::unordered_map<std::string, std::vector<int>>{
      {"Reshape", {1}},  {"Expand", {1}},          {"Tile", {1}},           {"Resize", {1, 2, 3}},
      {"Upsample", {1}}, {"ConstantOfShape", {0}}, {"Slice", {1, 2, 3, 4}}, {"Unsqueeze", {1}},
      {"Squeeze", {1}},  {"Pad", {1, 2, 3}},       {"Range", {0, 1, 2}},    {"TopK", {1}},
      {"OneHot", {1}},   {"CenterCropPad", {1}}};
  auto it = kTable->find(op);
  return it == kTable->end() ? nullptr : &it->second;
}

bool DefaultDomain(const onnx::NodeProto& n) {
  return n.domain().empty() || n.domain() == "ai.onnx";
}

class Finder {
 public:
  Finder(const proto::Model& model, std::string target,
         const std::unordered_map<std::string, int>* original_index, const analysis::ShapeTables* tables,
         const analysis::ShapeTable* analysed)
      : model_(model),
        target_(std::move(target)),
        original_index_(original_index),
        tables_(tables),
        analysed_(analysed) {
    for (std::string& sym : proto::UnboundInputSymbols(model.proto.graph())) {
      input_symbols_.insert(std::move(sym));
    }
  }

  std::vector<TargetViolation> Run() {
    Walk(model_.proto.graph(), "main", nullptr);
    return std::move(out_);
  }

 private:
  const broadcast::Shape* ShapeOf(const std::string& name) const {
    if (tables_ != nullptr) return tables_->FindShape(name);
    if (analysed_ != nullptr) {
      auto it = analysed_->find(name);
      if (it != analysed_->end()) return &it->second;
    }
    return nullptr;
  }

  std::string Label(const onnx::NodeProto& n, int index, bool main) const {
    if (!n.name().empty()) return n.name();
    if (main && original_index_ != nullptr && n.output_size() > 0) {
      if (auto it = original_index_->find(n.output(0)); it != original_index_->end()) {
        index = it->second;
      }
    }
    return absl::StrCat(n.op_type(), "#", index);
  }

  // What would make node `n` static, from the symbols of its tensors' shapes.
  std::string Remedy(const onnx::NodeProto& n) const {
    std::set<std::string> bind, data;
    bool unknown = false;
    auto scan = [&](const std::string& name) {
      if (name.empty()) return;
      const broadcast::Shape* s = ShapeOf(name);
      if (s == nullptr || !s->rank_known) {
        unknown = true;
        return;
      }
      for (const broadcast::Dim& d : s->dims) {
        if (d.is_value()) continue;
        if (d.is_unknown()) {
          unknown = true;
          continue;
        }
        std::vector<std::string> syms;
        if (d.is_symbol()) {
          syms.push_back(d.symbol());
        } else if (std::optional<broadcast::Expr> e = d.expr()) {
          syms = e->Symbols();
        }
        for (const std::string& sym : syms) {
          (input_symbols_.count(sym) > 0 ? bind : data).insert(sym);
        }
      }
    };
    for (const std::string& in : n.input()) scan(in);
    for (const std::string& o : n.output()) scan(o);
    std::vector<std::string> parts;
    if (!bind.empty()) {
      parts.push_back(absl::StrCat("bind ", absl::StrJoin(bind, ", "), " with --dim"));
    }
    if (!data.empty()) {
      std::set<std::string> nodes;
      for (const std::string& sym : data) {
        nodes.insert(
            absl::StrCat("'", DataSymbolNode(sym, n.name().empty() ? n.op_type() : n.name()), "'"));
      }
      parts.push_back(absl::StrCat("depends on data at node ", absl::StrJoin(nodes, ", ")));
    }
    if (parts.empty() && unknown) parts.push_back("a shape the analysis cannot see");
    if (parts.empty()) parts.push_back("its values are not constant");
    return absl::StrJoin(parts, "; ");
  }

  void Add(const std::string& graph, const onnx::NodeProto& n, int index, bool main,
           std::string why) {
    TargetViolation t;
    t.graph = graph;
    t.node = Label(n, index, main);
    t.op = n.op_type();
    std::vector<std::string> shapes;
    for (const std::string& in : n.input()) {
      const broadcast::Shape* s = in.empty() ? nullptr : ShapeOf(in);
      shapes.push_back(s != nullptr && main ? s->ToString() : "?");
    }
    t.shapes = absl::StrJoin(shapes, " and ");
    t.why = std::move(why);
    out_.push_back(std::move(t));
  }

  void Walk(const onnx::GraphProto& g, const std::string& path,
            const std::unordered_set<std::string>* outer_constants) {
    const bool main = path == "main";
    std::unordered_set<std::string> constants;
    if (outer_constants != nullptr) constants = *outer_constants;
    std::unordered_set<std::string> inputs;
    for (const auto& vi : g.input()) inputs.insert(vi.name());
    for (const auto& t : g.initializer()) {
      if (inputs.count(t.name()) == 0) constants.insert(t.name());
    }
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      if (n.op_type() == "Constant" && DefaultDomain(n)) {
        for (const std::string& o : n.output()) constants.insert(o);
        continue;
      }
      for (const auto& a : n.attribute()) {
        const std::string sub =
            absl::StrCat(path, "/", n.op_type(), " '", Label(n, i, main), "'.", a.name());
        if (a.has_g()) Walk(a.g(), sub, &constants);
        for (const auto& body : a.graphs()) Walk(body, sub, &constants);
      }
      if (!DefaultDomain(n)) continue;
      const std::string where =
          main ? ""
               : " (inside a control-flow body: an engine without run-time shapes "
                 "cannot run it)";
      const std::string& op = n.op_type();
      if (op == "Shape" || op == "Size") {
        Add(path, n, i, main,
            absl::StrCat("computes a shape at run time (", target_,
                         " has no run-time shapes): ", Remedy(n), where));
        continue;
      }
      if (const std::vector<int>* slots = ShapeInputs(op)) {
        std::vector<std::string> computed;
        for (int slot : *slots) {
          if (slot < n.input_size() && !n.input(slot).empty() &&
              constants.count(n.input(slot)) == 0) {
            computed.push_back(absl::StrCat("input ", slot, " '", n.input(slot), "'"));
          }
        }
        if (!computed.empty()) {
          // A shape the caller feeds is data: no binding of dims makes it a constant.
          std::vector<std::string> fed;
          for (int slot : *slots) {
            if (slot < n.input_size() && inputs.count(n.input(slot)) > 0) {
              fed.push_back(absl::StrCat("'", n.input(slot), "'"));
            }
          }
          const std::string remedy =
              fed.empty()
                  ? Remedy(n)
                  : absl::StrCat(absl::StrJoin(fed, ", "),
                                 fed.size() == 1 ? " is a graph input" : " are graph inputs",
                                 ": its values are data, which no --dim binds; make it "
                                 "an initializer");
          Add(path, n, i, main,
              absl::StrCat("reads a shape computed at run time (", absl::StrJoin(computed, ", "),
                           "; ", target_, " has no run-time shapes): ", remedy, where));
          continue;
        }
      }
      // A node fold-constants would have folded (its result over --fold-limit, or an op the
      // executor cannot run) is still work the engine must do on constants at load time.
      bool all_constant = n.input_size() > 0;
      bool any = false;
      for (const std::string& in : n.input()) {
        if (in.empty()) continue;
        any = true;
        all_constant &= constants.count(in) > 0;
      }
      bool has_body = false;
      for (const auto& a : n.attribute()) has_body |= a.has_g() || a.graphs_size() > 0;
      if (any && all_constant && !has_body) {
        Add(path, n, i, main,
            main ? std::string("has only constant inputs: fold it (fold-constants; raise "
                               "--fold-limit if opt --report says it was kept for its size)")
                 : absl::StrCat("has only constant inputs", where,
                                "; fold-constants keeps it (a result of a type the target "
                                "does not load, over its limit, or not computable)"));
      }
    }
  }

  const proto::Model& model_;
  std::string target_;
  const std::unordered_map<std::string, int>* original_index_;
  const analysis::ShapeTables* tables_;
  const analysis::ShapeTable* analysed_;
  std::unordered_set<std::string> input_symbols_;
  std::vector<TargetViolation> out_;
};

}  // namespace

std::string DataSymbolNode(const std::string& symbol, const std::string& at) {
  if (absl::StartsWith(symbol, "opaque#")) return at;
  // "<node>:<output>:<axis>", with "#<n>" after the axis when issued twice (an unnamed node's
  // own label, "NonZero#0", keeps its '#'): the node is what is left.
  std::string name = symbol;
  const size_t colon = name.rfind(':');
  if (const size_t hash = name.rfind('#');
      colon != std::string::npos && hash != std::string::npos && hash > colon) {
    name.resize(hash);
  }
  for (int k = 0; k < 2 && name.rfind(':') != std::string::npos; ++k) name.resize(name.rfind(':'));
  return name.empty() ? at : name;
}

absl::StatusOr<std::vector<TargetViolation>> FindRuntimeShapeNodes(
    const proto::Model& model, const std::string& target,
    const std::unordered_map<std::string, int>* original_index, const analysis::ShapeTables* tables) {
  std::optional<analysis::Analysis> analysis;
  if (tables == nullptr) {
    analysis::AnalysisOptions options;
    options.verdicts = false;
    BCAST_ASSIGN_OR_RETURN(analysis::Analysis a, analysis::AnalyzeBroadcasts(model, options));
    analysis = std::move(a);
  }
  const analysis::ShapeTable* analysed = nullptr;
  if (analysis.has_value()) {
    auto it = analysis->shapes.find("main");
    if (it != analysis->shapes.end()) analysed = &it->second;
  }
  Finder finder(model, target, original_index, tables, analysed);
  return finder.Run();
}

}  // namespace onnx_bcast::targets
