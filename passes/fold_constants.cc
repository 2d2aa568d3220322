// fold-constants (see fold_constants.h): the rounds over the main graph and the bodies; the
// folds themselves are fold_cleanups.h and fold_values.h, on the graph of fold_graph.h.
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
#include "passes/fold_cleanups.h"
#include "passes/fold_graph.h"
#include "passes/fold_values.h"
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

using fold::DefaultDomain;
using fold::Foldable;
using fold::FoldGraph;
using fold::HasSubgraph;
using fold::PayloadBytes;

// One round of the main graph's folds, on a fresh index of the graph.
class Folder {
 public:
  Folder(proto::Model* model, const PassOptions& options, PassStats* stats,
         std::unordered_set<std::string>* kept)
      : fg_(model, options, stats, kept) {}

  // One round; true when another round may find more. Within a round constness already
  // propagates (a folded value joins the constants the next nodes read), so only what a round
  // exposes late asks for another: an inlined If branch, or a result kept for its size (its
  // inputs are then wanted as initializers). The idempotence tests hold this to account.
  absl::StatusOr<bool> Round() {
    fg_.Index();
    fold::ConstantNodesToInitializers(fg_);
    fold::TrimTrailingEmptyInputs(fg_);
    fold::RemoveIdentities(fg_);
    fg_.Rebuild();
    const size_t kept_before = fg_.kept().size();
    BCAST_ASSIGN_OR_RETURN(bool folded, fold::FoldValues(fg_, &tables_));
    fg_.Rebuild();
    BCAST_ASSIGN_OR_RETURN(bool ifs, fold::FoldIfs(fg_));
    const bool removed = fold::RemoveDead(fg_);
    // Tables of the graph as the round leaves it: nothing was edited after the analysis.
    if (folded || ifs || removed) tables_.reset();
    return ifs || fg_.kept().size() > kept_before;
  }

  /// The analysis of the last round, when no edit followed it (else nullopt).
  std::optional<analysis::ShapeTables> TakeTables() { return std::move(tables_); }

 private:
  FoldGraph fg_;
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

// The node in a body's path: its name, else its first output, else (a hostile model's node
// with neither) its index.
std::string BodyLabel(const onnx::NodeProto& n, int index) {
  if (!n.name().empty()) return n.name();
  return n.output_size() > 0 ? n.output(0) : absl::StrCat("#", index);
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
        if (!a.has_g() && a.graphs_size() == 0) continue;
        const std::string where =
            absl::StrCat(path, "/", n->op_type(), " '", BodyLabel(*n, i), "'.", a.name());
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

BCAST_DEFINE_PASS(FoldConstants)

}  // namespace onnx_bcast::passes
