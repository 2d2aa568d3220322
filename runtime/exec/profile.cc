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
    current_.push_back(0);
    samples_.emplace_back();
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
  current_[static_cast<size_t>(&t - nodes_.data())] += seconds;
}

void RunProfile::EndRun() {
  ++runs_;
  const int64_t recorded = static_cast<int64_t>(run_totals_.size());
  if ((recorded + 1) * static_cast<int64_t>(nodes_.size()) <= kMaxSamples) {
    double total = 0;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      samples_[i].resize(recorded, 0.0f);  // runs before this node was first seen
      samples_[i].push_back(static_cast<float>(current_[i]));
      total += current_[i];
    }
    run_totals_.push_back(total);
  }
  std::fill(current_.begin(), current_.end(), 0.0);
}

namespace {

// The median of `v` (the mean of the middle two for an even count; 0 for none).
template <typename T>
double Median(std::vector<T> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  return (static_cast<double>(*std::max_element(v.begin(), v.begin() + mid)) + upper) / 2;
}

}  // namespace

double RunProfile::median_run_seconds() const { return Median(run_totals_); }

void RunProfile::ResetRuns() {
  for (NodeTime& t : nodes_) {
    t.seconds = 0;
    t.calls = 0;
  }
  total_ = 0;
  runs_ = 0;
  std::fill(current_.begin(), current_.end(), 0.0);
  for (std::vector<float>& s : samples_) s.clear();
  run_totals_.clear();
}

std::vector<RunProfile::NodeTime> RunProfile::Nodes() const {
  std::vector<NodeTime> out = nodes_;
  const size_t runs = run_totals_.size();
  for (size_t i = 0; i < out.size(); ++i) {
    std::vector<float> s = samples_[i];
    s.resize(runs, 0.0f);
    out[i].median_seconds = Median(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const NodeTime& a, const NodeTime& b) { return a.seconds > b.seconds; });
  return out;
}

std::vector<RunProfile::OpTime> RunProfile::Ops() const {
  const size_t runs = run_totals_.size();
  std::map<std::string, OpTime> by_op;
  std::map<std::string, std::vector<double>> per_run;  // op -> its time in each recorded run
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const NodeTime& t = nodes_[i];
    OpTime& o = by_op[t.op];
    o.op = t.op;
    ++o.nodes;
    o.seconds += t.seconds;
    std::vector<double>& sums = per_run[t.op];
    sums.resize(runs, 0.0);
    for (size_t r = 0; r < samples_[i].size() && r < runs; ++r) sums[r] += samples_[i][r];
  }
  std::vector<OpTime> out;
  for (auto& [op, t] : by_op) {
    t.median_seconds = Median(per_run[op]);
    out.push_back(std::move(t));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const OpTime& a, const OpTime& b) { return a.seconds > b.seconds; });
  return out;
}

}  // namespace onnx_bcast::runtime
