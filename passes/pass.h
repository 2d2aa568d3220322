// The rewrite-pass interface: a pass transforms a loaded model in place and reports what it did.
//
// Three outcomes, three channels: "does not apply" is silent (a reason in PassStats::debug);
// a bad model is InvalidArgument naming node, op, shapes and rule; what a pass cannot handle
// is Unimplemented (exit 3 in the CLI). The pass manager turns a graph broken by a pass into
// InternalError and stops the pipeline.
#ifndef ONNX_BCAST_PASSES_PASS_H_
#define ONNX_BCAST_PASSES_PASS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/analysis_manager.h"
#include "broadcast/shape.h"
#include "proto/model_io.h"
#include "targets/form_oracle.h"
#include "targets/targets.h"

namespace onnx_bcast::passes {

/// Computes tensors without the graph's inputs: `fragment` is a model whose graph has no
/// inputs, holds the initializers its nodes read, and lists the wanted tensors as outputs; the
/// values come back in output order, named after them. The driver provides it with the bundled
/// executor (passes/ never executes a model itself).
using ConstantEvaluator =
    std::function<absl::StatusOr<std::vector<onnx::TensorProto>>(const proto::Model& fragment)>;

/// fold-constants' default PassOptions::constant_fold_limit_bytes: shape arithmetic is a few
/// bytes, a folded weight transform or mask a few hundred KiB.
inline constexpr int64_t kDefaultConstantFoldLimitBytes = int64_t{1} << 20;

/// Knobs shared by every pass.
struct PassOptions {
  /// materialize-broadcast folds an Expand of a constant into a new initializer only when
  /// the expanded payload is at most this many bytes; above it an Expand node is inserted.
  int64_t fold_limit_bytes = 4096;
  /// fold-constants replaces a computed value by an initializer only up to this many bytes;
  /// a larger result stays a node.
  int64_t constant_fold_limit_bytes = kDefaultConstantFoldLimitBytes;
  /// What fold-constants computes nodes with (null: it folds only what the analysis knows).
  const ConstantEvaluator* evaluator = nullptr;
  /// The engine description the generic `legalize` pass works for (null: not available).
  const targets::TargetProfile* target = nullptr;
  /// The target's engine, consulted at exact shapes (form_oracle.h; the driver makes it from
  /// the installed adapter). Null: the table in `target` alone decides (--no-live-probe).
  targets::FormOracle* live = nullptr;
  /// Labels of unnamed nodes ("<op>#<index>") use their index in the model the pipeline
  /// started from, found by first output name; filled by the pass manager. Null: the index in
  /// the graph the pass sees.
  const std::unordered_map<std::string, int>* original_index = nullptr;
  /// The pipeline's analyses (set by the pass manager; null: each pass computes its own).
  analysis::AnalysisManager* analyses = nullptr;
};

/// One rewrite, for `opt --report` and --dry-run.
struct Rewrite {
  std::string node;  ///< the node rewritten (name, or "<op>#<index>")
  /// The node's first output in the main graph: an unnamed node's identity that insertions do
  /// not shift (verify's bisect matches on it); empty for body nodes and whole-model rewrites.
  std::string output;
  std::string op;      ///< its op type
  std::string action;  ///< "inserted", "folded", "removed", "upgraded", "shrunk", "converted"
  std::string tensor;  ///< the operand or tensor concerned
  std::string detail;  ///< e.g. "Unsqueeze axes [0,1]", "Expand to [2,3,4]"
  std::string before;  ///< shape before, e.g. "[3]"
  std::string after;   ///< shape after, e.g. "[1,1,3]"
  int64_t bytes = 0;   ///< initializer bytes added (negative: saved)
};

/// What one pass did, for `opt`'s per-pass counts and --report.
struct PassStats {
  int64_t nodes_inserted = 0;
  int64_t nodes_removed = 0;
  int64_t initializers_rewritten = 0;  ///< folded, reshaped or shrunk constants
  int64_t bytes_added = 0;             ///< initializer bytes added by folding (net)
  int64_t rewrites = 0;                ///< rewrites made, logged or not
  /// Whether `log` keeps each rewrite. The driver turns it off when nobody reads the log (opt
  /// without --report, --verify, --dry-run or --debug): at 1M nodes the log is about 250k
  /// records of eight strings each, over 100 MiB.
  bool keep_log = true;
  std::vector<Rewrite> log;
  std::vector<std::string> debug;  ///< why a node was left alone ("does not apply")
  /// What a pass left undone that a user should know without --debug (fold-constants: a
  /// result kept as a node for its size, a node the executor cannot compute). Not rewrites:
  /// a second run notes them again and changes nothing.
  std::vector<std::string> notes;

  /// Counts `r` and keeps it when the log is kept.
  void Log(Rewrite r) {
    ++rewrites;
    if (keep_log) log.push_back(std::move(r));
  }
  bool changed() const { return rewrites > 0; }
};

/// A rewrite. Run() returns InvalidArgument for a bad model (naming node, op, shapes and rule),
/// Unimplemented for what it cannot handle, and must leave a valid graph otherwise. Every pass
/// is idempotent: a second run changes nothing.
class Pass {
 public:
  virtual ~Pass() = default;
  virtual absl::Status Run(proto::Model* model, const PassOptions& options, PassStats* stats) = 0;
};

}  // namespace onnx_bcast::passes

// A pass's public face is its factory, `std::unique_ptr<Pass> Create<Name>Pass()`, which the
// registry's table holds; its header adds only the comment saying what it requires and
// guarantees. Declare it (in namespace onnx_bcast::passes) with BCAST_DECLARE_PASS(Name) and
// define it, in the pass's .cc beside `class Name : public Pass`, with BCAST_DEFINE_PASS(Name).
#define BCAST_DECLARE_PASS(Name) std::unique_ptr<Pass> Create##Name##Pass()
#define BCAST_DEFINE_PASS(Name) \
  std::unique_ptr<Pass> Create##Name##Pass() { return std::make_unique<Name>(); }

#endif  // ONNX_BCAST_PASSES_PASS_H_
