// legalize-measured's candidate rewrites (see candidates.h).
#include "passes/legalize/candidates.h"

#include <algorithm>
#include <utility>

#include "passes/legalize/align.h"
#include "passes/legalize/concat.h"
#include "passes/legalize/expand.h"
#include "passes/legalize/fold_node.h"
#include "passes/legalize/multiply_by_ones.h"
#include "passes/legalize/rank_raise.h"
#include "passes/legalize/swap.h"

namespace onnx_bcast::passes::legalize {
namespace {

using EditCombos = std::vector<std::vector<Edit>>;

// The edits each operand is offered, kKeep first.
EditCombos EditsPerSlot(const Node& node) {
  const onnx::NodeProto& n = node.ctx->graph().node(node.id);
  const int count = n.input_size();
  EditCombos per_slot(static_cast<size_t>(count));
  for (int k = 0; k < count; ++k) {
    per_slot[k].push_back(Edit::kKeep);
    if (n.input(k).empty()) continue;
    if (AlignOffered(node, k)) per_slot[k].push_back(Edit::kAlign);
    if (ExpandOffered(node, k)) per_slot[k].push_back(Edit::kFull);
    if (MulOnesOffered(node, k)) per_slot[k].push_back(Edit::kMulOnes);
    if (ConcatOffered(node, k)) per_slot[k].push_back(Edit::kConcat);
  }
  return per_slot;
}

// Every combination of per-slot edits (beyond 4 operands: uniform ones only).
EditCombos Combinations(const EditCombos& per_slot) {
  const int count = static_cast<int>(per_slot.size());
  EditCombos combos = {{}};
  if (count <= 4) {
    for (int k = 0; k < count; ++k) {
      EditCombos next;
      for (const auto& c : combos) {
        for (Edit e : per_slot[k]) {
          next.push_back(c);
          next.back().push_back(e);
        }
      }
      combos = std::move(next);
    }
    return combos;
  }
  combos.clear();
  for (Edit e : {Edit::kKeep, Edit::kAlign, Edit::kFull}) {
    std::vector<Edit> c;
    for (int k = 0; k < count; ++k) {
      const bool offered =
          std::find(per_slot[k].begin(), per_slot[k].end(), e) != per_slot[k].end();
      c.push_back(offered ? e : Edit::kKeep);
    }
    combos.push_back(std::move(c));
  }
  return combos;
}

// What edit `e` of an operand costs: an inserted node more than a folded constant.
int EditCost(Edit e, bool constant) {
  switch (e) {
    case Edit::kKeep:
      return 0;
    case Edit::kAlign:
      return constant ? 1 : 2;
    case Edit::kMulOnes:
      return 5;
    case Edit::kConcat:
      return 13;
    case Edit::kFull:
      return constant ? 3 : 4;
  }
  return 0;
}

}  // namespace

std::vector<Plan> Candidates(const Node& node, const OpRanks& ranks) {
  std::vector<Plan> plans;
  int order = 0;
  if (FoldOffered(node)) {
    Plan p;
    p.fold_node = true;
    p.cost = 1;
    p.order = order++;
    plans.push_back(p);
  }
  const bool can_swap = SwapOffered(node);
  const EditCombos combos = Combinations(EditsPerSlot(node));
  for (bool swap : {false, true}) {
    if (swap && !can_swap) continue;
    for (const std::vector<Edit>& edits : combos) {
      Plan p;
      p.swap = swap;
      p.edits = edits;
      if (swap) std::swap(p.edits[0], p.edits[1]);  // edits are by slot after the swap
      p.cost = swap ? 1 : 0;
      bool any = swap;
      for (size_t k = 0; k < edits.size(); ++k) {
        if (edits[k] == Edit::kKeep) continue;
        any = true;
        p.cost += EditCost(edits[k], node.constant[k]);  // slot k before the swap
      }
      if (!any) continue;
      p.order = order++;
      plans.push_back(std::move(p));
    }
  }
  AddViewPlans(node, ranks, can_swap, &order, &plans);
  AddRaisePlans(node, ranks, can_swap, &order, &plans);
  std::stable_sort(plans.begin(), plans.end(), [](const Plan& a, const Plan& b) {
    return a.cost != b.cost ? a.cost < b.cost : a.order < b.order;
  });
  return plans;
}

}  // namespace onnx_bcast::passes::legalize
