// Per-node and per-op run times (see profile.h).
#include "runtime/exec/profile.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnx_bcast::rt {

void RunProfile::Record(const Node& node, const std::vector<Value>& outputs, double seconds) {
  auto [it, inserted] = index_.emplace(&node, nodes_.size());
  if (inserted) {
    NodeTime t;
    t.node = node.name;
    t.op = node.op_type;
    if (!outputs.empty() && outputs[0].is_tensor() && outputs[0].tensor != nullptr) {
      t.output_shape = absl::StrCat("[", absl::StrJoin(outputs[0].tensor->shape(), ","), "]");
    }
    nodes_.push_back(std::move(t));
  }
  NodeTime& t = nodes_[it->second];
  t.seconds += seconds;
  ++t.calls;
  total_ += seconds;
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

}  // namespace onnx_bcast::rt
