// Per-node and per-op run times (see profile.h).
#include "runtime/exec/profile.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnx_bcast::runtime {

RunProfile::NodeTime& RunProfile::Entry(const Node& node, const std::vector<Value>* outputs) {
  auto [it, inserted] = index_.emplace(&node, nodes_.size());
  if (inserted) {
    NodeTime t;
    t.node = node.name;
    t.op = node.op_type;
    nodes_.push_back(std::move(t));
  }
  NodeTime& t = nodes_[it->second];
  if (outputs != nullptr && t.output_shape.empty() && !outputs->empty() &&
      (*outputs)[0].is_tensor() && (*outputs)[0].tensor != nullptr) {
    t.output_shape = absl::StrCat("[", absl::StrJoin((*outputs)[0].tensor->shape(), ","), "]");
  }
  return t;
}

void RunProfile::RecordPrepare(const Node& node, double seconds, int64_t bytes,
                               const std::string& label) {
  NodeTime& t = Entry(node, nullptr);
  t.prepare_seconds += seconds;
  t.prepared_bytes = bytes;
  t.prepared = label;
  prepare_total_ += seconds;
}

int64_t RunProfile::prepared_bytes() const {
  int64_t bytes = 0;
  for (const NodeTime& t : nodes_) bytes += t.prepared_bytes;
  return bytes;
}

void RunProfile::Record(const Node& node, const std::vector<Value>& outputs, double seconds) {
  NodeTime& t = Entry(node, &outputs);
  t.seconds += seconds;
  ++t.calls;
  total_ += seconds;
}

void RunProfile::ResetRuns() {
  for (NodeTime& t : nodes_) {
    t.seconds = 0;
    t.calls = 0;
  }
  total_ = 0;
  runs_ = 0;
}

std::vector<RunProfile::NodeTime> RunProfile::Nodes() const {
  std::vector<NodeTime> out = nodes_;
  std::stable_sort(out.begin(), out.end(),
                   [](const NodeTime& a, const NodeTime& b) { return a.seconds > b.seconds; });
  return out;
}

std::vector<RunProfile::OpTime> RunProfile::Ops() const {
  std::map<std::string, OpTime> by_op;
  for (const NodeTime& t : nodes_) {
    OpTime& o = by_op[t.op];
    o.op = t.op;
    ++o.nodes;
    o.seconds += t.seconds;
  }
  std::vector<OpTime> out;
  for (auto& [op, t] : by_op) out.push_back(std::move(t));
  std::stable_sort(out.begin(), out.end(),
                   [](const OpTime& a, const OpTime& b) { return a.seconds > b.seconds; });
  return out;
}

}  // namespace onnx_bcast::runtime
