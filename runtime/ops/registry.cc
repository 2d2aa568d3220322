// The op table assembled from the family tables.
#include "runtime/ops/registry.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"

namespace onnx_bcast::runtime {
namespace {

using Key = std::pair<std::string, std::string>;

const std::map<Key, std::vector<const OpRegistration*>>& Table() {
  static const auto* const kTable = [] {
    auto* table = new std::map<Key, std::vector<const OpRegistration*>>();
    for (auto family : {ElementwiseOps, MovementOps, SequenceOps, NnOps, ReduceOps, MatrixOps,
                        RnnOps, ControlFlowOps}) {
      for (const OpRegistration& row : family()) {
        (*table)[{row.domain, row.op_type}].push_back(&row);
      }
    }
    for (auto& [key, rows] : *table) {
      std::sort(rows.begin(), rows.end(), [](const OpRegistration* a, const OpRegistration* b) {
        return a->since_version < b->since_version;
      });
    }
    return table;
  }();
  return *kTable;
}

}  // namespace

const OpRegistration* FindOp(const std::string& domain, const std::string& op_type,
                             int64_t opset) {
  const std::string d = domain == "ai.onnx" ? "" : domain;
  auto it = Table().find({d, op_type});
  if (it == Table().end()) return nullptr;
  const OpRegistration* best = nullptr;
  for (const OpRegistration* row : it->second) {
    if (row->since_version <= opset) best = row;
  }
  return best;
}

std::vector<std::string> RegisteredOps() {
  std::vector<std::string> names;
  for (const auto& [key, rows] : Table()) {
    names.push_back(key.first.empty() ? key.second : absl::StrCat(key.first, ".", key.second));
  }
  return names;
}

}  // namespace onnx_bcast::runtime
