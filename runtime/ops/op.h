// The contract between the executor and op kernels. An op reads its inputs and attributes from
// an OpContext, computes output shapes, asks the context for output buffers (reused across runs)
// and calls flat kernels. Ops know nothing of the graph around them; the executor does no
// arithmetic.
#ifndef ONNX_BCAST_RUNTIME_OPS_OP_H_
#define ONNX_BCAST_RUNTIME_OPS_OP_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/graph.h"
#include "runtime/memory_budget.h"
#include "runtime/run_budget.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"
#include "runtime/value.h"

namespace onnx_bcast::runtime {

/// The buffers of values past their last use, lent to outputs made later (the executor's
/// memory plan): a run then holds about its live values at once, not every value it makes,
/// and since a run's order of frees and requests repeats, later runs take the same buffers
/// back and allocate nothing. Not thread-safe: one per executor, used by its run's thread.
class BufferPool {
 public:
  /// Buffers smaller than this stay with their producer: lending them saves no memory worth
  /// the bookkeeping (which made a 0.05 ms GPT-2 run 10% slower).
  static constexpr size_t kMinBytes = 16 * 1024;

  /// The smallest free tensor of at least `bytes` bytes and at most twice that (a larger one
  /// is left for a larger request), removed from the pool; null when there is none.
  std::shared_ptr<Tensor> Take(size_t bytes);
  /// Adds `t` (owned storage, no other holder) to the free buffers.
  void Give(std::shared_ptr<Tensor> t);
  /// Bytes of the free buffers.
  size_t free_bytes() const { return free_bytes_; }

 private:
  /// Sorted by capacity; a vector, so that after the first runs Give allocates nothing.
  std::vector<std::pair<size_t, std::shared_ptr<Tensor>>> free_;
  size_t free_bytes_ = 0;
};

/// How to run: threads and resource limits.
struct RunOptions {
  /// Threads per kernel (the caller counts as one).
  int threads = 1;
  ThreadPool* pool = nullptr;
  /// Refuse (ResourceExhausted) to allocate a tensor with more elements than this.
  int64_t max_tensor_elements = int64_t{1} << 32;
  /// The run's deadline (null: none). Checked between nodes, per Loop/Scan iteration and by
  /// long kernels through OpContext::CheckDeadline.
  const RunBudget* budget = nullptr;
  /// Refuse (ResourceExhausted) a node whose kernel would do more elementary steps than this
  /// (window taps of a pool, ...): ~10^12, over 15 minutes of this executor's time, which no
  /// real model's single node needs and a 4096x4096 pooling window over a padded image exceeds.
  int64_t max_node_work = int64_t{1} << 40;
  /// Refuse (ResourceExhausted) a Loop or Scan once the scan-output items it holds for
  /// stacking exceed this many bytes (all its scan outputs together).
  int64_t max_loop_output_bytes = int64_t{2} << 30;
  /// The bytes a run may hold at once (--max-memory; default a quarter of physical memory):
  /// OpContext::Allocate refuses (ResourceExhausted naming the node) an output whose buffer
  /// would take the live total past it, and a Loop or Scan refuses scan outputs whose stacking
  /// would. Used by Executor::Create to make `memory` when that is null.
  int64_t max_memory_bytes = DefaultMaxMemoryBytes();
  /// The budget charged (shared by executors that run together, e.g. verify's two models);
  /// null: each executor makes its own from max_memory_bytes.
  std::shared_ptr<MemoryBudget> memory;
  /// Called with each node and its input values right before the node runs, in every graph
  /// the run enters (subgraph bodies and inlined function bodies included): lets tests check
  /// properties of the concrete shapes a model meets (e.g. a target's broadcast promise).
  /// Empty: no call.
  std::function<void(const Node&, const std::vector<const Value*>&)> observe_node;
  /// Called after each node of the main graph ran, with its outputs and its wall time in
  /// seconds (a control-flow node's time includes its bodies): run --profile. Empty: no clock
  /// is read.
  std::function<void(const Node&, const std::vector<Value>& outputs, double seconds)> node_done;
  /// Called after a main-graph node built prepared state at this run (OpContext::Prepared:
  /// weights packed, a primitive built), with the seconds that took (not counted in
  /// node_done's, which is the run time alone), the bytes the state holds and what it is
  /// ("onednn", "small-map", ...): run --profile shows plan-time cost apart. Empty: no call.
  std::function<void(const Node&, double seconds, int64_t bytes, const std::string& label)>
      node_prepared;
  /// Where OpContext::Allocate looks for a buffer before allocating one (the executor's,
  /// filled as values die); null: none.
  BufferPool* buffers = nullptr;
  /// Run chains of float elementwise ops over one tensor and scalar constants (GELU) as one
  /// tiled pass (kernels/elementwise_chain.h), and a Relu that is its Conv's only reader inside
  /// the Conv (OpContext::fused_relu), both with the bits of the nodes run one by one; and
  /// convolutions hand their outputs to readers that take it in oneDNN's channel-blocked
  /// layout (kernels/channel_blocks.h; BCAST_BLOCKED=0 turns that alone off). Off when
  /// observe_node is set (observers see every node) or BCAST_FUSE=0 is in the environment
  /// (A/B timing).
  bool fuse_elementwise = true;
};

/// Runs subgraphs for control-flow ops (If, Loop, Scan, SequenceMap). Names a subgraph uses but
/// does not define resolve to the values visible where the calling node runs.
class SubgraphRunner {
 public:
  virtual ~SubgraphRunner() = default;
  /// Binds `inputs` to `graph.inputs` in order and returns the values of `graph.outputs`.
  virtual absl::StatusOr<std::vector<Value>> Run(const Graph& graph, std::vector<Value> inputs) = 0;
};

/// What an op derives from a node's input signature (dtypes and shapes): broadcast plans,
/// output shapes, the kernel chosen. The executor keeps one per node across runs and resets it
/// when the signature changes; the op fills it through OpContext::CachedPlan.
/// It also holds the node's prepared state (OpContext::Prepared): work on constant inputs done
/// once, such as a convolution's weights packed for its kernel.
class NodeCache {
 public:
  /// Drops the plan and the prepared state (the inputs' dtypes or shapes changed).
  void Reset() {
    plan_.reset();
    tag_ = nullptr;
    values_.clear();
    prepared_.reset();
  }
  /// Plans built for this node so far (each first run of a signature counts one).
  int64_t builds() const { return builds_; }
  /// Prepared states built so far, and the bytes the current one holds (charged to the run's
  /// memory budget while it lives).
  int64_t prepares() const { return prepares_; }
  int64_t prepared_bytes() const { return prepared_ != nullptr ? prepared_->bytes : 0; }
  /// What the prepared state is ("onednn", ...), for --profile; empty without one.
  const std::string& prepared_label() const {
    static const std::string kNone;
    return prepared_ != nullptr ? prepared_->label : kNone;
  }
  /// Seconds spent building prepared states since the last call (the executor takes them out
  /// of the node's run time and reports them apart).
  double TakePrepareSeconds() {
    const double s = prepare_seconds_;
    prepare_seconds_ = 0;
    return s;
  }

 private:
  friend class OpContext;
  // The prepared state with its budget charge, refunded when it goes.
  struct Prepared {
    std::shared_ptr<void> state;
    const void* tag = nullptr;  ///< identifies the state's type
    const void* key = nullptr;  ///< the constant input it was built from (its data)
    std::string label;
    int64_t bytes = 0;
    std::shared_ptr<MemoryBudget> budget;
    ~Prepared() {
      if (budget != nullptr) budget->Refund(bytes);
    }
  };
  std::shared_ptr<const void> plan_;
  const void* tag_ = nullptr;    ///< identifies the plan's type
  std::vector<int64_t> values_;  ///< input values the plan depends on (Expand's shape)
  int64_t builds_ = 0;
  std::shared_ptr<Prepared> prepared_;
  int64_t prepares_ = 0;
  double prepare_seconds_ = 0;
};

/// What a kernel sees of one node execution.
class OpContext {
 public:
  /// `outputs` must have node.outputs.size() entries; entries may hold the previous run's values,
  /// whose buffers Allocate() reuses.
  /// `cache` (may be null: plans then live for this execution only) holds the node's plan
  /// across runs.
  OpContext(const Node& node, std::vector<const Value*> inputs, std::vector<Value>* outputs,
            const RunOptions& options, SubgraphRunner* runner = nullptr,
            NodeCache* cache = nullptr);

  const Node& node() const { return node_; }
  int64_t opset() const { return node_.opset; }
  const RunOptions& options() const { return options_; }
  int threads() const { return options_.threads; }
  ThreadPool* pool() const { return options_.pool; }
  /// A kernel's options struct (UnaryOptions, BinaryOptions, CopyOptions: any with `threads`
  /// and `pool`) set to run on this node's threads, the rest at their defaults.
  template <class KernelOptions>
  KernelOptions ThreadedOptions() const {
    KernelOptions opts;
    opts.threads = threads();
    opts.pool = pool();
    return opts;
  }
  SubgraphRunner* subgraphs() const { return runner_; }
  /// DeadlineExceeded naming the node once the run's deadline has passed: control flow calls
  /// it per iteration, long kernels per chunk of work.
  absl::Status CheckDeadline() const;

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  /// True when input `i` was given (not omitted, not an empty optional).
  bool has_input(int i) const;
  /// Input `i` as a tensor, or nullptr when omitted or not a tensor.
  const Tensor* input(int i) const;
  /// Input `i` as a value, or nullptr when omitted.
  const Value* input_value(int i) const;
  /// Input `i` as a tensor, or InvalidArgument naming the op when missing or not a tensor.
  absl::StatusOr<const Tensor*> RequireInput(int i) const;
  /// Inputs 0 to n-1 as tensors, or RequireInput's error for the first of them that is missing
  /// or not a tensor: the leading inputs an op cannot run without, checked in one call (an op
  /// with a count of its own to enforce, such as "at least one", checks it before).
  absl::StatusOr<std::vector<const Tensor*>> RequireInputs(int n) const;

  int num_outputs() const { return static_cast<int>(outputs_->size()); }
  /// True when output `i` is used (its name is not empty).
  bool output_wanted(int i) const;
  /// Output `i` with `dtype` and `shape`, reusing the previous run's buffer when it is big
  /// enough and not shared. Contents are unspecified (not zeroed) when reused.
  absl::StatusOr<Tensor*> Allocate(int i, DType dtype, std::vector<int64_t> shape);
  /// Output `i` as set so far (by Allocate or SetOutput) when it is a tensor, else null.
  Tensor* output(int i) const {
    if (i < 0 || i >= num_outputs()) return nullptr;
    const Value& v = (*outputs_)[i];
    return v.is_tensor() ? v.tensor.get() : nullptr;
  }
  /// Sets output `i` to a value (sequences, optionals, or a tensor passed through).
  void SetOutput(int i, Value value);
  void SetOutput(int i, std::shared_ptr<Tensor> tensor) {
    SetOutput(i, Value::Of(std::move(tensor)));
  }

  /// The op's plan for the current input signature: `build()` (returning absl::StatusOr<P>)
  /// runs at the first execution with these input dtypes and shapes, and again only when they
  /// change or when `values` (input contents the plan depends on, such as Expand's shape)
  /// differ from those it was built with. Ops do their shape work there.
  template <class P, class Build>
  absl::StatusOr<const P*> CachedPlan(absl::Span<const int64_t> values, Build&& build) {
    NodeCache& cache = cache_ != nullptr ? *cache_ : local_cache_;
    static const char kTag = 0;  // one per plan type
    if (cache.plan_ == nullptr || cache.tag_ != &kTag ||
        !std::equal(values.begin(), values.end(), cache.values_.begin(), cache.values_.end())) {
      absl::StatusOr<P> plan = build();
      if (!plan.ok()) {
        cache.Reset();
        return plan.status();
      }
      cache.plan_ = std::make_shared<const P>(*std::move(plan));
      cache.tag_ = &kTag;
      cache.values_.assign(values.begin(), values.end());
      ++cache.builds_;
    }
    return static_cast<const P*>(cache.plan_.get());
  }
  template <class P, class Build>
  absl::StatusOr<const P*> CachedPlan(Build&& build) {
    return CachedPlan<P>(absl::Span<const int64_t>(), std::forward<Build>(build));
  }

  /// The executor says which inputs are constant for this run: initializers not fed by the
  /// run and outputs of nodes that depend on constants only. Null (the default): none is.
  void set_constant_inputs(const std::vector<bool>* constant) { constant_inputs_ = constant; }
  /// True when input `i` holds the same contents on every run that calls it constant, so that
  /// work derived from it may be kept (Prepared). False in a run that feeds an initializer.
  /// The executor runs this Conv's only consumer, a Relu, inside it: the op then applies the
  /// Relu kernel to its output 0 in place (the Relu node's bits, one pass less over memory).
  void set_fused_relu(bool fused) { fused_relu_ = fused; }
  bool fused_relu() const { return fused_relu_; }

  /// Channel-blocked activations (kernels/channel_blocks.h, issue #32), set by the executor.
  /// Input 0 is in channel block `block` (0: NCHW, the default); only ops that read the
  /// blocked layout (Conv, GlobalAveragePool) get one. An op that cannot use it at this run
  /// calls UnblockInput, which makes input 0 NCHW through `unblock` (the executor's reorder,
  /// which later readers of the value then share).
  void set_input_block(int block, std::function<absl::Status()> unblock) {
    input_block_ = block;
    unblock_ = std::move(unblock);
  }
  int input_block() const { return input_block_; }
  absl::Status UnblockInput() {
    if (input_block_ == 0) return absl::OkStatus();
    input_block_ = 0;
    return unblock_();
  }
  /// The executor allows output 0 in a channel block (every reader takes it); the op says
  /// which block it wrote with set_output_block (0: NCHW, the default).
  void set_output_block_allowed(bool allowed) { output_block_allowed_ = allowed; }
  bool output_block_allowed() const { return output_block_allowed_; }
  void set_output_block(int block) { output_block_ = block; }
  int output_block() const { return output_block_; }

  bool input_constant(int i) const {
    return constant_inputs_ != nullptr && i >= 0 &&
           i < static_cast<int>(constant_inputs_->size()) && (*constant_inputs_)[i];
  }

  /// The node's prepared state built from the constant input `key` (its data pointer): built
  /// by `build()` (returning std::unique_ptr<P>, P with `int64_t bytes() const` and a
  /// `label()` for --profile, or null when it does not apply) at the first run with this input
  /// signature and key, kept until they change. Its bytes are charged to the memory budget; null
  /// when `build` returned null or the budget refused (the op then computes without it). The
  /// build's time goes to NodeCache::TakePrepareSeconds. Only call with a key from an
  /// input_constant() input.
  template <class P, class Build>
  P* Prepared(const void* key, Build&& build) {
    NodeCache& cache = cache_ != nullptr ? *cache_ : local_cache_;
    static const char kTag = 0;  // one per state type
    if (cache.prepared_ != nullptr && cache.prepared_->tag == &kTag &&
        cache.prepared_->key == key) {
      return static_cast<P*>(cache.prepared_->state.get());  // null: none applies
    }
    cache.prepared_.reset();
    const auto start = std::chrono::steady_clock::now();
    std::unique_ptr<P> state = build();
    cache.prepare_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // A state that does not apply or does not fit is remembered as none, not retried per run.
    auto holder = std::make_shared<NodeCache::Prepared>();
    holder->tag = &kTag;
    holder->key = key;
    cache.prepared_ = holder;
    if (state == nullptr) return nullptr;
    const int64_t bytes = state->bytes();
    if (options_.memory != nullptr) {
      if (!options_.memory->TryCharge(bytes)) return nullptr;
      holder->budget = options_.memory;
    }
    holder->bytes = bytes;
    holder->label = state->label();
    P* raw = state.get();
    holder->state = std::shared_ptr<P>(std::move(state));
    ++cache.prepares_;
    return raw;
  }

  /// InvalidArgument "Op 'name': message" (a bad model or bad input data).
  absl::Status Error(const std::string& message) const;
  /// Unimplemented "Op 'name' (domain, opset N): message" (exit 3 in the CLI).
  absl::Status Unsupported(const std::string& message) const;

 private:
  const Node& node_;
  std::vector<const Value*> inputs_;
  std::vector<Value>* outputs_;
  const RunOptions& options_;
  SubgraphRunner* runner_;
  NodeCache* cache_;
  NodeCache local_cache_;
  const std::vector<bool>* constant_inputs_ = nullptr;
  bool fused_relu_ = false;
  int input_block_ = 0;
  std::function<absl::Status()> unblock_;
  bool output_block_allowed_ = false;
  int output_block_ = 0;
};

/// An op kernel.
using OpKernelFn = absl::Status (*)(OpContext& ctx);

/// One row of an op family's table: the kernel applies from `since_version` up to the next
/// row of the same (domain, op_type).
struct OpRegistration {
  const char* domain;  ///< "" for the default ONNX domain
  const char* op_type;
  int64_t since_version;
  OpKernelFn fn;
};

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_OPS_OP_H_
