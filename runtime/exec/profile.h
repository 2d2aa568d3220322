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
  /// Marks the end of one run (the per-run averages divide by the count).
  void EndRun() { ++runs_; }

  int64_t runs() const { return runs_; }
  /// The sum of every node's time, over every run.
  double total_seconds() const { return total_; }
  /// Nodes, slowest first (ties: first executed first).
  std::vector<NodeTime> Nodes() const;
  /// Op types, slowest first.
  std::vector<OpTime> Ops() const;

 private:
  std::vector<NodeTime> nodes_;  ///< in first-execution order
  std::unordered_map<const Node*, size_t> index_;
  NodeTime& Entry(const Node& node, const std::vector<Value>* outputs);

  double total_ = 0;
  double prepare_total_ = 0;
  int64_t runs_ = 0;
};

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_EXEC_PROFILE_H_
