// legalize-measured's rank-raise strategy (see rank_raise.h).
#include "passes/legalize/rank_raise.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace onnx_bcast::passes::legalize {

void AddRaisePlans(const Node& node, const OpRanks& ranks, bool can_swap, int* order,
                   std::vector<Plan>* plans) {
  const std::optional<Collapsed> c = Collapse(node);
  if (!c) return;
  int64_t min_rank = std::max<int64_t>(1, ranks.min_rank);
  int64_t max_rank = ranks.target_max_rank > 0 ? ranks.target_max_rank : 4;
  if (ranks.max_rank > 0) max_rank = std::min(max_rank, ranks.max_rank);
  max_rank = std::min<int64_t>(max_rank, 5);  // C(5,2) placements at most per rank
  const std::vector<int64_t>& dims = c->dims;
  const int q = static_cast<int>(dims.size());
  const size_t count = node.shapes.size();
  for (int64_t r = std::max<int64_t>(q, min_rank); r <= max_rank; ++r) {
    // Every choice of q positions among r for the real axes, in order.
    std::vector<int> pos(static_cast<size_t>(q));
    for (int i = 0; i < q; ++i) pos[i] = i;
    while (true) {
      auto place = [&](const std::vector<int64_t>& e) {
        std::vector<int64_t> o(static_cast<size_t>(r), 1);
        for (int i = 0; i < q; ++i) o[pos[i]] = e[i];
        return o;
      };
      View v;
      v.output = place(dims);
      bool changes = r != node.output.rank();
      for (size_t k = 0; k < count; ++k) {
        v.operands.push_back(place(c->view[k]));
        changes = changes || v.operands.back() != c->extents[k];
      }
      // The leading-1s placement at the view's own rank is a view plan already.
      bool leading = true;
      for (int i = 0; i < q; ++i) leading = leading && pos[i] == r - q + i;
      const bool is_view_plan = leading && r == std::max<int64_t>(q, min_rank) && q > 0;
      if (changes && !is_view_plan) {
        AddViewPlan(v, 14 + static_cast<int>(r - q), can_swap, order, plans);
      }
      // The next placement (lexicographic combinations).
      int i = q - 1;
      while (i >= 0 && pos[i] == r - q + i) --i;
      if (i < 0) break;
      ++pos[i];
      for (int j = i + 1; j < q; ++j) pos[j] = pos[j - 1] + 1;
    }
  }
}

}  // namespace onnx_bcast::passes::legalize
