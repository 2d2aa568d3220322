// legalize-measured's vocabulary: the node being placed (read once), the per-operand edits and
// the candidate rewrites (Plan) that the strategies in this folder offer and apply.
#ifndef ONNX_BCAST_PASSES_LEGALIZE_NODE_H_
#define ONNX_BCAST_PASSES_LEGALIZE_NODE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/broadcast_ops.h"
#include "broadcast/shape.h"
#include "passes/rewrite_context.h"

namespace onnx_bcast::passes::legalize {

/// What a candidate does to one operand (each strategy's file says when it is offered):
/// kAlign raises its rank (align.h), kFull gives it the output's shape (expand.h), kMulOnes
/// does that as Mul(ones, operand) (multiply_by_ones.h), kConcat as Concat of copies
/// (concat.h).
enum class Edit { kKeep, kAlign, kFull, kMulOnes, kConcat };

/// A node computed on a view of its operands (view.h, rank_raise.h).
struct View {
  bool transpose = false;
  std::vector<std::vector<int64_t>> operands;  ///< per slot (after the swap), as computed on
  std::vector<int64_t> output;                 ///< the view's output (transposed when asked)
};

/// One candidate rewrite of a node.
struct Plan {
  bool swap = false;        ///< swap.h
  bool fold_node = false;   ///< all operands constant: the node becomes one initializer
  std::vector<Edit> edits;  ///< per input slot, after the swap
  bool use_view = false;    ///< the node is computed on `view` instead (edits unused)
  View view;
  int cost = 0;
  int order = 0;  ///< enumeration order, the tie-break
};

/// The node being placed: its operands' shapes and constness (by slot) and its output shape.
/// Apply keeps `shapes` and `constant` in the node's slot order as it edits them.
struct Node {
  RewriteContext* ctx = nullptr;
  int id = -1;
  analysis::BroadcastOp op;
  std::vector<broadcast::Shape> shapes;
  std::vector<bool> constant;
  broadcast::Shape output;
  bool live = false;  ///< candidates decided by the live oracle (Concat offered only then)
};

/// Reads node `id`'s operand shapes and constness from `ctx` (output left to the caller).
Node ReadNode(RewriteContext* ctx, int id, const analysis::BroadcastOp& op);

/// `s` with `n` leading 1s (none when n <= 0).
broadcast::Shape PrependOnes(const broadcast::Shape& s, int64_t n);

/// The rank operand `slot` takes under kAlign; nullopt: not offered.
std::optional<int64_t> AlignRank(const Node& node, int slot);
/// The shape operand `slot` takes under kFull, kMulOnes and kConcat; nullopt: not offered.
std::optional<broadcast::Shape> FullShape(const Node& node, int slot);

}  // namespace onnx_bcast::passes::legalize

#endif  // ONNX_BCAST_PASSES_LEGALIZE_NODE_H_
