// The executor: runs a loaded graph node by node in topological order over a value table,
// resolves subgraph names in the enclosing scopes, frees values after their last use and keeps
// each node's output buffers and plan (per input signature) across runs so that a repeated run
// with the same shapes allocates nothing new and redoes no shape work.
#ifndef ONNX_BCAST_RUNTIME_EXEC_EXECUTOR_H_
#define ONNX_BCAST_RUNTIME_EXEC_EXECUTOR_H_

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "runtime/graph.h"
#include "runtime/ops/op.h"
#include "runtime/run_budget.h"
#include "runtime/thread_pool.h"
#include "runtime/value.h"

namespace onnx_bcast::runtime {

/// Named values fed to a run: graph inputs, or initializers to override.
using Feeds = std::vector<std::pair<std::string, Value>>;

/// Runs one model. Not thread-safe: one Run at a time per Executor.
class Executor {
 public:
  /// Plans every graph of `model` (subgraphs included): orders nodes topologically, finds each
  /// kernel, resolves outer-scope names. Errors: Unimplemented naming the first op without a
  /// kernel (op, domain, opset); InvalidArgument for cycles, values produced twice and names
  /// defined nowhere.
  /// `options.budget` (shared by several executors, e.g. verify's) bounds every run; without
  /// one the executor has its own, unlimited until set_deadline or set_timeout.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(std::shared_ptr<const Model> model,
                                                          RunOptions options = {});
  ~Executor();

  /// Runs the main graph. Every graph input must be fed; a feed may also replace an
  /// initializer. Returns the graph outputs in order. Errors name the failing node; inside
  /// subgraphs the chain of enclosing nodes. An output may be a view (a Reshape of another
  /// value: Tensor::owns_data() false) whose storage only its shared_ptr keeps alive: keep the
  /// shared_ptr or Clone() the tensor; never move the Tensor out of it.
  /// A later run never writes a buffer the caller still holds; holding one run's outputs
  /// through the next costs no allocation after the second run (one spare buffer per output,
  /// kept by the executor: SwapHeldOutputs).
  absl::StatusOr<std::vector<Value>> Run(const Feeds& feeds);

  /// Runs stop with DeadlineExceeded once `deadline` has passed: checked between nodes, per
  /// Loop/Scan iteration and by long kernels (RunOptions::budget, OpContext::CheckDeadline).
  /// Replaces RunOptions::budget with the executor's own.
  void set_deadline(absl::Time deadline) {
    set_timeout(std::max(1e-9, absl::ToDoubleSeconds(deadline - absl::Now())));
  }
  /// The same, `seconds` from now; 0 or less removes the limit.
  void set_timeout(double seconds) {
    budget_.SetTimeout(seconds);
    options_.budget = &budget_;
  }

  /// Node plans built so far over all graphs: a node builds its plan (broadcast plan, output
  /// shapes, kernel choice) at its first run with a given input signature and reuses it while
  /// the signature stays the same (OpContext::CachedPlan). For tests and benchmarks.
  int64_t plan_builds() const;
  /// Prepared states built so far over all graphs (OpContext::Prepared: a convolution's
  /// weights packed once per node and shape), and the bytes the current ones hold (charged to
  /// the memory budget). For tests, benchmarks and --profile.
  int64_t prepares() const;
  int64_t prepared_bytes() const;
  /// Node outputs left in a channel-blocked layout so far (kernels/channel_blocks.h): a
  /// convolution's for its readers, an elementwise chain's over one. For tests.
  int64_t blocked_outputs() const { return blocked_outputs_; }

  const Model& model() const { return *model_; }
  const Graph& graph() const { return *model_->main; }
  const RunOptions& options() const { return options_; }

  struct GraphPlan;
  struct Frame;

 private:
  Executor(std::shared_ptr<const Model> model, RunOptions options);
  /// Runs `plan`'s nodes over `frame`. With `reuse_constants`, nodes that depend on constants
  /// only keep the outputs of their first run (false when a run feeds an initializer).
  absl::Status Execute(GraphPlan& plan, Frame& frame, bool reuse_constants = true);
  /// Before a run of `plan`: a graph output's buffer that someone still holds from an earlier
  /// run (the caller, a Loop's carried state) is exchanged for the spare one when that is free,
  /// and kept as the spare otherwise. A caller keeping run N's outputs through run N+1 thus
  /// finds them intact, and from the third run on nothing is allocated. Every buffer a run
  /// writes has no other holder (OpContext::Allocate's use-count test), so outputs never alias.
  void SwapHeldOutputs(GraphPlan& plan);
  /// Clears `slot` after its last use and lends its producer's buffer to later outputs
  /// (options_.buffers) when nothing else holds it.
  void FreeSlot(GraphPlan& plan, Frame& frame, int slot);
  /// Runs node `pos` of `plan`: its kernel, the profile hooks, its outputs into `frame`, then
  /// the frees after it.
  absl::Status RunNode(GraphPlan& plan, Frame& frame, size_t pos, bool reuse_constants);
  /// Runs the elementwise chain that ends at node `pos` as one tiled pass, or its nodes one by
  /// one when its operands do not qualify at this run (RunOptions::fuse_elementwise).
  absl::Status RunChainAt(GraphPlan& plan, Frame& frame, size_t pos, bool reuse_constants);
  /// Moves node `pos`'s outputs into `frame` (keeping its buffers for the next run where
  /// nothing else holds them), then frees the values whose last use it was.
  void PublishOutputs(GraphPlan& plan, Frame& frame, size_t pos);
  /// True when convolutions may leave activations in channel blocks for their readers
  /// (kernels/channel_blocks.h): fusing is on and BCAST_BLOCKED is not "0".
  bool BlocksOn() const;
  /// Replaces `slot`'s blocked value with an NCHW copy (a no-op when it is NCHW already), for
  /// `reader`, which cannot take it blocked; later readers share the copy, and later runs
  /// leave the slot NCHW.
  absl::Status Unblock(GraphPlan& plan, Frame& frame, int slot, const Node& reader);

  class Runner;

  std::shared_ptr<const Model> model_;
  RunOptions options_;
  std::unique_ptr<ThreadPool> pool_;
  std::map<const Graph*, std::unique_ptr<GraphPlan>> plans_;
  RunBudget budget_;
  BufferPool buffers_;
  int64_t blocked_outputs_ = 0;
};

/// Ends the threads OpenBLAS started when it loaded and keeps it single-threaded
/// (kernels::KeepBlasSingleThreaded), as every Executor::Run does first. Left alone until then,
/// they spin in sched_yield for about 0.1 s: a program that may never run a model (the CLI's
/// check and opt) calls this at its start.
void EndBlasThreads();

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_EXEC_EXECUTOR_H_
