// Where a run's time goes (run --profile): per node and per op type, with the share of the
// total, as onnxruntime's profiler and polygraphy's per-layer timing report it. Fed by the
// executor's node_done hook (RunOptions): main-graph nodes only, a control-flow node's time
// including its bodies, so the shares add up to the run.
#ifndef ONNX_BCAST_RUNTIME_EXEC_PROFILE_H_
#define ONNX_BCAST_RUNTIME_EXEC_PROFILE_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/graph.h"
#include "runtime/value.h"

namespace onnx_bcast::runtime {

class RunProfile {
 public:
  struct NodeTime {
    std::string node;  ///< name, or "<op>#<index>"
    std::string op;
    std::string output_shape;  ///< the first output's shape, e.g. "[1,64,56,56]"
    double seconds = 0;        ///< over every recorded run
    int64_t calls = 0;
    /// The median over the recorded runs of the node's time in one run (Nodes() fills it).
    /// A noisy machine moves a mean with one preempted run; the median keeps to the typical one.
    double median_seconds = 0;
    /// Plan-time cost, apart from `seconds`: building the node's prepared state (weights
    /// packed, a oneDNN primitive built) over every run that built one, the bytes the last
    /// one holds and what it is ("onednn", "small-map", "im2col-blas"; empty: none).
    double prepare_seconds = 0;
    int64_t prepared_bytes = 0;
    std::string prepared;
  };
  struct OpTime {
    std::string op;
    int64_t nodes = 0;
    double seconds = 0;
    double median_seconds = 0;  ///< the median over the recorded runs of the op's time per run
  };

  /// Records one execution of `node` (the executor's node_done hook calls it).
  void Record(const Node& node, const std::vector<Value>& outputs, double seconds);
  /// Records plan-time work of `node` (the executor's node_prepared hook calls it).
  void RecordPrepare(const Node& node, double seconds, int64_t bytes, const std::string& label);
  /// Plan-time seconds over every node, and the bytes of prepared state held (the latest per
  /// node).
  double prepare_seconds() const { return prepare_total_; }
  int64_t prepared_bytes() const;
  /// Forgets the run times (warm-up runs) and keeps the plan-time records.
  void ResetRuns();
  /// Marks the end of one run (the per-run averages divide by the count; the medians take
  /// this run's times as one sample).
  void EndRun();

  int64_t runs() const { return runs_; }
  /// The sum of every node's time, over every run.
  double total_seconds() const { return total_; }
  /// The median over the recorded runs of one run's total (0 without a run).
  double median_run_seconds() const;
  /// How many runs the medians are taken over: every run, unless the samples would pass
  /// kMaxSamples (nodes times runs), when only the first runs are kept.
  int64_t median_runs() const { return static_cast<int64_t>(run_totals_.size()); }
  static constexpr int64_t kMaxSamples = int64_t{1} << 24;  // 64 MiB of floats
  /// Nodes, slowest first (ties: first executed first).
  std::vector<NodeTime> Nodes() const;
  /// Op types, slowest first.
  std::vector<OpTime> Ops() const;

 private:
  std::vector<NodeTime> nodes_;  ///< in first-execution order
  std::unordered_map<const Node*, size_t> index_;
  NodeTime& Entry(const Node& node, const std::vector<Value>* outputs);

  // Per node (parallel to nodes_): its time in the run under way, and one sample per recorded
  // run (a node first seen in a later run has zeros for the runs before).
  std::vector<double> current_;
  std::vector<std::vector<float>> samples_;
  std::vector<double> run_totals_;  ///< per recorded run: the sum of its nodes' times

  double total_ = 0;
  double prepare_total_ = 0;
  int64_t runs_ = 0;
};

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_EXEC_PROFILE_H_
